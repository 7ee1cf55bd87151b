"""Values at the boundary: every way to build an em.Tensor gives one whose array is exactly
the dtype it claims, C-contiguous and aligned (compiled calls pass its data pointer), and
complex values meant for a real dtype raise instead of being truncated."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember as em


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300)


def test_tensor_of_a_buffer_of_another_dtype_raises_instead_of_reading_out_of_bounds():
    # An int8 buffer claimed as float64 made compiled code read 8x past its end.
    result = _run("""
        import numpy as np, ember as em
        f = em.function(lambda x: x * 2.0)
        f(em.constant(np.ones(1 << 24)))
        try:
            t = em.Tensor(np.zeros(1 << 24, np.int8), em.float64)
        except TypeError as e:
            print("TypeError:", e)
        else:
            print("accepted:", float(em.reduce_sum(f(t))))
    """)
    assert result.returncode == 0, result.stderr
    assert "TypeError: em.Tensor: an array of int8 cannot hold a float64 tensor" in result.stdout
    assert "em.constant(value, dtype=em.float64)" in result.stdout


@pytest.mark.parametrize("value, dtype", [
    (np.zeros(4, np.int32), em.float32),
    (np.zeros(4, np.float64), em.float32),
    (np.zeros(4, np.float32), em.string),
    (np.array([1, None], dtype=object), None),
    (np.array([b"a", 3], dtype=object), em.string),
], ids=["int32-as-float32", "float64-as-float32", "float32-as-string", "object-ints",
        "object-mixed"])
def test_tensor_rejects_elements_of_another_type(value, dtype):
    with pytest.raises(TypeError, match="cannot"):
        em.Tensor(value, dtype)


@pytest.mark.parametrize("value", [[1.0, 2.0], 3.0, "abc", em.TensorShape([2])],
                         ids=["list", "float", "str", "TensorShape"])
def test_tensor_constructor_takes_arrays_and_points_elsewhere_for_other_values(value):
    with pytest.raises(TypeError, match=r"em.Tensor\(value\) wraps a numpy array.*em.constant"):
        em.Tensor(value)


def _odd_layouts():
    base = np.arange(24, dtype=np.float64)
    unaligned = np.frombuffer(b"\0" + base.tobytes(), dtype=np.float64, offset=1)
    return {
        "strided": base[::2],
        "transposed": base.reshape(4, 6).T,
        "unaligned": unaligned,
        "big-endian": base.astype(">f8"),
        "fortran": np.asfortranarray(base.reshape(4, 6)),
        "negative-strides": base[::-1],
    }


@pytest.mark.parametrize("name", list(_odd_layouts()))
def test_any_array_layout_becomes_a_contiguous_aligned_native_tensor(name):
    arr = _odd_layouts()[name]
    for t in (em.Tensor(arr), em.constant(arr), em.convert_to_tensor(arr)):
        flags = t._value.flags
        assert flags.c_contiguous and flags.aligned and t._value.dtype.isnative
        assert t.dtype is em.float64
        np.testing.assert_array_equal(t.numpy(), arr)


@pytest.mark.parametrize("name", list(_odd_layouts()))
def test_compiled_calls_on_any_array_layout_agree_with_eager(name):
    arr = _odd_layouts()[name]
    f = em.function(lambda x: x * 2.0 + 1.0)
    want = arr * 2.0 + 1.0
    for _ in range(3):  # the first call traces, later ones take the fast path
        got = f(em.Tensor(arr))
        assert got.dtype is em.float64
        np.testing.assert_array_equal(got.numpy(), want)


def test_reshaping_the_source_array_in_place_leaves_the_tensor_alone():
    arr = np.arange(8, dtype=np.float32)
    t = em.Tensor(arr)
    arr.shape = (2, 4)
    assert t.shape == [8]
    f = em.function(lambda x: x + 1.0)
    np.testing.assert_array_equal(f(t).numpy(), np.arange(8, dtype=np.float32) + 1.0)


def test_string_arrays_hold_utf8_bytes():
    t = em.Tensor(np.array(["a", "bé"]))
    assert t.dtype is em.string
    assert t.numpy().tolist() == [b"a", "bé".encode()]


class _ArrayLike:
    def __init__(self, arr):
        self._arr = arr

    def __array__(self, dtype=None, copy=None):
        return self._arr


class _DLPackOnly:
    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, **kwargs):
        return self._arr.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


@pytest.mark.parametrize("wrap", [_ArrayLike, _DLPackOnly], ids=["__array__", "dlpack"])
def test_array_likes_convert_through_the_checked_constructor(wrap):
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    t = em.convert_to_tensor(wrap(arr))
    assert t.dtype is em.float32 and t._value.flags.c_contiguous
    np.testing.assert_array_equal(t.numpy(), arr)
    np.testing.assert_array_equal(em.function(lambda x: x * 2.0)(t).numpy(), arr * 2)


def test_tensor_round_trips_through_dlpack_and_array():
    t = em.constant([[1.0, 2.0], [3.0, 4.0]])[:, 1]
    np.testing.assert_array_equal(np.from_dlpack(t), [2.0, 4.0])
    back = em.convert_to_tensor(np.asarray(t))
    assert back.dtype is em.float32 and back._value.flags.c_contiguous


def test_variable_values_are_checked_tensors():
    v = em.Variable(np.arange(6, dtype=np.float64)[::2])
    read = em.function(lambda: v.read_value() * 2.0)
    assert v.read_value()._value.flags.c_contiguous
    np.testing.assert_array_equal(read().numpy(), [0.0, 4.0, 8.0])


def test_compiled_results_carry_the_traced_dtypes():
    f = em.function(lambda x: (x, em.cast(x, em.int8), x > 1.0))
    for _ in range(2):
        a, b, c = f(em.constant([1.0, 2.0]))
        assert (a.dtype, b.dtype, c.dtype) == (em.float32, em.int8, em.bool)
        assert b._value.dtype == np.int8 and c._value.dtype == np.bool_


# -- complex numbers: complex64/complex128, never silently truncated to a real dtype ------

@pytest.mark.parametrize("run", ["eager", "traced"])
def test_complex_scalar_with_a_tensor_raises_instead_of_dropping_the_imaginary_part(run):
    x = em.constant([1.0, 2.0])
    fn = (lambda x: x + (2 + 3j))
    if run == "traced":
        fn = em.function(fn)
    with pytest.raises(TypeError, match=r"cannot convert \(2\+3j\) to a tensor of dtype "
                                        "float32: that would drop its imaginary part"):
        fn(x)


@pytest.mark.parametrize("value, kwargs", [
    (1j, {"dtype": em.float32}),
    (np.array([1j]), {"dtype": em.float64}),
    ([1.0, 2j], {"dtype": em.int32}),
], ids=["scalar-to-float32", "array-to-float64", "list-to-int32"])
def test_complex_values_never_convert_to_real_dtypes(value, kwargs):
    with pytest.raises(TypeError, match="drop its imaginary part"):
        em.convert_to_tensor(value, **kwargs)


@pytest.mark.parametrize("value, kwargs, dtype", [
    (1 + 2j, {}, em.complex128),           # Python complex: complex128, as TensorFlow
    ([1.0, 2j], {}, em.complex128),
    (np.complex64(1j), {}, em.complex64),   # numpy keeps its dtype
    (np.array([1j]), {}, em.complex128),
    (2.0, {"dtype": em.complex64}, em.complex64),
], ids=["scalar", "list", "numpy-scalar", "array", "float-to-complex64"])
def test_complex_values_convert_to_complex_dtypes(value, kwargs, dtype):
    t = em.convert_to_tensor(value, **kwargs)
    assert t.dtype is dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(value, dtype.np_dtype))


def test_int_tensor_plus_complex_raises_like_int_tensor_plus_float():
    x = em.constant([1, 2])
    with pytest.raises(TypeError):
        x + 1.5
    with pytest.raises(TypeError, match="complex"):
        x + 1j
