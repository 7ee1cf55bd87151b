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

Finding the library: the shared objects this process has mapped (`/proc/self/maps`, where
numpy's import already put it), then the `numpy.libs` folder next to numpy; the first one
exporting an ILP64 pair (`scipy_cblas_sgemm64_`, or `cblas_sgemm64_` of a 64_-suffixed
OpenBLAS) wins. If none is found, or `EMBER_DISABLE_BLAS=1`, `available()` is false, the
options resolve to `blas=False` (which is part of every compile-cache key) and every
product keeps the loop lowering: no error.

OpenBLAS reads `OPENBLAS_NUM_THREADS`, `OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE` when numpy
loads it, so ember's products run with whatever kernel and thread count numpy got.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import glob
import os
from typing import Optional, Sequence

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, scf

from ember.passes.ir_utils import symbol_table

DISABLE_ENV = "EMBER_DISABLE_BLAS"
SYMBOLS = {"f32": "ember_sgemm", "f64": "ember_dgemm"}
# ILP64 CBLAS (sgemm, dgemm) names, in the order they are looked for.
CANDIDATES = (("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_"),
              ("cblas_sgemm64_", "cblas_dgemm64_"))
# GEMMs of fewer multiply-adds (m*n*k, per call) than this stay loops: LLVM unrolls and
# vectorises small static loops as fast as a call (measured here: 32x32x32 2.9 us either
# way including the call from Python, 64x64x64 78 us as loops and 6.8 us as a call, 64
# batched 4x4x4 products 3.3 us as loops and 5.4 us as 64 calls).
MIN_MACS = 8192
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112


# -- the library -------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Library:
    path: str
    names: tuple[str, str]       # the (sgemm, dgemm) symbols in the library
    addresses: tuple[int, int]


def _candidate_paths() -> list[str]:
    paths = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split(maxsplit=5)
                if len(fields) == 6 and "blas" in os.path.basename(fields[5].strip()).lower():
                    paths.append(fields[5].strip())
    except OSError:
        pass
    try:
        import numpy
        folder = os.path.dirname(os.path.dirname(os.path.abspath(numpy.__file__)))
        for sub in ("numpy.libs", os.path.join("numpy", ".libs")):
            paths += sorted(glob.glob(os.path.join(folder, sub, "*blas*.so*")))
    except ImportError:
        pass
    return list(dict.fromkeys(p for p in paths if os.path.isfile(p)))


@functools.lru_cache(maxsize=1)
def _find() -> Optional[Library]:
    for path in _candidate_paths():
        try:
            lib = ctypes.CDLL(path)  # already loaded by numpy: the same handle
        except OSError:
            continue
        for names in CANDIDATES:
            try:
                fns = [getattr(lib, n) for n in names]
            except AttributeError:
                continue
            return Library(path, names,
                           tuple(ctypes.cast(fn, ctypes.c_void_p).value for fn in fns))
    return None


def library() -> Optional[Library]:
    """The BLAS ember calls, or None (none found, or `EMBER_DISABLE_BLAS=1`)."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        return None
    return _find()


def available() -> bool:
    return library() is not None


_bound: set = set()


def bind() -> bool:
    """Makes `ember_sgemm`/`ember_dgemm` resolvable by the JIT (process-wide, idempotent);
    false if there is no library to bind them to."""
    lib = library()
    if lib is None:
        return False
    if lib.path not in _bound:
        import llvmlite.binding as llvm_binding
        for symbol, address in zip(SYMBOLS.values(), lib.addresses):
            llvm_binding.add_symbol(symbol, address)
        _bound.add(lib.path)
    return True


# -- recognising contractions ------------------------------------------------------------


@dataclasses.dataclass
class Contraction:
    """out[...] += a[...] * b[...] with one reduction dim `k`; `maps[i][j]` is the loop dim
    indexing dim j of operand i (a, b, out), or None for a constant 0 (a broadcast size-1
    dim)."""
    op: ir.Operation
    maps: list[list[Optional[int]]]
    k: int
    extents: list[int]
    element: str  # "f32" or "f64"


def _map_dims(m: ir.AffineMap) -> Optional[list[Optional[int]]]:
    dims: list[Optional[int]] = []
    for e in m.results:
        if isinstance(e, ir.AffineDimExpr):
            dims.append(e.position)
        elif isinstance(e, ir.AffineConstantExpr) and e.value == 0:
            dims.append(None)
        else:
            return None
    return dims


def _value_op(v: ir.Value):
    owner = v.owner
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _is_multiply_add(op: ir.Operation) -> bool:
    """The body is `yield out + a * b` (either operand order of each)."""
    blocks = list(op.regions[0].blocks)
    if len(blocks) != 1 or len(blocks[0].arguments) != 3:
        return False
    a, b, out = blocks[0].arguments
    ops = [o.operation for o in blocks[0].operations]
    if [o.name for o in ops] != ["arith.mulf", "arith.addf", "linalg.yield"]:
        return False
    mul, add, ret = ops
    return ({mul.operands[0], mul.operands[1]} == {a, b} and a != b and
            {add.operands[0], add.operands[1]} == {out, mul.results[0]} and
            len(ret.operands) == 1 and ret.operands[0] == add.results[0])


# The maps of named ops built without an `indexing_maps` attribute (the parser adds it).
_DEFAULT_MAPS = {
    "linalg.matmul": "[affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, "
                     "affine_map<(m, n, k) -> (m, n)>]",
    "linalg.batch_matmul": "[affine_map<(b, m, n, k) -> (b, m, k)>, "
                           "affine_map<(b, m, n, k) -> (b, k, n)>, "
                           "affine_map<(b, m, n, k) -> (b, m, n)>]",
}


def _indexing_maps(op: ir.Operation) -> Optional[ir.ArrayAttr]:
    if "indexing_maps" in op.attributes:
        return ir.ArrayAttr(op.attributes["indexing_maps"])
    if op.name in _DEFAULT_MAPS:
        return ir.ArrayAttr(ir.Attribute.parse(_DEFAULT_MAPS[op.name]))
    return None


def contraction(op: ir.Operation) -> Optional[Contraction]:
    """The contraction `op` computes, if it is a float32/float64 one this module handles."""
    if op.name not in ("linalg.matmul", "linalg.batch_matmul", "linalg.generic"):
        return None
    if len(op.operands) != 3 or _indexing_maps(op) is None:
        return None
    types = [v.type for v in op.operands]
    if not all(isinstance(t, (ir.RankedTensorType, ir.MemRefType)) for t in types):
        return None
    shaped = [ir.ShapedType(t) for t in types]
    element = str(shaped[0].element_type)
    if element not in SYMBOLS or any(str(s.element_type) != element for s in shaped):
        return None
    if not all(s.has_static_shape for s in shaped):
        return None
    maps = [ir.AffineMapAttr(a).value for a in _indexing_maps(op)]
    if len(maps) != 3 or any(m.n_symbols for m in maps):
        return None
    dims = [_map_dims(m) for m in maps]
    if any(d is None for d in dims):
        return None
    rank = maps[2].n_dims
    out = dims[2]
    if None in out or len(set(out)) != len(out):
        return None
    reduction = [d for d in range(rank) if d not in out]
    if len(reduction) != 1:
        return None
    for operand_dims, s in zip(dims, shaped):
        used = [d for d in operand_dims if d is not None]
        if len(set(used)) != len(used) or len(operand_dims) != s.rank:
            return None
    extents: list[Optional[int]] = [None] * rank
    for operand_dims, s in zip(dims, shaped):
        for j, d in enumerate(operand_dims):
            size = s.shape[j]
            if d is None:
                if size != 1:
                    return None
            elif extents[d] is None:
                extents[d] = size
            elif extents[d] != size:
                return None
    if None in extents:
        return None
    if op.name == "linalg.generic":
        iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
        want = ["reduction" if d in reduction else "parallel" for d in range(rank)]
        if [i.split("<")[-1].rstrip(">") for i in iterators] != want:
            return None
        if not _is_multiply_add(op):
            return None
    return Contraction(op, dims, reduction[0], extents, element)


# -- planning one GEMM -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Gemm:
    """C (+)= op(L) . op(R), row-major, where (L, R) is (a, b), or (b, a) when `swap` (then
    the call computes C^T = B^T A^T). `batch`: (extent, L stride, R stride, C stride) per
    loop around the call, in elements."""
    swap: bool
    trans_l: bool
    trans_r: bool
    m: int
    n: int
    k: int
    ldl: int
    ldr: int
    ldc: int
    batch: tuple[tuple[int, int, int, int], ...]

    @property
    def multiply_adds(self) -> int:
        """Per call (the batch loops make more calls)."""
        return self.m * self.n * self.k


def _merged(dims: list[tuple]) -> list[tuple]:
    """Merges loop dims (extent, sa, sb, sc) that are contiguous in all three buffers: the
    outer one's strides are the inner one's times its extent."""
    dims = list(dims)
    changed = True
    while changed:
        changed = False
        for i, outer in enumerate(dims):
            for j, inner in enumerate(dims):
                if i != j and all(outer[s] == inner[s] * inner[0] for s in (1, 2, 3)):
                    merged = (outer[0] * inner[0],) + inner[1:]
                    dims = [d for t, d in enumerate(dims) if t not in (i, j)] + [merged]
                    changed = True
                    break
            if changed:
                break
    return dims


def _orient(dims, big_k: int, kl: int, kr: int, swap: bool) -> Optional[Gemm]:
    """One GEMM with L = a (or b when `swap`): its N dim is the C-contiguous dim only R
    has, its M dim one only L has; the other dims loop."""
    if swap:
        dims = [(e, b, a, c) for e, a, b, c in dims]
        kl, kr = kr, kl
    n_dims = [d for d in dims if d[1] == 0 and d[2] != 0]
    n_dim = next((d for d in n_dims if d[3] == 1), None)
    if n_dims and n_dim is None:
        return None
    big_n = n_dim[0] if n_dim else 1
    m_dims = sorted((d for d in dims if d[1] != 0 and d[2] == 0), key=lambda d: -d[0])
    for m_dim in m_dims or [None]:
        big_m = m_dim[0] if m_dim else 1
        ldc = m_dim[3] if m_dim else max(1, big_n)
        if ldc < max(1, big_n):
            continue
        lm = m_dim[1] if m_dim else 0
        if big_k == 1 or kl == 1:  # L stored M x K
            trans_l, ldl = False, lm if big_m > 1 else max(1, big_k)
            ok_l = ldl >= max(1, big_k)
        else:  # L stored K x M
            trans_l, ldl = True, kl
            ok_l = (big_m == 1 or lm == 1) and ldl >= max(1, big_m)
        rn = n_dim[2] if n_dim else 0
        if big_n == 1 or rn == 1:  # R stored K x N
            trans_r, ldr = False, kr if big_k > 1 else max(1, big_n)
            ok_r = ldr >= max(1, big_n)
        else:  # R stored N x K
            trans_r, ldr = True, rn
            ok_r = (big_k == 1 or kr == 1) and ldr >= max(1, big_k)
        if not (ok_l and ok_r):
            continue
        batch = tuple(d for d in dims if d is not m_dim and d is not n_dim)
        return Gemm(swap, trans_l, trans_r, big_m, big_n, big_k, ldl, ldr, ldc, batch)
    return None


def plan(extents: Sequence[int], k: int, strides_a: Sequence[int], strides_b: Sequence[int],
         strides_c: Sequence[int]) -> Optional[Gemm]:
    """The GEMM computing c[p] += sum_k a[p, k] * b[p, k] over loop dims with `extents`, the
    operands' element strides per loop dim (0 where an operand does not depend on it), or
    None if no GEMM with unit-stride rows expresses it (or it is empty)."""
    if any(e == 0 for e in extents):
        return None
    dims = [(extents[d], strides_a[d], strides_b[d], strides_c[d])
            for d in range(len(extents)) if d != k and extents[d] != 1]
    if any(d[3] == 0 for d in dims):
        return None
    dims = _merged(dims)
    ka, kb = (strides_a[k], strides_b[k]) if extents[k] > 1 else (1, 1)
    for swap in (False, True):
        gemm = _orient(dims, extents[k], ka, kb, swap)
        if gemm is not None:
            return gemm
    return None


def _strides(t: ir.MemRefType) -> Optional[tuple[list[int], int]]:
    strides, offset = t.get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    if dynamic in strides:
        return None
    return strides, offset


def plan_contraction(c: Contraction) -> Optional[Gemm]:
    """`plan` for a contraction on memrefs (static strides needed)."""
    per_loop_dim = []
    for operand_dims, value in zip(c.maps, c.op.operands):
        layout = _strides(ir.MemRefType(value.type))
        if layout is None:
            return None
        s = [0] * len(c.extents)
        for j, d in enumerate(operand_dims):
            if d is not None:
                s[d] = layout[0][j]
        per_loop_dim.append(s)
    return plan(c.extents, c.k, *per_loop_dim)


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
            producer = _value_op(op.operands[i])
            if not isinstance(producer, ir.Operation) or producer.name != "linalg.transpose":
                continue
            perm = list(ir.DenseI64ArrayAttr(producer.attributes["permutation"]))
            maps = list(_indexing_maps(op))
            old = ir.AffineMapAttr(maps[i]).value
            results = [None] * len(perm)
            for j, p in enumerate(perm):
                results[p] = old.results[j]
            maps[i] = ir.AffineMapAttr.get(ir.AffineMap.get(old.n_dims, 0, results))
            before = (op.operands[i], _indexing_maps(op))
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
        fill = _value_op(op.operands[2])
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
    value = _value_op(previous.operands[0])
    if not isinstance(value, ir.Operation) or value.name != "arith.constant":
        return None
    attr = value.attributes["value"]
    return previous if isinstance(attr, ir.FloatAttr) and attr.value == 0.0 else None


def _erase_if_unused(op: ir.Operation) -> None:
    if any(True for r in op.results for _ in r.uses):
        return
    inputs = [_value_op(v) for v in op.operands]
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
