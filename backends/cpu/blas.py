"""Matrix products as calls of a well-kept BLAS: the OpenBLAS that numpy already loads.

Why a BLAS, and why this one: `convert-linalg-to-loops` turns `linalg.matmul` into a naive
triple loop (about 1.6 s for the 256x784x1024x1024x10 MLP forward here, 300x numpy). Tiling
and vectorising in MLIR to OpenBLAS's level (packing, register blocking per ISA, threads)
is a project of its own; numpy's wheels ship OpenBLAS (`numpy.libs/libscipy_openblas64_*`,
its kernels picked per CPU at load time, threaded, maintained by the OpenBLAS and
scipy-openblas projects) and every ember process has numpy loaded, so calling it costs no
new dependency and gives numpy's own speed.

What it does, in two rewrites run by `CpuBackend.make_bufferized` when `CpuOptions.blas`:

- `fold_transposes` (tensors, before bufferization): a `linalg.transpose` feeding an input
  of a float contraction is folded into that input's indexing map, so the BLAS call reads
  the untransposed buffer with a transpose flag instead of a copy being made first.
- `call_blas` (memrefs, after bufferization): each float32/float64 contraction -
  `linalg.matmul`, `linalg.batch_matmul`, and the `linalg.generic` `out += a * b` with one
  reduction dim that broadcast batch dims and fused reshapes become - whose buffers have
  static strides is planned as one GEMM, or a nest of `scf.for` over the batch dims around
  one (`plan`): dims that are contiguous in all three buffers merge (a batch folded into
  the rows), strides pick the transpose flags and leading dimensions, size-1 and broadcast
  (stride 0) dims are allowed. It becomes a call of the private declaration

      func.func private @ember_sgemm(i32 order, i32 trans_a, i32 trans_b, i64 m, i64 n,
          i64 k, f32 alpha, !llvm.ptr a, i64 lda, !llvm.ptr b, i64 ldb, f32 beta,
          !llvm.ptr c, i64 ldc)            (@ember_dgemm: the same with f64)

  with row-major order, alpha = 1, beta = 1 (linalg accumulates into its output), or
  beta = 0 when the output was filled with zeros right before (the fill is dropped:
  `own_zero_fills` first gives each product its own fill, where CSE had merged them, so
  that no buffer is filled once and copied), and pointers made from
  `memref.extract_aligned_pointer_as_index` plus the buffer's offset. This is exactly the
  ILP64 CBLAS `cblas_sgemm` signature. GEMMs of fewer than `MIN_MACS` multiply-adds,
  integer and half-float ones, dynamic strides and layouts no GEMM can express keep the
  loop lowering.

The symbol names are ember's own, so the generated code (and the compile cache) does not
depend on which library provides them: the JIT binds them with `llvmlite.binding.add_symbol`
to the library's `scipy_cblas_sgemm64_` / `scipy_cblas_dgemm64_` (jit.py calls `bind`
before it finalises any code). An AOT object (`ember-compile --emit=obj`) that multiplies
float matrices therefore needs them at link time: rename the references to an ILP64 CBLAS,
e.g. numpy's (checked here with gcc and a C driver):

    objcopy --redefine-sym ember_sgemm=scipy_cblas_sgemm64_ \
            --redefine-sym ember_dgemm=scipy_cblas_dgemm64_ f.o f_blas.o
    cc main.c f_blas.o -L.../numpy.libs -l:libscipy_openblas64_-<hash>.so

(or link a two-line C shim defining ember_sgemm/ember_dgemm). Compile with
`EMBER_DISABLE_BLAS=1` for an object with no external calls but malloc/free/memset.

Finding the library and binding the symbols is blas_library.py; recognising contractions and
planning their GEMMs is gemm_plan.py; this module rewrites the IR.

OpenBLAS reads `OPENBLAS_NUM_THREADS`, `OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE` when numpy
loads it, so ember's products run with whatever kernel and thread count numpy got.
"""

from __future__ import annotations

from typing import Optional

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, scf

from ember.backends.cpu.blas_library import (CANDIDATES, DISABLE_ENV, SYMBOLS, Library,
                                             _find, available, bind, library)
from ember.backends.cpu.gemm_plan import (Contraction, Gemm, contraction, indexing_maps, plan,
                                          plan_contraction, value_op)
from ember.passes.ir_utils import symbol_table

# GEMMs of fewer multiply-adds (m*n*k, per call) than this stay loops: LLVM unrolls and
# vectorises small static loops as fast as a call (32x32x32 runs as fast either way,
# 64x64x64 about ten times faster as a call, 64 batched 4x4x4 products faster as loops
# than as 64 calls; measured when this threshold was set).
MIN_MACS = 8192
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

# the library (blas_library.py) and the planning (gemm_plan.py), for the backend and tests
__all__ = ["CANDIDATES", "DISABLE_ENV", "MIN_MACS", "SYMBOLS", "Contraction", "Gemm", "Library",
           "_find", "available", "bind", "call_blas", "contraction", "fold_transposes",
           "library", "own_zero_fills", "plan", "plan_contraction"]


# -- rewriting ---------------------------------------------------------------------------


def _walk(module: ir.Module) -> list[ir.Operation]:
    ops: list = []
    module.operation.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
    return ops


def fold_transposes(module: ir.Module) -> int:
    """Folds `linalg.transpose`s feeding float contractions (on tensors) into the
    contraction's indexing maps; returns how many were folded."""
    folded = 0
    for op in _walk(module):
        c = contraction(op)
        if c is None or not isinstance(op.operands[2].type, ir.RankedTensorType):
            continue
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


def own_zero_fills(module: ir.Module) -> int:
    """Gives each float contraction (on tensors) whose output is a `linalg.fill` its own
    copy of the fill right before it, where the fill is shared (CSE merges equal fills) or
    elsewhere: bufferization then fills the contraction's own buffer instead of filling one
    and copying it, and `call_blas` folds the fill into beta = 0. Returns how many."""
    cloned, originals = 0, []
    for op in _walk(module):
        c = contraction(op)
        if c is None or not isinstance(op.operands[2].type, ir.RankedTensorType):
            continue
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


def _erase_if_unused(op: ir.Operation) -> None:
    if any(True for r in op.results for _ in r.uses):
        return
    inputs = [value_op(v) for v in op.operands]
    op.erase()
    for producer in inputs:
        if isinstance(producer, ir.Operation) and producer.name == "tensor.empty":
            _erase_if_unused(producer)


def _declaration(module: ir.Module, element: str) -> str:
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


def _emit(c: Contraction, gemm: Gemm, symbol: str, beta: float = 1.0) -> None:
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


def call_blas(module: ir.Module, min_macs: Optional[int] = None) -> int:
    """Replaces float contractions on memrefs by BLAS calls (see the module docstring);
    returns how many were replaced. `min_macs`: `MIN_MACS` unless given."""
    min_macs = MIN_MACS if min_macs is None else min_macs
    replaced = 0
    for op in _walk(module):
        c = contraction(op)
        if c is None or not isinstance(op.operands[2].type, ir.MemRefType):
            continue
        gemm = plan_contraction(c)
        if gemm is None or gemm.multiply_adds < min_macs:
            continue
        fill = _zero_fill_before(op) if not gemm.batch else None
        _emit(c, gemm, _declaration(module, c.element), beta=0.0 if fill else 1.0)
        if fill is not None:  # C = A B instead of C = 0; C += A B
            fill.erase()
        replaced += 1
    return replaced
