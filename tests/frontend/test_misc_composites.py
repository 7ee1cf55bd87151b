"""em.norm's vector and matrix norms, add_n, clip_by_global_norm, unique_with_counts,
matrix_transpose/adjoint, reduce_euclidean_norm and cumulative_logsumexp: eager against a
numpy oracle, and compiled (static, dynamic and empty shapes) against numpy too, with no
fallback to the interpreter. Also input_signature's conversion of Python values."""

import collections

import numpy as np
import pytest

import ember as em

M = np.array([[2.0, -1.0], [1.0, 3.0]])
A = np.array([[[-3.0, -0.5, 0.0, 0.7], [2.5, -1e-3, 8.0, -7.5], [1.0, 2.0, -2.0, 0.25]],
              [[0.5, 4.0, -1.0, 2.0], [0.0, 0.0, 1.5, -6.0], [3.0, -3.0, 0.5, 1.0]]])


def _check(fn, oracle, arrays, rtol=2e-6, atol=1e-6, exact=False):
    """fn eager, compiled with static shapes and compiled with `?` dims, each against
    oracle (in float64), in float32 and float64."""
    for dtype in (np.float32, np.float64):
        ins = [a.astype(dtype) for a in arrays]
        want = oracle(*[a.astype(np.float64) for a in ins])
        spec = [em.TensorSpec([None] * a.ndim, em.as_dtype(dtype)) for a in ins]
        runs = {"eager": fn, "static": em.function(fn),
                "dynamic": em.function(fn, input_signature=spec)}
        for how, run in runs.items():
            got = run(*[em.constant(a) for a in ins])
            assert got.dtype == em.as_dtype(dtype), how
            tol = dict(rtol=0, atol=0) if exact else dict(
                rtol=rtol if dtype == np.float32 else 1e-12, atol=atol)
            np.testing.assert_allclose(got.numpy(), want, **tol, err_msg=how)


# -- em.norm ------------------------------------------------------------------------------

NORMS = [  # (ord, axis, keepdims) on A (rank 3)
    ("euclidean", None, False), (2, -1, False), (1, 0, True), (np.inf, 1, False),
    (3, 2, False), (0.5, 1, True), (1.5, None, False),
    ("fro", (1, 2), False), ("euclidean", [-2, -1], True), (1, [-2, -1], False),
    (1, (2, 1), True), (np.inf, [1, 2], False), (np.inf, (0, 2), True), (1, (0, 1), False)]


def _numpy_norm(x, ord, axis, keepdims):  # noqa: A002
    if axis is None:  # TensorFlow: the whole tensor as one vector
        flat = np.linalg.norm(x.reshape(-1), None if ord == "euclidean" else ord)
        return flat.reshape([1] * x.ndim) if keepdims else flat
    if isinstance(axis, list):
        axis = tuple(axis)
    return np.linalg.norm(x, "fro" if ord == "euclidean" and isinstance(axis, tuple)
                          else None if ord == "euclidean" else ord, axis, keepdims)


@pytest.mark.parametrize("ord,axis,keepdims", NORMS)
def test_norm_matches_numpy(ord, axis, keepdims, no_fallback):  # noqa: A002
    for norm in (em.norm, em.linalg.norm):
        _check(lambda x: norm(x, ord=ord, axis=axis, keepdims=keepdims),
               lambda x: _numpy_norm(x, ord, axis, keepdims), [A], rtol=1e-5)


def test_matrix_norms_of_the_issue():
    m = em.constant(M.astype(np.float32))
    assert em.linalg.norm(m, ord=1, axis=[-2, -1]).numpy() == 4.0  # max column abs sum
    assert em.linalg.norm(m, ord=np.inf, axis=[-2, -1]).numpy() == 4.0  # max row abs sum
    assert em.linalg.norm(em.constant([[1.0, -5.0], [2.0, 0.0]]), ord=np.inf,
                          axis=[-2, -1]).numpy() == 6.0
    assert em.linalg.norm(em.constant([[1.0, -5.0], [2.0, 0.0]]), ord=1,
                          axis=[-2, -1]).numpy() == 5.0
    np.testing.assert_allclose(em.norm(m, "fro", axis=[0, 1]).numpy(), np.sqrt(15), 1e-6)
    np.testing.assert_allclose(em.norm(m).numpy(), np.sqrt(15), 1e-6)  # axis None: vector


def test_norm_on_empty_and_dynamic_rank_inputs(no_fallback):
    empty = np.zeros((0, 3), np.float32)
    for ord in ("fro", 1):  # noqa: A001
        f = em.function(lambda x: em.norm(x, ord=ord, axis=[0, 1]),
                        input_signature=[em.TensorSpec([None, None], em.float32)])
        assert f(empty).numpy() == 0.0 == np.linalg.norm(empty, ord)
    f = em.function(lambda x: em.norm(x, ord=1, axis=[-2, -1]),
                    input_signature=[em.TensorSpec(None, em.float32)])
    assert f(M.astype(np.float32)).numpy() == 4.0


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(ord=2, axis=[0, 1]), ValueError, "spectral norm"),
    (dict(ord="nuc", axis=[0, 1]), ValueError, "matrix norm's ord"),
    (dict(ord=0), ValueError, "positive real"),
    (dict(ord=-1, axis=0), ValueError, "positive real"),
    (dict(ord=np.nan), ValueError, "positive real"),
    (dict(ord="fro", axis=1), ValueError, "'fro' is for matrix norms"),
    (dict(ord=True), ValueError, "positive real"),
    (dict(axis=[0, 0]), ValueError, "must differ"),
    (dict(axis=[0, -2]), ValueError, "must differ"),
    (dict(axis=[0, 1, 2]), ValueError, "pair of ints"),
    (dict(axis=5), ValueError, "out of range"),
    (dict(axis=1.5), TypeError, "axis must be an int"),
])
def test_norm_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        em.norm(em.constant(M.astype(np.float32)), **kwargs)


def test_norm_needs_floats():
    with pytest.raises(TypeError, match="floating-point"):
        em.norm(em.constant([1, 2]))


# -- em.math.reduce_euclidean_norm ----------------------------------------------------------

@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), ([0, 2], True)])
def test_reduce_euclidean_norm(axis, keepdims, no_fallback):
    _check(lambda x: em.math.reduce_euclidean_norm(x, axis, keepdims),
           lambda x: np.sqrt((x * x).sum(axis=None if axis is None else tuple(np.atleast_1d(
               axis)), keepdims=keepdims)), [A])


def test_reduce_euclidean_norm_of_integers_truncates_as_tensorflow(no_fallback):
    x = em.constant([[1, 2, 3], [1, 1, 1]])
    for run in (em.math.reduce_euclidean_norm, em.function(em.math.reduce_euclidean_norm)):
        got = run(x)
        assert got.dtype == em.int32 and got.numpy() == 4  # floor(sqrt(17))
    assert em.math.reduce_euclidean_norm(x, 1).numpy().tolist() == [3, 1]


# -- em.add_n -----------------------------------------------------------------------------

def test_add_n(no_fallback):
    _check(lambda a, b, c: em.add_n([a, b, c]), lambda a, b, c: a + b + c,
           [A, A * 2, -A[::-1]])
    _check(lambda a: em.math.add_n([a]), lambda a: a, [A], exact=True)
    x = em.constant([1, 2])
    assert em.add_n((x, [10, 20])).numpy().tolist() == [11, 22]


@pytest.mark.parametrize("inputs,error,match", [
    ([], ValueError, "non-empty list"),
    (em.constant([1.0]), ValueError, "non-empty list"),
    ([em.constant([1.0]), em.constant([1])], TypeError, "inputs\\[1\\] has dtype int32"),
    ([em.constant([1.0]), em.constant([1.0, 2.0])], ValueError, "does not broadcast"),
])
def test_add_n_bad_inputs(inputs, error, match):
    with pytest.raises(error, match=match):
        em.add_n(inputs)


# -- em.clip_by_global_norm -------------------------------------------------------------------

def _numpy_clip_global(ts, clip, use_norm=None):
    norm = np.sqrt(sum((t * t).sum() for t in ts)) if use_norm is None else use_norm
    return [t * clip / max(norm, clip) for t in ts], norm


@pytest.mark.parametrize("clip", [1.0, 100.0])
def test_clip_by_global_norm(clip, no_fallback):
    for j in range(2):
        _check(lambda a, b: em.clip_by_global_norm([a, b], clip)[0][j],
               lambda a, b: _numpy_clip_global([a, b], clip)[0][j], [A, M])
    _check(lambda a, b: em.clip_by_global_norm([a, b], clip)[1],
           lambda a, b: _numpy_clip_global([a, b], clip)[1], [A, M])
    _check(lambda a, b: em.clip_by_global_norm((a, b), clip, use_norm=2.0)[0][1],
           lambda a, b: _numpy_clip_global([a, b], clip, 2.0)[0][1], [A, M])


def test_clip_by_global_norm_keeps_none_and_makes_nan_for_an_infinite_norm(no_fallback):
    x = em.constant([3.0, 4.0])
    for run in (em.clip_by_global_norm, em.function(em.clip_by_global_norm)):
        clipped, norm = run([x, None, x * 0], 1.0)
        assert clipped[1] is None and float(norm.numpy()) == pytest.approx(5.0)
        np.testing.assert_allclose(clipped[0].numpy(), [0.6, 0.8], rtol=1e-6)
        clipped, norm = run([em.constant([np.inf, 1.0])], 1.0)
        assert np.isinf(norm.numpy()) and np.isnan(clipped[0].numpy()).all()
        clipped, norm = run([em.zeros([2])], 1.0)  # a zero norm leaves zeros
        assert norm.numpy() == 0 and clipped[0].numpy().tolist() == [0.0, 0.0]


def test_clip_by_global_norm_bad_inputs():
    with pytest.raises(TypeError, match="list or tuple"):
        em.clip_by_global_norm(em.constant([1.0]), 1.0)
    with pytest.raises(TypeError, match="floating-point"):
        em.clip_by_global_norm([em.constant([1])], 1.0)
    with pytest.raises(ValueError, match="no tensors"):
        em.clip_by_global_norm([None], 1.0)


def test_global_norm(no_fallback):
    _check(lambda a, b: em.linalg.global_norm([a, None, b]),
           lambda a, b: _numpy_clip_global([a, b], 1.0)[1], [A, M])
    with pytest.raises(TypeError, match="em.linalg.global_norm: t_list must be a list"):
        em.linalg.global_norm(em.constant([1.0]))
    with pytest.raises(TypeError, match="em.linalg.global_norm: .* int32 tensor"):
        em.linalg.global_norm([em.constant([1])])
    with pytest.raises(ValueError, match="em.linalg.global_norm: t_list has no tensors"):
        em.linalg.global_norm([None])


# -- em.unique_with_counts --------------------------------------------------------------------

def _numpy_unique_with_counts(x):
    order = collections.OrderedDict()
    for v in x.tolist():
        order[v] = order.get(v, 0) + 1
    y = list(order)
    return y, [y.index(v) for v in x.tolist()], list(order.values())


@pytest.mark.parametrize("values", [[1, 1, 2, 4, 4, 4, 7, 8, 8], [5], [], [3, -1, 3, -1, 0]])
@pytest.mark.parametrize("out_idx", [em.int32, em.int64])
def test_unique_with_counts(values, out_idx, no_fallback):
    x = np.array(values, np.int32)
    want = _numpy_unique_with_counts(x)
    fn = lambda t: em.unique_with_counts(t, out_idx=out_idx)  # noqa: E731
    runs = [fn, em.function(fn), em.function(fn, input_signature=[em.TensorSpec([None],
                                                                                 em.int32)])]
    for run in runs:
        y, idx, count = run(em.constant(x))
        assert idx.dtype == out_idx and count.dtype == out_idx
        assert (y.numpy().tolist(), idx.numpy().tolist(), count.numpy().tolist()) == want
    out = em.unique_with_counts(em.constant([2.0, 2.0]))
    assert out._fields == ("y", "idx", "count")


def test_unique_with_counts_bad_inputs():
    with pytest.raises(ValueError, match="must be 1-D"):
        em.unique_with_counts(em.constant([[1, 2]]))
    with pytest.raises(TypeError, match="out_idx"):
        em.unique_with_counts(em.constant([1, 2]), out_idx=em.float32)


# -- em.linalg.matrix_transpose / adjoint, em.transpose(conjugate=) ---------------------------

def test_matrix_transpose_and_adjoint(no_fallback):
    swap = lambda x: np.swapaxes(x, -1, -2)  # noqa: E731
    _check(em.linalg.matrix_transpose, swap, [A], exact=True)
    _check(lambda x: em.linalg.matrix_transpose(x, conjugate=True), swap, [M], exact=True)
    _check(em.linalg.adjoint, swap, [A], exact=True)
    _check(lambda x: em.transpose(x, conjugate=True), lambda x: x.T, [A], exact=True)
    _check(lambda x: em.linalg.adjoint(x), swap, [A[:, :0]], exact=True)
    ints = em.constant([[1, 2, 3]])
    assert em.linalg.adjoint(ints).numpy().tolist() == [[1], [2], [3]]


def test_matrix_transpose_needs_matrices():
    with pytest.raises(ValueError, match="rank >= 2"):
        em.linalg.matrix_transpose(em.constant([1.0, 2.0]))
    f = em.function(em.linalg.adjoint, input_signature=[em.TensorSpec(None, em.float32)])
    with pytest.raises(ValueError, match="known rank"):
        f(M.astype(np.float32))


# -- em.math.cumulative_logsumexp ------------------------------------------------------------

def _numpy_cumulative_logsumexp(x, axis, exclusive, reverse):
    x = np.moveaxis(x, axis, -1)
    if reverse:
        x = x[..., ::-1]
    out = np.logaddexp.accumulate(x, axis=-1)
    if exclusive:
        out = np.concatenate([np.full(out.shape[:-1] + (1,), -np.inf), out[..., :-1]], -1)
    if reverse:
        out = out[..., ::-1]
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_logsumexp(axis, exclusive, reverse, no_fallback):
    _check(lambda x: em.math.cumulative_logsumexp(x, axis, exclusive, reverse),
           lambda x: _numpy_cumulative_logsumexp(x, axis, exclusive, reverse), [A * 20],
           rtol=1e-5)


def test_cumulative_logsumexp_keeps_static_dims_compiled(no_fallback):
    for spec, want in (([em.TensorSpec([3, 4])], (3, 4)), ([em.TensorSpec([None, 4])],
                                                            (None, 4))):
        f = em.function(lambda x: em.math.cumulative_logsumexp(x, 0, exclusive=True),
                        input_signature=spec)
        assert f.get_concrete_function().structured_outputs.shape == want


def test_cumulative_logsumexp_special_values(no_fallback):
    x = np.array([-np.inf, 0.0, -np.inf, 500.0, np.inf, 1.0], np.float32)
    want = [-np.inf, 0.0, 0.0, 500.0, np.inf, np.inf]
    for run in (em.math.cumulative_logsumexp, em.function(em.math.cumulative_logsumexp)):
        np.testing.assert_allclose(run(em.constant(x)).numpy(), want)
        assert run(em.constant(np.full(3, -np.inf, np.float32))).numpy().tolist() == [
            -np.inf] * 3
        assert run(em.zeros([0, 2])).shape == (0, 2)
    with pytest.raises(TypeError, match="floating-point"):
        em.math.cumulative_logsumexp(em.constant([1, 2]))


def test_cumulative_logsumexp_is_stable_far_below_the_maximum(no_fallback):
    x = np.array([-3000.0, -2000.0, -1999.0, 0.0, np.nan, 1.0, 2.0])
    with np.errstate(invalid="ignore"):
        want = np.logaddexp.accumulate(x)
    assert want[2] > -2000  # a max shift would underflow these to -inf
    for dtype in (np.float32, np.float64):
        for run in (em.math.cumulative_logsumexp, em.function(
                em.math.cumulative_logsumexp,
                input_signature=[em.TensorSpec([None], em.as_dtype(dtype))])):
            got = run(em.constant(x.astype(dtype))).numpy()
            np.testing.assert_allclose(got, want.astype(dtype), rtol=1e-6)
    half = em.math.cumulative_logsumexp(em.constant(np.zeros(4, np.float16)), reverse=True)
    assert half.dtype == em.float16
    np.testing.assert_allclose(half.numpy(), np.log([4, 3, 2, 1]), rtol=1e-3)


def test_cumulative_logsumexp_scalars_and_bad_axes():
    x = em.constant(2.0)
    assert em.math.cumulative_logsumexp(x).numpy() == 2.0
    assert em.math.cumulative_logsumexp(x, exclusive=True).numpy() == -np.inf
    with pytest.raises(ValueError, match="out of range"):
        em.math.cumulative_logsumexp(em.zeros([2, 3]), axis=2)
    with pytest.raises(TypeError, match="axis must be an int"):
        em.math.cumulative_logsumexp(em.zeros([2, 3]), axis=[0])
    f = em.function(em.math.cumulative_logsumexp, input_signature=[em.TensorSpec(None)])
    with pytest.raises(ValueError, match="known rank"):
        f(np.zeros(3, np.float32))


# -- input_signature converts Python values to the spec's dtype -------------------------------

def test_input_signature_converts_python_values_losslessly():
    f = em.function(lambda x: x * 2, input_signature=[em.TensorSpec([], em.int32)])
    for value in (3, 3.0, np.int64(3), np.array(3, np.int8)):
        got = f(value)
        assert got.dtype == em.int32 and got.numpy() == 6
    assert f.experimental_get_tracing_count() == 1
    g = em.function(lambda x, pair: x + pair[0],
                    input_signature=[em.TensorSpec([None], em.float32),
                                     [em.TensorSpec([2], em.float32)]])
    got = g([1, 2.5], [(0.5, 1)])
    assert got.dtype == em.float32 and got.numpy().tolist() == [1.5, 3.5]
    h = em.function(lambda x: x, input_signature=[em.TensorSpec([None], em.int64)])
    for _ in range(3):  # converted calls take the general path, never a stale fast entry
        assert h(np.arange(3, dtype=np.int32)).dtype == em.int64  # widening integers
        assert h(np.arange(3)).numpy().tolist() == [0, 1, 2]
        assert h(np.arange(4, dtype=np.uint8)).numpy().tolist() == [0, 1, 2, 3]
    d = em.function(lambda s: s["a"] + 1, input_signature=[{"a": em.TensorSpec([], em.int32)}])
    assert d({"a": 3}).numpy() == 4 and d({"a": em.constant(5)}).numpy() == 6


@pytest.mark.parametrize("value,match", [
    (3.5, "3.5 \\(it does not convert to int32 without loss\\)"),
    (2 ** 40, "without loss"),
    (True, "bools convert only to bool"),
    ("a", "should be a int32 tensor"),
    ([1, 2], "has shape \\(2,\\) \\(rank 1\\)"),
    (np.float64(3.0), "has dtype float64"),
    (np.array(2 ** 40), "has dtype int64"),
])
def test_input_signature_refuses_lossy_or_wrong_kind_values(value, match):
    f = em.function(lambda x: x, input_signature=[em.TensorSpec([], em.int32)])
    with pytest.raises(em.InputSignatureError, match=match):
        f(value)
    with pytest.raises(em.InputSignatureError, match="has dtype float32"):
        f(em.constant(3.0))  # tensors never convert (tf.function's guide)


def test_input_signature_float_conversion_refuses_overflow():
    f = em.function(lambda x: x, input_signature=[em.TensorSpec([None], em.float32)])
    assert f([0.1, 2]).numpy().tolist() == [np.float32(0.1), 2.0]
    with pytest.raises(em.InputSignatureError, match="without loss"):
        f([1e39])
    with pytest.raises(em.InputSignatureError, match="has dtype float64"):
        f(np.ones(2))  # float64 arrays narrow with loss in general: refused as tensors are
