"""em.Tensor's Python and array protocols: numpy 2's `__array__(dtype, copy)`, zero-copy
read-only DLPack export (`__dlpack__`, `__dlpack_device__`), em.experimental.dlpack's
`from_dlpack` / `to_dlpack`, `len()` and iteration eagerly and while tracing, and format
specs on scalars."""

import numpy as np
import pytest

import ember as em
from ember.frontend.dlpack import _Capsule

NUMERIC = ["bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32",
           "float64"]


def _shares(tensor, array) -> bool:
    return np.shares_memory(tensor.numpy(), array)


# -- __array__ ----------------------------------------------------------------------------

def test_array_without_copy_is_a_read_only_view():
    t = em.constant([1.0, 2.0])
    view = np.asarray(t)
    assert _shares(t, view) and not view.flags.writeable
    same = t.__array__(copy=False)
    assert _shares(t, same) and not same.flags.writeable
    assert t.__array__(np.float32, copy=False).flags.writeable is False


def test_array_copy_true_is_a_private_writable_copy():
    t = em.constant([1, 2])
    copied = np.array(t, copy=True)
    assert not _shares(t, copied)
    copied[0] = 9
    assert t.numpy().tolist() == [1, 2]


def test_array_dtype_conversion_needs_a_copy():
    t = em.constant([1, 2])
    assert np.asarray(t, dtype=np.float64).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="needs a copy, but copy=False"):
        np.asarray(t, dtype=np.float64, copy=False)
    with pytest.raises(ValueError, match="needs a copy, but copy=False"):
        t.__array__(np.int64, copy=False)


def test_variables_follow_the_same_array_rules():
    v = em.Variable([1.0, 2.0])
    copied = np.array(v, copy=True)
    copied[0] = 5.0
    assert v.numpy().tolist() == [1.0, 2.0]
    assert not np.asarray(v).flags.writeable
    with pytest.raises(ValueError, match="needs a copy"):
        np.asarray(v, dtype=np.float64, copy=False)


# -- DLPack export ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC)
def test_numpy_from_dlpack_shares_the_buffer_read_only(dtype):
    t = em.cast(em.constant([[0, 1, 2], [3, 4, 5]]), getattr(em, dtype if dtype != "bool"
                                                              else "bool_"))
    a = np.from_dlpack(t)
    assert a.dtype == t.numpy().dtype and a.shape == (2, 3)
    np.testing.assert_array_equal(a, t.numpy())
    assert _shares(t, a)
    assert not a.flags.writeable  # the tensor is immutable
    assert t.__dlpack_device__() == (1, 0)


def test_legacy_dlpack_consumers_get_a_copy_or_an_error():
    t = em.constant([1.0, 2.0, 3.0])
    legacy = t.__dlpack__()  # no max_version: DLPack 0.x cannot say "read-only"
    a = np.from_dlpack(_Capsule(legacy))
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0])
    assert not _shares(t, a)
    with pytest.raises(BufferError, match="needs DLPack >= 1.0"):
        t.__dlpack__(copy=False)
    copied = np.from_dlpack(t, copy=True)
    assert not _shares(t, copied) and copied.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("value,dtype", [(["a"], None), ([1.0], em.bfloat16)])
def test_dtypes_dlpack_cannot_carry_raise_buffer_error(value, dtype):
    t = em.constant(value, dtype=dtype)
    with pytest.raises(BufferError, match=f"a {t.dtype.name} tensor cannot be exported"):
        np.from_dlpack(t)


# -- em.experimental.dlpack ---------------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC)
def test_from_dlpack_wraps_numpy_buffers_without_copy(dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    t = em.experimental.dlpack.from_dlpack(a)
    assert isinstance(t, em.Tensor) and t.dtype is em.as_dtype(a.dtype)
    np.testing.assert_array_equal(t.numpy(), a)
    assert _shares(t, a)


def test_from_dlpack_of_a_strided_view_copies_into_tensor_layout():
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    t = em.experimental.dlpack.from_dlpack(a)
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.numpy().flags.c_contiguous


def test_to_dlpack_from_dlpack_round_trip_is_zero_copy():
    t = em.constant([[1, 2], [3, 4]], em.int64)
    capsule = em.experimental.dlpack.to_dlpack(t)
    assert "dltensor_versioned" in repr(capsule)
    back = em.experimental.dlpack.from_dlpack(capsule)
    assert back.dtype is em.int64 and _shares(t, back.numpy())
    np.testing.assert_array_equal(back.numpy(), [[1, 2], [3, 4]])


def test_from_dlpack_rejects_other_objects():
    with pytest.raises(TypeError, match="takes a DLPack capsule or an object with __dlpack__"):
        em.experimental.dlpack.from_dlpack([1, 2])


def test_from_dlpack_tensor_runs_in_compiled_functions():
    t = em.experimental.dlpack.from_dlpack(np.array([1.0, 2.0], np.float32))
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        got = em.function(lambda x: x * 2.0)(t)
    finally:
        em.config.set_fallback(previous)
    np.testing.assert_array_equal(got.numpy(), [2.0, 4.0])


def test_torch_exchange_is_zero_copy():
    torch = pytest.importorskip("torch")
    t = em.constant([1.0, 2.0])
    back = em.experimental.dlpack.from_dlpack(torch.arange(3, dtype=torch.float32))
    assert back.numpy().tolist() == [0.0, 1.0, 2.0]
    assert torch.from_dlpack(t).tolist() == [1.0, 2.0]


def test_symbolic_tensors_have_no_buffer_to_export():
    seen = []

    @em.function
    def f(x):
        for convert in (np.asarray, lambda v: v.__dlpack__(max_version=(1, 0))):
            with pytest.raises(TypeError, match="is symbolic"):
                convert(x)
            seen.append(convert)
        return x
    f(em.constant([1.0]))
    assert len(seen) == 2


# -- len, iter, format --------------------------------------------------------------------

def test_len_and_iter_eagerly():
    t = em.constant([[1, 2], [3, 4], [5, 6]])
    assert len(t) == 3
    rows = list(t)
    assert all(isinstance(r, em.Tensor) for r in rows)
    assert [r.numpy().tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    assert list(em.zeros([0, 2])) == []
    scalar = em.constant(1.0)
    with pytest.raises(TypeError, match="len\\(\\) of a scalar tensor"):
        len(scalar)
    with pytest.raises(TypeError, match="cannot iterate over a scalar tensor"):
        iter(scalar)


def test_iterating_a_traced_tensor_with_a_known_first_dim_unstacks_it():
    def program(x):
        first, second, third = x
        return second * 10 + first - third

    x = em.constant([[1, 2], [3, 4], [5, 6]])
    want = [26, 36]
    assert program(x).numpy().tolist() == want
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        assert em.function(program)(x).numpy().tolist() == want
    finally:
        em.config.set_fallback(previous)


def test_traced_len_and_iter_of_unknown_dims_raise_type_errors():
    """(AutoGraph stages `len(x)` as em.shape(x)[0], as TensorFlow's; without it, len()
    reaches the tensor's own __len__.)"""
    errors = {}

    def program(x):
        for name, fn in (("len", len), ("iter", iter)):
            try:
                fn(x)
            except TypeError as error:
                errors[name] = str(error)
        return x

    def trace(spec, value):
        errors.clear()
        em.function(program, input_signature=[spec], autograph=False)(value)
        return errors

    got = trace(em.TensorSpec([None, 2]), em.zeros([3, 2]))
    assert "first dimension is unknown while tracing" in got["len"]
    assert "em.range(em.shape(x)[0])" in got["iter"] and "AutoGraph" in got["iter"]
    got = trace(em.TensorSpec(None), em.zeros([3, 2]))
    assert "rank is unknown" in got["len"] and "rank is unknown" in got["iter"]
    got = trace(em.TensorSpec([]), em.constant(1.0))
    assert "is a scalar" in got["len"] and "is a scalar" in got["iter"]


@pytest.mark.parametrize("value,spec,text", [
    (3.14159, ".3f", "3.142"), (np.float64(2.0) / 3, ".2e", "6.67e-01"), (42, "05d", "00042"),
    (True, "", "ember.Tensor(True, shape=(), dtype=bool)"), (0.5, ">6", "   0.5"),
])
def test_format_specs_apply_to_scalar_values(value, spec, text):
    t = em.constant(value)
    assert f"{t:{spec}}" == text
    assert format(t, spec) == text


def test_format_spec_on_a_non_scalar_is_a_type_error():
    with pytest.raises(TypeError):
        f"{em.constant([1.0, 2.0]):.2f}"
