"""em.sort, em.argsort, em.math.top_k: eager against a Python `sorted` oracle (stable, NaN
above every number, -0.0 == 0.0), and compiled against eager with no fallback to the
interpreter, on static, dynamic (`?`) and empty shapes in every numeric dtype."""

import contextlib

import ml_dtypes
import numpy as np
import pytest

import ember as em

DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.int8, np.int16, np.int32,
          np.int64, np.uint8]
RNG = np.random.default_rng(7)


def sample(dtype, shape=(3, 9)) -> np.ndarray:
    """Values with many ties; floats also get NaN, +-inf, -0.0 and 0.0."""
    x = RNG.integers(0 if dtype == np.uint8 else -3, 4, size=shape).astype(dtype)
    if np.dtype(dtype).kind in "fV" and x.size >= 9:
        flat = x.reshape(-1)
        flat[:6] = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, np.nan]).astype(dtype)
        RNG.shuffle(flat)
    return x


def oracle(x: np.ndarray, axis: int = -1, descending: bool = False):
    """(values, int32 indices) sorting `x` stably along `axis` with Python's `sorted`."""
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(int(np.prod(moved.shape[:-1])), moved.shape[-1])
    rows = rows.astype(np.float64).tolist()

    def key(v):
        nan = v != v
        return (0 if nan else 1, 0.0 if nan else -v) if descending else \
            (1 if nan else 0, 0.0 if nan else v)
    order = np.array([sorted(range(len(r)), key=lambda i: key(r[i])) for r in rows],
                     np.int64).reshape(moved.shape)
    values = np.take_along_axis(moved, order, -1)
    return (np.moveaxis(values, -1, axis), np.moveaxis(order.astype(np.int32), -1, axis))


def same(got, want):
    """Bit-exact equality (NaN sign bits and -0.0 included)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if want.dtype.kind in "fV":
        got, want = got.view(f"u{want.itemsize}"), want.view(f"u{want.itemsize}")
    np.testing.assert_array_equal(got, want)


@contextlib.contextmanager
def no_fallback():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        yield
    finally:
        em.config.set_fallback(previous)


@pytest.mark.parametrize("k", [1, 8, 9])
@pytest.mark.parametrize("dtype", [np.float32, np.int8], ids=lambda d: np.dtype(d).name)
def test_top_k_by_selection_and_by_sort_agree_with_the_sort(k, dtype):
    """Up to k = 8 over a static last dim of 1024 or more, top_k selects (k rounds); else it
    sorts: both give the head of the stable descending sort, NaN first, eagerly, compiled
    and with `?` dims (a sort)."""
    x = sample(dtype, shape=(2, 1100))
    values, indices = oracle(x, descending=True)
    dynamic = em.function(lambda t: em.math.top_k(t, k=k),
                          input_signature=[em.TensorSpec([None, None], em.as_dtype(dtype))])
    for run in (lambda t: em.math.top_k(t, k=k), em.function(lambda t: em.math.top_k(t, k=k)),
                dynamic):
        result = run(x)
        same(result.values.numpy(), values[:, :k])
        same(result.indices.numpy(), indices[:, :k])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
def test_eager_sort_and_argsort_match_the_oracle(dtype, direction):
    x = sample(dtype)
    values, indices = oracle(x, descending=direction == "DESCENDING")
    same(em.sort(x, direction=direction).numpy(), values)
    same(em.argsort(x, direction=direction).numpy(), indices)
    if direction == "ASCENDING" and np.dtype(dtype).kind != "V":  # numpy agrees
        same(em.argsort(x, stable=True).numpy(), np.argsort(x, -1, kind="stable").astype(
            np.int32))


def test_nan_and_signed_zeros_keep_their_input_order():
    x = np.array([0.0, np.nan, -0.0, 1.0, -np.nan, 0.0, -1.0], np.float32)
    same(em.argsort(x).numpy(), np.array([6, 0, 2, 5, 3, 1, 4], np.int32))
    same(em.argsort(x, direction="DESCENDING").numpy(),
         np.array([1, 4, 3, 0, 2, 5, 6], np.int32))
    top = em.math.top_k(x, 2)
    same(top.indices.numpy(), np.array([1, 4], np.int32))
    assert np.isnan(top.values.numpy()).all()


@pytest.mark.parametrize("axis", [0, 1, -3])
def test_eager_sort_along_other_axes(axis):
    x = sample(np.float32, (4, 5, 3))
    values, indices = oracle(x, axis=axis, descending=True)
    same(em.sort(x, axis=axis, direction="DESCENDING").numpy(), values)
    same(em.argsort(x, axis=axis, direction="DESCENDING").numpy(), indices)


@pytest.mark.parametrize("k", [0, 1, 4, 9])
def test_eager_top_k_is_the_head_of_the_descending_sort(k):
    x = sample(np.int32)
    values, indices = oracle(x, descending=True)
    result = em.math.top_k(x, k=k)
    assert type(result).__name__ == "TopKV2" and result._fields == ("values", "indices")
    same(result.values.numpy(), values[:, :k])
    same(result.indices.numpy(), indices[:, :k])
    wide = em.math.top_k(x, k=em.constant(k), index_type=em.int64)
    same(wide.indices.numpy(), indices[:, :k].astype(np.int64))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_compiled_matches_eager_static_dynamic_and_empty(dtype):
    def program(x):
        return (em.sort(x), em.argsort(x, direction="DESCENDING"),
                em.sort(x, axis=0, direction="DESCENDING"), em.math.top_k(x, 2))
    spec = [em.TensorSpec([None, None], em.as_dtype(dtype))]
    static, dynamic = em.function(program), em.function(program, input_signature=spec)
    with no_fallback():
        for x in (sample(dtype), sample(dtype, (1, 2)), sample(dtype, (0, 5))):
            want = program(em.constant(x))
            for fn in (static, dynamic):
                got = fn(x)
                for g, w in zip(got[:3] + tuple(got[3]), want[:3] + tuple(want[3])):
                    same(g.numpy(), w.numpy())


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 64, 100])
def test_compiled_sort_of_every_length(n):
    spec = [em.TensorSpec([None], em.float64)]
    fn = em.function(lambda x: em.argsort(x), input_signature=spec)
    x = RNG.integers(-5, 5, n).astype(np.float64)
    with no_fallback():
        same(fn(x).numpy(), oracle(x)[1])


def test_compiled_sort_of_rows_of_length_zero():
    fn = em.function(lambda x: em.sort(x, direction="DESCENDING"))
    with no_fallback():
        same(fn(np.zeros((3, 0), np.int8)).numpy(), np.zeros((3, 0), np.int8))


@pytest.mark.parametrize("k", [0, 3, 9])
def test_compiled_top_k_with_k_zero_to_n(k):
    x = sample(np.float32)
    want = em.math.top_k(x, k)
    spec = [em.TensorSpec([None, None], em.float32), em.TensorSpec([], em.int32)]
    fn = em.function(lambda x, k: em.math.top_k(x, k), input_signature=spec)
    with no_fallback():
        for got in (em.function(lambda x: em.math.top_k(x, k))(x), fn(x, np.int32(k))):
            same(got.values.numpy(), want.values.numpy())
            same(got.indices.numpy(), want.indices.numpy())


K_ERROR = r"k must lie in \[0, n\] for n the size of the last dim of input"


def test_top_k_with_k_above_n_raises_eagerly_and_compiled():
    x = sample(np.float32, (2, 3))
    with pytest.raises(em.InvalidArgumentError, match=K_ERROR + "; got k = 4, n = 3"):
        em.math.top_k(x, 4)
    with pytest.raises(em.InvalidArgumentError, match=K_ERROR + "; got k = -1, n = 3"):
        em.math.top_k(x, -1)
    with pytest.raises(em.InvalidArgumentError, match=K_ERROR + "; got k = 4, n = 3"):
        em.function(lambda x: em.math.top_k(x, 4))(x)  # known while tracing
    spec = [em.TensorSpec([None, None], em.float32)]
    with no_fallback(), pytest.raises(em.InvalidArgumentError, match=K_ERROR):
        em.function(lambda x: em.math.top_k(x, 4), input_signature=spec)(x)  # when it runs
    dynamic_k = [em.TensorSpec([2, 3], em.float32), em.TensorSpec([], em.int64)]
    fn = em.function(lambda x, k: em.math.top_k(x, k), input_signature=dynamic_k)
    with no_fallback(), pytest.raises(em.InvalidArgumentError, match=K_ERROR):
        fn(x, np.int64(5))


@pytest.mark.parametrize("call, error, message", [
    (lambda: em.sort(np.array([True, False])), TypeError,
     "em.sort: cannot sort a tensor of dtype bool: TensorFlow sorts integer and float"),
    (lambda: em.argsort(np.array([True])), TypeError, "em.argsort: cannot sort .* bool"),
    (lambda: em.math.top_k(np.array([True]), 1), TypeError, "em.math.top_k: cannot sort"),
    (lambda: em.sort(np.array([1, 2]), direction="UP"), ValueError,
     "em.sort: direction must be one of ASCENDING, DESCENDING, got 'UP'"),
    (lambda: em.sort(np.zeros((2, 3)), axis=2), ValueError,
     r"em.sort: axis 2 is out of range for a tensor of rank 2 \(it must lie in \[-2, 2\)"),
    (lambda: em.argsort(np.float32(1.0)), ValueError, "em.argsort: cannot sort a scalar"),
    (lambda: em.math.top_k(np.float32(1.0)), ValueError,
     "em.math.top_k: input must have rank >= 1"),
    (lambda: em.math.top_k(np.zeros(3), 1.5), TypeError,
     "em.math.top_k: k must be an int or a scalar integer tensor, got 1.5"),
    (lambda: em.math.top_k(np.zeros(3), 1, index_type=em.int8), TypeError,
     "em.math.top_k: index_type must be int32 or int64, got int8"),
])
def test_bad_arguments_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# -- em.unique ----------------------------------------------------------------------------

def unique_oracle(x: np.ndarray, out_idx=np.int32):
    """tf.unique with a Python dict: first-occurrence order, -0.0 == 0.0 (one key), and
    every NaN its own key (NaN never equals NaN)."""
    seen, y, idx = {}, [], []
    values = x.astype(np.float64).tolist() if x.dtype.kind in "fV" else x.tolist()
    for i, v in enumerate(values):
        if v not in seen:
            seen[v] = len(y)
            y.append(i)
        idx.append(seen[v])
    return x[np.array(y, np.int64)], np.array(idx, out_idx)


@pytest.mark.parametrize("dtype", DTYPES + [np.bool_], ids=lambda d: np.dtype(d).name)
def test_eager_unique_matches_the_oracle(dtype):
    x = sample(dtype, (40,))
    y, idx = em.unique(x)
    want_y, want_idx = unique_oracle(x)
    same(y.numpy(), want_y)
    same(idx.numpy(), want_idx)
    same(em.unique(x, out_idx=em.int64).idx.numpy(), want_idx.astype(np.int64))


def test_unique_keeps_first_occurrences_and_every_nan():
    x = np.array([0.0, np.nan, -0.0, 2.0, np.nan, 0.0, 2.0], np.float32)
    result = em.unique(x)
    assert type(result).__name__ == "Unique" and result._fields == ("y", "idx")
    same(result.y.numpy(), np.array([0.0, np.nan, 2.0, np.nan], np.float32))
    same(result.idx.numpy(), np.array([0, 1, 0, 2, 3, 0, 2], np.int32))


@pytest.mark.parametrize("dtype", DTYPES + [np.bool_], ids=lambda d: np.dtype(d).name)
def test_compiled_unique_matches_eager_static_dynamic_and_empty(dtype):
    def program(x):
        y, idx = em.unique(x, out_idx=em.int64)
        return y, idx, em.gather(y, idx)  # x again
    spec = [em.TensorSpec([None], em.as_dtype(dtype))]
    static, dynamic = em.function(program), em.function(program, input_signature=spec)
    with no_fallback():
        for x in (sample(dtype, (30,)), sample(dtype, (1,)), sample(dtype, (0,))):
            want = program(em.constant(x))
            np.testing.assert_array_equal(want[2].numpy().astype(np.float64),
                                          x.astype(np.float64))  # -0.0 may read as 0.0
            for fn in (static, dynamic):
                for g, w in zip(fn(x), want):
                    same(g.numpy(), w.numpy())


def test_unique_rejects_what_tf_unique_rejects():
    with pytest.raises(ValueError, match=r"em.unique: x must be 1-D .* got shape \(2, 2\)"):
        em.unique(np.zeros((2, 2)))
    with pytest.raises(TypeError, match="em.unique: out_idx must be int32 or int64, got int16"):
        em.unique(np.zeros(3), out_idx=em.int16)
