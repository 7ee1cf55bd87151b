"""Which ops may fail at run time (`effects.may_fail`, from the op specs' totality), and
LICM keeping such ops in loops that may not run: compiled code agrees with eager."""

import warnings

import numpy as np
import pytest
from mlir import ir

import ember as em
from ember.dialects.ember.base import REGISTRY, Op, Total
from ember.dialects.ember.verifier import iter_ops
from ember.passes.analysis.effects import is_pure, may_fail, pure_ops
from ember.passes.ir_utils import op_id

_CASES = [
    # (operand types, op, result type, may fail)
    ("tensor<4xf32>, tensor<4xf32>", '"ember.add"', "tensor<4xf32>", False),
    ("tensor<?xf32>, tensor<?xf32>", '"ember.add"', "tensor<?xf32>", True),
    ("tensor<?xf32>, tensor<4xf32>", '"ember.add"', "tensor<?xf32>", True),
    ("tensor<?xf32>, tensor<f32>", '"ember.add"', "tensor<?xf32>", False),
    ("tensor<?x4xf32>, tensor<1x4xf32>", '"ember.mul"', "tensor<?x4xf32>", False),
    ("tensor<*xf32>, tensor<f32>", '"ember.add"', "tensor<*xf32>", True),
    ("tensor<?xf32>, tensor<?xf32>", '"ember.less"', "tensor<?xi1>", True),
    ("tensor<4xi32>, tensor<4xi32>", '"ember.floordiv"', "tensor<4xi32>", True),
    ("tensor<4xi32>, tensor<4xi32>", '"ember.mod"', "tensor<4xi32>", True),
    ("tensor<4xf32>, tensor<4xf32>", '"ember.floordiv"', "tensor<4xf32>", False),
    ("tensor<4xi32>, tensor<4xi32>", '"ember.pow"', "tensor<4xi32>", True),
    ("tensor<4xf32>, tensor<4xf32>", '"ember.pow"', "tensor<4xf32>", False),
    ("tensor<?xf32>", '"ember.exp"', "tensor<?xf32>", False),
    ("tensor<?x?xf32>", '"ember.reduce_sum"', "tensor<?xf32>", False),
    ("tensor<?x4xf32>, tensor<4x8xf32>", '"ember.matmul"', "tensor<?x8xf32>", True),
    ("tensor<2x4xf32>, tensor<4x8xf32>", '"ember.matmul"', "tensor<2x8xf32>", False),
    ("tensor<?xf32>", '"ember.reshape"', "tensor<2x2xf32>", True),
    ("tensor<4xf32>", '"ember.reshape"', "tensor<2x2xf32>", False),
    ("tensor<4xf32>, tensor<2xi64>", '"ember.gather"', "tensor<2xf32>", True),
    ("tensor<4xf32>, tensor<2x1xi64>, tensor<2xf32>", '"ember.tensor_scatter"',
     "tensor<4xf32>", True),
    ("tensor<?x3xi1>", '"ember.where_indices"', "tensor<?x2xi64>", False),
    ("tensor<?x?xi32>", '"ember.cumsum"', "tensor<?x?xi32>", False),
    ("tensor<*xf32>", '"ember.cumprod"', "tensor<*xf32>", True),  # axis checked at run time
    ("tensor<2x5xf32>, tensor<2x3xf32>", '"ember.searchsorted"', "tensor<2x3xi32>", False),
    ("tensor<?x5xf32>, tensor<2x3xf32>", '"ember.searchsorted"', "tensor<2x3xi32>", True),
]
_ATTRS = {'"ember.reduce_sum"': "{axes = array<i64: 1>, keepdims = false}",
          '"ember.matmul"': "{transpose_a = false, transpose_b = false}",
          '"ember.reshape"': "{shape = array<i64: 2, 2>}",
          '"ember.gather"': "{axis = 0 : i64}",
          '"ember.tensor_scatter"': '{mode = "add"}',
          '"ember.cumsum"': "{axis = 1 : i64, exclusive = false, reverse = false}",
          '"ember.cumprod"': "{axis = 0 : i64, exclusive = true, reverse = true}",
          '"ember.searchsorted"': '{out_type = i32, side = "left"}'}


_modules: list = []


def _op(context, text: str, name: str = "") -> ir.Operation:
    module = ir.Module.parse(text)
    _modules.append(module)  # the op must not outlive its module
    ops = list(iter_ops(list(module.body.operations)[-1].operation))
    return next(op for op in ops if op.name == name) if name else ops[-2]


@pytest.mark.parametrize("operands, name, result, fails", _CASES)
def test_may_fail_follows_the_op_specs(context, operands, name, result, fails):
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operands.split(", ")))
    uses = ", ".join(f"%a{i}" for i in range(len(operands.split(", "))))
    op = _op(context, f"func.func @f({args}) -> {result} {{\n"
                      f"  %r = {name}({uses}) {_ATTRS.get(name, '')} : ({operands}) -> {result}\n"
                      f"  return %r : {result}\n}}")
    assert may_fail(op) is fails


@pytest.mark.parametrize("divisor, fails", [("dense<[2, 3]>", False), ("dense<[2, 0]>", True)])
def test_an_integer_division_by_a_constant_fails_only_on_a_zero(context, divisor, fails):
    op = _op(context, f"""func.func @f(%a: tensor<2xi32>) -> tensor<2xi32> {{
  %d = "ember.constant"() {{value = {divisor} : tensor<2xi32>}} : () -> tensor<2xi32>
  %r = "ember.floordiv"(%a, %d) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %r : tensor<2xi32>
}}""", "ember.floordiv")
    assert may_fail(op) is fails


@pytest.mark.parametrize("inner, fails", [
    ('"ember.add"(%x, %y) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>', True),
    ('"ember.exp"(%x) : (tensor<?xf32>) -> tensor<?xf32>', False),
])
def test_a_region_op_may_fail_when_an_op_it_holds_may(context, inner, fails):
    op = _op(context, f"""func.func @f(%p: i1, %x: tensor<?xf32>, %y: tensor<?xf32>) {{
  scf.if %p {{
    %r = {inner}
    "ember.print"(%r) {{format = "{{}}", end = "\\0A", stream = "stdout", summarize = 3 : i64}} : (tensor<?xf32>) -> ()
  }}
  return
}}""", "scf.if")
    assert may_fail(op) is fails


def test_only_assert_gather_and_scatter_fail_whatever_their_operand_types():
    # Every other op declares when it is total (a new op that does not may fail anywhere);
    # failing on its operand's values is what ember.assert is for.
    never = sorted(name for name, spec in REGISTRY.items()
                   if spec.total_when is Total.NEVER and spec.total.__func__ is Op.total.__func__)
    assert never == ["ember.assert", "ember.gather", "ember.tensor_scatter"]


def test_pure_ops_agrees_with_is_pure_at_every_depth(context):
    body = ('"ember.print"(%x) {format = "{}", end = "\\0A", stream = "stdout", summarize = 3 : i64} '
            ': (tensor<f32>) -> ()')
    for _ in range(4):  # an impure op at the bottom of nested ifs, next to pure ones
        body = f"""scf.if %p {{
    {body}
  }}
  %e = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>
  scf.if %p {{
    %t = "ember.tanh"(%x) : (tensor<f32>) -> tensor<f32>
  }}"""
    fn = _op(context, f"func.func @f(%p: i1, %x: tensor<f32>) {{\n  {body}\n  return\n}}",
             "scf.if").parent
    ops = list(iter_ops(fn))
    assert pure_ops(fn) == {op_id(op) for op in ops if is_pure(op)}
    assert 0 < len(pure_ops(fn)) < len(ops)


def test_licm_keeps_a_dynamic_broadcast_in_a_loop_that_runs_zero_times():
    def body(x, y):
        def step(i, acc):
            return i + 1, acc + em.reduce_sum(x + y)
        return em.while_loop(lambda i, acc: i < 0, step, (em.constant(0), em.constant(0.0)))[1]

    x, y = em.constant(np.ones(3, np.float32)), em.constant(np.ones(4, np.float32))
    compiled = em.function(body, input_signature=[em.TensorSpec([None], em.float32)] * 2)
    assert float(body(x, y)) == 0.0  # eager: the loop never runs, x + y never happens
    with warnings.catch_warnings():  # x + y of these shapes does not compile: interpreted
        warnings.simplefilter("ignore")
        assert float(compiled(x, y)) == 0.0
    assert float(compiled(x, x)) == 0.0


@pytest.mark.parametrize("unused", [
    lambda x, y: x // y,  # integer division by zero
    lambda x, y: x[:, None] + em.reshape(y, [-1])[:3],  # fine: no error to keep
    lambda x, y: em.gather(x, y + 5),  # an index out of range
    lambda x, y: em.tensor_scatter_nd_add(x, em.expand_dims(y + 5, 1), y),  # the same
    lambda x, y: em.gather_nd(x, em.expand_dims(y - 1, 1)),  # the same, through an assert
])
def test_dead_code_elimination_keeps_the_errors_of_unused_ops(unused):
    """An unused op that may fail is neither erased by ember-dce nor by canonicalization:
    compiled code raises eager's error (as it does when the op is used)."""
    def fn(x, y):
        unused(x, y)
        return x + 1

    x, y = np.array([1, 2], np.int32), np.array([0, 1], np.int32)
    outcomes = []
    for call in (lambda: fn(em.constant(x), em.constant(y)), lambda: em.function(fn)(x, y)):
        try:
            outcomes.append(call().numpy().tolist())
        except em.errors.OpError as e:
            outcomes.append((type(e).__name__, str(e).split(" (at ")[0]))
    assert outcomes[0] == outcomes[1]
