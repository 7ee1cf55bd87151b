"""ember-prepare-blas: shape float matrix products on tensors for `ember-linalg-to-blas`.

A GEMM call reads its operands in place, transposed or not by a flag, and computes
C = A B (beta = 0) or C += A B (beta = 1). Two things on tensors stand in the way: a
`linalg.transpose` feeding a product bufferizes to a copy, and CSE shares one `linalg.fill`
of zeros among products, so bufferization fills one buffer and copies it into the others.
Run before bufferization; `ember-linalg-to-blas` runs after it.

Algorithm:
  0. Elementwise functions of an operand that the fusion pass moved into a product's body
     (`out += relu(a) * b`) go back into generics of their own (linalg_to_blas/prologues.py).
  1. For each float contraction on tensors (linalg_to_blas.plan.contraction) whose input
     is produced by a `linalg.transpose`, read the transpose's input instead, with the
     permutation folded into that operand's indexing map (kept only if the op verifies:
     a named op may reject the maps); erase the transpose once unused.
  2. For each such contraction whose output is a `linalg.fill`, clone the fill right before
     it and use the clone; erase the original fill (and its `tensor.empty`) once unused.

Before:
    %t = linalg.transpose ins(%a : tensor<32x64xf32>) outs(%e : tensor<64x32xf32>)
             permutation = [1, 0]
    %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<64x48xf32>) -> tensor<64x48xf32>
    %r = linalg.matmul ins(%t, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%z : ...)
After:
    %z = linalg.fill ins(%cst : f32) outs(%e2 : tensor<64x48xf32>) -> tensor<64x48xf32>
    %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, ...]
             ins(%a, %b : tensor<32x64xf32>, tensor<32x48xf32>) outs(%z : ...)
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir

from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import as_operation, has_uses
from ember.passes.transforms.linalg_to_blas.plan import contraction, indexing_maps, value_op
from ember.passes.transforms.linalg_to_blas.prologues import split_prologues


@dataclasses.dataclass(frozen=True)
class PrepareBlasPass(Pass):
    name: ClassVar[str] = "ember-prepare-blas"
    per_function: ClassVar[bool] = True

    def run(self, module: ir.Module, stats: Statistics) -> None:
        stats.add("prologues-split", split_prologues(module))
        stats.add("transposes-folded", fold_transposes(module))
        stats.add("fills-cloned", own_zero_fills(module))


def _products_on_tensors(root) -> list[ir.Operation]:
    ops: list = []
    root = root.operation if isinstance(root, ir.Module) else as_operation(root)
    root.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
    return [op for op in ops if contraction(op) is not None and
            isinstance(op.operands[2].type, ir.RankedTensorType)]


def fold_transposes(root) -> int:
    """Folds `linalg.transpose`s feeding float contractions (on tensors) into the
    contraction's indexing maps; returns how many were folded."""
    folded = 0
    for op in _products_on_tensors(root):
        for i in (0, 1):
            producer = value_op(op.operands[i])
            if not isinstance(producer, ir.Operation) or producer.name != "linalg.transpose":
                continue
            perm = list(ir.DenseI64ArrayAttr(producer.attributes["permutation"]))
            maps = list(indexing_maps(op))
            old = ir.AffineMapAttr(maps[i]).value
            results = [None] * len(perm)
            for j, p in enumerate(perm):
                results[p] = old.results[j]
            maps[i] = ir.AffineMapAttr.get(ir.AffineMap.get(old.n_dims, 0, results))
            before = (op.operands[i], indexing_maps(op))
            op.operands[i] = producer.operands[0]
            op.attributes["indexing_maps"] = ir.ArrayAttr.get(maps)
            try:
                op.verify()
            except ir.MLIRError:  # a named op that rejects these maps: keep the transpose
                op.operands[i] = before[0]
                op.attributes["indexing_maps"] = before[1]
                continue
            folded += 1
            _erase_if_unused(producer)
    return folded


def own_zero_fills(root) -> int:
    """Gives each float contraction (on tensors) whose output is a `linalg.fill` its own
    copy of the fill right before it, where the fill is shared (CSE merges equal fills) or
    elsewhere: bufferization then fills the contraction's own buffer instead of filling one
    and copying it, and `ember-linalg-to-blas` folds the fill into beta = 0. Returns how
    many fills it cloned."""
    cloned, originals = 0, []
    for op in _products_on_tensors(root):
        fill = value_op(op.operands[2])
        if not isinstance(fill, ir.Operation) or fill.name != "linalg.fill":
            continue
        with ir.InsertionPoint(op):
            copy = fill.clone()
        op.operands[2] = copy.results[0]
        if fill not in originals:
            originals.append(fill)
        cloned += 1
    for fill in originals:
        _erase_if_unused(fill)
    return cloned


def _erase_if_unused(op: ir.Operation) -> None:
    if has_uses(op):
        return
    inputs = [value_op(v) for v in op.operands]
    op.erase()
    for producer in inputs:
        if isinstance(producer, ir.Operation) and producer.name == "tensor.empty":
            _erase_if_unused(producer)
