"""ember-inline: inline calls of nested Functions (upstream: `inline`, whose cost model and
interfaces do not know IRDL ops; here every `func.call` of a defined `func.func` is a candidate).

The tracer turns each nested `em.function` into a `func.call` of another `func.func` in the same
module. Inlining them lets the other passes see across the call: constants fold through it,
CSE merges work done on both sides, DCE drops unused results.

Algorithm:
  1. Index the module's functions by symbol and count the call sites of each.
  2. For every `func.call` (in program order, nested regions included) whose callee has a
     single-block body, is not recursive (neither the caller nor the callee itself is
     reachable from the callee's calls) and has at most `max-ops` ops or exactly one call site:
     a. clone the callee, detached;
     b. replace its entry block arguments by the call operands;
     c. move its ops (all but `func.return`) before the call;
     d. replace the call results by the returned values and erase the call and the clone;
     count `inlined`.
  3. Repeat (an inlined body may contain calls) until no call is inlined, at most
     `max-iterations` rounds.
  4. Erase the private callees (`sym_visibility = "private"`) left without uses; count
     `functions-erased`. Public functions and declarations (host callbacks) always stay.

Before:
    func.func private @g(%a: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "ember.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = call @g(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
After:
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
"""

from __future__ import annotations

import collections
import dataclasses
from typing import ClassVar

from mlir import ir

from ember.dialects.ember.verifier import find_op, iter_ops
from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import functions, symbol_name


@dataclasses.dataclass(frozen=True)
class InlinePass(Pass):
    name: ClassVar[str] = "ember-inline"
    max_ops: int = 64
    max_iterations: int = 16

    def run(self, module: ir.Module, stats: Statistics) -> None:
        inlined_from: set[str] = set()
        for _ in range(self.max_iterations):
            funcs = {_symbol(fn): fn for fn in functions(module)}
            calls = {name: _calls(fn) for name, fn in funcs.items()}
            graph = {name: [_callee(c) for c in cs] for name, cs in calls.items()}
            sites = collections.Counter(c for callees in graph.values() for c in callees)
            changed = False
            for caller, caller_calls in calls.items():
                for call in caller_calls:
                    callee = _callee(call)
                    fn = funcs.get(callee)
                    if fn is None or not self._worth_it(fn, sites[callee]):
                        continue
                    if _recursive(callee, caller, graph):
                        continue  # inlining would never end
                    _inline(call, fn)
                    stats.add("inlined")
                    inlined_from.add(callee)
                    changed = True
            if not changed:
                break
        for fn in list(functions(module)):
            name = _symbol(fn)
            if name in inlined_from and _is_private(fn) and not _symbol_used(module, name):
                fn.erase()
                stats.add("functions-erased")

    def _worth_it(self, fn: ir.Operation, call_sites: int) -> bool:
        blocks = list(fn.regions[0].blocks)
        if len(blocks) != 1:  # a declaration (host callback) or a CFG body
            return False
        return call_sites == 1 or len(iter_ops(fn)) <= self.max_ops


_symbol = symbol_name


def _callee(call: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value


def _calls(fn: ir.Operation) -> list[ir.Operation]:
    return [op for op in iter_ops(fn) if op.name == "func.call"]


def _is_private(fn: ir.Operation) -> bool:
    return ("sym_visibility" in fn.attributes
            and ir.StringAttr(fn.attributes["sym_visibility"]).value == "private")


def _recursive(callee: str, caller: str, graph: dict[str, list[str]]) -> bool:
    """Whether `callee` calls back into `caller` or into itself, directly or not.

    `graph` may be stale within a round: inlining keeps what each function reaches or
    shrinks it, so a stale graph only errs towards "recursive".
    """
    return _reaches([callee], caller, graph) or _reaches(graph.get(callee, []), callee, graph)


def _reaches(starts: list[str], target: str, graph: dict[str, list[str]]) -> bool:
    """Whether `target` is reachable from `starts` in the call graph (starts included)."""
    seen, todo = set(), list(starts)
    while todo:
        name = todo.pop()
        if name == target:
            return True
        if name in seen:
            continue
        seen.add(name)
        todo += graph.get(name, [])
    return False


def _symbol_used(module: ir.Module, name: str) -> bool:
    """Whether an op in a function refers to `@name` (a call's callee, or any other op)."""
    def refers(op: ir.Operation) -> bool:
        for key in op.attributes:
            attr = op.attributes[key]
            if isinstance(attr, ir.FlatSymbolRefAttr) and attr.value == name:
                return True
        return False
    return any(find_op(fn, refers) is not None for fn in functions(module))


def _inline(call: ir.Operation, callee: ir.Operation) -> None:
    clone = callee.clone(ip=False)
    block = clone.regions[0].blocks[0]
    for arg, operand in zip(block.arguments, call.operands):
        arg.replace_all_uses_with(operand)
    ops = [op.operation for op in block.operations]
    terminator = ops.pop()
    for op in ops:
        op.move_before(call)
    for result, value in zip(call.results, terminator.operands):
        result.replace_all_uses_with(value)
    call.erase()
    clone.erase()
