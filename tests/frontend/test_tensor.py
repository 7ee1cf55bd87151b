"""The eager `em.Tensor` API: printing, shape/dtype, numpy interop, Python protocols,
operators (incl. reflected ones), conversion rules, string tensors, `em.constant(shape=)`,
`em.TensorShape` / `em.TensorSpec` and `em.print`.
"""

import io
import warnings

import numpy as np
import pytest

import ember as em

# -- printing -------------------------------------------------------------------------------


@pytest.mark.parametrize("make,text", [
    (lambda: em.add(em.constant([1, 2]), 1),
     "<ember.Tensor: shape=(2,), dtype=int32, numpy=array([2, 3], dtype=int32)>"),
    (lambda: em.constant(3), "<ember.Tensor: shape=(), dtype=int32, numpy=3>"),
    (lambda: em.constant(1.5), "<ember.Tensor: shape=(), dtype=float32, numpy=1.5>"),
    (lambda: em.constant(True), "<ember.Tensor: shape=(), dtype=bool, numpy=True>"),
    (lambda: em.constant("ab"), "<ember.Tensor: shape=(), dtype=string, numpy=b'ab'>"),
    (lambda: em.constant([0.5, 1.0], dtype=em.float64),
     "<ember.Tensor: shape=(2,), dtype=float64, numpy=array([0.5, 1. ])>"),
    (lambda: em.zeros([0]), "<ember.Tensor: shape=(0,), dtype=float32, numpy=array([], "
                            "dtype=float32)>"),
    (lambda: em.constant([[1.0, 2.0]]) * 2,
     "<ember.Tensor: shape=(1, 2), dtype=float32, numpy=array([[2., 4.]], dtype=float32)>"),
    (lambda: em.constant([[1, 2], [3, 4]]),
     "<ember.Tensor: shape=(2, 2), dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], "
     "dtype=int32)>"),
])
def test_repr_matches_tensorflow_layout(make, text):
    assert repr(make()) == text


@pytest.mark.parametrize("make,text", [
    (lambda: em.constant([2, 3]), "ember.Tensor([2 3], shape=(2,), dtype=int32)"),
    (lambda: em.constant(2.5), "ember.Tensor(2.5, shape=(), dtype=float32)"),
    (lambda: em.constant(["a", "b"]), "ember.Tensor([b'a' b'b'], shape=(2,), dtype=string)"),
    (lambda: em.constant([[True], [False]]),
     "ember.Tensor([[ True]\n [False]], shape=(2, 1), dtype=bool)"),
])
def test_str_shows_values_shape_and_dtype(make, text):
    assert str(make()) == text


@pytest.mark.parametrize("value,spec,text", [
    (1.5, ".3f", "1.500"),
    (np.float16(2.5), "06.2f", "002.50"),
    (np.array(0.25, em.bfloat16.np_dtype), ".1%", "25.0%"),
    (255, "x", "ff"),
    (7, ">3", "  7"),
    ("ab", ">4", "  ab"),
    ("é", "^3", " é "),  # a string scalar formats as its decoded text
])
def test_format_spec_formats_scalar_values(value, spec, text):
    assert format(em.constant(value), spec) == text
    assert f"{em.constant(value):{spec}}" == text


def test_format_without_spec_is_str():
    t = em.constant([1, 2])
    assert f"{t}" == str(t) == "ember.Tensor([1 2], shape=(2,), dtype=int32)"
    with pytest.raises(TypeError):
        format(t, ".2f")  # only scalars take a numeric format spec


# -- shape, dtype, numpy --------------------------------------------------------------------

def test_shape_is_a_tensor_shape_equal_to_tuples_and_lists():
    t = em.zeros([2, 3])
    assert isinstance(t.shape, em.TensorShape)
    assert t.shape == (2, 3)
    assert t.shape == [2, 3]
    assert t.shape == em.TensorShape([2, 3])
    assert t.shape != (3, 2)
    assert t.shape.rank == 2 and t.ndim == 2
    assert t.shape.as_list() == [2, 3]
    assert t.shape[0] == 2 and t.shape[-1] == 3
    assert t.shape[1:] == (3,)
    assert em.constant(1).shape == ()


@pytest.mark.parametrize("value,dtype", [
    ([1, 2], em.int32), (1.0, em.float32), (True, em.bool), ("s", em.string),
    (np.zeros(2, np.uint8), em.uint8), (np.zeros(2, em.bfloat16.np_dtype), em.bfloat16),
])
def test_dtype_is_the_ember_dtype_object(value, dtype):
    t = em.constant(value)
    assert t.dtype is dtype
    assert repr(t.dtype) == f"em.{dtype.name}"


def test_numpy_returns_a_read_only_view_with_the_numpy_dtype():
    t = em.constant([1.0, 2.0])
    a = t.numpy()
    assert a.dtype == np.float32 and a.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 5.0
    assert t.numpy()[0] == 1.0


def test_np_asarray_never_aliases_writably():
    t = em.constant([1, 2])
    a = np.asarray(t)
    assert a.dtype == np.int32 and a.tolist() == [1, 2]
    if a.flags.writeable:
        a[0] = 99
    assert t.numpy().tolist() == [1, 2]
    b = np.array(t)  # an explicit copy is the user's to modify
    b[0] = 7
    assert t.numpy().tolist() == [1, 2]
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


def test_constant_copies_its_numpy_source():
    source = np.array([1.0, 2.0], np.float32)
    t = em.constant(source)
    source[0] = 42.0
    assert t.numpy().tolist() == [1.0, 2.0]


def test_numpy_functions_accept_tensors():
    t = em.constant([[1, 2], [3, 4]])
    assert np.sum(t) == 10
    np.testing.assert_array_equal(np.from_dlpack(t), [[1, 2], [3, 4]])


# -- Python protocols -----------------------------------------------------------------------

@pytest.mark.parametrize("value,as_bool,as_int,as_float", [
    (3, True, 3, 3.0), (0, False, 0, 0.0), (-2.75, True, -2, -2.75), (True, True, 1, 1.0),
    ([5], True, 5, 5.0), ([[0.0]], False, 0, 0.0),
])
def test_scalar_conversions(value, as_bool, as_int, as_float):
    t = em.constant(value)
    assert bool(t) is as_bool
    assert int(t) == as_int and isinstance(int(t), int)
    assert float(t) == as_float and isinstance(float(t), float)


def test_index_protocol_on_integer_scalars():
    assert [10, 20, 30][em.constant(1)] == 20
    assert list(range(em.constant(3, dtype=em.int64))) == [0, 1, 2]
    assert hex(em.constant(255, dtype=em.uint8)) == "0xff"
    assert "abcd"[em.constant(1):em.constant(3)] == "bc"


@pytest.mark.parametrize("value", [1.0, True])
def test_index_protocol_rejects_non_integers(value):
    with pytest.raises(TypeError, match="only integer tensors can be used as an index"):
        [1, 2][em.constant(value)]


@pytest.mark.parametrize("convert", [bool, int, float])
@pytest.mark.parametrize("value", [[1, 2], np.zeros((2, 2)), np.zeros((0,))])
def test_scalar_conversions_reject_non_scalars(convert, value):
    with pytest.raises(ValueError, match=r"needs exactly one element, this one has shape"):
        convert(em.constant(value))


def test_if_on_non_scalar_tensor_raises():
    with pytest.raises(ValueError, match=r"bool\(\) of a tensor needs exactly one element"):
        if em.constant([True, False]):
            pass


def test_len_is_the_first_dim():
    assert len(em.zeros([4, 2])) == 4
    assert len(em.zeros([0, 3])) == 0
    with pytest.raises(TypeError, match="len\\(\\) of a scalar tensor"):
        len(em.constant(1.0))


def test_iteration_yields_rows_as_tensors():
    rows = list(em.constant([[1, 2], [3, 4], [5, 6]], dtype=em.int8))
    assert len(rows) == 3
    assert all(isinstance(r, em.Tensor) and r.dtype is em.int8 and r.shape == (2,)
               for r in rows)
    assert [r.numpy().tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    scalars = list(em.constant([7.0, 8.0]))
    assert [s.shape for s in scalars] == [(), ()] and [float(s) for s in scalars] == [7.0, 8.0]
    assert list(em.zeros([0, 2])) == []
    words = list(em.constant(["a", "bc"]))
    assert [w.dtype for w in words] == [em.string, em.string]
    assert [w.numpy() for w in words] == [b"a", b"bc"]  # bytes, as em.constant("a").numpy()
    assert [type(w.numpy()) for w in words] == [bytes, bytes]
    with pytest.raises(TypeError, match="cannot iterate over a scalar tensor"):
        iter(em.constant(1))


def test_tensors_are_unhashable_but_have_hashable_refs():
    a, b = em.constant([1]), em.constant([1])
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)
    with pytest.raises(TypeError):
        {a: 1}
    table = {a.ref(): "a", b.ref(): "b"}
    assert table[a.ref()] == "a" and table[b.ref()] == "b"
    assert a.ref() == a.ref() and a.ref() != b.ref()
    assert a.ref().deref() is a
    assert len({a.ref(), a.ref(), b.ref()}) == 2


# -- operators ------------------------------------------------------------------------------

@pytest.mark.parametrize("expr,expected,dtype", [
    (lambda t: t + 1, [3, 5, -1], "int32"),
    (lambda t: 1 + t, [3, 5, -1], "int32"),
    (lambda t: t - 1, [1, 3, -3], "int32"),
    (lambda t: 1 - t, [-1, -3, 3], "int32"),
    (lambda t: t * 3, [6, 12, -6], "int32"),
    (lambda t: 3 * t, [6, 12, -6], "int32"),
    (lambda t: t / 4, [0.5, 1.0, -0.5], "float64"),
    (lambda t: 4 / t, [2.0, 1.0, -2.0], "float64"),
    (lambda t: t // 3, [0, 1, -1], "int32"),
    (lambda t: 7 // t, [3, 1, -4], "int32"),
    (lambda t: t % 3, [2, 1, 1], "int32"),
    (lambda t: 7 % t, [1, 3, -1], "int32"),
    (lambda t: t ** 2, [4, 16, 4], "int32"),
    (lambda t: 2 ** em.abs(t), [4, 16, 4], "int32"),
    (lambda t: -t, [-2, -4, 2], "int32"),
    (lambda t: abs(t), [2, 4, 2], "int32"),
    (lambda t: +t, [2, 4, -2], "int32"),
    (lambda t: t < 3, [True, False, True], "bool"),
    (lambda t: 3 <= t, [False, True, False], "bool"),
    (lambda t: t == -2, [False, False, True], "bool"),
    (lambda t: t != 2, [False, True, True], "bool"),
    (lambda t: (t > 0) & (t < 3), [True, False, False], "bool"),
    (lambda t: (t > 3) | (t < 0), [False, True, True], "bool"),
    (lambda t: ~(t > 0), [False, False, True], "bool"),
])
def test_operators_including_reflected(expr, expected, dtype, expect):
    expect(expr(em.constant([2, 4, -2])), np.array(expected), dtype)


def test_matmul_operator_both_ways(expect):
    a = em.constant([[1.0, 2.0]])
    expect(a @ [[3.0], [4.0]], np.array([[11.0]], np.float32))
    expect([[3.0], [4.0]] @ a, np.array([[3.0, 6.0], [4.0, 8.0]], np.float32))


def test_float_operators_on_python_scalars(expect):
    t = em.constant([1.0, 2.0])
    expect(1 / t, np.array([1.0, 0.5], np.float32))
    expect(2 ** t, np.array([2.0, 4.0], np.float32))
    expect(t ** 0.5, np.sqrt(np.array([1.0, 2.0], np.float32)))
    expect(t - 0.5, np.array([0.5, 1.5], np.float32))


@pytest.mark.parametrize("left", [True, False])
def test_numpy_array_and_tensor_give_a_tensor(left, expect):
    t = em.constant([1.0, 2.0])
    a = np.array([10.0, 20.0], np.float32)
    out = a + t if left else t + a
    expect(out, np.array([11.0, 22.0], np.float32))
    expect(a * t if left else t * a, np.array([10.0, 40.0], np.float32))
    expect(a > t if left else t < a, np.array([True, True]))


def test_numpy_values_take_the_tensors_dtype_where_they_can_hold_it():
    # as TensorFlow converts them (test_numpy_left_operand.py has the whole table)
    assert (np.array([1.0, 2.0]) + em.constant([1.0, 2.0])).dtype == em.float32
    assert (em.constant([1, 2]) * np.int64(2)).dtype == em.int32
    with pytest.raises(TypeError, match="different element types"):
        em.constant([1, 2]) * np.float64(2.5)  # a float into int32: never truncated


# -- conversion rules -------------------------------------------------------------------------

@pytest.mark.parametrize("value,dtype,expected", [
    (1, em.int32, 1),
    (-2**31, em.int32, -2**31),
    (2**31 - 1, em.int32, 2**31 - 1),
    (2**31, em.int64, 2**31),
    (2**40, em.int64, 2**40),
    ([1, 2**40], em.int64, [1, 2**40]),
    ([-2**31 - 1, 0], em.int64, [-2**31 - 1, 0]),
    (1.5, em.float32, 1.5),
    ([1, 2.5], em.float32, [1.0, 2.5]),
    ([], em.float32, []),
    (True, em.bool, True),
    ([[True], [False]], em.bool, [[True], [False]]),
    ("abc", em.string, b"abc"),
    (b"abc", em.string, b"abc"),
    ("é", em.string, "é".encode()),
    (b"a\x00", em.string, b"a\x00"),
    (["a", "bc"], em.string, [b"a", b"bc"]),
    ([["a"], [b"b"]], em.string, [[b"a"], [b"b"]]),
    (np.float64(1.5), em.float64, 1.5),
    (np.array([1.5, 2.0]), em.float64, [1.5, 2.0]),
    (np.array([1, 2]), em.int64, [1, 2]),
    (np.int8(-3), em.int8, -3),
    (np.array([True]), em.bool, [True]),
    (np.array(["x", "y"]), em.string, [b"x", b"y"]),
    (np.array([b"x", b"y"]), em.string, [b"x", b"y"]),
    (np.array(["x", b"y"], object), em.string, [b"x", b"y"]),
])
def test_conversion_follows_tensorflow_rules(value, dtype, expected):
    t = em.constant(value)
    assert t.dtype is dtype
    assert np.asarray(t).tolist() == expected


@pytest.mark.parametrize("value,dtype,expected", [
    ([1, 2], em.float32, [1.0, 2.0]),
    (1, em.float16, 1.0),
    (255, em.uint8, 255),
    (-128, em.int8, -128),
    (True, em.bool, True),
    ([], em.int32, []),
    ([], em.string, []),
    ("a", em.string, b"a"),
    (np.array(["a"]), em.string, [b"a"]),
    (0.5, "bfloat16", 0.5),
])
def test_conversion_with_representable_dtype(value, dtype, expected):
    t = em.constant(value, dtype=dtype)
    assert t.dtype is em.as_dtype(dtype)
    assert np.asarray(t).tolist() == expected


@pytest.mark.parametrize("value,dtype", [
    (1.5, em.int32), (256, em.uint8), (-1, em.uint8), (2**31, em.int32), (True, em.int32),
    (1, em.bool), ("a", em.float32), (1, em.string), ([1, 2.5], em.int64),
    (np.array([1, 2]), em.string),
])
def test_conversion_rejects_unrepresentable_values(value, dtype):
    with pytest.raises(TypeError, match=f"cannot convert .* to a tensor of dtype {dtype.name}"):
        em.constant(value, dtype=dtype)


def test_convert_to_tensor_passes_tensors_through_and_checks_dtype():
    t = em.constant([1, 2])
    assert em.convert_to_tensor(t) is t
    assert em.convert_to_tensor(t, dtype=em.int32) is t
    with pytest.raises(TypeError, match="a int32 tensor cannot be used where float32 is "
                                        r"required; cast it with em.cast\(x, em.float32\)"):
        em.convert_to_tensor(t, dtype=em.float32)


def test_convert_to_tensor_dtype_hint_falls_back_to_defaults():
    assert em.convert_to_tensor(1, dtype_hint=em.float64).dtype is em.float64
    assert em.convert_to_tensor(1.5, dtype_hint=em.int32).dtype is em.float32
    assert em.convert_to_tensor("a", dtype_hint=em.int32).dtype is em.string


@pytest.mark.parametrize("dtype", [em.float16, em.bfloat16, em.float32, em.float64])
@pytest.mark.parametrize("value", [0.1, -0.0, 1 / 3, 1e-46, 65504.0, 65520.0, 3.5e38, 1e300,
                                   float("inf"), float("nan")])
def test_python_float_meeting_a_tensor_converts_as_with_a_dtype_hint(value, dtype):
    from ember.frontend.math_ops import group  # (it takes a quicker way for floats)

    with warnings.catch_warnings(record=True) as hint_warned:
        warnings.simplefilter("always")
        want = em.convert_to_tensor(value, dtype_hint=dtype)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        _, got = group(em.zeros([2], dtype=dtype), value)
    assert bool(warned) == bool(hint_warned)  # an overflow warns
    assert got.dtype is want.dtype is dtype
    assert got.numpy().tobytes() == want.numpy().tobytes()


@pytest.mark.parametrize("value", [None, object(), {1: 2}, {1, 2}])
def test_conversion_rejects_non_tensor_values(value):
    with pytest.raises(TypeError, match="cannot convert"):
        em.constant(value)


@pytest.mark.parametrize("value", [["a", 1], [[b"a"], [True]], np.array(["a", 1], object),
                                   np.array([None], object)])
def test_string_conversion_rejects_non_string_elements(value):
    with pytest.raises(TypeError, match="cannot convert .* to a tensor of dtype string: string "
                                        "elements must be str or bytes"):
        em.constant(value)


def test_conversion_rejects_ragged_lists():
    with pytest.raises((TypeError, ValueError)):
        em.constant([[1, 2], [3]])


@pytest.mark.parametrize("x,y", [
    (lambda: em.constant([1, 2]), lambda: em.constant([1.0, 2.0])),
    (lambda: em.constant([1, 2]), lambda: 1.5),
    (lambda: em.constant([1.0]), lambda: "a"),
    (lambda: em.constant(["a"]), lambda: 1),
    (lambda: em.constant([True]), lambda: 1),
])
def test_mixed_dtypes_raise_type_error(x, y):
    with pytest.raises(TypeError):
        x() + y()
    with pytest.raises(TypeError):
        y() + x()


# -- strings ----------------------------------------------------------------------------------

def test_string_tensors_concatenate_and_compare(expect):
    a = em.constant(["ab", "c"])
    expect(a + "!", np.array([b"ab!", b"c!"], object), "string")
    expect("<" + a, np.array([b"<ab", b"<c"], object), "string")
    expect(a + b"?", np.array([b"ab?", b"c?"], object), "string")
    expect(a + a, np.array([b"abab", b"cc"], object), "string")
    expect(a == "c", np.array([False, True]))
    expect(a != em.constant(["ab", "d"]), np.array([False, True]))
    assert bool(em.constant("x") == "x") and bool(em.constant("x") == b"x")


def test_string_tensors_reject_arithmetic_and_ordering():
    with pytest.raises(TypeError, match="must have numeric"):
        em.constant(["a"]) * "b"
    with pytest.raises(TypeError, match="different element types"):
        em.constant(["a"]) * 2
    with pytest.raises(TypeError, match="must have numeric"):
        em.constant(["a"]) < "b"


# -- constant(shape=) -------------------------------------------------------------------------

@pytest.mark.parametrize("value,shape,expected,dtype", [
    (0.5, [2], [0.5, 0.5], "float32"),
    (7, (2, 2), [[7, 7], [7, 7]], "int32"),
    ([1, 2, 3, 4], [2, 2], [[1, 2], [3, 4]], "int32"),
    ([[1, 2, 3]], [3], [1, 2, 3], "int32"),
    ([9], [1, 3], [[9, 9, 9]], "int32"),
    ("s", [2], [b"s", b"s"], "string"),
    (1, [0], [], "int32"),
    (1, em.TensorShape([2]), [1, 1], "int32"),
])
def test_constant_with_shape_broadcasts_or_reshapes(value, shape, expected, dtype, expect):
    expect(em.constant(value, shape=shape), np.array(expected, object if dtype == "string"
                                                     else em.as_dtype(dtype).np_dtype), dtype)


@pytest.mark.parametrize("value,shape,match", [
    ([1, 2, 3], [2, 2], r"cannot give a value of 3 elements the shape \[2, 2\]"),
    ([1, 2], [None], r"constant shape \[None\] must be fully defined"),
    ([1, 2], em.TensorShape(None), r"as_list\(\) is not defined on an unknown TensorShape"),
])
def test_constant_with_wrong_shape_raises(value, shape, match):
    with pytest.raises(ValueError, match=match):
        em.constant(value, shape=shape)


# -- TensorShape and TensorSpec ----------------------------------------------------------------

@pytest.mark.parametrize("dims,rank,as_list,defined,elements,text,rep", [
    ([2, 3], 2, [2, 3], True, 6, "(2, 3)", "TensorShape([2, 3])"),
    ([None, 3], 2, [None, 3], False, None, "(None, 3)", "TensorShape([None, 3])"),
    ([4], 1, [4], True, 4, "(4,)", "TensorShape([4])"),
    ([], 0, [], True, 1, "()", "TensorShape([])"),
    ([-1], 1, [None], False, None, "(None,)", "TensorShape([None])"),
    (5, 1, [5], True, 5, "(5,)", "TensorShape([5])"),
    ([np.int64(2), 0], 2, [2, 0], True, 0, "(2, 0)", "TensorShape([2, 0])"),
])
def test_tensor_shape_properties(dims, rank, as_list, defined, elements, text, rep):
    s = em.TensorShape(dims)
    assert s.rank == rank and s.ndims == rank and len(s) == rank
    assert s.as_list() == as_list and list(s) == as_list
    assert s.is_fully_defined() is defined
    assert s.num_elements() == elements
    assert str(s) == text and repr(s) == rep
    assert s == as_list and s == tuple(as_list) and s == em.TensorShape(s)
    assert hash(s) == hash(em.TensorShape(as_list))


def test_unknown_rank_tensor_shape():
    s = em.TensorShape(None)
    assert s.rank is None and s.dims is None
    assert str(s) == "<unknown>" and repr(s) == "TensorShape(None)"
    assert not s.is_fully_defined() and s.num_elements() is None
    assert s == em.TensorShape(None) and s != em.TensorShape([])
    assert s.is_compatible_with([1, 2]) and s.is_compatible_with(None)
    assert s[0] is None and s[1:] == em.TensorShape(None)
    with pytest.raises(ValueError, match="unknown TensorShape"):
        s.as_list()
    with pytest.raises(ValueError, match="unknown rank"):
        len(s)
    with pytest.raises(ValueError, match="unknown rank"):
        iter(s)


@pytest.mark.parametrize("a,b,compatible", [
    ([2, 3], [2, 3], True), ([None, 3], [2, 3], True), ([2, None], [None, 4], True),
    ([2, 3], [3, 2], False), ([2], [2, 1], False), ([], [], True), ([None], [], False),
])
def test_tensor_shape_compatibility(a, b, compatible):
    assert em.TensorShape(a).is_compatible_with(b) is compatible
    assert em.TensorShape(b).is_compatible_with(a) is compatible


@pytest.mark.parametrize("a,b,joined", [
    ([None], [3], [None, 3]), ([], [2, 1], [2, 1]), ([4], [], [4]),
    ([None], None, None), (None, [2], None),
])
def test_tensor_shape_concatenate_as_tensorflow(a, b, joined):
    want = em.TensorShape(joined)
    assert em.TensorShape(a).concatenate(b) == want
    assert em.TensorShape(a) + em.TensorShape(b) == want
    if a is not None:
        assert list(a) + em.TensorShape(b) == want


@pytest.mark.parametrize("dims", [[-2], [1.5], [True], ["a"]])
def test_tensor_shape_rejects_bad_dims(dims):
    with pytest.raises(TypeError, match="must be a non-negative int or None"):
        em.TensorShape(dims)


def test_tensor_shape_compares_unequal_to_unrelated_values():
    assert em.TensorShape([2]) != "ab"
    assert em.TensorShape([2]) != [2, 1]
    assert not (em.TensorShape([2]) == object())


def test_tensor_spec_repr_equality_and_hash():
    spec = em.TensorSpec(shape=[None], dtype=em.float32)
    assert repr(spec) == "TensorSpec(shape=(None,), dtype=em.float32, name=None)"
    assert spec == em.TensorSpec([None], "float32")
    assert spec != em.TensorSpec([None], em.float64)
    assert spec != em.TensorSpec([None], em.float32, name="x")
    assert spec != em.TensorSpec([2], em.float32)
    assert hash(spec) == hash(em.TensorSpec((None,), em.float32))
    named = em.TensorSpec([2, 3], em.int32, name="x")
    assert repr(named) == "TensorSpec(shape=(2, 3), dtype=em.int32, name='x')"
    assert em.TensorSpec().shape == em.TensorShape(None) and em.TensorSpec().dtype is em.float32


def test_tensor_spec_from_tensor_and_compatibility():
    t = em.zeros([2, 3], em.int8)
    spec = em.TensorSpec.from_tensor(t, name="t")
    assert spec == em.TensorSpec([2, 3], em.int8, "t")
    assert spec.is_compatible_with(t)
    assert em.TensorSpec([None, 3], em.int8).is_compatible_with(t)
    assert em.TensorSpec(None, em.int8).is_compatible_with(t)
    assert not em.TensorSpec([None, 3], em.int32).is_compatible_with(t)
    assert not em.TensorSpec([3, None], em.int8).is_compatible_with(t)
    assert em.TensorSpec([None, 3], em.int8).is_compatible_with(em.TensorSpec([2, 3], em.int8))
    assert str(spec.tensor_type) == "tensor<2x3xi8>"
    assert str(em.TensorSpec([None, 3]).tensor_type) == "tensor<?x3xf32>"
    assert str(em.TensorSpec().tensor_type) == "tensor<*xf32>"


def test_tensor_spec_rejects_unknown_dtype():
    with pytest.raises(TypeError, match="unknown dtype name 'float8'"):
        em.TensorSpec([1], "float8")


# -- em.print -----------------------------------------------------------------------------------

@pytest.mark.parametrize("args,kwargs,text", [
    (("x =", [1, 2]), {}, "x = [1 2]\n"),
    (([[1, 2], [3, 4]],), {}, "[[1 2]\n [3 4]]\n"),
    ((5,), {}, "5\n"),
    (("a", 1.5, None), {"sep": "|", "end": "!"}, "a|1.5|None!"),
    ((), {}, "\n"),
])
def test_print_writes_python_values_and_tensors(args, kwargs, text):
    stream = io.StringIO()
    args = tuple(em.constant(a) if isinstance(a, list) else a for a in args)
    em.print(*args, output_stream=stream, **kwargs)
    assert stream.getvalue() == text


def test_print_formats_tensor_scalars_and_strings():
    stream = io.StringIO()
    em.print(em.constant(3), em.constant("hi"), em.constant(["a", "b"]), em.constant([]),
             output_stream=stream)
    assert stream.getvalue() == '3 hi ["a" "b"] []\n'


def test_print_elides_long_tensors():
    stream = io.StringIO()
    em.print(em.range(5000), output_stream=stream)
    text = stream.getvalue()
    assert text.startswith("[") and "..." in text and text.rstrip().endswith("4999]")
    assert len(text) < 100


def test_print_defaults_to_stderr(capsys):
    em.print("to stderr", em.constant([1]))
    captured = capsys.readouterr()
    assert captured.err == "to stderr [1]\n" and captured.out == ""


def test_converted_arrays_are_copies_refilling_the_buffer_changes_no_tensor():
    """As TensorFlow's: a host buffer refilled per batch leaves earlier tensors alone."""
    buf = np.zeros(3, np.float32)
    batches = []
    for step in range(3):
        buf[:] = step
        batches.append(em.convert_to_tensor(buf))
    x = np.arange(4, dtype=np.float32)
    views = [em.reshape(x, [2, 2]), em.identity(x), em.stop_gradient(x), em.squeeze(x),
             em.expand_dims(x, 0), em.convert_to_tensor(x, dtype=em.float32)]
    x[0] = -1.0
    assert [b.numpy().tolist() for b in batches] == [[0.0] * 3, [1.0] * 3, [2.0] * 3]
    assert [float(np.ravel(v.numpy())[0]) for v in views] == [0.0] * len(views)
