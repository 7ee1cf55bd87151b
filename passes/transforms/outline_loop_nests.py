"""ember-outline-loop-nests: move each loop nest of a large function into a function of its
own, so LLVM optimises many small functions instead of one huge one.

LLVM's loop passes (loop-rotate, indvars, full unrolling, loop-idiom) cost more than linearly
in the size of the function holding the loops. The gradients of four linalg ops in one
em.function (407 loop nests, 14,600 LLVM instructions in one function) took 2.2-2.5 s in
`opt -O1`, where one of those ops alone took 0.3-0.4 s; with its nests outlined, 1.2 s.

Only functions with at least `min-nests` outermost `scf.for` loops are split: a small
function keeps its loops together, where LLVM sees that the buffers of distinct allocations
do not alias (an outlined nest gets them as arguments) and forwards values between nests.

It runs after `convert-linalg-to-loops`, when every loop is an `scf.for`.

Algorithm:
  1. For each function, collect the outermost `scf.for` ops (no `scf.for` among their
     ancestors in the function; they may sit inside `scf.if`/`scf.while`); go on with it
     if there are at least `min-nests`.
  2. For each, the values it uses that are defined outside it, in order of first use.
     Constants (operand-free ops without regions: `arith.constant`, ...) are cloned into
     the new function, so LLVM still sees constant bounds and steps; the others become its
     arguments.
  3. A private `func.func @<function>.nest<k>` (internal linkage, `noinline`) takes them and
     returns the loop's results; the loop moves into it, its uses of the outside values
     now of the arguments; a `func.call` replaces it.

With `ember-outline-loop-nests{min-nests=1}`:

Before:
    func.func @f(%a: memref<4xf32>, %b: memref<4xf32>) {
      %c0 = arith.constant 0 : index
      ...
      scf.for %i = %c0 to %c4 step %c1 { ... memref.load %a[%i] ... }
After:
    func.func @f(%a: memref<4xf32>, %b: memref<4xf32>) {
      call @f.nest0(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
    func.func private @f.nest0(%arg0: memref<4xf32>, %arg1: memref<4xf32>)
        attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]} {
      %c0 = arith.constant 0 : index
      ...
      scf.for %i = %c0 to %c4 step %c1 { ... memref.load %arg0[%i] ... }
      return
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import ClassVar

from mlir import ir
from mlir.dialects import func

from ember.passes.base import Pass, Statistics

# Outermost loop nests a function needs before it is split: bench cases A-E have at most a
# dozen; a gradient program of a few linalg ops has hundreds.
MIN_NESTS = 48


@dataclasses.dataclass(frozen=True)
class OutlineLoopNestsPass(Pass):
    name: ClassVar[str] = "ember-outline-loop-nests"
    min_nests: int = MIN_NESTS

    def run(self, module: ir.Module, stats: Statistics) -> None:
        ops = list(module.body.operations)
        taken = {_symbol(op) for op in ops if "sym_name" in op.operation.attributes}
        for fn in ops:
            if fn.operation.name != "func.func" or not len(fn.regions[0].blocks):
                continue
            nests = outermost_loops(fn.operation)
            if len(nests) < max(self.min_nests, 1):
                continue
            names = (f"{_symbol(fn)}.nest{k}" for k in itertools.count())
            with ir.Location.unknown():
                for loop in nests:
                    name = next(n for n in names if n not in taken)
                    taken.add(name)
                    outline(module, loop, name)
            stats.add("functions-split")
            stats.add("nests-outlined", len(nests))


def _symbol(op) -> str:
    return ir.StringAttr(op.operation.attributes["sym_name"]).value


def outermost_loops(fn: ir.Operation) -> list[ir.Operation]:
    """The `scf.for` ops of `fn` with no `scf.for` around them, in program order."""
    found = []

    def visit(op: ir.Operation):
        if op.name == "scf.for":
            found.append(op)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE
    fn.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _inside(loop: ir.Operation) -> tuple[list, set]:
    """The ops nested in `loop` (with it), in program order, and the blocks of its
    regions."""
    ops, blocks = [], set()

    def visit(op: ir.Operation):
        ops.append(op)
        for region in op.regions:
            blocks.update(region.blocks)
        return ir.WalkResult.ADVANCE
    loop.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ops, blocks


def _block_of(value: ir.Value) -> ir.Block:
    owner = value.owner
    return owner if isinstance(owner, ir.Block) else owner.operation.block


def _is_constant(value: ir.Value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block):
        return False
    op = owner.operation if hasattr(owner, "operation") else owner
    return not len(op.operands) and not len(op.regions) and len(op.results) == 1 and \
        op.name in ("arith.constant", "llvm.mlir.constant", "ub.poison")


def outline(module: ir.Module, loop: ir.Operation, name: str) -> None:
    """Moves `loop` into a new private function `name` of `module`, called in its place
    (steps 2-3 of the module docstring)."""
    ops, blocks = _inside(loop)
    operands = [list(op.operands) for op in ops]
    outside: dict = {}  # value defined outside the loop -> None, in order of first use
    for values in operands:
        for value in values:
            if value not in outside and _block_of(value) not in blocks:
                outside[value] = None
    constants, arguments = [], []
    for value in outside:
        (constants if _is_constant(value) else arguments).append(value)
    results = list(loop.results)
    with ir.InsertionPoint(loop):
        call = func.CallOp([r.type for r in results], ir.FlatSymbolRefAttr.get(name),
                           arguments)
    for old, new in zip(results, call.results):
        old.replace_all_uses_with(new)
    with ir.InsertionPoint(module.body):
        new_fn = func.FuncOp(name, ir.FunctionType.get([v.type for v in arguments],
                                                       [r.type for r in results]),
                             visibility="private")
    new_fn.attributes["llvm.linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")
    new_fn.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
    body = new_fn.add_entry_block()
    mapping = dict(zip(arguments, body.arguments))
    with ir.InsertionPoint(body):
        for value in constants:
            mapping[value] = value.owner.clone().results[0]
        ret = func.ReturnOp(results)
    loop.move_before(ret.operation)
    for op, values in zip(ops, operands):
        for i, value in enumerate(values):
            new = mapping.get(value)
            if new is not None:
                op.operands[i] = new

