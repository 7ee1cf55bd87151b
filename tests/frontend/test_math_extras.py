"""em.math's polyval, xlog1py, invert_permutation, in_top_k and confusion_matrix,
em.unravel_index, em.histogram_fixed_width(_bins), em.linalg.logdet/cross,
em.vectorized_map, em.control_dependencies and em.nest: eager and compiled (with `?` dims)
against numpy, and their errors raised alike eagerly and compiled."""

import collections

import numpy as np
import pytest

import ember as em

RNG = np.random.default_rng(5)


def _runs(fn, *arrays, specs=None):
    """fn's results eagerly, compiled for these shapes, and compiled with `?` dims (every
    dim, or `specs`)."""
    specs = specs or [em.TensorSpec([None] * np.ndim(a), em.as_dtype(np.asarray(a).dtype))
                      for a in arrays]
    tensors = [em.constant(a) for a in arrays]
    return {"eager": fn(*tensors).numpy(), "static": em.function(fn)(*tensors).numpy(),
            "dynamic": em.function(fn, input_signature=specs)(*tensors).numpy()}


def _agree(fn, want, *arrays, rtol=1e-6, specs=None):
    for how, got in _runs(fn, *arrays, specs=specs).items():
        np.testing.assert_allclose(got, want, rtol=rtol, err_msg=how)


def _raise_alike(fn, match, *arrays):
    tensors = [em.constant(a) for a in arrays]
    for run in (fn, em.function(fn)):
        with pytest.raises(em.errors.InvalidArgumentError, match=match):
            run(*tensors)


def test_polyval_is_numpys_and_keeps_xs_shape():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    _agree(lambda x: em.math.polyval([2.0, x, -1.0, 0.5], x),
           np.polyval([2.0, 0, -1.0, 0.5], x) + x * x * x, x, rtol=1e-5)
    _agree(lambda x: em.math.polyval([3.0], x), np.full(x.shape, 3.0), x)
    assert em.math.polyval([], em.constant([1.0, 2.0])).numpy().tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="list of tensors"):
        em.math.polyval(em.constant([1.0]), 2.0)


def test_xlog1py_is_zero_where_x_is_zero():
    x = np.array([0.0, 1.0, 2.0, 0.0], np.float64)
    y = np.array([-1.0, 0.5, 3.0, np.nan])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.where(x == 0, 0.0, x * np.log1p(y))
    _agree(em.math.xlog1py, want, x, y)


def test_invert_permutation_and_its_check():
    perm = RNG.permutation(9).astype(np.int32)
    _agree(em.math.invert_permutation, np.argsort(perm), perm)
    _raise_alike(em.math.invert_permutation, "not a permutation", np.array([0, 0, 1], np.int32))
    _raise_alike(em.math.invert_permutation, "not a permutation", np.array([1, 2], np.int64))
    with pytest.raises(ValueError, match="rank 1"):
        em.math.invert_permutation(em.constant([[0]]))


def _numpy_in_top_k(targets, predictions, k):
    out = []
    for t, row in zip(targets, predictions):
        if not 0 <= t < row.size or not np.isfinite(row).all():
            out.append(False)
        else:
            out.append(int((row > row[t]).sum()) < k)
    return np.array(out)


def test_in_top_k_counts_ties_in_and_is_false_for_bad_rows():
    predictions = np.round(RNG.standard_normal((12, 5)), 1).astype(np.float32)
    predictions[3, 1] = np.nan
    predictions[4, 2] = np.inf
    predictions[5] = 0.5  # all tied
    targets = RNG.integers(-1, 6, 12).astype(np.int32)
    for k in (1, 2, 5):
        _agree(lambda t, p: em.math.in_top_k(t, p, k), _numpy_in_top_k(targets, predictions, k),
               targets, predictions)


def test_confusion_matrix_counts_and_weighs_pairs():
    labels = RNG.integers(0, 4, 30).astype(np.int64)
    predictions = RNG.integers(0, 5, 30).astype(np.int64)
    weights = RNG.standard_normal(30)
    n = max(labels.max(), predictions.max()) + 1
    want = np.zeros((n, n), np.int32)
    np.add.at(want, (labels, predictions), 1)
    _agree(em.math.confusion_matrix, want, labels, predictions)
    weighted = np.zeros((6, 6))
    np.add.at(weighted, (labels, predictions), weights)
    _agree(lambda a, b, w: em.math.confusion_matrix(a, b, 6, w, em.float64), weighted,
           labels, predictions, weights, rtol=1e-12)
    assert em.math.confusion_matrix(em.zeros([0], em.int32), em.zeros([0], em.int32)).shape == \
        (0, 0)
    _raise_alike(lambda a, b: em.math.confusion_matrix(a, b, num_classes=3), ">= num_classes",
                 np.array([0, 1], np.int32), np.array([0, 3], np.int32))
    _raise_alike(em.math.confusion_matrix, "labels holds a negative",
                 np.array([-1, 1], np.int32), np.array([0, 1], np.int32))


def test_unravel_index_of_scalars_and_vectors():
    dims = np.array([3, 4, 5], np.int32)
    flat = RNG.integers(0, 60, 7).astype(np.int32)
    _agree(em.unravel_index, np.stack(np.unravel_index(flat, dims)), flat, dims)
    _agree(em.unravel_index, np.array(np.unravel_index(59, dims)), np.int32(59), dims)
    _raise_alike(em.unravel_index, "out of bounds", np.array([60], np.int32), dims)
    _raise_alike(em.unravel_index, "out of bounds", np.array([-1], np.int32), dims)


def _numpy_histogram(values, lo, hi, nbins):
    bins = np.clip(np.floor((values - lo) / (hi - lo) * nbins), 0, nbins - 1).astype(np.int32)
    return bins, np.bincount(bins.reshape(-1), minlength=nbins).astype(np.int32)


def test_histogram_fixed_width_puts_outliers_in_the_end_bins():
    values = RNG.uniform(-2, 7, (4, 25))
    bins, counts = _numpy_histogram(values, 0.0, 5.0, 7)
    _agree(lambda v: em.histogram_fixed_width(v, [0.0, 5.0], nbins=7), counts, values)
    _agree(lambda v: em.histogram_fixed_width_bins(v, [0.0, 5.0], nbins=7), bins, values)
    ints = np.arange(-3, 12, dtype=np.int32)
    _agree(lambda v: em.histogram_fixed_width(v, [0, 10], nbins=4),
           _numpy_histogram(ints.astype(np.float64), 0, 10, 4)[1], ints)


def test_logdet_and_its_gradient():
    a = RNG.standard_normal((2, 4, 4))
    m = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)
    _agree(em.linalg.logdet, np.linalg.slogdet(m)[1], m, rtol=1e-10,
           specs=[em.TensorSpec([None, 4, 4], em.float64)])  # (cholesky's dims: static)
    x = em.constant(m)
    with em.GradientTape() as tape:
        tape.watch(x)
        y = em.reduce_sum(em.linalg.logdet(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.linalg.inv(m), rtol=1e-8)


def test_cross_broadcasts_and_checks_the_last_dim():
    a = RNG.standard_normal((5, 3)).astype(np.float32)
    b = RNG.standard_normal((1, 3)).astype(np.float32)
    _agree(em.linalg.cross, np.cross(a, b), a, b, rtol=1e-5)
    with pytest.raises(ValueError, match="vectors of 3"):
        em.linalg.cross(em.ones([2, 4]), em.ones([2, 4]))


def test_vectorized_map_gives_map_fns_results():
    x = RNG.standard_normal((6, 3)).astype(np.float32)
    _agree(lambda x: em.vectorized_map(lambda r: em.reduce_sum(r * r) * r, x),
           (x * x).sum(1, keepdims=True) * x, x, rtol=1e-5)


def test_control_dependencies_keeps_the_check_and_checks_its_inputs():
    def f(x):
        with em.control_dependencies([em.debugging.assert_all_finite(x, "x"), x]):
            return em.identity(x) * 2

    _agree(f, np.array([2.0, 4.0]), np.array([1.0, 2.0]))
    _raise_alike(f, "Inf or NaN", np.array([1.0, np.inf]))
    with pytest.raises(TypeError, match="list of tensors"):
        with em.control_dependencies(em.constant(1.0)):
            pass
    with pytest.raises(TypeError, match="must be tensors, variables or None"):
        with em.control_dependencies(["not a tensor"]):
            pass
    with em.control_dependencies(None):
        pass


Pair = collections.namedtuple("Pair", "a b")


def test_nest_follows_tf_nest():
    s = {"b": Pair(1, [2, 3]), "a": (4,)}
    assert em.nest.flatten(s) == [4, 1, 2, 3]
    assert em.nest.pack_sequence_as(s, [40, 10, 20, 30]) == \
        {"a": (40,), "b": Pair(10, [20, 30])}
    assert em.nest.map_structure(lambda x, y: x * y, s, s) == \
        {"a": (16,), "b": Pair(1, [4, 9])}
    assert em.nest.is_nested([]) and not em.nest.is_nested("ab") and \
        not em.nest.is_nested(em.constant(1))
    em.nest.assert_same_structure((1, [2]), (3, [4]))
    em.nest.assert_same_structure((1, [2]), [3, (4,)], check_types=False)
    with pytest.raises(TypeError, match="same sequence type"):
        em.nest.assert_same_structure((1, [2]), (3, (4,)))
    with pytest.raises(ValueError, match="same nested structure"):
        em.nest.assert_same_structure({"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match="same nested structure"):
        em.nest.map_structure(lambda x, y: x, (1, 2), (1, 2, 3))
    with pytest.raises(ValueError, match="3 leaves needed"):
        em.nest.pack_sequence_as((1, [2, 3]), [1])
    ta = em.TensorArray(em.float32, size=2)
    assert em.nest.flatten([ta]) == [ta]  # a composite is a leaf unless expanded
    assert len(em.nest.flatten([ta], expand_composites=True)) >= 1


def test_divide_no_nan_reciprocal_and_compute_average_loss():
    x = np.array([1.0, np.nan, np.inf, 3.0])
    y = np.array([0.0, 0.0, 0.0, 2.0])
    _agree(em.math.divide_no_nan, np.array([0.0, 0.0, 0.0, 1.5]), x, y)
    _agree(em.math.reciprocal, 1 / np.array([2.0, -4.0]), np.array([2.0, -4.0]))
    losses = np.array([1.0, 2.0, 3.0], np.float32)
    _agree(em.nn.compute_average_loss, np.float32(2.0), losses)
    assert float(em.nn.compute_average_loss(losses, sample_weight=[1.0, 0.0, 1.0],
                                            global_batch_size=8)) == 0.5
    strategy = em.distribute.MirroredStrategy()
    assert not em.distribute.in_cross_replica_context()
    with strategy.scope():
        assert em.distribute.in_cross_replica_context()
        assert strategy.run(em.distribute.in_cross_replica_context) is False
    with pytest.raises(ValueError, match="batch dim"):
        em.nn.compute_average_loss(em.constant(1.0))


def test_pow_of_one_half_is_cs_pow_eagerly_too():
    """numpy takes sqrt for a single exponent of 0.5 (sqrt(-inf) = nan, sqrt(-0) = -0);
    the reference kernel gives C's pow, as compiled code and an array of exponents do."""
    x = np.array([-np.inf, -0.0, 0.0, 4.0, np.nan], np.float32)
    for fn in (lambda x: x ** 0.5, lambda x: em.pow(x, em.constant(0.5))):
        for run in (fn, em.function(fn)):
            got = run(em.constant(x)).numpy()
            assert got[:4].tolist() == [np.inf, 0.0, 0.0, 2.0] and np.isnan(got[4])
            assert not np.signbit(got[1])
