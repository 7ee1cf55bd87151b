"""ember-cse and ember-licm beyond the lit tests: the interpreter gives the same results and
variable values before and after, deep nesting does not exhaust recursion, a second run finds
nothing to do, and LICM leaves an op that could fail in a loop that runs zero times."""

import types

import numpy as np
import pytest
from mlir import ir

from ember.backends.interpreter import Interpreter
from ember.passes import registry
from ember.passes.pipeline import run_pipeline
from ember.passes.transforms.cse import CsePass
from ember.passes.transforms.licm import LicmPass

F4 = "tensor<4xf32>"
RES = f"!ember.resource<{F4}>"

# Reads merged and split by writes, a commutative pair, a while loop that writes the variable
# (its condition reads it), an invariant exp in its body and an scf.for inside it.
PROGRAM = f"""
func.func @main(%v: {RES}, %x: {F4}, %n: tensor<i32>) -> ({F4}, {F4}, tensor<i32>, {F4}) {{
  %r0 = "ember.read_variable"(%v) : ({RES}) -> {F4}
  %r1 = "ember.read_variable"(%v) : ({RES}) -> {F4}
  %s0 = "ember.add"(%r0, %x) : ({F4}, {F4}) -> {F4}
  %s1 = "ember.add"(%x, %r1) : ({F4}, {F4}) -> {F4}
  "ember.assign_add_variable"(%v, %s1) : ({RES}, {F4}) -> ()
  %r2 = "ember.read_variable"(%v) : ({RES}) -> {F4}
  %zero = "ember.constant"() {{value = dense<0> : tensor<i32>}} : () -> tensor<i32>
  %w:2 = scf.while (%i = %zero, %acc = %r2) : (tensor<i32>, {F4}) -> (tensor<i32>, {F4}) {{
    %rv = "ember.read_variable"(%v) : ({RES}) -> {F4}
    %sum = "ember.reduce_sum"(%rv) {{axes = array<i64: 0>, keepdims = false}}
      : ({F4}) -> tensor<f32>
    %lim = "ember.constant"() {{value = dense<1.0e6> : tensor<f32>}} : () -> tensor<f32>
    %ok = "ember.less"(%sum, %lim) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %more = "ember.less"(%i, %n) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %both = "ember.logical_and"(%ok, %more) : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %c = tensor.extract %both[] : tensor<i1>
    scf.condition(%c) %i, %acc : tensor<i32>, {F4}
  }} do {{
  ^bb0(%i: tensor<i32>, %acc: {F4}):
    %e = "ember.exp"(%x) : ({F4}) -> {F4}
    %lb = arith.constant 0 : index
    %ub = arith.constant 3 : index
    %st = arith.constant 1 : index
    %inner = scf.for %k = %lb to %ub step %st iter_args(%a = %acc) -> ({F4}) {{
      %e2 = "ember.exp"(%x) : ({F4}) -> {F4}
      %h = "ember.mul"(%e2, %e) : ({F4}, {F4}) -> {F4}
      %a2 = "ember.add"(%a, %h) : ({F4}, {F4}) -> {F4}
      scf.yield %a2 : {F4}
    }}
    "ember.assign_add_variable"(%v, %e) : ({RES}, {F4}) -> ()
    %one = "ember.constant"() {{value = dense<1> : tensor<i32>}} : () -> tensor<i32>
    %i2 = "ember.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    scf.yield %i2, %inner : tensor<i32>, {F4}
  }}
  %r3 = "ember.read_variable"(%v) : ({RES}) -> {F4}
  return %s0, %w#1, %w#0, %r3 : {F4}, {F4}, tensor<i32>, {F4}
}}
"""


def _run(module: ir.Module, *args):
    variable = types.SimpleNamespace(value=np.array([0.5, -1.0, 2.0, 0.0], np.float32))
    results = Interpreter(module).call("main", [variable, *args])
    return [np.asarray(r) for r in results], variable.value


@pytest.mark.parametrize("pipeline", ["ember-cse", "ember-licm", "ember-cse,ember-licm",
                                      "ember-licm,ember-cse,ember-dce"])
def test_passes_keep_interpreter_results(context, pipeline):
    x = np.array([0.1, 0.2, -0.3, 1.0], np.float32)
    n = np.array(4, np.int32)
    before = _run(ir.Module.parse(PROGRAM), x, n)
    module = ir.Module.parse(PROGRAM)
    report = run_pipeline(module, pipeline)
    assert sum(sum(s.counts.values()) for s in report.statistics) > 0
    after = _run(module, x, n)
    for want, got in zip(before[0] + [before[1]], after[0] + [after[1]]):
        np.testing.assert_array_equal(got, want)


def test_cse_and_licm_on_program_count_what_they_did(context):
    module = ir.Module.parse(PROGRAM)
    cse = CsePass().apply(module)
    # r1 = r0, s1 = s0, e2 = e (exp of x in an enclosing region).
    assert cse.as_dict() == {"eliminated": 3}
    licm = LicmPass().apply(module)
    # The for loop: mul(e, e). The while loop: lim, exp, the three index constants, one,
    # and the mul hoisted out of the for loop; the read in the condition stays.
    assert licm.as_dict() == {"hoisted": 8}
    text = str(module)
    assert text.index('"ember.read_variable"(%arg0)', text.index("scf.while")) \
        < text.index("scf.condition")


@pytest.mark.parametrize("cls", [CsePass, LicmPass])
def test_second_run_changes_nothing(context, cls):
    module = ir.Module.parse(PROGRAM)
    cls().apply(module)
    once = str(module)
    assert cls().apply(module).as_dict() == {}
    assert str(module) == once


def test_registry_names_the_classes():
    assert registry.pass_class("ember-cse") is CsePass
    assert registry.pass_class("ember-licm") is LicmPass


def _nested_ifs(depth: int) -> str:
    body = ""
    for level in range(depth, 0, -1):
        body = (f"%r{level} = scf.if %p -> (tensor<f32>) {{\n{body}"
                f'%e{level} = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>\n'
                f"scf.yield %e{level} : tensor<f32>\n}} else {{\nscf.yield %x : tensor<f32>\n}}\n")
    return ("func.func @main(%x: tensor<f32>, %p: i1) -> tensor<f32> {\n"
            '%e0 = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>\n'
            f"{body}return %r1 : tensor<f32>\n}}")


def test_cse_deep_nesting_does_not_recurse(context):
    module = ir.Module.parse(_nested_ifs(600))
    # Every exp inside an scf.if reuses the outermost one, before the first scf.if.
    assert CsePass().apply(module).as_dict() == {"eliminated": 600}


def _zero_trip(divisor: str) -> str:
    return f"""
    func.func @main(%a: tensor<2xi32>, %d: tensor<2xi32>) -> tensor<2xi32> {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %r = scf.for %i = %c0 to %c0 step %c1 iter_args(%acc = %a) -> (tensor<2xi32>) {{
        {divisor}
        %q = "ember.floordiv"(%a, %div) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
        scf.yield %q : tensor<2xi32>
      }}
      return %r : tensor<2xi32>
    }}"""


@pytest.mark.parametrize("divisor, hoisted", [
    ('%div = "ember.neg"(%d) : (tensor<2xi32>) -> tensor<2xi32>', 1),  # neg moves, floordiv not
    ('%div = "ember.constant"() {value = dense<[2, 0]> : tensor<2xi32>} : () -> tensor<2xi32>',
     1),  # a zero in the constant: the constant moves, floordiv not
    ('%div = "ember.constant"() {value = dense<[2, -3]> : tensor<2xi32>} : () -> tensor<2xi32>',
     2),
])
def test_licm_keeps_failing_division_in_zero_trip_loop(context, divisor, hoisted):
    module = ir.Module.parse(_zero_trip(divisor))
    assert LicmPass().apply(module).as_dict() == {"hoisted": hoisted}
    a = np.array([7, 9], np.int32)
    (out,) = Interpreter(module).call("main", [a, np.zeros(2, np.int32)])
    np.testing.assert_array_equal(out, a)
