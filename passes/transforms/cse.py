"""ember-cse: common-subexpression elimination that knows ember op traits and variables.

Upstream `cse` treats IRDL ops as effectful and leaves them alone; this pass merges pure ops
by their spec's traits (plus the pure upstream ops the tracer emits: `tensor.extract`,
`tensor.cast`, `arith.constant`, ...), normalising the operand order of commutative ops, and
merges repeated `ember.read_variable`s of one variable while nothing may have written it.
Like upstream `cse`, a value is reused only where it dominates: an op may reuse an equivalent
op of an enclosing region, never one defined inside an earlier region.

Resources are function arguments, one per variable (the tracer captures each variable once),
so two distinct resource values are taken to name two distinct variables.

Algorithm:
  1. Walk each function in program order, one scope per block; a block nested in an `scf`
     op sees its enclosing scopes (other region ops start a fresh scope).
  2. A pure op without regions has the key (name, operands, attributes, result types), with
     the operands sorted for COMMUTATIVE ops. If a visible scope holds the key, replace the
     op by the earlier one (`eliminated`); else record it in the innermost scope.
  3. `ember.read_variable` has the key (name, resource, result type) and is looked up the
     same way, except that the search stops at a scope where the resource was written.
  4. An op that may write variables (`assign_*` writes its resource; `func.call` may write
     any) kills the recorded reads of what it writes. A loop kills, on entry to its regions,
     everything its body writes (a later iteration sees those writes); a region op kills
     what its regions write once it is done.
  5. Other effects (`print`, `assign_*`, calls) are never merged.

Before:
    %0 = "ember.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = "ember.add"(%y, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
    %3 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
    %4 = "ember.mul"(%0, %1) ...   %5 = "ember.mul"(%2, %3) ...
After:
    %0 = "ember.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2 = "ember.read_variable"(%v) : (!ember.resource<tensor<4xf32>>) -> tensor<4xf32>
    %4 = "ember.mul"(%0, %0) ...   %5 = "ember.mul"(%2, %2) ...
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Iterator, Optional

from mlir import ir

from ember.dialects.ember.base import Trait
from ember.passes.analysis.effects import ANY, READ, is_pure, own_writes, written_map
from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import LOOPS, STRUCTURAL, functions, op_id, replace_op, spec_of

class _Scope:
    """The ops recorded in one block, and the variables written since the block began."""

    def __init__(self, parent: Optional[_Scope], killed=frozenset()):
        self.parent = parent
        self.table: dict = {}
        self.killed = set(killed)  # reads recorded further out are stale for these
        self.written: set = set()  # what this block (nested regions included) writes

    def lookup(self, key) -> Optional[ir.Operation]:
        scope = self
        while scope is not None:
            if key in scope.table:
                return scope.table[key]
            if key[0] == READ and (ANY in scope.killed or key[1] in scope.killed):
                return None
            scope = scope.parent
        return None

    def kill(self, written) -> None:
        if not written:
            return
        self.written |= written
        self.killed |= written
        stale = [k for k in self.table if k[0] == READ and (ANY in written or k[1] in written)]
        for key in stale:
            del self.table[key]


@dataclasses.dataclass(frozen=True)
class CsePass(Pass):
    name: ClassVar[str] = "ember-cse"
    per_function: ClassVar[bool] = True

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for fn in functions(module):
            written = written_map(fn)  # merging pure ops changes no loop's writes
            # An explicit stack of block walkers: deep nesting must not exhaust recursion.
            stack = [_walk(block, _Scope(None), written, stats)
                     for region in fn.regions for block in region.blocks]
            stack.reverse()
            while stack:
                child = next(stack[-1], None)
                if child is None:
                    stack.pop()
                else:
                    stack.append(_walk(*child, written, stats))


def _walk(block: ir.Block, scope: _Scope, written: dict,
          stats: Statistics) -> Iterator[tuple]:
    """Visits `block`'s ops in order, yielding (nested block, its scope) to be walked first."""
    for op in list(block.operations):
        op = op.operation
        if len(op.regions) == 0:
            _visit(op, scope, stats)
            continue
        # A loop's later iterations see what its body writes, so its regions start with those
        # reads already killed; an scf.if branch starts with the reads before it intact.
        entry_killed = written[op_id(op)] if op.name in LOOPS else frozenset()
        parent = scope if op.name.startswith("scf.") else None
        nested = [(b, _Scope(parent, entry_killed)) for r in op.regions for b in r.blocks]
        yield from nested
        children = [child_scope for _, child_scope in nested]
        # The children have been walked now: what they wrote is known.
        scope.kill(own_writes(op).union(*(c.written for c in children)))


def _visit(op: ir.Operation, scope: _Scope, stats: Statistics) -> None:
    key = _key(op)
    if key is None:
        scope.kill(own_writes(op))
        return
    earlier = scope.lookup(key)
    if earlier is None:
        scope.table[key] = op
        return
    replace_op(op, list(earlier.results))
    stats.add("eliminated")


def _key(op: ir.Operation) -> Optional[tuple]:
    """The op's identity for merging, or None when it must not be merged."""
    results = tuple(r.type for r in op.results)
    if op.name == READ:
        return (READ, op.operands[0], results)
    if op.name in STRUCTURAL or not results or not is_pure(op):
        return None
    operands = tuple(op.operands)
    spec = spec_of(op)
    if spec is not None and spec.has(Trait.COMMUTATIVE):
        operands = tuple(sorted(operands, key=hash))
    attrs = tuple((name, op.attributes[name]) for name in sorted(op.attributes))
    return (op.name, operands, attrs, results)
