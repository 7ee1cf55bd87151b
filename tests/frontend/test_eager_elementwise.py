"""Eager elementwise math (`em.exp`, `em.add`, the arithmetic operators, ...) against
independent oracles: float64 numpy or plain Python integers, then rounded once to the dtype.
Comparisons, logic, select and cast are in test_eager_compare_cast.py.
"""

import numpy as np
import pytest

import ember as em

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]
EDGE = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, 0.75]


def np_dtype(name):
    return em.as_dtype(name).np_dtype


def float_input(dtype, rng, n=24):
    """Edge values followed by random normals, rounded to `dtype`."""
    values = np.concatenate([EDGE, rng.standard_normal(n) * 2])
    return values.astype(np_dtype(dtype))


def oracle(fn, *arrays, dtype):
    """`fn` evaluated in float64 on the (already rounded) inputs, rounded once to `dtype`."""
    with np.errstate(all="ignore"):
        return fn(*(a.astype(np.float64) for a in arrays)).astype(np_dtype(dtype))


def wrap(value: int, dtype: str) -> int:
    """Two's-complement wrap of a Python int into `dtype`."""
    info = np.iinfo(np_dtype(dtype))
    span = int(info.max) - int(info.min) + 1
    return (value - int(info.min)) % span + int(info.min)


def sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


# -- unary --------------------------------------------------------------------------------

UNARY_FLOAT = [
    (em.negative, lambda x: -x),
    (em.abs, np.abs),
    (em.sign, np.sign),
    (em.square, lambda x: x * x),
    (em.relu, lambda x: np.where(np.isnan(x), x, np.where(x > 0, x, 0.0))),
    (em.exp, np.exp),
    (em.expm1, np.expm1),
    (em.log, np.log),
    (em.log1p, np.log1p),
    (em.sqrt, np.sqrt),
    (em.rsqrt, lambda x: 1.0 / np.sqrt(x)),
    (em.tanh, np.tanh),
    (em.sigmoid, sigmoid64),
    (em.sin, np.sin),
    (em.cos, np.cos),
    (em.floor, np.floor),
    (em.ceil, np.ceil),
    (em.round, np.rint),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn,ref", UNARY_FLOAT, ids=[f.__name__ for f, _ in UNARY_FLOAT])
def test_unary_matches_float64_oracle_on_edge_and_random_values(fn, ref, dtype, rng, expect):
    x = float_input(dtype, rng)
    expect(fn(em.constant(x)), oracle(ref, x, dtype=dtype), dtype)


@pytest.mark.parametrize("fn", [em.sin, em.exp, em.negative, em.is_nan, em.round],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(0,), (2, 0), ()])
def test_unary_keeps_shape_when_empty_or_scalar(fn, shape):
    out = fn(em.constant(np.ones(shape, np.float32)))
    assert out.shape == shape


@pytest.mark.parametrize("fn,expected_bits", [
    (em.negative, [True, False]),   # -(0.0) = -0.0, -(-0.0) = 0.0
    (em.abs, [False, False]),
    (em.floor, [False, True]),
    (em.ceil, [False, True]),
    (em.round, [False, True]),
    (em.sqrt, [False, True]),       # sqrt(-0.0) = -0.0 (IEEE)
])
def test_unary_sign_of_zero_follows_ieee(fn, expected_bits):
    out = fn(em.constant(np.array([0.0, -0.0], np.float32))).numpy()
    assert np.signbit(out).tolist() == expected_bits


def test_round_breaks_ties_to_even():
    x = em.constant([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999])
    assert em.round(x).numpy().tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0]


def test_sigmoid_saturates_without_overflow():
    x = em.constant([-1000.0, -100.0, 0.0, 100.0, 1000.0])
    out = em.sigmoid(x).numpy()
    assert np.all(np.isfinite(out))
    assert out.tolist() == [0.0, pytest.approx(3.7200760e-44, rel=1e-3), 0.5, 1.0, 1.0]


UNARY_INT = [
    (em.negative, lambda v: -v),
    (em.abs, lambda v: -v if v < 0 else v),
    (em.sign, lambda v: (v > 0) - (v < 0)),
    (em.square, lambda v: v * v),
    (em.relu, lambda v: max(v, 0)),
]


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("fn,ref", UNARY_INT, ids=[f.__name__ for f, _ in UNARY_INT])
def test_unary_integer_wraps_like_twos_complement(fn, ref, dtype, rng, expect):
    info = np.iinfo(np_dtype(dtype))
    values = [int(info.min), int(info.min) + 1, -1, 0, 1, 7, int(info.max)]
    values += [int(v) for v in rng.integers(info.min, info.max, 8, endpoint=True)]
    values = sorted({wrap(v, dtype) for v in values})
    x = np.array(values, np_dtype(dtype))
    expect(fn(em.constant(x)), np.array([wrap(ref(v), dtype) for v in values], np.int64),
           dtype)


def test_abs_of_most_negative_integer_is_itself():
    assert em.abs(em.constant(np.array([-128], np.int8))).numpy().tolist() == [-128]


@pytest.mark.parametrize("fn,expected", [
    (em.is_nan, [True, False, False, False, False]),
    (em.is_finite, [False, False, False, True, True]),
])
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_predicates_return_bool(fn, expected, dtype, expect):
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 1.0], np_dtype(dtype))
    expect(fn(em.constant(x)), np.array(expected), "bool")


def test_logical_not_inverts_bools(expect):
    expect(em.logical_not(em.constant([True, False])), np.array([False, True]))
    expect(~em.constant([[True], [False]]), np.array([[False], [True]]))


@pytest.mark.parametrize("fn,value,match", [
    (em.exp, [1, 2], "must have floating-point or complex elements"),
    (em.sqrt, [1, 2], "must have floating-point or complex elements"),
    (em.is_nan, [1, 2], "must have floating-point elements"),
    (em.floor, [True], "must have floating-point elements"),
    (em.negative, [True], r"must have numeric \(integer, floating-point or complex\) elements"),
    (em.abs, ["a"], "must have numeric"),
    (em.logical_not, [1.0], r"must have bool \(i1\) elements"),
])
def test_unary_rejects_wrong_dtype(fn, value, match):
    with pytest.raises(TypeError, match=match):
        fn(em.constant(value))


# -- binary arithmetic ----------------------------------------------------------------------

BINARY_FLOAT = [
    (em.add, np.add, "normal"),
    (em.subtract, np.subtract, "normal"),
    (em.multiply, np.multiply, "normal"),
    (em.divide, np.divide, "nonzero"),
    (em.floordiv, np.floor_divide, "nonzero"),
    (em.floormod, np.mod, "nonzero"),
    (em.pow, np.power, "positive"),
    (em.maximum, np.maximum, "normal"),
    (em.minimum, np.minimum, "normal"),
]


def binary_float_inputs(kind, dtype, rng):
    if kind == "positive":
        x = rng.uniform(0.1, 3.0, (2, 3))
        y = rng.uniform(-2.0, 2.0, (3,))
    else:
        x = rng.standard_normal((2, 3)) * 4
        y = rng.standard_normal((3,)) * 2
        if kind == "nonzero":
            y = np.where(np.abs(y) < 0.25, 0.5, y)
    return x.astype(np_dtype(dtype)), y.astype(np_dtype(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn,ref,kind", BINARY_FLOAT, ids=[f.__name__ for f, _, _ in BINARY_FLOAT])
def test_binary_float_matches_float64_oracle_with_broadcasting(fn, ref, kind, dtype, rng,
                                                               expect):
    x, y = binary_float_inputs(kind, dtype, rng)
    expect(fn(em.constant(x), em.constant(y)), oracle(ref, x, y, dtype=dtype), dtype)
    # and with the operands swapped (the broadcast goes the other way)
    if kind == "normal":
        expect(fn(em.constant(y), em.constant(x)), oracle(ref, y, x, dtype=dtype), dtype)


BINARY_INT = [
    (em.add, lambda a, b: a + b, "any"),
    (em.subtract, lambda a, b: a - b, "any"),
    (em.multiply, lambda a, b: a * b, "any"),
    (em.floordiv, lambda a, b: a // b, "nonzero"),   # Python floors toward -inf
    (em.floormod, lambda a, b: a % b, "nonzero"),    # Python's % has the sign of b
    (em.pow, lambda a, b: a ** b, "exponent"),
    (em.maximum, max, "any"),
    (em.minimum, min, "any"),
]


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("fn,ref,kind", BINARY_INT, ids=[f.__name__ for f, _, _ in BINARY_INT])
def test_binary_integer_matches_python_ints_wrapped(fn, ref, kind, dtype, rng, expect):
    info = np.iinfo(np_dtype(dtype))
    x = rng.integers(info.min, info.max, (3, 4), endpoint=True)
    if kind == "exponent":
        y = rng.integers(0, 5, (4,))
    else:
        y = rng.integers(info.min, info.max, (4,), endpoint=True)
        if kind == "nonzero":
            y = np.where(y == 0, 3, y)
    xb, yb = np.broadcast_arrays(x, y)
    want = [[wrap(ref(int(a), int(b)), dtype) for a, b in zip(ra, rb)] for ra, rb in zip(xb, yb)]
    out = fn(em.constant(x.astype(np_dtype(dtype))), em.constant(y.astype(np_dtype(dtype))))
    expect(out, np.array(want, np.int64), dtype)


DIVMOD_CASES = [  # x, y, x // y, x % y  (floor semantics, as Python and TensorFlow)
    (7, -2, -4, -1),
    (-7, 2, -4, 1),
    (7, 2, 3, 1),
    (-7, -2, 3, -1),
    (6, -3, -2, 0),
    (0, -3, 0, 0),
    (-1, 5, -1, 4),
]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("x,y,quotient,remainder", DIVMOD_CASES)
def test_floordiv_and_mod_round_toward_negative_infinity(x, y, quotient, remainder, dtype,
                                                         expect):
    a = em.constant(np.array([x], np_dtype(dtype)))
    b = em.constant(np.array([y], np_dtype(dtype)))
    expect(a // b, np.array([quotient]), dtype)
    expect(a % b, np.array([remainder]), dtype)
    expect(em.floordiv(a, b), np.array([quotient]), dtype)
    expect(em.mod(a, b), np.array([remainder]), dtype)


def test_operators_with_python_scalars_floor_toward_negative_infinity(expect):
    expect(em.constant(7) // -2, np.array(-4), "int32")
    expect(-7 % em.constant(2), np.array(1), "int32")
    expect(em.constant(7) % -2, np.array(-1), "int32")
    expect(7 // em.constant([-2, 2]), np.array([-4, 3]), "int32")


@pytest.mark.parametrize("fn", [em.floordiv, em.floormod], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", INTS)
def test_integer_division_by_zero_raises_invalid_argument(fn, dtype):
    x = em.constant(np.array([1, 2], np_dtype(dtype)))
    y = em.constant(np.array([1, 0], np_dtype(dtype)))
    with pytest.raises(em.InvalidArgumentError, match="integer division by zero"):
        fn(x, y)


def test_integer_division_by_zero_operator_raises_invalid_argument():
    with pytest.raises(em.InvalidArgumentError, match=r"'ember.floordiv' op integer division"):
        em.constant([1]) // 0
    with pytest.raises(em.InvalidArgumentError, match=r"'ember.mod' op integer division"):
        em.constant([1]) % 0


@pytest.mark.parametrize("dtype,result", [
    ("int8", "float32"), ("int16", "float32"), ("uint8", "float32"),
    ("int32", "float64"), ("int64", "float64"),
    ("float16", "float16"), ("bfloat16", "bfloat16"), ("float32", "float32"),
    ("float64", "float64"),
])
def test_true_division_result_dtype(dtype, result, expect):
    x = em.constant(np.array([7, 1, 0, 9], np_dtype(dtype)))
    y = em.constant(np.array([2, 4, 1, 3], np_dtype(dtype)))
    expect(x / y, np.array([3.5, 0.25, 0.0, 3.0]), result)


def test_true_division_of_ints_by_zero_gives_inf_and_nan(expect):
    out = em.constant([1, -1, 0]) / em.constant([0, 0, 0])
    expect(out, np.array([np.inf, -np.inf, np.nan]), "float64")


def test_true_division_of_int32_matches_python_division(expect):
    expect(em.constant([7, -7, 1]) / -2, np.array([7 / -2, -7 / -2, 1 / -2]), "float64")


FLOAT_EDGE_CASES = [  # fn, x, y, expected (float64 list)
    (em.add, [np.inf, -np.inf, np.nan, 1.0], [-np.inf, -np.inf, 1.0, -1.0],
     [np.nan, -np.inf, np.nan, 0.0]),
    (em.subtract, [np.inf, 0.0], [np.inf, -0.0], [np.nan, 0.0]),
    (em.multiply, [np.inf, 0.0, -0.0], [0.0, -1.0, -1.0], [np.nan, -0.0, 0.0]),
    (em.divide, [1.0, -1.0, 0.0, 1.0, np.inf], [0.0, 0.0, 0.0, -0.0, np.inf],
     [np.inf, -np.inf, np.nan, -np.inf, np.nan]),
    (em.floordiv, [1.0, -1.0, 7.5, -7.5], [0.0, 0.0, 2.0, 2.0], [np.inf, -np.inf, 3.0, -4.0]),
    (em.floormod, [7.5, -7.5, 7.5, 1.0], [2.0, 2.0, -2.0, 0.0], [1.5, 0.5, -0.5, np.nan]),
    (em.pow, [0.0, -8.0, np.nan, 1.0, 2.0], [-1.0, 1 / 3, 0.0, np.nan, -np.inf],
     [np.inf, np.nan, 1.0, 1.0, 0.0]),
    (em.maximum, [np.nan, 1.0, -0.0], [1.0, np.nan, -np.inf], [np.nan, np.nan, -0.0]),
    (em.minimum, [np.nan, 1.0, np.inf], [1.0, np.nan, 2.0], [np.nan, np.nan, 2.0]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("fn,x,y,expected", FLOAT_EDGE_CASES,
                         ids=[c[0].__name__ for c in FLOAT_EDGE_CASES])
def test_binary_float_edge_values_follow_ieee(fn, x, y, expected, dtype, expect):
    out = fn(em.constant(np.array(x, np_dtype(dtype))), em.constant(np.array(y, np_dtype(dtype))))
    expect(out, np.array(expected), dtype)
    zeros = np.array(expected) == 0
    assert np.signbit(out.numpy()[zeros]).tolist() == np.signbit(np.array(expected)[zeros]).tolist()


OVERFLOW_CASES = [  # fn, dtype, x, y, expected
    (em.add, "int32", 2**31 - 1, 1, -2**31),
    (em.add, "int64", 2**63 - 1, 1, -2**63),
    (em.subtract, "uint8", 0, 1, 255),
    (em.subtract, "int8", -128, 1, 127),
    (em.multiply, "int8", 100, 2, -56),
    (em.multiply, "int16", 300, 300, wrap(90000, "int16")),
    (em.pow, "int32", 2, 31, -2**31),
    (em.pow, "uint8", 3, 6, 729 % 256),
]


@pytest.mark.parametrize("fn,dtype,x,y,expected", OVERFLOW_CASES)
def test_integer_arithmetic_overflow_wraps(fn, dtype, x, y, expected, expect):
    out = fn(em.constant(np.array([x], np_dtype(dtype))),
             em.constant(np.array([y], np_dtype(dtype))))
    expect(out, np.array([expected]), dtype)


def test_integer_power_with_negative_exponent_raises_invalid_argument():
    with pytest.raises(em.InvalidArgumentError, match="negative integer powers"):
        em.pow(em.constant([2, 3]), em.constant([1, -1]))


BROADCAST_SHAPES = [
    ((2, 3), (3,), (2, 3)),
    ((2, 1), (1, 3), (2, 3)),
    ((), (4,), (4,)),
    ((4,), (), (4,)),
    ((0,), (1,), (0,)),
    ((2, 0), (2, 1), (2, 0)),
    ((1, 0), (3, 1), (3, 0)),
    ((5, 1, 2), (3, 1), (5, 3, 2)),
]


@pytest.mark.parametrize("fn", [em.add, em.multiply, em.maximum, em.less, em.floordiv],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("xs,ys,out", BROADCAST_SHAPES)
def test_binary_broadcasts_shapes_like_numpy(fn, xs, ys, out, rng):
    x = rng.integers(1, 9, xs).astype(np.int32)
    y = rng.integers(1, 9, ys).astype(np.int32)
    result = fn(em.constant(x), em.constant(y))
    assert result.shape == out
    assert result.numpy().shape == out


@pytest.mark.parametrize("xs,ys", [((2, 3), (2,)), ((0,), (2,)), ((2, 3, 4), (3, 1, 1))])
def test_binary_rejects_incompatible_shapes(xs, ys):
    with pytest.raises(ValueError, match=r"'ember.add' op operand types .* are not "
                                         "broadcast-compatible"):
        em.add(em.zeros(xs), em.zeros(ys))


@pytest.mark.parametrize("x,y", [
    (lambda: em.constant([1, 2]), lambda: em.constant([1.0, 2.0])),
    (lambda: em.constant([1, 2]), lambda: 1.5),
    (lambda: em.constant([1.0], dtype=em.float16), lambda: em.constant([1.0])),
    (lambda: em.constant([1], dtype=em.int64), lambda: em.constant([1])),
    (lambda: em.constant([1], dtype=em.uint8), lambda: 256),
    (lambda: em.constant([1], dtype=em.uint8), lambda: -1),
])
def test_binary_never_mixes_dtypes(x, y):
    with pytest.raises(TypeError):
        x() + y()
    with pytest.raises(TypeError, match="have different element types|cannot"):
        em.multiply(x(), y())


@pytest.mark.parametrize("dtype,scalar,expected", [
    ("int8", 5, [6, 7]),
    ("uint8", 254, [255, 0]),
    ("float16", 0.5, [1.5, 2.5]),
    ("bfloat16", 2, [3.0, 4.0]),
    ("float64", 0.1, [1.1, 2.1]),
])
def test_python_scalar_takes_tensor_dtype(dtype, scalar, expected, expect):
    x = em.constant(np.array([1, 2], np_dtype(dtype)))
    expect(x + scalar, np.array(expected), dtype)
    expect(scalar + x, np.array(expected), dtype)


def test_add_concatenates_strings(expect):
    out = em.add(em.constant(["a", "bc"]), em.constant("!"))
    expect(out, np.array([b"a!", b"bc!"], dtype=object), "string")


@pytest.mark.parametrize("fn", [em.subtract, em.multiply, em.maximum], ids=lambda f: f.__name__)
def test_arithmetic_rejects_strings(fn):
    with pytest.raises(TypeError, match="must have numeric"):
        fn(em.constant(["a"]), em.constant(["b"]))
