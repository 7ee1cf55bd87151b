"""ember-copy-repeated-results: return a copy for each repeat of a returned tensor or buffer.

Works around llvm/llvm-project#219492: `buffer-results-to-out-params{hoist-static-allocs}`
segfaults on `return %1, %1` when %1 is allocated in the function (MLIR 22.1, the version
Ember pins). Fixed upstream by llvm/llvm-project#220232 (LLVM 23): this pass can go, with
its step in the CPU backend's bufferization pipeline, once Ember's MLIR has that fix.

The CPU backend runs it on tensors before `one-shot-bufferize` and again right after it,
on memrefs: bufferization itself can return one buffer twice, e.g. for `return %e, %g`
where %e is a `tensor.empty` that is also %g's destination (an empty result, whose
contents are undefined, shares %g's buffer).

Algorithm:
  1. For each function's `func.return`, walk the operands in order.
  2. A ranked tensor or memref that an earlier operand already returned (and is not an
     argument) is replaced by a copy of it: a `linalg.copy` into a new `tensor.empty`, or a
     `memref.copy` into a new `memref.alloc`, of its sizes.

Before:
    return %1, %1 : tensor<4xf32>, tensor<4xf32>
After:
    %e = tensor.empty() : tensor<4xf32>
    %c = linalg.copy ins(%1 : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    return %1, %c : tensor<4xf32>, tensor<4xf32>
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, linalg, memref, tensor

from ember.passes.base import Pass, Statistics


@dataclasses.dataclass(frozen=True)
class CopyRepeatedResultsPass(Pass):
    name: ClassVar[str] = "ember-copy-repeated-results"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        with ir.Location.unknown():
            copy_repeated_results(module)


def copy_repeated_results(module: ir.Module) -> None:
    """Returns a copy for each repeat of a value a function already returns:
    `buffer-results-to-out-params{hoist-static-allocs}` crashes (segfault) on
    `return %1, %1` when %1 is computed in the function."""
    for fn in module.body.operations:
        if fn.operation.name != "func.func" or not fn.operation.regions[0].blocks:
            continue
        for block in fn.operation.regions[0].blocks:
            ret = block.operations[len(block.operations) - 1]
            if ret.name != "func.return":
                continue
            seen = []
            for i, value in enumerate(list(ret.operands)):
                if isinstance(value, ir.BlockArgument) or not any(value == v for v in seen):
                    seen.append(value)
                    continue
                if isinstance(value.type, ir.RankedTensorType):
                    with ir.InsertionPoint(ret), ret.location:
                        ret.operands[i] = _copy_tensor(value)
                elif isinstance(value.type, ir.MemRefType):
                    with ir.InsertionPoint(ret), ret.location:
                        ret.operands[i] = _copy_buffer(value)
                # scalars (i1, index) are returned by value, not in a buffer


def _sizes(value: ir.Value, shaped, dim_op) -> list:
    return [dim_op(value, arith.ConstantOp(ir.IndexType.get(), k).result).result
            if shaped.is_dynamic_dim(k) else d for k, d in enumerate(shaped.shape)]


def _copy_tensor(value: ir.Value) -> ir.Value:
    t = ir.RankedTensorType(value.type)
    empty = tensor.EmptyOp(_sizes(value, t, tensor.DimOp), t.element_type).result
    return linalg.copy(value, outs=[empty])


def _copy_buffer(value: ir.Value) -> ir.Value:
    t = ir.MemRefType(value.type)
    dynamic = [s for s in _sizes(value, t, memref.DimOp) if not isinstance(s, int)]
    fresh = ir.MemRefType.get(t.shape, t.element_type)  # identity layout, like the results
    buffer = memref.AllocOp(fresh, dynamic, []).result
    memref.CopyOp(value, buffer)
    return buffer
