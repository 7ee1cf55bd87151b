"""ember-licm: loop-invariant code motion out of `scf.while` and `scf.for`.

Upstream `loop-invariant-code-motion` only moves ops it knows to be side-effect free and
speculatable, and sees IRDL ops as neither. This pass hoists ember ops by their spec's traits
(and the pure upstream ops the tracer emits), so a value computed the same way on every
iteration is computed once, before the loop.

Hoisting runs an op even when the loop runs zero times (an `scf.for` with an empty range,
the `do` region of an `scf.while`), so an op moves only when it cannot fail: integer
`floordiv`/`mod` need a constant divisor with no zero, integer `pow` a constant exponent
with no negative element, and `gather` (which checks its indices) never moves.

Algorithm:
  1. Take each function's loops innermost first, so an op hoisted out of an inner loop
     lands in the outer loop's body and may be hoisted again.
  2. Record the values defined inside the loop (block arguments and results, nested too)
     and the variables the loop may write (`assign_*` targets; any, if it has a `func.call`).
  3. Visit the ops directly in the loop's regions in program order (both regions of an
     `scf.while`). An op moves right before the loop when it has no regions, none of its
     operands is defined inside the loop, and it is either pure and cannot fail, or an
     `ember.read_variable` of a variable the loop does not write. Its results then count as
     defined outside, so the ops using them may follow (`hoisted`).
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

import numpy as np
from mlir import ir

from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.verifier import iter_ops
from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import LOOPS, STRUCTURAL, constant_of, functions, is_pure
from ember.passes.transforms.cse import ANY, READ, written_resources

INTEGER_DIVISIONS = frozenset({"ember.floordiv", "ember.mod"})


@dataclasses.dataclass(frozen=True)
class LicmPass(Pass):
    name: ClassVar[str] = "ember-licm"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for fn in functions(module):
            # Reversed pre-order puts every loop after the loops nested in it.
            loops = [op for op in iter_ops(fn) if op.name in LOOPS]
            for loop in reversed(loops):
                moved = _hoist_from(loop, written_resources(loop))
                if moved:
                    stats.add("hoisted", moved)


def _hoist_from(loop: ir.Operation, written: frozenset) -> int:
    """Moves the invariant ops directly in `loop`'s regions before it; returns how many."""
    inside = _defined_inside(loop)
    moved = 0
    for region in loop.regions:
        for block in region.blocks:
            for op in list(block.operations):
                op = op.operation
                if not _invariant(op, inside) or not _movable(op, written):
                    continue
                op.move_before(loop)
                inside.difference_update(op.results)
                moved += 1
    return moved


def _defined_inside(loop: ir.Operation) -> set:
    values = set()
    for op in [loop, *iter_ops(loop)]:
        for region in op.regions:
            for block in region.blocks:
                values.update(block.arguments)
                for inner in block.operations:
                    values.update(inner.results)
    return values


def _invariant(op: ir.Operation, inside: set) -> bool:
    return not any(v in inside for v in op.operands)


def _movable(op: ir.Operation, written: frozenset) -> bool:
    if len(op.regions) or op.name in STRUCTURAL:
        return False
    if op.name == READ:
        return ANY not in written and op.operands[0] not in written
    return is_pure(op) and not _may_fail(op)


def _may_fail(op: ir.Operation) -> bool:
    """Whether the op can raise at run time for some operand values."""
    if op.name == "ember.gather":
        return True  # an index out of range is an error
    if op.name in INTEGER_DIVISIONS:
        return _is_integer(op.operands[1]) and not _constant_all(op.operands[1], np.not_equal, 0)
    if op.name == "ember.pow":
        return _is_integer(op.operands[0]) \
            and not _constant_all(op.operands[1], np.greater_equal, 0)
    return False


def _is_integer(value: ir.Value) -> bool:
    try:
        return type_from_mlir(value.type).dtype.np_dtype.kind in "iu"
    except (TypeError, ValueError, AttributeError):
        return True  # unknown: assume the worst


def _constant_all(value: ir.Value, compare, bound) -> bool:
    array = constant_of(value)
    return array is not None and array.size > 0 and bool(np.all(compare(array, bound)))
