"""ember-linalg-to-blas: float matrix products on memrefs as calls of a CBLAS GEMM.

`convert-linalg-to-loops` turns `linalg.matmul` into a naive triple loop (about 1.6 s for a
256x784x1024x1024x10 MLP forward, 300x numpy); a tuned GEMM (packing, register blocking
per ISA, threads) is what a BLAS is. This pass rewrites each float32/float64 contraction -
`linalg.matmul`, `linalg.batch_matmul`, and the `linalg.generic` `out += a * b` with one
reduction dim that broadcast batch dims and fused reshapes become - whose buffers have
static strides into a call of the private declaration

    func.func private @ember_sgemm(i32 order, i32 trans_a, i32 trans_b, i64 m, i64 n,
        i64 k, f32 alpha, !llvm.ptr a, i64 lda, !llvm.ptr b, i64 ldb, f32 beta,
        !llvm.ptr c, i64 ldc)            (@ember_dgemm: the same with f64)

which is exactly the ILP64 CBLAS `cblas_sgemm` signature. The symbol names are Ember's own,
so the IR does not depend on which library provides them: the CPU backend binds them when
it JIT-compiles (backends/cpu/blas_library.py says which library, and how to link an AOT
object). Run `ember-prepare-blas` on tensors first: it folds transposes into the products
and gives each product its own zero fill, which this pass then turns into beta = 0.

Algorithm:
  1. Recognise each float contraction on memrefs (plan.contraction) and plan it as one
     GEMM, or a nest of loops over batch dims around one (plan.plan_contraction): dims
     contiguous in all three buffers merge, strides pick the transpose flags and leading
     dimensions, size-1 and broadcast (stride 0) dims are allowed.
  2. Skip products of fewer than `min-macs` multiply-adds per call (LLVM's vectorised
     loops are as fast there), dynamic strides and layouts no GEMM expresses. A 2-D
     matmul of run-time sizes on row-major buffers is one call of those sizes
     (dynamic.py).
  3. Emit the call (emit.py): row-major, alpha = 1, beta = 1 (linalg accumulates into its
     output), or beta = 0 when a `linalg.fill` of 0.0 into the output comes right before
     (the fill is erased); pointers are the aligned pointer plus the buffer's offset.
  4. Declare @ember_sgemm/@ember_dgemm once per module.

Before:
    linalg.matmul ins(%a, %b : memref<64x32xf32>, memref<32x48xf32>)
                  outs(%c : memref<64x48xf32>)
After:
    %pa = llvm.inttoptr %ia : i64 to !llvm.ptr          (likewise %pb, %pc)
    call @ember_sgemm(%c101_i32, %c111_i32, %c111_i32, %c64_i64, %c48_i64, %c32_i64,
        %cst_1, %pa, %c32_i64, %pb, %c48_i64, %cst_1, %pc, %c48_i64) : (...) -> ()
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Optional

from mlir import ir

from ember.passes.base import Pass, Statistics
from ember.passes.transforms.linalg_to_blas.dynamic import dynamic_matmul, emit_dynamic
from ember.passes.transforms.linalg_to_blas.emit import SYMBOLS, declare, emit
from ember.passes.transforms.linalg_to_blas.plan import (Contraction, Gemm, contraction, plan,
                                                          plan_contraction, value_op)

# GEMMs of fewer multiply-adds (m*n*k, per call) than this stay loops: LLVM unrolls and
# vectorises small static loops as fast as a call (32x32x32 runs as fast either way,
# 64x64x64 about ten times faster as a call, 64 batched 4x4x4 products faster as loops
# than as 64 calls; measured when this threshold was set).
MIN_MACS = 8192

__all__ = ["MIN_MACS", "SYMBOLS", "Contraction", "Gemm", "LinalgToBlasPass", "call_blas",
           "contraction", "plan", "plan_contraction"]


@dataclasses.dataclass(frozen=True)
class LinalgToBlasPass(Pass):
    name: ClassVar[str] = "ember-linalg-to-blas"
    min_macs: int = MIN_MACS

    def run(self, module: ir.Module, stats: Statistics) -> None:
        stats.add("calls", call_blas(module, self.min_macs))


def call_blas(module: ir.Module, min_macs: Optional[int] = None) -> int:
    """Replaces float contractions on memrefs by GEMM calls (see the module docstring);
    returns how many were replaced. `min_macs`: `MIN_MACS` unless given."""
    min_macs = MIN_MACS if min_macs is None else min_macs
    ops: list = []
    module.operation.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
    replaced = 0
    for op in ops:
        c = contraction(op)
        if c is None and (found := dynamic_matmul(op)) is not None:
            with ir.Location.unknown():
                emit_dynamic(op, declare(module, found[0]), *found, _zero_fill_before(op),
                             min_macs)
            replaced += 1
            continue
        if c is None or not isinstance(op.operands[2].type, ir.MemRefType):
            continue
        gemm = plan_contraction(c)
        if gemm is None or gemm.multiply_adds < min_macs:
            continue
        fill = _zero_fill_before(op) if not gemm.batch else None
        with ir.Location.unknown():
            emit(c, gemm, declare(module, c.element), beta=0.0 if fill else 1.0)
        if fill is not None:  # C = A B instead of C = 0; C += A B
            fill.erase()
        replaced += 1
    return replaced


def _zero_fill_before(op: ir.Operation) -> Optional[ir.Operation]:
    """The `linalg.fill` of 0.0 into `op`'s output buffer right before `op`, if any."""
    previous = None
    for candidate in op.block.operations:
        candidate = candidate.operation
        if candidate == op:
            break
        previous = candidate
    if previous is None or previous.name != "linalg.fill" or \
            previous.operands[1] != op.operands[2]:
        return None
    value = value_op(previous.operands[0])
    if not isinstance(value, ir.Operation) or value.name != "arith.constant":
        return None
    attr = value.attributes["value"]
    return previous if isinstance(attr, ir.FloatAttr) and attr.value == 0.0 else None
