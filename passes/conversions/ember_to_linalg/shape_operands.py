"""Lowering of the ops whose shape is an operand: dynamic_reshape, dynamic_broadcast_to,
dynamic_random_uniform and dynamic_random_normal.

Their result type says what inference knows of the shape operand (dialects/ember/partial.py):
after specialisation to a call's static shapes it is static whenever the shape was computed
from shapes (`em.shape(x)`, Python ints), and then the op is its attribute form with that
shape, lowered by the same rule. A result still `?` depends on run-time values: such ops are
not lowered here (`unlowerable_ops` names them and the function runs on the interpreter),
except for the random ops, which read such dims from the operand.

Before:
    %r = "ember.dynamic_reshape"(%x, %s) : (tensor<3x4x2xf32>, tensor<2xi32>) -> tensor<3x8xf32>
After: what `"ember.reshape"(%x) {shape = array<i64: 3, 8>}` lowers to.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, tensor

from ember.dialects.ember import creation as C
from ember.dialects.ember import structure as S
from ember.dialects.ember.convert import type_from_mlir
from ember.passes.conversions.ember_to_linalg.creation import check_dims
from ember.passes.conversions.ember_to_linalg.common import (LOWERINGS, Lowering,
                                                             LoweringError, lowers)
from ember.passes.conversions.ember_to_linalg.random import random_values


def _as_static(static_spec):
    """The rule that lowers an op with a shape operand as `static_spec` with shape = its
    (static) result shape."""
    def rule(op, lw: Lowering):
        out = lw.result_types[0]
        if not out.is_static:
            raise LoweringError(f"its result {out} depends on the value of its shape operand")
        inner = Lowering(op, lw.operand_types[:-1], lw.result_types,
                         dict(lw.attrs, shape=tuple(out.shape)), lw.fusion)
        inner.operands = lw.operands[:-1]
        return LOWERINGS[static_spec](op, inner)
    rule.can_lower = _static_result
    return rule


def _static_result(op: ir.Operation) -> bool:
    return all(type_from_mlir(r.type).is_static for r in op.results)


for _dynamic, _static in ((S.DynamicReshapeOp, S.ReshapeOp),
                          (S.DynamicBroadcastToOp, S.BroadcastToOp)):
    lowers(_dynamic)(_as_static(_static))


@lowers(C.DynamicRandomUniformOp, C.DynamicRandomNormalOp)
def lower_dynamic_random(op, lw: Lowering):
    """The random numbers of the sizes the shape operand holds: a dim the result type leaves
    `?` is read from it, after a check that none is negative (eager's error)."""
    out, (shape, shape_type) = lw.result_types[0], (lw.operands[1], lw.operand_types[1])
    if out.shape is None:
        raise LoweringError(f"result {out} needs a known rank")
    if not out.is_static:
        check_dims(lw, shape, shape_type)
    sizes = tuple(d if d is not None else arith.IndexCastOp(ir.IndexType.get(), tensor.ExtractOp(
        shape, [lw.index(i)]).result).result for i, d in enumerate(out.shape))
    return [random_values(lw, sizes)]
