"""The boundary of compiled code: wrong shapes and dtypes are rejected before native code
runs, so it never reads or writes out of bounds, whatever it is passed."""

import numpy as np
import pytest

import ember as em

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.int8, np.uint8, np.bool_,
          np.float16]


@pytest.fixture(scope="module")
def concrete():
    @em.function
    def f(x, y):
        return em.tanh(x) * y + 1.0
    cf = f.get_concrete_function(em.TensorSpec([3, 4]), em.TensorSpec([4]))
    good = (np.ones((3, 4), np.float32), np.ones(4, np.float32))
    np.testing.assert_allclose(cf(*good).numpy(), np.tanh(1.0) + 1.0, rtol=1e-6)
    assert cf._executor.compiled_shapes, cf._executor.fallback_reason
    return cf


@pytest.mark.parametrize("x,y,match", [
    (np.ones((3, 5), np.float32), np.ones(4, np.float32), r"shape \(3, 5\), incompatible"),
    (np.ones((3, 4), np.float64), np.ones(4, np.float32), "expected to be a float32 tensor"),
    (np.ones((3, 4), np.float32), np.ones(4, np.int32), "expected to be a float32 tensor"),
    (np.ones((4,), np.float32), np.ones(4, np.float32), r"shape \(4,\), incompatible"),
    (np.ones((3, 4, 1), np.float32), np.ones(4, np.float32), "incompatible"),
])
def test_wrong_shape_or_dtype_is_a_clear_error(concrete, x, y, match):
    with pytest.raises(em.InvalidArgumentError, match=match):
        concrete(x, y)


def test_executable_itself_checks_its_arguments(concrete):
    exe = concrete._executor.compiled(concrete._executor.compiled_shapes[0])
    with pytest.raises(ValueError, match="argument 0 must be float32"):
        exe([np.ones((2, 4), np.float32), np.ones(4, np.float32)])
    with pytest.raises(ValueError, match="expected 2 arrays"):
        exe([np.ones((3, 4), np.float32)])


def test_executable_reads_a_numpy_scalar_as_its_value():
    """A 0-d input given as a numpy scalar (np.float32(2)), not an array, is read as its
    value: the executable passes an array's data address, which a scalar does not have."""
    cf = em.function(lambda s, v: s * v).get_concrete_function(
        em.TensorSpec([]), em.TensorSpec([3]))
    np.testing.assert_array_equal(cf(np.float32(2), np.ones(3, np.float32)).numpy(), 2)
    exe = cf._executor.compiled(cf._executor.compiled_shapes[0])
    for _ in range(3):
        np.testing.assert_array_equal(exe([np.float32(2.5), np.ones(3, np.float32)])[0], 2.5)


def test_non_contiguous_inputs_are_read_correctly(concrete):
    x = np.arange(24, dtype=np.float32).reshape(3, 8)[:, ::2] / 10
    y = np.arange(8, dtype=np.float32)[::2]
    np.testing.assert_allclose(concrete(x, y).numpy(), np.tanh(x) * y + 1, rtol=1e-6)


def test_a_thousand_random_mismatches_never_crash(concrete):
    rng = np.random.default_rng(1234)
    errors = 0
    for _ in range(1000):
        rank = int(rng.integers(0, 4))
        shape = tuple(int(d) for d in rng.integers(0, 6, size=rank))
        dtype = DTYPES[int(rng.integers(len(DTYPES)))]
        x = rng.random(shape).astype(dtype) if shape else dtype(1)
        y = np.ones(int(rng.integers(0, 6)), DTYPES[int(rng.integers(len(DTYPES)))])
        try:
            out = concrete(x, y)
        except (em.InvalidArgumentError, TypeError, ValueError):
            errors += 1
            continue
        assert out.shape == (3, 4)  # only exact matches may run
    assert errors >= 990
