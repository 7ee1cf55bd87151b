"""Compiled creation and random ops against the interpreter (the numpy reference kernels).

Each case lowers with `convert-ember-to-linalg`, compiles with the CPU backend's later
stages and runs as the runtime does (lowering_harness). Constants, fills, ranges,
shapes and uniform random numbers agree bit for bit; normal random numbers to one ulp plus
1e-13 (libm's `log`/`cos` against numpy's, magnified by cancellation near zero).
"""

import zlib

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

import lowering_harness
from ember.backends.interpreter import Interpreter
from ember.dialects.ember import creation as C
from ember.dialects.ember import dtypes
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.creation import narrow_f64

FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i8", "i16", "i32", "i64", "ui8"]


@pytest.fixture(scope="module")
def context():
    ctx = make_context()
    with ctx, ir.Location.unknown():
        yield ctx


def _seed(*parts) -> int:
    return zlib.crc32(repr(parts).encode())


def _np(dtype: str):
    return dtypes.from_mlir(dtype).np_dtype


def _run_both(text: str, inputs: list, context) -> list[tuple[np.ndarray, np.ndarray]]:
    """[(interpreted, compiled)] per result; compiled arrays viewed as the ember dtype."""
    expected = Interpreter(ir.Module.parse(text)).call("main", inputs)
    got = lowering_harness.compile_ember(text, context).run("main", inputs)
    return [(e, g.view(e.dtype).reshape(e.shape)) for e, g in zip(expected, got)]


def _assert_same(expected: np.ndarray, got: np.ndarray) -> None:
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:  # as f64 so NaNs of every float type compare equal
        np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))


# -- constant ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,value,shape", [
    ("ui8", "[0, 1, 127, 128, 200, 255]", (6,)), ("ui8", "200", (4,)),
    ("i8", "[-128, 0, 127]", (3,)), ("i1", "[true, false, true]", (3,)), ("i1", "true", (2, 2)),
    ("bf16", "[1.5, -2.0, 3.0e+38]", (3,)), ("f16", "[0.1, 65504.0, -0.0]", (3,)),
    ("f32", "[[1.0, 2.5], [0x7FC00000, 0xFF800000]]", (2, 2)), ("f64", "3.25", ()),
    ("i64", "[-9223372036854775808, 9223372036854775807]", (2,)), ("i32", "[]", (0,)),
])
def test_constant_matches_interpreter(dtype, value, shape, context):
    t = TensorType(dtypes.from_mlir(dtype), shape)
    text = (f"func.func @main() -> {t} {{\n"
            f'  %0 = "ember.constant"() {{value = dense<{value}> : {t}}} : () -> {t}\n'
            f"  return %0 : {t}\n}}")
    for expected, got in _run_both(text, [], context):
        _assert_same(expected, got)


# -- fill -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 4), (), (0, 2), (2, 1, 3)])
@pytest.mark.parametrize("dtype", FLOATS + INTS + ["i1"])
def test_fill_matches_interpreter(dtype, shape, context):
    out = TensorType(dtypes.from_mlir(dtype), shape)
    value = TensorType(out.dtype, ())
    dims = f"tensor<{len(shape)}xi64>"
    text = (f"func.func @main(%d: {dims}, %v: {value}) -> {out} {{\n"
            f'  %0 = "ember.fill"(%d, %v) : ({dims}, {value}) -> {out}\n'
            f"  return %0 : {out}\n}}")
    scalar = np.array(True if dtype == "i1" else 200 if dtype == "ui8" else -3.5
                      if dtype in FLOATS else -7).astype(_np(dtype))
    for expected, got in _run_both(text, [np.array(shape, np.int64), scalar], context):
        _assert_same(expected, got)


# -- range ------------------------------------------------------------------------------------

INT_RANGES = [(0, 5, 1), (3, -4, -2), (10, 200, 7), (100, 100, 1)]
FLOAT_RANGES = INT_RANGES + [(1.5, 4.0, 0.3), (-1.0, 1.0, 0.1), (0.0, 1.0, 1.0 / 3.0)]
RANGE_CASES = [(d, *r) for d in FLOATS for r in FLOAT_RANGES] + \
    [(d, *r) for d in INTS for r in INT_RANGES if d != "ui8" or min(r) >= 0]


@pytest.mark.parametrize("dtype,start,limit,delta", RANGE_CASES)
def test_range_matches_interpreter(dtype, start, limit, delta, context):
    npd = _np(dtype)
    values = [np.array(v).astype(npd) for v in (start, limit, delta)]
    n = C.RangeOp.size(*(v.item() for v in values))
    scalar, out = TensorType(dtypes.from_mlir(dtype), ()), TensorType(dtypes.from_mlir(dtype),
                                                                       (n,))
    text = (f"func.func @main(%a: {scalar}, %b: {scalar}, %c: {scalar}) -> {out} {{\n"
            f'  %0 = "ember.range"(%a, %b, %c) : ({scalar}, {scalar}, {scalar}) -> {out}\n'
            f"  return %0 : {out}\n}}")
    for expected, got in _run_both(text, values, context):
        _assert_same(expected, got)


def test_integer_range_wraps_like_numpy(context):
    values = [np.array(v, np.int8) for v in (100, 127, 10)] + [np.array(0, np.int8)]
    text = ("func.func @main(%a: tensor<i8>, %c: tensor<i8>) -> tensor<20xi8> {\n"
            '  %0 = "ember.range"(%a, %a, %c) : (tensor<i8>, tensor<i8>, tensor<i8>) '
            "-> tensor<20xi8>\n  return %0 : tensor<20xi8>\n}")
    got = lowering_harness.compile_ember(text, context).run("main", [values[0], values[2]])[0]
    np.testing.assert_array_equal(got, (100 + 10 * np.arange(20)).astype(np.int8))


# -- shape ------------------------------------------------------------------------------------

@pytest.mark.parametrize("in_type,dtype,value_shape", [
    ("tensor<2x3xf32>", "f32", (2, 3)), ("tensor<?x4xui8>", "ui8", (5, 4)),
    ("tensor<?x?x2xi1>", "i1", (0, 3, 2)), ("tensor<f64>", "f64", ()),
])
@pytest.mark.parametrize("index", ["i32", "i64"])
def test_shape_matches_interpreter(in_type, dtype, value_shape, index, context):
    out = f"tensor<{len(value_shape)}x{index}>"
    text = (f"func.func @main(%x: {in_type}) -> {out} {{\n"
            f'  %0 = "ember.shape"(%x) {{dtype = {index}}} : ({in_type}) -> {out}\n'
            f"  return %0 : {out}\n}}")
    for expected, got in _run_both(text, [np.zeros(value_shape, _np(dtype))], context):
        _assert_same(expected, got)


# -- random -----------------------------------------------------------------------------------

SEEDS = [("i64", (0, 0)), ("i64", (-5, 1 << 40)), ("i64", (-(1 << 63), (1 << 63) - 1)),
         ("i32", (-7, 3)), ("i32", (2**31 - 1, -(2**31)))]
SHAPES = [(1000,), (3, 5), (), (0, 4), (2, 3, 7)]


def _random_text(op: str, dtype: str, shape, seed_dtype: str, a: float, b: float) -> str:
    names = ("minval", "maxval") if op == "random_uniform" else ("mean", "stddev")
    out, seed = TensorType(dtypes.from_mlir(dtype), shape), f"tensor<2x{seed_dtype}>"
    attrs = (f"dtype = {dtype}, {names[0]} = {a!r} : f64, {names[1]} = {b!r} : f64, "
             f"shape = array<i64{': ' if shape else ''}{', '.join(map(str, shape))}>")
    return (f"func.func @main(%s: {seed}) -> {out} {{\n"
            f'  %0 = "ember.{op}"(%s) {{{attrs}}} : ({seed}) -> {out}\n'
            f"  return %0 : {out}\n}}")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed_dtype,seed", SEEDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_random_uniform_is_bit_exact(dtype, seed_dtype, seed, shape, context):
    text = _random_text("random_uniform", dtype, shape, seed_dtype, -1.5, 3.0)
    (expected, got), = _run_both(text, [np.array(seed, _np(seed_dtype))], context)
    _assert_same(expected, got)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed_dtype,seed", SEEDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_random_normal_matches_to_one_ulp(dtype, seed_dtype, seed, shape, context):
    text = _random_text("random_normal", dtype, shape, seed_dtype, 0.5, 2.0)
    (expected, got), = _run_both(text, [np.array(seed, _np(seed_dtype))], context)
    assert got.shape == expected.shape
    e, g = expected.astype(np.float64), got.astype(np.float64)
    eps = float(ml_dtypes.finfo(expected.dtype).eps)
    # One ulp of the result, plus f64 slack: libm's log/cos differ from numpy's in the last
    # bits, which mean + stddev * z can magnify near zero.
    assert np.all(np.abs(e - g) <= np.abs(e) * eps + 1e-13), np.max(np.abs(e - g))


def test_random_numbers_depend_on_the_seed(context):
    text = _random_text("random_uniform", "f64", (64,), "i64", 0.0, 1.0)
    compiled = lowering_harness.compile_ember(text, context)
    a = compiled.run("main", [np.array([1, 2], np.int64)])[0]
    b = compiled.run("main", [np.array([1, 3], np.int64)])[0]
    assert not np.any(a == b) and np.all((0 <= a) & (a < 1))


# -- narrow_f64 (used by range and random for 16-bit floats) ----------------------------------

def _adversarial_f64(np_half) -> np.ndarray:
    """Half-float midpoints, their f64 and f32 neighbours (double-rounding traps),
    subnormals, overflow, infinities and NaN."""
    rng = np.random.default_rng(_seed(str(np_half)))
    bits = rng.integers(0, 0x7C00 if np_half == np.float16 else 0x7F80, 400, dtype=np.uint16)
    low = bits.view(np_half).astype(np.float64)
    high = (bits + 1).view(np_half).astype(np.float64)
    mid = (low + high) / 2
    f32_next = np.nextafter(mid.astype(np.float32), np.float32(np.inf)).astype(np.float64)
    values = np.concatenate([mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf),
                             f32_next, mid - (f32_next - mid) / 3, low, -mid,
                             [0.0, -0.0, 1e-300, 6e-8, 3e-8, 7e5, 1e300, np.inf, -np.inf,
                              np.nan, 3.4e38, 3.4028235677973366e38]])
    return values


@pytest.mark.parametrize("half,np_half", [("f16", np.float16), ("bf16", ml_dtypes.bfloat16)])
def test_narrow_f64_rounds_once_like_numpy(half, np_half, context):
    x = _adversarial_f64(np_half)
    n = x.size
    text = (f"#map = affine_map<(d0) -> (d0)>\n"
            f"func.func @main(%x: tensor<{n}xf64>) -> tensor<{n}x{half}> {{\n"
            f"  %e = tensor.empty() : tensor<{n}x{half}>\n"
            f"  %r = linalg.generic {{indexing_maps = [#map, #map], iterator_types = "
            f'["parallel"]}} ins(%x : tensor<{n}xf64>) outs(%e : tensor<{n}x{half}>) {{\n'
            f"  ^bb0(%in: f64, %out: {half}):\n"
            f"    %t = arith.truncf %in : f64 to {half}\n"
            f"    linalg.yield %t : {half}\n"
            f"  }} -> tensor<{n}x{half}>\n"
            f"  return %r : tensor<{n}x{half}>\n}}")
    module = ir.Module.parse(text)
    truncs = []
    module.operation.walk(lambda op: (truncs.append(op) if op.name == "arith.truncf" else None)
                          or ir.WalkResult.ADVANCE)
    (trunc,) = truncs
    with ir.InsertionPoint(trunc), trunc.location:
        exact = narrow_f64(trunc.operands[0], trunc.results[0].type)
    trunc.results[0].replace_all_uses_with(exact)
    trunc.erase()
    got = lowering_harness.Compiled(module).run("main", [x])[0].view(np_half)
    with np.errstate(over="ignore"):
        expected = x.astype(np_half)
    np.testing.assert_array_equal(got.view(np.uint16)[~np.isnan(x)],
                                  expected.view(np.uint16)[~np.isnan(x)])
    assert np.isnan(got.astype(np.float32)[np.isnan(x)]).all()


@pytest.mark.parametrize("np_half", [np.float16, ml_dtypes.bfloat16])
def test_compiled_cast_from_float64_rounds_as_numpy(np_half):
    """em.cast f64 -> f16 went through f32 rounding twice (found by a differential fuzz
    campaign: 1 + 2**-11 + 2**-40 gave bits 15360 where numpy gives 15361)."""
    import ember as em
    x = _adversarial_f64(np_half)
    got = em.function(lambda v: em.cast(v, em.as_dtype(np_half)))(x).numpy()
    with np.errstate(over="ignore"):
        expected = x.astype(np_half)
    finite = ~np.isnan(x)
    np.testing.assert_array_equal(got.view(np.uint16)[finite],
                                  expected.view(np.uint16)[finite])
    assert np.isnan(got.astype(np.float32)[~finite]).all()
