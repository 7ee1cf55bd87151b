"""GEMM calls for `linalg.matmul`s whose sizes are known only at run time (an AOT library's
`?` dims: `x[?, 784] @ w[784, 256]`).

`plan` needs static extents and strides (it merges dims and checks leading dimensions at
compile time); a row-major matmul of buffers with the identity layout needs neither: m, n
and k are the buffers' run-time dims and each leading dimension is its row length. Such a
matmul (either operand transposed by its indexing maps, as ember-prepare-blas folds
transposes) becomes one call with those sizes read by `memref.dim`, made when the product
has `min-macs` multiply-adds or more, as for static sizes; smaller ones run the loops
(the matmul, kept in the other branch), so a size gets the code it would get if static.

Before:
    linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x256xf32>)
                  outs(%c : memref<?x256xf32>)
After:
    %m = memref.dim %c, %c0 : memref<?x256xf32>     (as i64; n, k and the lds likewise)
    scf.if %large {                                 (m * n * k >= min-macs)
      call @ember_sgemm(%c101_i32, %c111_i32, %c111_i32, %m, %c256_i64, %c64_i64, %cst_1,
          %pa, %c64_i64, %pb, %c256_i64, %beta, %pc, %c256_i64) : (...) -> ()
    } else {
      linalg.matmul ins(%a, %b : ...) outs(%c : memref<?x256xf32>)
    }
"""

from __future__ import annotations

from typing import Optional

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, scf

from ember.passes.transforms.linalg_to_blas.emit import NO_TRANS, ROW_MAJOR, TRANS
from ember.passes.transforms.linalg_to_blas.plan import ELEMENTS, _map_dims, indexing_maps


def dynamic_matmul(op: ir.Operation) -> Optional[tuple[str, bool, bool]]:
    """(element, trans_a, trans_b) if `op` is a 2-D float matmul on identity-layout memrefs
    with a dynamic size, which `plan` cannot take; else None."""
    if op.name != "linalg.matmul" or len(op.operands) != 3:
        return None
    types = [v.type for v in op.operands]
    if not all(isinstance(t, ir.MemRefType) for t in types):
        return None
    shaped = [ir.MemRefType(t) for t in types]
    element = str(shaped[0].element_type)
    if element not in ELEMENTS or any(str(s.element_type) != element for s in shaped) or \
            any(s.rank != 2 or not _identity(s) for s in shaped) or \
            all(s.has_static_shape for s in shaped):
        return None
    maps = indexing_maps(op)
    dims = [_map_dims(ir.AffineMapAttr(a).value) for a in maps] if maps else None
    if dims is None or dims[2] != [0, 1]:
        return None
    a, b = dims[0], dims[1]
    if a not in ([0, 2], [2, 0]) or b not in ([2, 1], [1, 2]):
        return None
    return element, a == [2, 0], b == [1, 2]


def _identity(t: ir.MemRefType) -> bool:
    try:
        return ir.AffineMapAttr(t.layout).value.is_permutation and \
            ir.AffineMapAttr(t.layout).value == ir.AffineMap.get_identity(t.rank)
    except (ValueError, TypeError):
        return False


def emit_dynamic(op: ir.Operation, symbol: str, element: str, trans_a: bool, trans_b: bool,
                 fill: Optional[ir.Operation], min_macs: int) -> None:
    """Replaces matmul `op` (and the zero `fill` of its output before it, if any: the call
    then has beta = 0) by a call of `symbol` with its run-time sizes, or the loops for
    fewer than `min_macs` multiply-adds."""
    i32, i64, index = (ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64),
                       ir.IndexType.get())
    ftype = ir.F32Type.get() if element == "f32" else ir.F64Type.get()
    ptr = ir.Type.parse("!llvm.ptr")
    a, b, c = op.operands
    with ir.InsertionPoint(op), op.location:
        def dim(value, k):
            size = memref.DimOp(value, arith.ConstantOp(index, k).result).result
            return arith.IndexCastOp(i64, size).result

        def row(value):  # the leading dimension: the row length, at least 1
            return arith.MaxSIOp(dim(value, 1), arith.ConstantOp(i64, 1).result).result

        def pointer(value):
            base = memref.ExtractAlignedPointerAsIndexOp(value).result
            return llvm.IntToPtrOp(ptr, arith.IndexCastOp(i64, base).result).result
        m, n = dim(c, 0), dim(c, 1)
        k = dim(a, 0) if trans_a else dim(a, 1)
        macs = arith.MulIOp(arith.MulIOp(m, n).result, k).result
        large = arith.CmpIOp(arith.CmpIPredicate.sge, macs,
                             arith.ConstantOp(i64, min_macs).result).result
        branch = scf.IfOp(large, [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            flags = [arith.ConstantOp(i32, v).result for v in
                     (ROW_MAJOR, TRANS if trans_a else NO_TRANS,
                      TRANS if trans_b else NO_TRANS)]
            one = arith.ConstantOp(ftype, 1.0).result
            beta = arith.ConstantOp(ftype, 0.0 if fill is not None else 1.0).result
            func.CallOp([], symbol, flags + [m, n, k, one, pointer(a), row(a), pointer(b),
                                             row(b), beta, pointer(c), row(c)])
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            if fill is not None:
                fill.operation.clone()
            op.operation.clone()
            scf.YieldOp([])
    op.erase()
    if fill is not None:
        fill.erase()
