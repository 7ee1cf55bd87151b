"""ember-drop-empty-concat-operands: remove the operands of size 0 from `tensor.concat`.

Works around one-shot bufferization of `tensor.concat` failing on an operand of size 0
along the concatenated dim ("offset 4 is out-of-bounds" for the empty slice at the end;
MLIR 22.1; no upstream issue found in the stored issue threads). It can go, with its step
in the CPU backend's bufferization pipeline, once upstream bufferizes such concats.

Algorithm:
  1. Find every `tensor.concat`; keep the operands whose size along `dim` is not 0.
  2. None kept, or the result has a static size 0 in another dim: the result is a
     `tensor.empty` of its type. One kept, of the result's type: the result is that
     operand. Otherwise a concat of the kept operands.

Before:
    %c = tensor.concat dim(0) %a, %z : (tensor<4xf32>, tensor<0xf32>) -> tensor<4xf32>
After:
    (uses of %c use %a)
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, tensor

from ember.passes.base import Pass, Statistics


@dataclasses.dataclass(frozen=True)
class DropEmptyConcatOperandsPass(Pass):
    name: ClassVar[str] = "ember-drop-empty-concat-operands"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        with ir.Location.unknown():
            drop_empty_concat_operands(module)


def _empty_like(concat: ir.Operation, dim: int) -> ir.Value:
    """`tensor.empty` of the type of `concat`'s result, its dynamic sizes read from the
    operands (the first one's, or their sum along the concatenated `dim`)."""
    t = ir.RankedTensorType(concat.results[0].type)

    def size(i: int, source: ir.Value) -> ir.Value:
        return tensor.DimOp(source, arith.ConstantOp(ir.IndexType.get(), i).result).result
    sizes = []
    for i, d in enumerate(t.shape):
        if not t.is_dynamic_dim(i):
            sizes.append(d)
        elif i != dim:
            sizes.append(size(i, concat.operands[0]))
        else:
            total = size(i, concat.operands[0])
            for v in list(concat.operands)[1:]:
                total = arith.AddIOp(total, size(i, v)).result
            sizes.append(total)
    return tensor.EmptyOp(sizes, t.element_type).result


def drop_empty_concat_operands(module: ir.Module) -> None:
    """Removes the operands of size 0 along the concatenated dim from each `tensor.concat`
    (they add nothing); a concat left with one operand becomes that operand."""
    ops = []
    module.operation.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
    for op in ops:
        if op.name != "tensor.concat":
            continue
        dim = ir.IntegerAttr(op.attributes["dim"]).value
        keep = [v for v in op.operands if ir.RankedTensorType(v.type).shape[dim] != 0]
        result = op.results[0]
        empty = 0 in ir.RankedTensorType(result.type).shape
        if len(keep) == len(op.operands) and not empty:
            continue
        if not keep or empty:  # nothing to copy (upstream's slices of a size-0 dim fail to
            with ir.InsertionPoint(op), op.location:  # verify)
                new = _empty_like(op, dim)
            result.replace_all_uses_with(new)
        elif len(keep) == 1 and keep[0].type == result.type:
            result.replace_all_uses_with(keep[0])
        else:
            with ir.InsertionPoint(op), op.location:
                new = tensor.ConcatOp(result.type, dim, keep)
            result.replace_all_uses_with(new.result)
        op.erase()
