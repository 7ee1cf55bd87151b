"""ember-canonicalize beyond the lit tests: the identities it applies keep every bit of the
interpreter's results on NaN, infinities, -0.0 and integer extremes; the float identities it
refuses really would change results; constant control flow keeps results and printed output;
every pattern has its own counter; a second run finds nothing to do."""

import io

import numpy as np
import pytest
from mlir import ir

from ember.backends.interpreter import Interpreter
from ember.dialects.ember.irdl import make_context
from ember.passes.transforms.canonicalize import CanonicalizePass

SPECIAL_F32 = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.25, 1e-45], np.float32)
EXTREME_I32 = np.array([np.iinfo(np.int32).min, np.iinfo(np.int32).max, -1, 0, 1], np.int32)


@pytest.fixture(scope="module")
def mlir_context():
    context = make_context()
    with context, ir.Location.unknown():
        yield context


def _unary_program(t: str, const: str, ctype: str, expr: str) -> str:
    """@main(%x) returning `expr`, which may use %x and the constant %c."""
    return f"""
      func.func @main(%x: {t}) -> {t} {{
        %c = "ember.constant"() {{value = dense<{const}> : {ctype}}} : () -> {ctype}
        {expr}
        return %r : {t}
      }}"""


def _binary(op: str, lhs: str, rhs: str, lt: str, rt: str, t: str) -> str:
    return f'%r = "ember.{op}"({lhs}, {rhs}) : ({lt}, {rt}) -> {t}'


F8, I5, SF, SI = "tensor<8xf32>", "tensor<5xi32>", "tensor<f32>", "tensor<i32>"
APPLIED = {  # name -> (program, input, pattern expected to fire)
    "x+(-0.0)": (_unary_program(F8, "-0.0", SF, _binary("add", "%x", "%c", F8, SF, F8)),
                 SPECIAL_F32, "add-zero"),
    "(-0.0)+x": (_unary_program(F8, "-0.0", SF, _binary("add", "%c", "%x", SF, F8, F8)),
                 SPECIAL_F32, "add-zero"),
    "x-0.0": (_unary_program(F8, "0.0", SF, _binary("sub", "%x", "%c", F8, SF, F8)),
              SPECIAL_F32, "sub-zero"),
    "1.0*x": (_unary_program(F8, "1.0", SF, _binary("mul", "%c", "%x", SF, F8, F8)),
              SPECIAL_F32, "mul-one"),
    "x/1.0": (_unary_program(F8, "1.0", SF, _binary("div", "%x", "%c", F8, SF, F8)),
              SPECIAL_F32, "div-one"),
    "int x+0": (_unary_program(I5, "0", SI, _binary("add", "%c", "%x", SI, I5, I5)),
                EXTREME_I32, "add-zero"),
    "int x*0": (_unary_program(I5, "0", SI, _binary("mul", "%x", "%c", I5, SI, I5)),
                EXTREME_I32, "mul-zero"),
    "int x-x": (_unary_program(I5, "0", SI, _binary("sub", "%x", "%x", I5, I5, I5)),
                EXTREME_I32, "sub-self"),
    "int -(-x)": (_unary_program(I5, "0", SI, f'%n = "ember.neg"(%x) : ({I5}) -> {I5}\n'
                                 f'%r = "ember.neg"(%n) : ({I5}) -> {I5}'),
                  EXTREME_I32, "neg-neg"),
}
REFUSED = {  # name -> (program, what the identity would give instead)
    "x*0.0": (_unary_program(F8, "0.0", SF, _binary("mul", "%x", "%c", F8, SF, F8)),
              lambda x: np.zeros_like(x)),
    "x-x": (_unary_program(F8, "0.0", SF, _binary("sub", "%x", "%x", F8, F8, F8)),
            lambda x: np.zeros_like(x)),
    "x+0.0": (_unary_program(F8, "0.0", SF, _binary("add", "%x", "%c", F8, SF, F8)),
              lambda x: x),
    "x-(-0.0)": (_unary_program(F8, "-0.0", SF, _binary("sub", "%x", "%c", F8, SF, F8)),
                 lambda x: x),
}


def _run(module: ir.Module, x: np.ndarray) -> np.ndarray:
    (out,) = Interpreter(module).call("main", [x])
    return np.asarray(out)


@pytest.mark.parametrize("name", sorted(APPLIED))
def test_applied_identities_keep_every_bit(mlir_context, name):
    program, x, pattern = APPLIED[name]
    module = ir.Module.parse(program)
    expected = _run(module, x)
    assert CanonicalizePass().apply(module)[pattern] == 1
    got = _run(module, x)
    assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes(), \
        f"{name}: {expected} became {got}"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_float_identities_would_change_results(mlir_context, name):
    program, identity = REFUSED[name]
    module = ir.Module.parse(program)
    expected = _run(module, SPECIAL_F32)
    assert identity(SPECIAL_F32).tobytes() != expected.tobytes()  # why it is refused
    assert CanonicalizePass().apply(module).as_dict() == {}


CONTROL_FLOW = """
  func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>) {
    %ct = "ember.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    %t = tensor.extract %ct[] : tensor<i1>
    %0 = scf.if %t -> (tensor<2xf32>) {
      %e = "ember.exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      "ember.print"(%e) {end = "\\0A", format = "then {}", stream = "stderr", summarize = 3 : i64}
        : (tensor<2xf32>) -> ()
      scf.yield %e : tensor<2xf32>
    } else {
      "ember.print"(%x) {end = "\\0A", format = "else {}", stream = "stderr", summarize = 3 : i64}
        : (tensor<2xf32>) -> ()
      scf.yield %x : tensor<2xf32>
    }
    %c0 = "ember.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
    %1 = scf.while (%i = %c0) : (tensor<i32>) -> tensor<i32> {
      %f = "ember.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
      %p = tensor.extract %f[] : tensor<i1>
      "ember.print"(%i) {end = "\\0A", format = "cond {}", stream = "stderr", summarize = 3 : i64} : (tensor<i32>) -> ()
      scf.condition(%p) %i : tensor<i32>
    } do {
    ^bb0(%i: tensor<i32>):
      "ember.print"(%i) {end = "\\0A", format = "body {}", stream = "stderr", summarize = 3 : i64} : (tensor<i32>) -> ()
      scf.yield %i : tensor<i32>
    }
    return %0, %1 : tensor<2xf32>, tensor<i32>
  }"""


def _run_printing(module: ir.Module):
    stream = io.StringIO()
    x = np.array([0.0, 1.0], np.float32)
    results = Interpreter(module, streams={"stderr": stream}).call("main", [x])
    return [np.asarray(r).tolist() for r in results], stream.getvalue()


def test_constant_control_flow_keeps_results_and_effects(mlir_context):
    module = ir.Module.parse(CONTROL_FLOW)
    expected = _run_printing(module)
    stats = CanonicalizePass().apply(module)
    assert stats.as_dict() == {"if-constant": 1, "while-false": 1}
    assert "scf." not in str(module)
    assert _run_printing(module) == expected
    assert expected[1].splitlines()[1] == "cond 3"


EVERY_PATTERN = """
  func.func @main(%x: tensor<2x3xf32>, %i: tensor<4xi32>, %a: tensor<2x3xf32>) -> (
      tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>, tensor<4xi32>,
      tensor<4xi32>, tensor<4xi32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>) {
    %zi = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %one = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %ct = "ember.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
    %cf = "ember.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
    %t = tensor.extract %ct[] : tensor<i1>
    %0 = "ember.mul"(%x, %one) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    %1 = "ember.div"(%0, %one) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    %2 = "ember.neg"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %3 = "ember.neg"(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %4 = "ember.add"(%i, %zi) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
    %5 = "ember.sub"(%4, %zi) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
    %6 = "ember.mul"(%5, %zi) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
    %7 = "ember.sub"(%5, %5) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %8 = "ember.transpose"(%3) {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %9 = "ember.transpose"(%8) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %10 = "ember.transpose"(%9) {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
    %11 = "ember.reshape"(%10) {shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
    %12 = "ember.reshape"(%11) {shape = array<i64: 3, 2>} : (tensor<6xf32>) -> tensor<3x2xf32>
    %13 = "ember.reshape"(%10) {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %14 = "ember.cast"(%13) {dtype = f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %15 = "ember.broadcast_to"(%14) {shape = array<i64: 2, 3>}
      : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %16 = "ember.select"(%ct, %15, %a)
      : (tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %17 = scf.if %t -> (tensor<2x3xf32>) {
      scf.yield %16 : tensor<2x3xf32>
    } else {
      scf.yield %a : tensor<2x3xf32>
    }
    %18 = scf.while (%v = %17) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
      %f = tensor.extract %cf[] : tensor<i1>
      scf.condition(%f) %v : tensor<2x3xf32>
    } do {
    ^bb0(%v: tensor<2x3xf32>):
      scf.yield %v : tensor<2x3xf32>
    }
    return %16, %17, %18, %4, %5, %6, %7, %10, %14, %12 : tensor<2x3xf32>, tensor<2x3xf32>,
      tensor<2x3xf32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>,
      tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>
  }"""


def test_every_pattern_fires_under_its_own_name_and_a_second_run_does_nothing(mlir_context):
    module = ir.Module.parse(EVERY_PATTERN)
    args = [np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
            np.array([3, -4, 0, 7], np.int32), np.full((2, 3), 9.0, np.float32)]
    expected = Interpreter(module).call("main", args)
    stats = CanonicalizePass().apply(module)
    names = {pattern.name for pattern in CanonicalizePass.patterns}
    assert set(stats.as_dict()) == names
    module.operation.verify()
    got = Interpreter(module).call("main", args)
    assert all(np.array_equal(e, g) and e.dtype == g.dtype for e, g in zip(expected, got))
    assert CanonicalizePass().apply(module).as_dict() == {}


def test_max_iterations_bounds_the_walks(mlir_context):
    # reshape-reshape builds reshape(x) to x's own shape; reshape-noop sees it on the next walk
    module = ir.Module.parse("""
      func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
        %a = "ember.reshape"(%x) {shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
        %b = "ember.reshape"(%a) {shape = array<i64: 2, 3>} : (tensor<6xf32>) -> tensor<2x3xf32>
        return %b : tensor<2x3xf32>
      }""")
    assert CanonicalizePass(max_iterations=1).apply(module).as_dict() == {"reshape-reshape": 1}
    assert str(module).count('"ember.reshape"') == 1
    assert CanonicalizePass().apply(module).as_dict() == {"reshape-noop": 1}
    assert '"ember.reshape"' not in str(module)
