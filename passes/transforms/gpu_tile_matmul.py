"""ember-gpu-tile-matmul: matrix products on memrefs as register-tiled `scf.parallel` nests.

`convert-linalg-to-parallel-loops` gives a product one thread per output element, each
reading a row of A and a column of B: every operand element is loaded M or N times. Here
each iteration of the parallel loop (one GPU thread once the CUDA backend's mapped stage
tiles the loop into blocks × threads) computes a `tile-m` × `tile-n` register tile of the
output, so each loaded element of A serves `tile-n` multiply-adds and each of B `tile-m`:
a block of 8 × 32 threads computes a 32 × 128 tile of C with the default 4 × 4.

Handled: `linalg.matmul`, `linalg.batch_matmul` and the `linalg.generic` products Ember's
lowering gives (broadcast batch dims, conv-as-GEMM: any affine indexing of the two inputs,
an output indexed by a permutation of the parallel dims, one or more reduction dims, a
body yielding `out + f(a, b)` with a multiplication), on statically shaped memrefs of any
element type (mixed bf16/f16 → f32 products extend as linalg's body does).

Algorithm:
  1. Parallel dims are the output's; the last two are m and n (rows and columns of the
     tile), the others batch dims. Reduction dims run in their loop order.
  2. One `scf.parallel` over (batch..., P = ceil(M/tm), Q = ceil(N/tn)); iteration
     (.., p, q) owns rows p + i*P (i < tm) and columns q + j*Q (j < tn): neighbouring
     iterations (threads) read neighbouring columns of B and write neighbouring columns
     of C, coalesced. A product one tile covers gets 1 × 1 tiles instead: a
     one-iteration loop would be folded into the host code.
  3. Ragged edges: where a row (column) of the tile can pass M-1 (N-1) - only when
     (i+1)*P > M - its index is clamped to M-1 for the loads (always in bounds) and its
     accumulators are stored only when in range, so results are exact for any M, N, K.
  4. The accumulators start from the output's old value (linalg accumulates into its
     init) and are carried through `scf.for` loops over the reduction dims, in linalg's
     order; the body is the linalg op's own, cloned, so the arithmetic is unchanged.
  5. An operand element that does not depend on n (A of a product) is loaded once per
     row, one that does not depend on m (B) once per column.

No GPU-only op is emitted: the nest runs on the CPU as it is (the cuda-emulated backend).

Before:
    linalg.matmul ins(%a, %b : memref<70x33xf32>, memref<33x50xf32>)
                  outs(%c : memref<70x50xf32>)
After:
    scf.parallel (%p, %q) = (%c0, %c0) to (%c18, %c13) step (%c1, %c1) {
      ... rows %p, %p + 18, %p + 36, min(%p + 54, 69); columns likewise (+13, 49) ...
      ... 16 loads of %c ...
      %acc:16 = scf.for %k = %c0 to %c33 step %c1 iter_args(...) -> (f32, ...) {
        4 loads of %a, 4 of %b, 16 × (arith.mulf, arith.addf)
      }
      memref.store %acc#0, %c[%p, %q]  ... (the last row's and column's under scf.if)
    }
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir
from mlir.dialects import affine, arith, memref, scf

from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import ops_named
from ember.passes.pipeline_syntax import PipelineError
from ember.passes.transforms.gpu_matmul_products import PRODUCTS, Product, product, used_dims


def _index(n: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), n).result


class _Constants:
    """Index constants made once each, at the start of `block` (dominating all of it)."""

    def __init__(self, block: ir.Block):
        self.block, self.made = block, {}

    def __call__(self, n: int) -> ir.Value:
        if n not in self.made:
            with ir.InsertionPoint.at_block_begin(self.block):
                self.made[n] = _index(n)
        return self.made[n]


def _parallel(upper: list[ir.Value]) -> tuple[scf.ParallelOp, list[ir.Value]]:
    zero, one = _index(0), _index(1)
    loop = scf.ParallelOp([], [zero] * len(upper), upper, [one] * len(upper), [])
    block = loop.region.blocks.append(*([ir.IndexType.get()] * len(upper)))
    return loop, list(block.arguments)


def _apply(m: ir.AffineMap, dims: list[ir.Value]) -> list[ir.Value]:
    """The indices `m` gives for loop-dim values `dims` (plain dims need no op)."""
    out = []
    for e in m.results:
        if isinstance(e, ir.AffineDimExpr):
            out.append(dims[e.position])
        else:
            single = ir.AffineMap.get(m.n_dims, 0, [e])
            out.append(affine.AffineApplyOp(single, dims).result)
    return out


def _clone_body(op: ir.Operation, a: ir.Value, b: ir.Value, acc: ir.Value) -> ir.Value:
    """`op`'s body applied to (a, b, acc) at the insertion point: the new accumulator."""
    block = list(op.regions[0].blocks)[0]
    mapping = {block.arguments[0]: a, block.arguments[1]: b, block.arguments[2]: acc}
    result = None
    for inner in block.operations:
        inner = inner.operation
        if inner.name == "linalg.yield":
            result = mapping.get(inner.operands[0], inner.operands[0])
            break
        new = inner.clone()
        for i, v in enumerate(inner.operands):
            if v in mapping:
                new.operands[i] = mapping[v]
        for old, fresh in zip(inner.results, new.results):
            mapping[old] = fresh
    return result


def tile(p: Product, tm: int, tn: int) -> None:
    """Replaces product `p` by the register-tiled nest (module docstring)."""
    op = p.op
    a, b, c = op.operands
    mdim, ndim = p.parallel[-2], p.parallel[-1]
    size_m, size_n = p.extents[mdim], p.extents[ndim]
    tm, tn = min(tm, size_m), min(tn, size_n)
    if len(p.parallel) == 2 and tm == size_m and tn == size_n:
        tm = tn = 1  # canonicalize would inline a one-iteration loop into the host code
    used_a, used_b = used_dims(p.maps[0]), used_dims(p.maps[1])
    with ir.InsertionPoint(op), op.location:
        upper = [_index(p.extents[d]) for d in p.parallel[:-2]]
        upper += [_index(-(-size_m // tm)), _index(-(-size_n // tn))]
        loop, ivs = _parallel(upper)
    with ir.InsertionPoint(loop.region.blocks[0]), op.location:
        index = _Constants(loop.region.blocks[0])
        count_m, count_n = -(-size_m // tm), -(-size_n // tn)
        last_m, last_n = index(size_m - 1), index(size_n - 1)
        # row i of the tile is p + i * count_m: it may pass M - 1 only if (i+1) count_m > M
        rows = [arith.AddIOp(ivs[-2], index(i * count_m)).result if i else ivs[-2]
                for i in range(tm)]
        cols = [arith.AddIOp(ivs[-1], index(j * count_n)).result if j else ivs[-1]
                for j in range(tn)]
        ragged_m = [(i + 1) * count_m > size_m for i in range(tm)]
        ragged_n = [(j + 1) * count_n > size_n for j in range(tn)]
        safe_rows = [arith.MinSIOp(r, last_m).result if ragged else r
                     for r, ragged in zip(rows, ragged_m)]
        safe_cols = [arith.MinSIOp(q, last_n).result if ragged else q
                     for q, ragged in zip(cols, ragged_n)]
        batch = dict(zip(p.parallel[:-2], ivs[:-2]))

        def out_index(i, j):
            dims = {**batch, mdim: safe_rows[i], ndim: safe_cols[j]}
            return [dims[d] for d in p.parallel]
        init = [memref.LoadOp(c, out_index(i, j)).result for i in range(tm) for j in range(tn)]
        accs = _reduce(p, init, batch, mdim, ndim, safe_rows, safe_cols, used_a, used_b,
                       index)
        for i in range(tm):
            for j in range(tn):
                checks = [arith.CmpIOp(arith.CmpIPredicate.ule, value, last).result
                          for value, last, ragged in ((rows[i], last_m, ragged_m[i]),
                                                      (cols[j], last_n, ragged_n[j]))
                          if ragged]
                if not checks:
                    memref.StoreOp(accs[i * tn + j], c, out_index(i, j))
                    continue
                ok = checks[0] if len(checks) == 1 else arith.AndIOp(*checks).result
                guard = scf.IfOp(ok)
                with ir.InsertionPoint(guard.then_block):
                    memref.StoreOp(accs[i * tn + j], c, out_index(i, j))
                    scf.YieldOp([])
        scf.ReduceOp([], 0)
    op.erase()


def _reduce(p, init, batch, mdim, ndim, rows, cols, used_a, used_b, index):
    """Nested scf.for over the reduction dims carrying the accumulators; their results."""
    tm, tn = len(rows), len(cols)
    a, b, _ = p.op.operands

    def level(k: int, accs: list[ir.Value], fixed: dict) -> list[ir.Value]:
        if k == len(p.reduction):
            loaded: dict = {}

            def load(which, buffer, used, i, j):
                key = (which, i if mdim in used else None, j if ndim in used else None)
                if key not in loaded:
                    dims = {**batch, **fixed, mdim: rows[i], ndim: cols[j]}
                    full = [dims[d] for d in range(len(p.extents))]
                    m = p.maps[0 if which == "a" else 1]
                    loaded[key] = memref.LoadOp(buffer, _apply(m, full)).result
                return loaded[key]
            return [_clone_body(p.op.operation, load("a", a, used_a, i, j),
                                load("b", b, used_b, i, j), accs[i * tn + j])
                    for i in range(tm) for j in range(tn)]
        dim = p.reduction[k]
        loop = scf.ForOp(index(0), index(p.extents[dim]), index(1), accs)
        with ir.InsertionPoint(loop.body):
            inner = level(k + 1, list(loop.inner_iter_args),
                          {**fixed, dim: loop.induction_variable})
            scf.YieldOp(inner)
        return list(loop.results)
    return level(0, init, {})


@dataclasses.dataclass(frozen=True)
class GpuTileMatmulPass(Pass):
    name: ClassVar[str] = "ember-gpu-tile-matmul"
    per_function: ClassVar[bool] = True
    tile_m: int = 4
    tile_n: int = 4

    def __post_init__(self):
        if not (1 <= self.tile_m <= 16 and 1 <= self.tile_n <= 16):
            raise PipelineError(f"options 'tile-m' and 'tile-n' of {self.name} must be 1..16 "
                                f"(a register tile per thread), got {self.tile_m} and "
                                f"{self.tile_n}")

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for op in ops_named(module, PRODUCTS):
            p = product(op)
            if p is None:  # a named product left to the generic mapping (dynamic shapes)
                stats.add("skipped", op.name != "linalg.generic")
                continue
            tile(p, self.tile_m, self.tile_n)
            stats.add("tiled")
