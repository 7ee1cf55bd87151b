"""ember-copy-repeated-results: return a copy for each repeat of a returned tensor.

Works around llvm/llvm-project#219492: `buffer-results-to-out-params{hoist-static-allocs}`
segfaults on `return %1, %1` when %1 is allocated in the function (MLIR 22.1, the version
Ember pins). Fixed upstream by llvm/llvm-project#220232 (LLVM 23): this pass can go, with
its step in the CPU backend's bufferization pipeline, once Ember's MLIR has that fix.

Algorithm:
  1. For each function's `func.return`, walk the operands in order.
  2. A ranked tensor that an earlier operand already returned (and is not an argument)
     is replaced by a `linalg.copy` of it into a new `tensor.empty` of its sizes. Values
     are compared through the view-like ops that bufferize to an alias (tensor.cast,
     extract_slice, collapse_shape, expand_shape): `return %0, cast(%0)` is a repeat too
     (it cloned an unranked memref that nothing lowers, e.g. ember.unique's empty output
     next to its empty idx once canonicalize merged their tensor.empty).

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
from mlir.dialects import arith, linalg, tensor

from ember.passes.base import Pass, Statistics


@dataclasses.dataclass(frozen=True)
class CopyRepeatedResultsPass(Pass):
    name: ClassVar[str] = "ember-copy-repeated-results"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        with ir.Location.unknown():
            copy_repeated_results(module)


def copy_repeated_results(module: ir.Module) -> None:
    """Returns a `linalg.copy` for each repeat of a value a function already returns:
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
                source = _aliased(value)
                if isinstance(source, ir.BlockArgument) or not any(source == v for v in seen):
                    seen.append(source)
                    continue
                if not isinstance(value.type, ir.RankedTensorType):
                    continue  # scalars (i1, index) are returned by value, not in a buffer
                with ir.InsertionPoint(ret), ret.location:
                    t = ir.RankedTensorType(value.type)
                    sizes = [tensor.DimOp(value, arith.ConstantOp(ir.IndexType.get(), k)
                                          .result).result if t.is_dynamic_dim(k) else d
                             for k, d in enumerate(t.shape)]
                    empty = tensor.EmptyOp(sizes, t.element_type).result
                    ret.operands[i] = linalg.copy(value, outs=[empty])


_VIEWS = ("tensor.cast", "tensor.extract_slice", "tensor.collapse_shape", "tensor.expand_shape")


def _aliased(value: ir.Value) -> ir.Value:
    """The value whose buffer `value` will alias: its source through view-like ops."""
    while not isinstance(value, ir.BlockArgument):
        owner = value.owner
        op = owner.operation if isinstance(owner, ir.OpView) else owner
        if not isinstance(op, ir.Operation) or op.name not in _VIEWS:
            break
        value = op.operands[0]
    return value
