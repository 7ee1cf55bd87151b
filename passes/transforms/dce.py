"""ember-dce: dead-code elimination of pure ops (upstream: `mlir::eraseUnreachableBlocks`/
the folding erasure in `canonicalize`, which cannot see IRDL ops as pure).

Algorithm:
  1. Walk every function's ops in reverse program order (users before producers).
  2. Erase a pure op that cannot fail (`effects.may_fail`) none of whose results is used;
     count it as `erased`.
  3. For a pure `scf.if` with some unused results, rebuild it with only the used results
     (its yields shrink to match); count `results-removed`.
  4. Repeat until nothing changes (erasing a user can make its producers dead).

Effects (variable writes, prints, calls) are never erased, nor ops that may fail at run time
(an integer division, a shape check on `?` dims): eager raises their error, so compiled code
must too.

Before:
    %0 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>     // unused
    return %x : tensor<4xf32>
After:
    return %x : tensor<4xf32>
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir

from ember.dialects.ember.verifier import iter_ops
from ember.passes.base import Pass, Statistics
from ember.passes.analysis.effects import may_fail, pure_ops
from ember.passes.ir_utils import STRUCTURAL, has_uses, op_id, until_fixed_point


@dataclasses.dataclass(frozen=True)
class DcePass(Pass):
    name: ClassVar[str] = "ember-dce"
    per_function: ClassVar[bool] = True
    max_iterations: int = 16

    def run(self, module: ir.Module, stats: Statistics) -> None:
        def step(fn: ir.Operation) -> bool:
            erased = erase_dead(fn)
            ifs = [op for op in iter_ops(fn) if op.name == "scf.if"]
            if ifs:
                pure = pure_ops(fn)  # one walk: is_pure of each op of a nest rewalks it
                ifs = [op for op in ifs if op_id(op) in pure]
            shrunk = sum(_shrink_if(op) for op in reversed(ifs))  # inner ones first
            for what, n in (("erased", erased), ("results-removed", shrunk)):
                if n:
                    stats.add(what, n)
            return bool(erased or shrunk)
        until_fixed_point(module, step, self.max_iterations)


def erase_dead(fn: ir.Operation) -> int:
    """Erases the ops of `fn` without uses that are pure and cannot fail, users first;
    returns how many."""
    pure = None  # one walk, not is_pure per op; only if some op is unused
    erased = 0
    for op in reversed(iter_ops(fn)):  # nested ops first: an erasure frees none yet to visit
        if op.name in STRUCTURAL or has_uses(op):
            continue
        if pure is None:
            pure = pure_ops(fn)
        # may_fail only of the unused pure ops: asking it of every op (the constants
        # decoded for each op's totality check) was most of the pass's time
        if op_id(op) in pure and not may_fail(op):
            op.erase()
            erased += 1
    return erased


def _shrink_if(op: ir.Operation) -> bool:
    """Rebuilds a pure scf.if without its unused results; True if it changed."""
    keep = [i for i, r in enumerate(op.results) if any(True for _ in r.uses)]
    if len(keep) == len(op.results):
        return False
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create("scf.if", results=[op.results[i].type for i in keep],
                                  operands=list(op.operands), regions=2)
    for i, region in enumerate(op.regions):
        for block in list(region.blocks):
            _shrink_yield(block, keep)
            block.append_to(new.regions[i])
    for new_result, i in zip(new.results, keep):
        op.results[i].replace_all_uses_with(new_result)
    op.erase()
    return True


def _shrink_yield(block: ir.Block, keep: list[int]) -> None:
    terminator = list(block.operations)[-1].operation
    operands = list(terminator.operands)
    with ir.InsertionPoint(terminator), terminator.location:
        ir.Operation.create("scf.yield", operands=[operands[i] for i in keep])
    terminator.erase()
