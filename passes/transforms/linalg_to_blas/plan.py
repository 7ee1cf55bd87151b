"""What `ember-linalg-to-blas` turns into GEMM calls: recognising float contractions
(`linalg.matmul`, `batch_matmul`, and the `linalg.generic` `out += a * b` with one reduction
dim), on tensors or memrefs, and planning each as one GEMM, or a nest of loops over batch
dims around one, from its buffers' strides.
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence

from mlir import ir

# The element types a GEMM call takes: sgemm and dgemm.
ELEMENTS = ("f32", "f64")


@dataclasses.dataclass
class Contraction:
    """out[...] += a[...] * b[...] over reduction dims `k` (one, or several that `plan` merges
    when they are contiguous in both operands: a flatten fused into a product); `maps[i][j]`
    is the loop dim
    indexing dim j of operand i (a, b, out), or None for a constant 0 (a broadcast size-1
    dim)."""
    op: ir.Operation
    maps: list[list[Optional[int]]]
    k: tuple[int, ...]
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


def value_op(v: ir.Value):
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


def indexing_maps(op: ir.Operation) -> Optional[ir.ArrayAttr]:
    if "indexing_maps" in op.attributes:
        return ir.ArrayAttr(op.attributes["indexing_maps"])
    if op.name in _DEFAULT_MAPS:
        return ir.ArrayAttr(ir.Attribute.parse(_DEFAULT_MAPS[op.name]))
    return None


def contraction(op: ir.Operation) -> Optional[Contraction]:
    """The contraction `op` computes, if it is a float32/float64 one this module handles."""
    if op.name not in ("linalg.matmul", "linalg.batch_matmul", "linalg.generic"):
        return None
    if len(op.operands) != 3 or indexing_maps(op) is None:
        return None
    types = [v.type for v in op.operands]
    if not all(isinstance(t, (ir.RankedTensorType, ir.MemRefType)) for t in types):
        return None
    shaped = [ir.ShapedType(t) for t in types]
    element = str(shaped[0].element_type)
    if element not in ELEMENTS or any(str(s.element_type) != element for s in shaped):
        return None
    if not all(s.has_static_shape for s in shaped):
        return None
    maps = [ir.AffineMapAttr(a).value for a in indexing_maps(op)]
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
    if not reduction:
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
    return Contraction(op, dims, tuple(reduction), extents, element)


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


def _merged_reduction(dims: list[tuple]) -> Optional[tuple]:
    """One reduction dim (extent, sa, sb) for reduction dims contiguous in both operands
    (a[..., h, w, c] against b[h, w, c, ...]: k = h * w * c), or None if they are not."""
    dims = [d for d in dims if d[0] != 1]
    while len(dims) > 1:
        pair = next(((i, j) for i, outer in enumerate(dims) for j, inner in enumerate(dims)
                     if i != j and outer[1] == inner[1] * inner[0] and
                     outer[2] == inner[2] * inner[0]), None)
        if pair is None:
            return None
        outer, inner = dims[pair[0]], dims[pair[1]]
        dims = [d for t, d in enumerate(dims) if t not in pair] + \
            [(outer[0] * inner[0], inner[1], inner[2])]
    return dims[0] if dims else (1, 1, 1)


def plan(extents: Sequence[int], k, strides_a: Sequence[int], strides_b: Sequence[int],
         strides_c: Sequence[int]) -> Optional[Gemm]:
    """The GEMM computing c[p] += sum_k a[p, k] * b[p, k] over loop dims with `extents`
    (`k`: the reduction dim, or several, merged when contiguous in both operands), the
    operands' element strides per loop dim (0 where an operand does not depend on it), or
    None if no GEMM with unit-stride rows expresses it (or it is empty)."""
    ks = (k,) if isinstance(k, int) else tuple(k)
    if any(e == 0 for e in extents):
        return None
    dims = [(extents[d], strides_a[d], strides_b[d], strides_c[d])
            for d in range(len(extents)) if d not in ks and extents[d] != 1]
    if any(d[3] == 0 for d in dims):
        return None
    dims = _merged(dims)
    reduction = _merged_reduction([(extents[d], strides_a[d], strides_b[d]) for d in ks])
    if reduction is None:
        return None
    big_k, ka, kb = reduction if reduction[0] > 1 else (reduction[0], 1, 1)
    for swap in (False, True):
        gemm = _orient(dims, big_k, ka, kb, swap)
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
