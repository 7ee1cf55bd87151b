"""numpy arrays as inputs take the compiled fast path that em.Tensor inputs take (issue 10
item 13), with the same results, errors and aliasing rules as the general path."""

import numpy as np
import pytest

import ember as em
from ember.dialects.ember.array_pointer import data_pointer

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]


def _numpy_entries(f) -> int:
    return sum(1 for key in f._fast if any(part[0] is np.ndarray for part in key
                                           if isinstance(part, tuple)))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_inputs_run_the_fast_path_with_the_tensor_paths_results(dtype):
    f = em.function(lambda x, y: (x + y, x == y) if dtype is not np.bool_ else (x | y, x))
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, (3, 4)).astype(dtype)
    b = rng.integers(0, 3, (3, 4)).astype(dtype)
    want = [t.numpy() for t in f(em.constant(a), em.constant(b))]
    for _ in range(3):  # the first call records the entry, the next ones use it
        got = [t.numpy() for t in f(a, b)]
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    assert _numpy_entries(f) == 1


def test_non_contiguous_and_misaligned_arrays_take_the_general_path_correctly():
    f = em.function(lambda x: x * 2.0)
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    f(np.ascontiguousarray(base[:, ::2]))
    np.testing.assert_array_equal(f(base[:, ::2]).numpy(), base[:, ::2] * 2)
    raw = np.zeros(4 * 12 + 1, np.uint8)[1:].view(np.float32).reshape(4, 3)  # misaligned
    raw[:] = 1.5
    np.testing.assert_array_equal(f(raw).numpy(), np.full((4, 3), 3.0, np.float32))


def test_outputs_never_alias_numpy_inputs_and_inputs_are_not_written():
    f = em.function(lambda x: x)
    a = np.arange(4, dtype=np.float32)
    for _ in range(3):
        out = f(a).numpy()
        assert not np.shares_memory(out, a)
        a[0] += 1.0  # the caller's array stays the caller's: the result keeps its values
        assert out[0] == a[0] - 1.0


def test_numpy_inputs_raise_what_tensor_inputs_raise():
    f = em.function(lambda x: x + 1, input_signature=[em.TensorSpec([None], em.float32)])
    f(np.ones(2, np.float32))
    for bad in (np.ones(2, np.float64), np.ones((2, 2), np.float32)):
        with pytest.raises(em.errors.InputSignatureError) as from_numpy:
            f(bad)
        with pytest.raises(em.errors.InputSignatureError) as from_tensor:
            f(em.constant(bad))
        assert type(from_numpy.value) is type(from_tensor.value)


def test_a_new_dtype_or_shape_retraces_or_respecialises_instead_of_reusing_an_entry():
    f = em.function(lambda x: x * 2)
    np.testing.assert_array_equal(f(np.arange(3, dtype=np.int32)).numpy(), [0, 2, 4])
    np.testing.assert_array_equal(f(np.arange(3, dtype=np.int32)).numpy(), [0, 2, 4])
    got = f(np.arange(4, dtype=np.float64) / 2).numpy()
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [0.0, 1.0, 2.0, 3.0])


@pytest.mark.parametrize("array", [np.arange(7, dtype=np.float32), np.zeros((5, 6))[2:, 3:],
                                   np.empty(0), np.ones(()), np.zeros(4, np.uint8)[1:]])
def test_data_pointer_is_the_arrays_data_address(array):
    assert data_pointer(array) == array.ctypes.data


def test_a_first_call_reads_numpy_inputs_in_place_and_the_interpreter_gets_copies():
    """A call's numpy arguments are not copied for compiled code, which only reads them
    (the first call's general path as the fast path); the interpreter, which returns and
    assigns what it is given, runs on copies: nothing it returns or stores aliases them."""
    a = np.arange(4, dtype=np.float32)
    compiled = em.function(lambda x: x * 2.0)
    cf = compiled.get_concrete_function(a)
    borrowed = []
    (t,) = cf._flat_inputs(cf.call_arguments((a,), {}), borrowed)
    assert borrowed == [0] and np.shares_memory(t._value, a)
    np.testing.assert_array_equal(compiled(a).numpy(), a * 2)
    v = em.Variable(np.zeros(4, np.float32))

    def keep(x):
        v.assign(x)
        return x
    for kept in (em.function(keep, jit_compile=False), em.function(keep)):
        out = kept(a).numpy()
        a[0] += 1.0  # the caller's array changes: nothing the call made follows it
        assert out[0] == a[0] - 1.0 and v.numpy()[0] == a[0] - 1.0
        assert not np.shares_memory(out, a) and not np.shares_memory(v.numpy(), a)
