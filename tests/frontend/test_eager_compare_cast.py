"""Eager comparisons, logic, `em.where` and `em.cast` against Python oracles (IEEE float
comparisons, truth tables, explicit casting tables), plus conversion of Python operands.
"""

import math

import ml_dtypes
import numpy as np
import pytest

import ember as em

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]


def np_dtype(name):
    return em.as_dtype(name).np_dtype


# -- comparisons and logic ------------------------------------------------------------------

CMP_X = [np.nan, np.nan, 1.0, np.inf, -np.inf, -0.0, 2.0, 3.0]
CMP_Y = [np.nan, 1.0, 2.0, np.inf, 0.0, 0.0, 2.0, -1.0]

COMPARISONS = [
    (em.equal, lambda a, b: a == b),
    (em.not_equal, lambda a, b: a != b),
    (em.less, lambda a, b: a < b),
    (em.less_equal, lambda a, b: a <= b),
    (em.greater, lambda a, b: a > b),
    (em.greater_equal, lambda a, b: a >= b),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn,ref", COMPARISONS, ids=[f.__name__ for f, _ in COMPARISONS])
def test_comparison_follows_ieee_on_floats(fn, ref, dtype, expect):
    x = em.constant(np.array(CMP_X, np_dtype(dtype)))
    y = em.constant(np.array(CMP_Y, np_dtype(dtype)))
    expect(fn(x, y), np.array([ref(a, b) for a, b in zip(CMP_X, CMP_Y)]), "bool")


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("fn,ref", COMPARISONS, ids=[f.__name__ for f, _ in COMPARISONS])
def test_comparison_on_integers_broadcasts(fn, ref, dtype, rng, expect):
    info = np.iinfo(np_dtype(dtype))
    x = rng.integers(info.min, info.max, (3, 1), endpoint=True)
    y = np.array([int(info.min), 0, int(info.max), int(x[1, 0])])
    want = [[ref(int(a), int(b)) for b in y] for a in x[:, 0]]
    out = fn(em.constant(x.astype(np_dtype(dtype))), em.constant(y.astype(np_dtype(dtype))))
    expect(out, np.array(want), "bool")


def test_comparison_operators_return_bool_tensors(expect):
    x = em.constant([1, 2, 3])
    expect(x < 2, np.array([True, False, False]))
    expect(x <= 2, np.array([True, True, False]))
    expect(x > 2, np.array([False, False, True]))
    expect(x >= 2, np.array([False, True, True]))
    expect(x == 2, np.array([False, True, False]))
    expect(x != 2, np.array([True, False, True]))
    expect(2 > x, np.array([True, False, False]))


def test_equality_compares_strings_and_bools(expect):
    expect(em.equal(em.constant(["a", "b"]), em.constant(["a", "c"])), np.array([True, False]))
    expect(em.not_equal(em.constant(["a", "b"]), "a"), np.array([False, True]))
    expect(em.equal(em.constant([True, False]), True), np.array([True, False]))


def test_equality_operator_with_incompatible_value_is_false():
    assert (em.constant([1, 2]) == "a") is False
    assert (em.constant([1, 2]) == None) is False  # noqa: E711 - the operator is under test
    assert (em.constant([1, 2]) != "a") is True
    # as TensorFlow 2: shapes that do not broadcast compare unequal instead of raising
    assert (em.constant([1, 2]) == em.constant([1, 2, 3])) is False
    assert (em.constant([1, 2]) != em.constant([1, 2, 3])) is True
    with pytest.raises(ValueError, match="not broadcast-compatible"):
        em.equal(em.constant([1, 2]), em.constant([1, 2, 3]))  # the op itself still checks


@pytest.mark.parametrize("fn", [em.less, em.greater_equal], ids=lambda f: f.__name__)
def test_ordering_rejects_strings_and_bools(fn):
    with pytest.raises(TypeError, match="must have numeric"):
        fn(em.constant(["a"]), em.constant(["b"]))
    with pytest.raises(TypeError, match="must have numeric"):
        fn(em.constant([True]), em.constant([False]))


LOGICAL = [(em.logical_and, lambda a, b: a and b), (em.logical_or, lambda a, b: a or b)]


@pytest.mark.parametrize("fn,ref", LOGICAL, ids=[f.__name__ for f, _ in LOGICAL])
def test_logical_truth_table_with_broadcasting(fn, ref, expect):
    a = [[True], [False]]
    b = [True, False]
    want = [[ref(x[0], y) for y in b] for x in a]
    expect(fn(em.constant(a), em.constant(b)), np.array(want))
    expect(fn(em.constant(np.zeros((0,), bool)), True), np.zeros((0,), bool))


def test_logical_operators_accept_python_bools(expect):
    x = em.constant([True, False])
    expect(x & True, np.array([True, False]))
    expect(False | x, np.array([True, False]))


@pytest.mark.parametrize("fn", [em.logical_and, em.logical_or], ids=lambda f: f.__name__)
def test_logical_rejects_non_bool(fn):
    with pytest.raises(TypeError, match=r"must have bool \(i1\) elements"):
        fn(em.constant([1]), em.constant([0]))


# -- select ---------------------------------------------------------------------------------

def test_where_broadcasts_three_ways(rng, expect):
    c = np.array([[True], [False]])
    x = rng.standard_normal((1, 3)).astype(np.float32)
    y = np.float32(np.nan)
    want = [[x[0, j] if c[i, 0] else y for j in range(3)] for i in range(2)]
    expect(em.where(em.constant(c), em.constant(x), em.constant(y)), np.array(want, np.float32))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "float16", "bfloat16", "float64", "string"])
def test_where_keeps_value_dtype(dtype, expect):
    if dtype == "string":
        x, y = np.array([b"a", b"b"], object), np.array([b"c", b"d"], object)
    else:
        x, y = np.array([1, 2], np_dtype(dtype)), np.array([3, 4], np_dtype(dtype))
    out = em.where(em.constant([True, False]), em.constant(x), em.constant(y))
    expect(out, np.array([x[0], y[1]], dtype=x.dtype), dtype)


def test_where_python_scalar_takes_tensor_dtype(expect):
    out = em.where(em.constant([True, False, True]), em.constant([1, 2, 3], dtype=em.int64), 0)
    expect(out, np.array([1, 0, 3]), "int64")


def test_where_on_empty_is_empty(expect):
    out = em.where(em.constant(np.zeros((2, 0), bool)), 1.0, 2.0)
    expect(out, np.zeros((2, 0), np.float32))


@pytest.mark.parametrize("args,error,match", [
    (([1, 0], [1.0, 2.0], [3.0, 4.0]), TypeError, "condition of type tensor<2xi32> must have i1"),
    (([True], [1, 2], [1.0, 2.0]), TypeError, "different element types"),
    (([True, False, True], [1, 2], [1, 2]), ValueError, "not broadcast-compatible"),
])
def test_where_rejects_bad_operands(args, error, match):
    with pytest.raises(error, match=match):
        em.where(*(em.constant(a) for a in args))


# -- cast -------------------------------------------------------------------------------------

CASTS = [  # values, from, to, expected
    ([1.7, -1.7, 0.5, -0.5, 2.0], "float32", "int32", [1, -1, 0, 0, 2]),
    ([1.9, -1.9], "float64", "int8", [1, -1]),
    ([300, -1, 255, 256], "int32", "uint8", [44, 255, 255, 0]),
    ([-129, 128], "int16", "int8", [127, -128]),
    ([0.0, -0.0, 2.5, np.nan], "float32", "bool", [False, False, True, True]),
    ([0, 3, -1], "int32", "bool", [False, True, True]),
    ([True, False], "bool", "float32", [1.0, 0.0]),
    ([True, False], "bool", "int8", [1, 0]),
    ([1e5, -1e5, 1.0009765625], "float64", "float16", [np.inf, -np.inf, 1.0009765625]),
    ([1.00390625, 3.0], "float32", "bfloat16", [1.0, 3.0]),
    ([2**40], "int64", "float32", [float(2**40)]),
    ([16777217], "int32", "float32", [16777216.0]),
    ([1.5, -2.5], "bfloat16", "int32", [1, -2]),
    ([1.5, -2.5], "float16", "int64", [1, -2]),
]


@pytest.mark.parametrize("values,src,dst,expected", CASTS)
def test_cast_converts_values(values, src, dst, expected, expect):
    x = em.constant(np.array(values, np_dtype(src)))
    expect(em.cast(x, dst), np.array(expected), dst, rtol=0)


@pytest.mark.parametrize("dst", ["int8", "int32", "int64", "uint8"])
@pytest.mark.parametrize("src", ["float16", "bfloat16", "float64"])
def test_cast_float_to_int_agrees_across_float_dtypes(src, dst):
    """The kernel rule (truncate, saturate, NaN -> 0) must not depend on the float width."""
    values = np.array([np.nan, np.inf, -np.inf, 1e4, -1e4, 3.75, -3.75, 0.0], np.float32)
    values = values.astype(np_dtype(src)).astype(np.float32)
    via_f32 = em.cast(em.constant(values), dst).numpy()
    direct = em.cast(em.constant(values.astype(np_dtype(src))), dst).numpy()
    np.testing.assert_array_equal(direct, via_f32)


def test_cast_keeps_shape_of_empty(expect):
    expect(em.cast(em.zeros([2, 0]), em.int8), np.zeros((2, 0), np.int8))


def test_cast_string_to_number_raises():
    with pytest.raises(TypeError, match="strings only cast to strings"):
        em.cast(em.constant(["1"]), em.float32)
    with pytest.raises(TypeError, match="strings only cast to strings"):
        em.cast(em.constant([1]), em.string)


def test_cast_accepts_dtype_names_and_numpy_types(expect):
    expect(em.cast(em.constant([1.5]), "float64"), np.array([1.5]))
    expect(em.cast(em.constant([1.5]), np.float16), np.array([1.5], np.float16))
    expect(em.cast(em.constant([1.5]), ml_dtypes.bfloat16), np.array([1.5]), "bfloat16")


def test_identity_returns_a_tensor(expect):
    expect(em.identity([1, 2]), np.array([1, 2], np.int32))
    t = em.constant([1.0])
    assert em.identity(t) is t


@pytest.mark.parametrize("fn,x,y,expected,dtype", [
    (em.floordiv, 7.5, 2, 3.0, "float32"),
    (em.add, 2.5, 1, 3.5, "float32"),
    (em.pow, 2.0, 3, 8.0, "float32"),
    (em.maximum, 2**40, 1, 2**40, "int64"),
    (em.subtract, 1, 2, -1, "int32"),
])
def test_python_values_take_the_first_values_dtype(fn, x, y, expected, dtype, expect):
    expect(fn(x, y), np.array(expected), dtype)


def test_python_values_that_do_not_fit_the_first_raise():
    with pytest.raises(TypeError, match="different element types"):
        em.add(1, 2.5)  # int32 leads; 2.5 is no int32 (TensorFlow raises too)


def test_math_on_python_values_converts_them(expect):
    expect(em.exp(0.0), np.array(1.0, np.float32))
    expect(em.add(1, 2), np.array(3, np.int32))
    expect(em.maximum([1, 5], [3, 2]), np.array([3, 5], np.int32))
    assert math.isnan(float(em.sqrt(-1.0)))
