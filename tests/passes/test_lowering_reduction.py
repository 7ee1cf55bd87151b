"""Compiled reductions against the interpreter (the numpy reference kernels).

Each case lowers one reduction with `convert-ember-to-linalg`, compiles it with the CPU
backend's later stages and runs it as the runtime does (lowering_harness) on random
inputs with NaNs, infinities, ties and empty dims. Integers, booleans, max/min and
argmax/argmin agree bit for bit; float sums, products and means to a few ulps (the loop adds
in order, numpy pairwise).
"""

import zlib

import numpy as np
import pytest
from mlir import ir

import lowering_harness
from ember.backends.interpreter import Interpreter
from ember.dialects.ember import dtypes
from ember.dialects.ember import reduction as R
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.types import TensorType

OPS = {"sum": R.ReduceSumOp, "prod": R.ReduceProdOp, "mean": R.ReduceMeanOp,
       "max": R.ReduceMaxOp, "min": R.ReduceMinOp, "any": R.ReduceAnyOp, "all": R.ReduceAllOp}
FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i8", "i16", "i32", "i64", "ui8"]
# (shape, axes, keepdims); a None dim is dynamic in the IR (the result stays static).
SHAPES = [((5,), (0,), False), ((3, 4), (1,), True), ((3, 4), (0, 1), False),
          ((2, 3, 4), (0, 2), True), ((2, 3, 4), (1,), False), ((0, 3), (0,), False),
          ((3, 0), (1,), True), ((4, 3), (), False), ((4, 3), (), True),
          ((2, 3), (0, 1), True)]
DYNAMIC = ((None, 3), (0,), False)  # runs with 6 rows
RTOL = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 1e-5, "f64": 1e-12}


@pytest.fixture(scope="module")
def context():
    ctx = make_context()
    with ctx, ir.Location.unknown():
        yield ctx


def _seed(*parts) -> int:
    """A per-case seed that does not change between runs (unlike `hash` of strings)."""
    return zlib.crc32(repr(parts).encode())


def _reduction(op: str, dtype: str, shape, axes, keepdims) -> str:
    spec = OPS[op]
    x = TensorType(dtypes.from_mlir(dtype), shape)
    out = spec.infer(x, axes=axes, keepdims=keepdims)
    attrs = f"axes = array<i64{': ' if axes else ''}{', '.join(map(str, axes))}>, " \
            f"keepdims = {str(keepdims).lower()}"
    return (f"func.func @main(%x: {x}) -> {out} {{\n"
            f'  %0 = "{spec.name}"(%x) {{{attrs}}} : ({x}) -> {out}\n'
            f"  return %0 : {out}\n}}")


def _arg_reduction(op: str, dtype: str, shape, axis: int, index: str) -> str:
    spec = R.ArgMaxOp if op == "argmax" else R.ArgMinOp
    x = TensorType(dtypes.from_mlir(dtype), shape)
    out = spec.infer(x, axis=axis, dtype=dtypes.from_mlir(index))
    return (f"func.func @main(%x: {x}) -> {out} {{\n"
            f'  %0 = "{spec.name}"(%x) {{axis = {axis} : i64, dtype = {index}}} : ({x}) -> {out}\n'
            f"  return %0 : {out}\n}}")


def _input(dtype: str, shape, rng, special: bool) -> np.ndarray:
    """Random values; integers from a small range (ties); floats with NaN/inf if `special`."""
    npd = dtypes.from_mlir(dtype).np_dtype
    if dtype == "i1":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        info = np.iinfo(npd)
        lo, hi = (0, 4) if dtype == "ui8" else (-3, 4)
        values = rng.integers(lo, hi, size=shape)
        if values.size and dtype != "i64":  # products and sums that wrap
            values.reshape(-1)[0] = info.max
        return values.astype(npd)
    values = rng.uniform(-2.0, 2.0, size=shape)
    if special and values.size > 3:
        flat = values.reshape(-1)
        flat[rng.integers(0, flat.size, 3)] = [np.nan, np.inf, -np.inf]
    return values.astype(npd)


def _compare(text: str, x: np.ndarray, dtype: str, exact: bool, context) -> None:
    expected = Interpreter(ir.Module.parse(text)).call("main", [x])[0]
    got = lowering_harness.compile_ember(text, context).run("main", [x])[0]
    got = got.view(expected.dtype).reshape(expected.shape)
    assert got.shape == expected.shape
    if exact and expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    elif exact:  # as f64, so NaNs of every float type compare equal
        np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))
    else:
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=RTOL[dtype], atol=RTOL[dtype])


@pytest.mark.parametrize("shape,axes,keepdims", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("op", ["sum", "prod", "mean", "max", "min"])
def test_numeric_reduction_matches_interpreter(op, dtype, shape, axes, keepdims, context):
    rng = np.random.default_rng(_seed(op, dtype, shape, axes))
    x = _input(dtype, shape, rng, special=op in ("max", "min"))
    exact = dtype in INTS or op in ("max", "min")
    _compare(_reduction(op, dtype, shape, axes, keepdims), x, dtype, exact, context)


@pytest.mark.parametrize("shape,axes,keepdims", SHAPES)
@pytest.mark.parametrize("op", ["any", "all"])
def test_logical_reduction_matches_interpreter(op, shape, axes, keepdims, context):
    x = _input("i1", shape, np.random.default_rng(len(shape) + len(axes)), special=False)
    _compare(_reduction(op, "i1", shape, axes, keepdims), x, "i1", True, context)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "prod"])
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_reduction_of_dynamic_input_matches_interpreter(op, dtype, context):
    shape, axes, keepdims = DYNAMIC
    x = _input(dtype, (6, 3), np.random.default_rng(7), special=False)
    _compare(_reduction(op, dtype, shape, axes, keepdims), x, dtype, dtype in INTS, context)


@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1),
                                        ((2, 3, 4), -1)])
@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reduction_matches_interpreter(op, dtype, shape, axis, context):
    rng = np.random.default_rng(_seed(op, dtype, shape, axis))
    x = _input(dtype, shape, rng, special=True)
    _compare(_arg_reduction(op, dtype, shape, axis, "i64"), x, dtype, True, context)


@pytest.mark.parametrize("values,expected_max,expected_min", [
    ([1.0, 3.0, 3.0, 2.0], 1, 0),                       # first of tied maxima
    ([np.nan, 1.0, np.nan], 0, 0),                      # first NaN wins
    ([1.0, np.nan, 5.0], 1, 1),
    ([-np.inf, -np.inf, -np.inf], 0, 0),                # all equal to the init value
    ([np.inf, 2.0, np.inf], 0, 1),
])
def test_arg_reduction_ties_and_nans_follow_numpy(values, expected_max, expected_min,
                                                  context):
    x = np.array(values, dtype=np.float32)
    for op, expected in (("argmax", expected_max), ("argmin", expected_min)):
        text = _arg_reduction(op, "f32", (len(values),), 0, "i32")
        got = lowering_harness.compile_ember(text, context).run("main", [x])[0]
        assert int(got) == expected, f"{op}({values})"


def test_integer_mean_truncates_toward_zero(context):
    x = np.array([[-7, 7], [-1, 2], [0, 0]], dtype=np.int32).T  # sums -8, 9 over 3
    text = _reduction("mean", "i32", (2, 3), (1,), False)
    got = lowering_harness.compile_ember(text, context).run("main", [x.copy()])[0]
    np.testing.assert_array_equal(got, [-2, 3])


def test_float_mean_of_empty_is_nan(context):
    text = _reduction("mean", "f32", (0, 2), (0,), False)
    got = lowering_harness.compile_ember(text, context).run("main", [np.zeros((0, 2),
                                                                              np.float32)])[0]
    assert np.isnan(got).all()
