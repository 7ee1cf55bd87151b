"""ember-readonly-arguments: the tensor arguments of public functions are read-only.

One-shot bufferization with `bufferize-function-boundaries` takes a function's tensor
arguments as writable unless they carry `bufferization.writable = false`, so an op that
updates its operand in place (ember.tensor_scatter's destination, an scf.for carrying an
argument into tensor.insert) would write into the caller's array. A public function's
arguments are the caller's inputs (numpy arrays, AOT callers' buffers): marking them
read-only makes bufferization copy such an argument once, before the first in-place
write, and keeps everything else in place. Private functions keep the default: their
callers' call sites are analysed with them.

Algorithm:
  1. For each public `func.func` (no `sym_visibility`), read its argument attributes.
  2. Add `bufferization.writable = false` to those of each tensor argument.

Before:
    func.func @f(%t: tensor<4xf32>) -> tensor<4xf32> { ... }
After:
    func.func @f(%t: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32> { ... }
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir

from ember.passes.base import Pass, Statistics

WRITABLE = "bufferization.writable"


@dataclasses.dataclass(frozen=True)
class ReadonlyArgumentsPass(Pass):
    name: ClassVar[str] = "ember-readonly-arguments"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for op in module.body.operations:
            fn = op.operation
            if fn.name != "func.func" or "sym_visibility" in fn.attributes:
                continue
            stats.add("arguments", mark_readonly(fn))


def mark_readonly(fn: ir.Operation) -> int:
    """Sets `bufferization.writable = false` on each tensor argument of `fn` (keeping its
    other argument attributes); returns how many it marked."""
    inputs = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).inputs
    old = list(ir.ArrayAttr(fn.attributes["arg_attrs"])) if "arg_attrs" in fn.attributes \
        else [ir.DictAttr.get({}) for _ in inputs]
    new, marked = [], 0
    for t, attrs in zip(inputs, old):
        entries = {a.name: a.attr for a in ir.DictAttr(attrs)}
        if isinstance(t, ir.RankedTensorType) or isinstance(t, ir.UnrankedTensorType):
            entries[WRITABLE] = ir.BoolAttr.get(False)
            marked += 1
        new.append(ir.DictAttr.get(entries))
    if marked:
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get(new)
    return marked
