"""Building the GEMM call `ember-linalg-to-blas` puts in place of a planned contraction."""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, scf

from ember.passes.ir_utils import symbol_table
from ember.passes.transforms.linalg_to_blas.plan import Contraction, Gemm

# The functions called, by element type: Ember's names for ILP64 cblas_sgemm/cblas_dgemm.
SYMBOLS = {"f32": "ember_sgemm", "f64": "ember_dgemm"}
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112


def declare(module: ir.Module, element: str) -> str:
    """Declares the GEMM of `element` (f32/f64) in `module` unless it is; returns its name."""
    name = SYMBOLS[element]
    if name in symbol_table(module):
        return name
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    f = ir.F32Type.get() if element == "f32" else ir.F64Type.get()
    ptr = ir.Type.parse("!llvm.ptr")
    ftype = ir.FunctionType.get([i32, i32, i32, i64, i64, i64, f, ptr, i64, ptr, i64, f,
                                 ptr, i64], [])
    with ir.InsertionPoint.at_block_begin(module.body):
        func.FuncOp(name, ftype, visibility="private")
    return name


def _index(n: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), n).result


def _address(value: ir.Value, size: int) -> ir.Value:
    """The address of `value`'s first element as an index: aligned pointer + offset."""
    t = ir.MemRefType(value.type)
    base = memref.ExtractAlignedPointerAsIndexOp(value).result
    _, offset = t.get_strides_and_offset()
    if offset == ir.ShapedType.get_dynamic_stride_or_offset():
        meta = memref.ExtractStridedMetadataOp(value)
        bytes_ = arith.MulIOp(meta.results[1], _index(size)).result
        return arith.AddIOp(base, bytes_).result
    return arith.AddIOp(base, _index(offset * size)).result if offset else base


def emit(c: Contraction, gemm: Gemm, symbol: str, beta: float = 1.0) -> None:
    """Replaces contraction `c` by a call of `symbol` computing C = A B + beta C, inside
    loops over `gemm.batch`."""
    op = c.op
    size = 4 if c.element == "f32" else 8
    i32, i64 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64)
    ftype = ir.F32Type.get() if c.element == "f32" else ir.F64Type.get()
    ptr = ir.Type.parse("!llvm.ptr")
    a, b, out = op.operands
    left, right = (b, a) if gemm.swap else (a, b)
    with ir.InsertionPoint(op), op.location:
        bases = [_address(v, size) for v in (left, right, out)]

        def i32c(n):
            return arith.ConstantOp(i32, n).result

        def i64c(n):
            return arith.ConstantOp(i64, n).result
        one = arith.ConstantOp(ftype, 1.0).result
        beta_value = one if beta == 1.0 else arith.ConstantOp(ftype, beta).result
        head = [i32c(ROW_MAJOR), i32c(TRANS if gemm.trans_l else NO_TRANS),
                i32c(TRANS if gemm.trans_r else NO_TRANS), i64c(gemm.m), i64c(gemm.n),
                i64c(gemm.k), one]
        lds = [i64c(gemm.ldl), i64c(gemm.ldr), i64c(gemm.ldc)]
        zero, step = _index(0), _index(1)

        def call(ivs):
            pointers = []
            for i, base in enumerate(bases):
                address = base
                for iv, dim in zip(ivs, gemm.batch):
                    if dim[1 + i]:
                        address = arith.AddIOp(address, arith.MulIOp(
                            iv, _index(dim[1 + i] * size)).result).result
                as_int = arith.IndexCastOp(i64, address).result
                pointers.append(llvm.IntToPtrOp(ptr, as_int).result)
            func.CallOp([], symbol, head + [pointers[0], lds[0], pointers[1], lds[1],
                                            beta_value, pointers[2], lds[2]])

        def nest(dims, ivs):
            if not dims:
                call(ivs)
                return
            loop = scf.ForOp(zero, _index(dims[0][0]), step)
            with ir.InsertionPoint(loop.body):
                nest(dims[1:], ivs + [loop.induction_variable])
                scf.YieldOp([])
        nest(list(gemm.batch), [])
    op.erase()
