"""em.range with bounds known only at run time runs compiled (its length computed as numpy
does) and raises eager's errors from native code; ops built on it (one_hot with a traced
depth, gather of a range) compile too."""

import warnings

import numpy as np
import pytest

import ember as em
from ember.runtime.executor import InterpreterFallbackWarning

BOUNDS = [(0, 5, 1), (5, 0, -2), (1, 10, 3), (3, 3, 1), (7, 2, 1), (0, 1, 0)]
FLOAT_BOUNDS = [(0.5, 2.2, 0.3), (0, np.inf, 1), (0, 1, np.nan), (2.0, -1.0, -0.7)]
CASES = ([(dt, b) for dt in (np.int8, np.int32, np.int64) for b in BOUNDS]
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
            assert str(info.value).startswith(str(want)) and "test_dynamic_range.py:" in \
                str(info.value), (str(info.value), str(want))
        else:
            got = f(*args).numpy()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_ops_built_on_a_traced_range_compile():
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        hot = em.function(lambda i, d: em.one_hot(i, d))(np.array([0, 2], np.int32),
                                                          np.int32(3))
        np.testing.assert_array_equal(hot.numpy(), np.eye(3, dtype=np.float32)[[0, 2]])
        x = np.arange(5, dtype=np.float32)
        head = em.function(lambda x, n: em.gather(x, em.range(n)))(x, np.int32(2))
        np.testing.assert_array_equal(head.numpy(), x[:2])
