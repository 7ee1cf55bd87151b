"""Shapes that only run-time values give run compiled: em.range of traced bounds (its
length computed as numpy does), em.reshape to a shape tensor or a list with traced sizes;
they raise eager's errors from native code. Ops built on a range (one_hot with a traced
depth, gather of a range) compile too."""

import warnings

import numpy as np
import pytest

import ember as em
from ember.runtime.executor import InterpreterFallbackWarning

BOUNDS = [(0, 5, 1), (5, 0, -2), (1, 10, 3), (3, 3, 1), (7, 2, 1), (0, 1, 0)]
FLOAT_BOUNDS = [(0.5, 2.2, 0.3), (0, np.inf, 1), (0, 1, np.nan), (2.0, -1.0, -0.7)]
# spans of 2**63 and more (the signed difference overflows), and 2**62 int64 elements
WIDE_BOUNDS = [(-2**63, 2**63 - 1, 2**62), (-(2**62) - 5, 2**62 + 5, 2**61),
               (2**63 - 1, -2**63, -2**62), (0, 2**62, 1)]
CASES = ([(dt, b) for dt in (np.int8, np.int32, np.int64) for b in BOUNDS]
         + [(np.int64, b) for b in WIDE_BOUNDS] + [(np.float32, (0.0, 3e38, 1e-38))]
         + [(np.uint8, b) for b in BOUNDS if min(b) >= 0]
         + [(dt, b) for dt in (np.float32, np.float64) for b in BOUNDS + FLOAT_BOUNDS])


def _eager(args):
    try:
        return em.range(*[em.constant(a) for a in args]).numpy()
    except em.errors.OpError as e:
        return e


@pytest.mark.parametrize("dtype,bounds", CASES, ids=[f"{d.__name__}-{b}" for d, b in CASES])
def test_range_of_run_time_bounds_matches_eager(dtype, bounds):
    f = em.function(lambda a, b, c: em.range(a, b, c))
    args = [np.array(v, dtype) for v in bounds]
    want = _eager(args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        if isinstance(want, Exception):
            with pytest.raises(type(want)) as info:
                f(*args)
            text = str(info.value)
            assert text.startswith(want.op_message + " (at ") and \
                f"{__name__.split('.')[-1]}.py:" in text, (text, str(want))
        else:
            got = f(*args).numpy()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("source,dtype,n", [
    ("em.zeros([n, n])", np.int64, 2**32), ("em.zeros([n, n, n])", np.int32, 2**30),
    ("em.fill([n, n], 1.0)", np.int64, 2**32), ("em.zeros([n, 4])", np.int64, 2**61),
    ("em.broadcast_to(1.0, [n, n])", np.int64, 2**32),
    ("em.random.stateless_uniform([n, n], [1, 2])", np.int64, 2**32),
    ("em.linspace(0.0, 1.0, n)", np.int64, 2**62)])
def test_run_time_sizes_too_large_raise_eagers_error(source, dtype, n):
    """Their byte count wraps around in int64: compiled code allocated the wrapped size and
    wrote past it (a segfault); it now raises what eager raises, before allocating."""
    fn = eval(f"lambda n: {source}")  # noqa: S307 - the test's own expressions
    with pytest.raises(em.errors.OpError) as eager:
        fn(em.constant(np.array(n, dtype)))
    with pytest.raises(type(eager.value)) as compiled:
        em.function(fn)(np.array(n, dtype))
    assert "is too large" in str(eager.value)
    assert str(compiled.value).split(" op ")[1].startswith(
        str(eager.value).split(" op ")[1][:60]), (str(compiled.value), str(eager.value))


def test_ops_built_on_a_traced_range_compile():
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        hot = em.function(lambda i, d: em.one_hot(i, d))(np.array([0, 2], np.int32),
                                                          np.int32(3))
        np.testing.assert_array_equal(hot.numpy(), np.eye(3, dtype=np.float32)[[0, 2]])
        x = np.arange(5, dtype=np.float32)
        head = em.function(lambda x, n: em.gather(x, em.range(n)))(x, np.int32(2))
        np.testing.assert_array_equal(head.numpy(), x[:2])


X = np.arange(12, dtype=np.float32).reshape(4, 3)
SHAPES = [[2, 6], [-1, 4], [12], [2, 2, 3], [5, -1], [-1, -1], [3, 5], [-2, -6], [0, -1],
          [1, -1, 1, 3]]


def _same(got_call, want_call):
    """Runs both; the compiled call must not fall back, and gives eager's values or error
    (each naming its own line: the messages but for that)."""
    try:
        want = want_call().numpy()
    except em.errors.OpError as e:
        want = e
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        if isinstance(want, Exception):
            with pytest.raises(type(want)) as info:
                got_call()
            assert info.value.op_message == want.op_message, (str(info.value), str(want))
        else:
            got = got_call().numpy()
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_reshape_to_a_shape_tensor_matches_eager(shape, dtype):
    f = em.function(lambda x, s: em.reshape(x, s))
    s = np.array(shape, dtype)
    _same(lambda: f(X, s), lambda: em.reshape(em.constant(X), shape))


@pytest.mark.parametrize("n", [6, 5, 0, -3])
def test_reshape_to_a_list_with_a_traced_size_matches_eager(n):
    f = em.function(lambda x, n: em.reshape(x, [n, -1]) * 2.0)
    _same(lambda: f(X, np.int32(n)), lambda: em.reshape(em.constant(X), [n, -1]) * 2.0)


def test_reshape_of_a_scalar_shape_and_of_run_time_sizes_in_a_loop():
    f = em.function(lambda x, s: em.reshape(x, s))
    one = np.ones((1, 1), np.float32)
    _same(lambda: f(one, np.zeros(0, np.int32)), lambda: em.reshape(em.constant(one), []))
    g = em.function(lambda x, n, m: em.reduce_sum(em.reshape(x, [n, 2, m]), axis=1))
    _same(lambda: g(X, np.int32(3), np.int32(2)),
          lambda: em.reduce_sum(em.reshape(em.constant(X), [3, 2, 2]), axis=1))
