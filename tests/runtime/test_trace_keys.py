"""Trace keys of Python values: floats by bit pattern (-0.0 is not 0.0, a NaN is itself), in
the trace types, the dispatch fast path and ConcreteFunction's argument check alike; Python
values a trace receives (dtypes, shapes, enums, structures without tensors) are the very
objects the caller passed, not copies."""

import collections
import copy
import dataclasses
import enum
import math
import pickle

import numpy as np
import pytest

import ember as em
from ember.frontend.trace_types import LiteralTraceType, trace_type_of

Pair = collections.namedtuple("Pair", "a b")
NAN = float("nan")


def _divide(x, y):
    return x / y


def _eager_divide(y):
    return np.array([1.0, -1.0], np.float32) / np.float32(y)


@pytest.mark.parametrize("first, second", [(0.0, -0.0), (-0.0, 0.0)])
def test_negative_zero_does_not_reuse_the_trace_of_zero(first, second):
    f = em.function(_divide)
    x = em.constant([1.0, -1.0])
    with np.errstate(divide="ignore"):
        for y in (first, first, second, second, first):  # fast path entries for both
            np.testing.assert_array_equal(f(x, y).numpy(), _eager_divide(y))
    assert f.experimental_get_tracing_count() == 2


def test_nan_literals_share_one_trace():
    f = em.function(lambda x, y: x + y)
    x = em.constant([1.0])
    for _ in range(4):
        assert math.isnan(float(f(x, float("nan"))[0]))  # a new NaN object every call
    assert f.experimental_get_tracing_count() == 1
    assert len(f._fast) == 1  # NaN calls do not fill the fast-path table


@pytest.mark.parametrize("wrap", [
    lambda v: (v,), lambda v: [1, v], lambda v: {"k": v}, lambda v: Pair(1, v),
    lambda v: {"outer": (v, {"inner": v})},
], ids=["tuple", "list", "dict", "namedtuple", "nested"])
def test_nested_negative_zero_is_its_own_trace(wrap):
    def fn(x, structure):
        leaves = []
        _leaves(structure, leaves)
        return x / leaves[-1]
    f = em.function(fn)
    x = em.constant([1.0, -1.0])
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(f(x, wrap(0.0)).numpy(), _eager_divide(0.0))
        np.testing.assert_array_equal(f(x, wrap(-0.0)).numpy(), _eager_divide(-0.0))
    assert f.experimental_get_tracing_count() == 2


def _leaves(value, out):
    if isinstance(value, dict):
        for k in sorted(value):
            _leaves(value[k], out)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _leaves(v, out)
    else:
        out.append(value)


def test_negative_zero_dict_key_is_its_own_trace():
    f = em.function(lambda x, d: x / next(iter(d)))
    x = em.constant([1.0, -1.0])
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(f(x, {0.0: 1}).numpy(), _eager_divide(0.0))
        np.testing.assert_array_equal(f(x, {-0.0: 1}).numpy(), _eager_divide(-0.0))


def test_numpy_float_scalars_are_tensors_and_keep_their_sign():
    f = em.function(_divide)
    x = em.constant([1.0, -1.0])
    with np.errstate(divide="ignore"):
        for y in (np.float32(0.0), np.float32(-0.0)):
            np.testing.assert_array_equal(f(x, y).numpy(), _eager_divide(y))
    assert f.experimental_get_tracing_count() == 1  # one trace: a float32 scalar tensor


@pytest.mark.parametrize("traced, other", [(0.0, -0.0), (-0.0, 0.0), (1.0, 1)])
def test_concrete_function_rejects_a_different_float(traced, other):
    cf = em.function(_divide).get_concrete_function(em.TensorSpec([2]), traced)
    x = em.constant([1.0, -1.0])
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(cf(x, traced).numpy(), _eager_divide(traced))
    with pytest.raises(TypeError, match="was constructed with float value"):
        cf(x, other)


def test_concrete_function_rejects_another_variable_holding_the_same_value():
    """A variable argument is traced by identity: an equal-valued other one (whose `==` is
    elementwise, a true tensor) must not run the trace, which writes the first one."""
    a, b = em.Variable(1.0), em.Variable(1.0)

    def bump(v):
        v.assign_add(1.0)
        return v.read_value()
    cf = em.function(bump).get_concrete_function(a)
    assert float(cf(a)) == 2.0
    b.assign(2.0)
    with pytest.raises(TypeError, match="was constructed with Variable value"):
        cf(b)
    assert float(a) == 2.0 and float(b) == 2.0


def test_concrete_function_traced_with_nan_accepts_nan():
    cf = em.function(lambda x, y: x + y).get_concrete_function(em.TensorSpec([1]), NAN)
    assert math.isnan(float(cf(em.constant([1.0]), float("nan"))[0]))


@pytest.mark.parametrize("a, b, equal", [
    (0.0, -0.0, False), (NAN, float("nan"), True), (NAN, -NAN, False),
    (complex(0.0, 0.0), complex(0.0, -0.0), False), (1.0, 1.0, True), (1, 1.0, False),
])
def test_literal_trace_types_compare_float_bits(a, b, equal):
    ta, tb = LiteralTraceType(a), LiteralTraceType(b)
    assert (ta == tb) is equal and ta.is_subtype_of(tb) is equal
    if equal:
        assert hash(ta) == hash(tb)


def test_python_constants_in_one_body_stay_distinct():
    # the tracer's constants, CSE and folding must not merge `x / 0.0` with `x / -0.0`
    f = em.function(lambda x: (x / 0.0, x / -0.0, em.constant(1.0) / 0.0,
                               em.constant(1.0) / -0.0))
    x = em.constant([1.0, -1.0])
    with np.errstate(divide="ignore"):
        for _ in range(2):
            a, b, c, d = f(x)
            np.testing.assert_array_equal(a.numpy(), _eager_divide(0.0))
            np.testing.assert_array_equal(b.numpy(), _eager_divide(-0.0))
            assert (float(c), float(d)) == (math.inf, -math.inf)


# -- Python values passed through a trace are the caller's objects ------------------------

def test_dtype_argument_survives_tracing():
    x = em.constant([1.0, 3.0, 2.0])
    argmax = em.function(em.argmax)
    for dtype in (em.int64, em.int32, em.int64):
        got = argmax(x, 0, dtype)
        assert got.dtype is dtype and int(got) == int(em.argmax(x, 0, dtype)) == 1


@pytest.mark.parametrize("clone", [copy.copy, copy.deepcopy,
                                   lambda d: pickle.loads(pickle.dumps(d))],
                         ids=["copy", "deepcopy", "pickle"])
@pytest.mark.parametrize("dtype", [em.float32, em.bfloat16, em.string, em.bool])
def test_dtypes_are_singletons(clone, dtype):
    assert clone(dtype) is dtype
    assert not dataclasses.is_dataclass(dtype)  # structures do not rebuild it field by field
    with pytest.raises(AttributeError, match="immutable"):
        dtype.name = "other"


def test_constructing_a_known_dtype_gives_the_registered_one():
    assert em.DType("int64", np.dtype(np.int64), "i64", "int", 64) is em.int64
    with pytest.raises(ValueError, match="already exists"):
        em.DType("int64", np.dtype(np.int32), "i32", "int", 32)


class Mode(enum.Enum):
    SUM = 1
    MAX = 2


@dataclasses.dataclass(frozen=True)
class Config:
    dtype: object
    mode: Mode
    shape: object


@pytest.mark.parametrize("value", [
    em.float64, Mode.MAX, em.TensorShape([2, 2]),
    Config(em.float64, Mode.MAX, em.TensorShape([2, 2])), Pair(em.int32, Mode.SUM),
    (em.float64, [Mode.SUM]), {"dtype": em.float64},
], ids=["dtype", "enum", "TensorShape", "dataclass", "namedtuple", "tuple", "dict"])
def test_python_arguments_reach_the_trace_as_the_same_object(value):
    seen = []

    def fn(x, arg):
        seen.append(arg)
        return x + 1.0

    f = em.function(fn)
    for _ in range(2):
        f(em.constant([1.0]), value)
    assert seen == [value] and seen[0] is value


def test_structure_with_a_tensor_is_rebuilt_with_the_dtype_kept():
    seen = []

    def fn(cfg):
        seen.append(cfg)
        return em.cast(cfg.shape, cfg.dtype)

    f = em.function(fn)
    out = f(Config(em.int32, Mode.SUM, em.constant([1.5, 2.5])))
    assert seen[0].dtype is em.int32 and seen[0].mode is Mode.SUM
    assert out.dtype is em.int32
    np.testing.assert_array_equal(out.numpy(), [1, 2])


def test_trace_type_of_a_dtype_is_its_identity():
    assert trace_type_of(em.float32) == trace_type_of(copy.deepcopy(em.float32))
    assert trace_type_of(em.float32) != trace_type_of(em.float64)
