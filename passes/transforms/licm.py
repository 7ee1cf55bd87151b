"""ember-licm: loop-invariant code motion out of `scf.while` and `scf.for`.

Upstream `loop-invariant-code-motion` only moves ops it knows to be side-effect free and
speculatable, and sees IRDL ops as neither. This pass hoists ember ops by their spec's traits
(and the pure upstream ops the tracer emits), so a value computed the same way on every
iteration is computed once, before the loop.

Hoisting runs an op where it might not have run: a region the loop may never enter (the
body of an `scf.while`, of an `scf.for` whose trip count is unknown), so from there only ops
that cannot fail move (`ir_utils.may_fail`: the op specs say which ops are total for which
operand types — a dynamically shaped broadcast, an integer division by an unknown divisor,
a gather may fail). A region entered whenever the loop is (the condition region of an
`scf.while`, the body of an `scf.for` with constant bounds and at least one iteration) also
gives up ops that may fail, as long as nothing that stays before them may fail or has an
effect: they fail in the same place, first.

Algorithm:
  1. Take each function's loops innermost first, so an op hoisted out of an inner loop
     lands in the outer loop's body and may be hoisted again. What each loop may write is
     computed for all loops in one bottom-up walk.
  2. Visit the ops directly in the loop's regions in program order (both regions of an
     `scf.while`). An op is invariant when none of its operands is defined in the loop's
     own blocks (an op directly in them sees no value nested deeper).
  3. An invariant op moves right before the loop when it has no regions and it is either
     pure or an `ember.read_variable` of a variable the loop does not write (`assign_*`
     targets; any, if it has a `func.call`), and it cannot fail or its region is entered
     with the loop and nothing that stays before it may fail or has an effect. Its
     results then count as defined outside, so the ops using them may follow (`hoisted`).
  4. Effects (`print`, `assign_*`, calls) and ops nested in an `scf.if` never move.

Before:
    %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %init) -> (tensor<4xf32>) {
      %e = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      %n = "ember.add"(%acc, %e) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      scf.yield %n : tensor<4xf32>
    }
After:
    %e = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %init) -> (tensor<4xf32>) {
      %n = "ember.add"(%acc, %e) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      scf.yield %n : tensor<4xf32>
    }
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir

from ember.dialects.ember.verifier import iter_ops
from ember.passes.base import Pass, Statistics
from ember.passes.analysis.effects import ANY, READ, is_pure, may_fail, written_map
from ember.passes.ir_utils import LOOPS, STRUCTURAL, functions, op_id


@dataclasses.dataclass(frozen=True)
class LicmPass(Pass):
    name: ClassVar[str] = "ember-licm"
    per_function: ClassVar[bool] = True

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for fn in functions(module):
            written = written_map(fn)
            # Reversed pre-order puts every loop after the loops nested in it.
            loops = [op for op in iter_ops(fn) if op.name in LOOPS]
            for loop in reversed(loops):
                moved = _hoist_from(loop, written[op_id(loop)])
                if moved:
                    stats.add("hoisted", moved)


def _hoist_from(loop: ir.Operation, written: frozenset) -> int:
    """Moves the invariant ops directly in `loop`'s regions before it; returns how many."""
    own_blocks = {block for region in loop.regions for block in region.blocks}
    moved = 0
    for index, region in enumerate(loop.regions):
        entered = _entered_with_loop(loop, index)
        for block in region.blocks:
            for op in list(block.operations):
                op = op.operation
                if _invariant(op, own_blocks) and _movable(op, written) \
                        and (entered or not may_fail(op)):
                    op.move_before(loop)
                    moved += 1
                    continue
                # It stays: a may-fail op after it must not fail before it does.
                entered = entered and not (len(op.regions) or op.name in STRUCTURAL
                                           or not is_pure(op) or may_fail(op))
    return moved


def _entered_with_loop(loop: ir.Operation, region_index: int) -> bool:
    """Whether the region runs (once at least) every time the loop is reached."""
    if loop.name == "scf.while":
        return region_index == 0  # the condition is evaluated before any iteration
    bounds = [_constant_index(v) for v in list(loop.operands)[:3]]
    return None not in bounds and bounds[0] < bounds[1] and bounds[2] > 0


def _constant_index(value: ir.Value):
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return None
    return ir.IntegerAttr(owner.operation.attributes["value"]).value


def _invariant(op: ir.Operation, own_blocks: set) -> bool:
    return not any(_block_of(v) in own_blocks for v in op.operands)


def _block_of(value: ir.Value) -> ir.Block:
    owner = value.owner
    return owner if isinstance(owner, ir.Block) else owner.operation.block


def _movable(op: ir.Operation, written: frozenset) -> bool:
    if len(op.regions) or op.name in STRUCTURAL:
        return False
    if op.name == READ:
        return ANY not in written and op.operands[0] not in written
    return is_pure(op)
