"""em.cumsum / em.cumprod, em.searchsorted and em.math.lgamma / em.math.digamma: eager against
independent oracles (loops over Python numbers, bisect, math.lgamma, a series for digamma),
and compiled (no interpreter fallback) against eager on static, dynamic (`None` dims in the
input_signature) and empty shapes, in every dtype each accepts; errors alike both ways."""

import bisect
import math

import ml_dtypes
import numpy as np
import pytest

import ember as em

INTS = ["int8", "int16", "int32", "int64", "uint8"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMBOS = [(False, False), (True, False), (False, True), (True, True)]  # (exclusive, reverse)


@pytest.fixture(autouse=True)
def no_fallback():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    yield
    em.config.set_fallback(previous)


def np_dtype(name):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def sample(dtype, shape, rng):
    if dtype in INTS:
        low, high = (0, 6) if dtype == "uint8" else (-5, 6)
        return rng.integers(low, high, shape).astype(dtype)
    return (rng.standard_normal(shape) * 2).astype(np_dtype(dtype))


def scan_oracle(x, axis, exclusive, reverse, product):
    """Loops over Python numbers along `axis`, each partial result stored in x's dtype
    (integers wrap, floats round at every step: TensorFlow's accumulation)."""
    moved = np.moveaxis(x, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, 0)
    out = np.empty(flat.shape, x.dtype)
    info = np.iinfo(x.dtype) if x.dtype.kind in "iu" else None
    for i, row in enumerate(flat):
        acc = 1 if product else 0
        order = range(len(row) - 1, -1, -1) if reverse else range(len(row))
        for j in order:
            v = int(row[j]) if info else float(row[j])
            nxt = acc * v if product else acc + v
            if info:
                nxt = (nxt - int(info.min)) % (int(info.max) - int(info.min) + 1) + int(info.min)
            else:
                nxt = float(np.array(nxt).astype(x.dtype))
            out[i, j] = acc if exclusive else nxt
            acc = nxt
    return np.moveaxis(out.reshape(moved.shape), -1, axis)


def assert_close(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if dtype in INTS or dtype in ("int32", "int64"):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol={"float16": 2e-3, "bfloat16": 1.6e-2}.get(dtype, 1e-6),
                                   atol=1e-6, equal_nan=True)


def all_scans(x, axis):
    return [fn(x, axis, exclusive=e, reverse=r) for fn in (em.cumsum, em.cumprod)
            for e, r in COMBOS]


# -- cumsum / cumprod ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_scans_eager_match_loops_in_every_dtype(dtype, rng):
    x = sample(dtype, (3, 4), rng)
    for axis in (0, 1, -1, -2):
        got = all_scans(em.constant(x), axis)
        want = [scan_oracle(x, axis, e, r, product) for product in (False, True)
                for e, r in COMBOS]
        for g, w in zip(got, want):
            assert g.dtype.name == dtype
            if dtype in INTS:
                np.testing.assert_array_equal(g.numpy(), w)
            else:  # float rounding at each step: the same sequence of operations
                assert_close(g.numpy(), w, dtype)


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_scans_compiled_match_eager_static_dynamic_empty(dtype, rng):
    x = sample(dtype, (3, 5), rng)
    static = em.function(lambda t: all_scans(t, 1) + all_scans(t, -2))
    dynamic = em.function(lambda t: all_scans(t, -1) + all_scans(t, 0),
                          input_signature=[em.TensorSpec([None, None], dtype)])
    for inp in (x, x[:0], x[:, :0], x[:1]):
        eager = all_scans(em.constant(inp), 1) + all_scans(em.constant(inp), 0)
        got_static = static(em.constant(inp))
        got_dynamic = dynamic(em.constant(inp))
        for e, s, d in zip(eager, got_static, got_dynamic):
            # compiled computes the same steps in the same order: bit for bit
            np.testing.assert_array_equal(s.numpy().view(np.uint8), e.numpy().view(np.uint8))
            np.testing.assert_array_equal(d.numpy().view(np.uint8), e.numpy().view(np.uint8))


def test_scans_over_a_middle_axis_of_rank_3_and_a_vector(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    f = em.function(lambda t: (em.cumsum(t, 1, reverse=True), em.math.cumprod(t, -2)),
                    input_signature=[em.TensorSpec([2, None, 4], em.float32)])
    a, b = f(em.constant(x))
    assert_close(a.numpy(), scan_oracle(x, 1, False, True, False), "float32")
    assert_close(b.numpy(), scan_oracle(x, 1, False, False, True), "float32")
    v = np.array([1, 2, 3, 4], np.int64)
    assert em.math.cumsum(v, exclusive=True).numpy().tolist() == [0, 1, 3, 6]
    assert em.cumprod(v, reverse=True).numpy().tolist() == [24, 24, 12, 4]


def test_scan_special_values_propagate_like_tensorflow():
    x = em.constant([1.0, np.inf, 0.0, 2.0, np.nan, 3.0], em.float32)
    np.testing.assert_array_equal(em.cumsum(x).numpy(), [1, np.inf, np.inf, np.inf, np.nan,
                                                         np.nan])
    np.testing.assert_array_equal(em.cumprod(x).numpy(), [1, np.inf, np.nan, np.nan, np.nan,
                                                          np.nan])
    # float16 accumulates in float16 (TF's kernel): 2048 + 1 rounds back to 2048
    h = em.cumsum(em.ones([2050], em.float16))
    assert h.numpy()[-1] == 2048
    assert em.function(lambda t: em.cumsum(t))(em.ones([2050], em.float16)).numpy()[-1] == 2048


def test_int_scans_wrap():
    x = em.constant([100, 100, 100], em.int8)
    assert em.cumsum(x).numpy().tolist() == [100, -56, 44]
    assert em.function(lambda t: em.cumprod(t))(x).numpy().tolist() == [100, 16, 64]


def test_axis_as_a_constant_scalar_tensor(rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    eager = em.cumsum(em.constant(x), axis=em.constant(-1))
    compiled = em.function(lambda t: em.cumsum(t, axis=em.constant(1, em.int64)))(x)
    want = scan_oracle(x, 1, False, False, False)
    assert_close(eager.numpy(), want, "float32")
    np.testing.assert_array_equal(compiled.numpy(), eager.numpy())


@pytest.mark.parametrize("fn", [em.cumsum, em.cumprod])
@pytest.mark.parametrize("axis", [2, -3])
def test_axis_out_of_range_raises_eager_and_traced(fn, axis):
    message = f"'ember.{fn.__name__}' op axis {axis} is out of range for rank 2"
    with pytest.raises(em.OpAttributeError, match=message):
        fn(em.zeros([2, 3]), axis)
    with pytest.raises(em.OpAttributeError, match=message):
        em.function(lambda t: fn(t, axis))(em.zeros([2, 3]))


def test_bad_axis_and_operand_kinds_raise_clearly():
    with pytest.raises(em.OpAttributeError, match="a scan needs an operand of rank >= 1"):
        em.cumsum(em.constant(3.0))
    with pytest.raises(TypeError, match=r"em.cumsum: axis must be an int, got float 1.0"):
        em.cumsum(em.zeros([2]), 1.0)
    with pytest.raises(TypeError, match="em.cumprod: axis must be a Python int or a scalar "
                                        "integer tensor known when tracing"):
        em.cumprod(em.zeros([2]), em.constant([0]))
    with pytest.raises(em.OpTypeError, match="must have numeric"):
        em.cumsum(em.constant([True, False]))

    @em.function(input_signature=[em.TensorSpec([3], em.float32), em.TensorSpec([], em.int32)])
    def run_time_axis(t, a):
        return em.cumsum(t, a)
    with pytest.raises(TypeError, match="whose value is only known at run time"):
        run_time_axis(em.zeros([3]), em.constant(0))


# -- searchsorted ---------------------------------------------------------------------------------

def search_oracle(seq, values, side):
    find = bisect.bisect_left if side == "left" else bisect.bisect_right
    rows = int(np.prod(seq.shape[:-1]))
    s2 = seq.reshape(rows, seq.shape[-1])
    v2 = values.reshape(rows, values.shape[-1])
    return np.array([[find(list(s), v) for v in row] for s, row in
                     zip(s2.tolist(), v2.tolist())], np.int64).reshape(values.shape)


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_searchsorted_eager_and_compiled_in_every_dtype(dtype, rng):
    seq = np.sort(sample(dtype, (2, 3, 9), rng).astype(np.float64), axis=-1).astype(np_dtype(dtype))
    values = sample(dtype, (2, 3, 5), rng)
    values.reshape(-1)[:3] = seq.reshape(-1)[[0, 4, 8]]  # ties with the sequence

    def both(s, v):
        return (em.searchsorted(s, v), em.searchsorted(s, v, side="right", out_type=em.int64))
    static = em.function(both)
    dynamic = em.function(both, input_signature=[em.TensorSpec([None, None, None], dtype),
                                                 em.TensorSpec([None, None, None], dtype)])
    for s, v in ((seq, values), (seq[:, :, :0], values), (seq, values[:, :, :0]),
                 (seq[:0], values[:0])):
        left, right = both(em.constant(s), em.constant(v))
        assert left.dtype is em.int32 and right.dtype is em.int64
        np.testing.assert_array_equal(left.numpy(), search_oracle(s, v, "left"))
        np.testing.assert_array_equal(right.numpy(), search_oracle(s, v, "right"))
        for f in (static, dynamic):
            cl, cr = f(em.constant(s), em.constant(v))
            np.testing.assert_array_equal(cl.numpy(), left.numpy())
            np.testing.assert_array_equal(cr.numpy(), right.numpy())


def lower_bound(seq, v, right):
    """libstdc++'s std::lower_bound / upper_bound, probe for probe (TensorFlow's kernel)."""
    first, count = 0, len(seq)
    while count > 0:
        step = count // 2
        it = first + step
        if (not (v < seq[it])) if right else (seq[it] < v):
            first, count = it + 1, count - step - 1
        else:
            count = step
    return first


def test_searchsorted_nan_follows_tensorflow_not_numpy():
    seq = np.array([1.0, 2.0, 3.0, np.nan, np.nan], np.float32)  # numpy sorts NaN last
    values = np.array([np.nan, 2.0, 5.0, -np.inf], np.float32)
    f = em.function(lambda s, v: (em.searchsorted(s, v), em.searchsorted(s, v, side="right")))
    for side, eager, compiled in zip(("left", "right"),
                                     (em.searchsorted(seq, values),
                                      em.searchsorted(seq, values, side="right")),
                                     f(seq, values)):
        want = [lower_bound(seq.tolist(), v, side == "right") for v in values.tolist()]
        assert eager.numpy().tolist() == want == compiled.numpy().tolist()
    # a NaN value: 0 on the left, the end on the right (numpy says 3 for both)
    assert em.searchsorted(seq, [np.nan]).numpy().tolist() == [0]
    assert em.searchsorted(seq, [np.nan], side="right").numpy().tolist() == [5]


def test_searchsorted_errors_eager_and_compiled():
    with pytest.raises(em.OpShapeError, match="must have the same rank and leading dims"):
        em.searchsorted(em.zeros([2, 5]), em.zeros([3, 1]))
    with pytest.raises(em.OpShapeError, match="must have the same rank and leading dims"):
        em.function(lambda s, v: em.searchsorted(s, v))(em.zeros([2, 5]), em.zeros([3, 1]))
    dynamic = em.function(lambda s, v: em.searchsorted(s, v),
                          input_signature=[em.TensorSpec([None, 5]), em.TensorSpec([None, 1])])
    with pytest.raises(em.OpShapeError):
        dynamic(em.zeros([2, 5]), em.zeros([3, 1]))
    with pytest.raises(ValueError, match="side must be 'left' or 'right', got 'up'"):
        em.searchsorted([1.0], [1.0], side="up")
    with pytest.raises(em.OpAttributeError, match="out_type must be i32 or i64, got i16"):
        em.searchsorted([1.0], [1.0], out_type=em.int16)
    with pytest.raises(em.OpTypeError, match="have different element types"):
        em.searchsorted(em.constant([1.0]), em.constant([1.0], em.float64))
    with pytest.raises(em.OpShapeError, match="must have rank >= 1"):
        em.searchsorted(em.constant([1.0]), em.constant(1.0))


# -- lgamma / digamma -------------------------------------------------------------------------

BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510]


def digamma_oracle(v: float) -> float:
    """psi(v) in float64 by another route than the kernel: reflection below 1/2 with
    math.tan of the distance to the nearest integer, a shift to >= 20 summed with
    math.fsum, and 8 terms of the asymptotic series. NaN at the poles (TensorFlow)."""
    if math.isnan(v) or (v <= 0 and v == math.floor(v)):
        return math.nan
    if v == math.inf:
        return math.inf
    if v < 0.5:
        return digamma_oracle(1 - v) - math.pi / math.tan(math.pi * (v - round(v)))
    terms = []
    while v < 20:
        terms.append(-1 / v)
        v += 1
    terms += [math.log(v), -0.5 / v]
    terms += [-b / (2 * k) * (1 / v) ** (2 * k) for k, b in enumerate(BERNOULLI, 1)]
    return math.fsum(terms)


def lgamma_oracle(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:
        return math.inf


DIGAMMA_ROOT = 1.4616321449683623  # psi's only positive zero: relative error grows near it


def special_inputs(rng):
    x = np.concatenate([rng.uniform(-20, 20, 400), rng.uniform(1e-6, 3, 200),
                        np.exp(rng.uniform(-30, 30, 100)),
                        [0.5, 1, 2, 3, 10, -0.5, -1.5, -2.5, 1e-30, 1e10, 1e300]])
    return x[np.abs(x - DIGAMMA_ROOT) > 1e-2]


@pytest.mark.parametrize("dtype,ulps", [("float32", 2), ("float64", None)])
def test_digamma_accuracy_against_series(dtype, ulps, rng):
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        x = special_inputs(rng).astype(dtype)
    want = np.array([digamma_oracle(v) for v in x.astype(np.float64).tolist()])
    eager = em.math.digamma(x).numpy()
    compiled = em.function(em.math.digamma)(x).numpy()
    finite = np.isfinite(want)
    np.testing.assert_array_equal(eager[~finite], want[~finite].astype(dtype))
    if dtype == "float32":  # computed in float64 and rounded once: within an ulp or two
        spacing = np.spacing(np.abs(want[finite].astype(np.float32)))
        error = np.abs(eager[finite] - want[finite])
        assert np.all(error <= ulps * spacing), np.max(error / spacing)
    else:
        np.testing.assert_allclose(eager, want, rtol=1e-13, atol=1e-15)
    # compiled takes fastmath's log (an ulp from numpy's): an ulp of log(s) in absolute terms
    np.testing.assert_allclose(compiled, eager, rtol=4 * np.finfo(dtype).eps,
                               atol=16 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", FLOATS)
def test_lgamma_digamma_eager_and_compiled_in_every_float(dtype, rng):
    x = special_inputs(rng)[:200].astype(np_dtype(dtype))
    x64 = x.astype(np.float64)
    f = em.function(lambda t: (em.math.lgamma(t), em.math.digamma(t)),
                    input_signature=[em.TensorSpec([None], dtype)])
    lg, dg = em.math.lgamma(x), em.math.digamma(x)
    assert lg.dtype.name == dg.dtype.name == dtype
    tol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-13}[dtype]
    big = np.abs(x64) < 1e4 if dtype != "float64" else np.ones(x.shape, bool)
    np.testing.assert_allclose(lg.numpy().astype(np.float64)[big],
                               np.array([lgamma_oracle(v) for v in x64[big]]), rtol=tol,
                               atol=tol)
    np.testing.assert_allclose(dg.numpy().astype(np.float64),
                               np.array([digamma_oracle(v) for v in x64]), rtol=tol, atol=tol)
    clg, cdg = f(x)
    np.testing.assert_allclose(clg.numpy().astype(np.float64), lg.numpy().astype(np.float64),
                               rtol=tol, atol=0)
    np.testing.assert_allclose(cdg.numpy().astype(np.float64), dg.numpy().astype(np.float64),
                               rtol=tol, atol=1e-14)
    empty_lg, empty_dg = f(x[:0])
    assert empty_lg.shape == (0,) and empty_dg.numpy().dtype == x.dtype


def test_poles_and_infinities_follow_tensorflow():
    x = np.array([0.0, -0.0, -1.0, -7.0, np.inf, -np.inf, np.nan], np.float32)
    want_lgamma = [np.inf, np.inf, np.inf, np.inf, np.inf, np.inf, np.nan]
    want_digamma = [np.nan, np.nan, np.nan, np.nan, np.inf, np.nan, np.nan]
    f = em.function(lambda t: (em.math.lgamma(t), em.math.digamma(t)))
    for lg, dg in ((em.math.lgamma(x), em.math.digamma(x)), f(x)):
        np.testing.assert_array_equal(lg.numpy(), want_lgamma)
        np.testing.assert_array_equal(dg.numpy(), want_digamma)


def test_special_functions_reject_integers():
    with pytest.raises(em.OpTypeError, match="'ember.lgamma' op operand of type "
                                             "tensor<2xi32> must have floating-point elements"):
        em.math.lgamma(em.constant([1, 2]))
    with pytest.raises(em.OpTypeError, match="'ember.digamma' op operand"):
        em.function(em.math.digamma)(em.constant([1, 2]))
