"""ember-gpu-mma-emulate: ember-gpu-mma's tensor-core launches as loops a CPU can run.

ember-gpu-mma puts `gpu.launch`es of warp-wide `gpu.subgroup_mma_*` ops into the CUDA
backend's mapped stage; no CPU lowering knows them. This pass rewrites each such launch
into the same computation on loops, so a lowering that runs the mapped stage on the CPU
(the cuda-emulated backend) checks its indexing (grid to tiles, K chunks, batches, leading
dimensions) numerically. The products are computed in the accumulator's type from the
inputs extended to it, one k after another (a tensor core sums in its own order).

Algorithm:
  1. Each `gpu.launch` holding `gpu.subgroup_mma_compute` (blocks of warps: 32 threads
     along x) becomes an `scf.parallel` over its grid and its warps (block ids and thread
     ids y, z its induction variables, thread id x 0: a warp-wide op runs once per warp),
     its body moved in.
  2. Each `!gpu.mma_matrix` value becomes a 16 x 16 buffer (`memref.alloc` at the start
     of the block's body, freed at its end): `subgroup_mma_load_matrix` copies the tile at
     its indices into it (rows `leadDimension` apart), `subgroup_mma_compute` copies C's
     and adds A·B in loops, `subgroup_mma_store_matrix` copies the buffer back.

Before:
    gpu.launch blocks(%bx, %by, %bz) in (%sx = %c3, %sy = %c2, %sz = %c1) threads(...) {
      %a = gpu.subgroup_mma_load_matrix %A[%r, %k] {leadDimension = 160 : index} ...
      ...
      gpu.terminator
    }
After:
    scf.parallel (%bx, %by, %bz, %ty, %tz) = (%c0, ...) to (%c3, %c2, %c1, %c1, %c1) ... {
      %ta = memref.alloc() : memref<16x16xf16>
      scf.for %i ... { scf.for %j ... { copy %A[%r + %i, %k + %j] to %ta[%i, %j] } }
      ...
    }
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, memref, scf

from ember.passes.base import Pass, Statistics

TILE = 16
MMA_OPS = ("gpu.subgroup_mma_load_matrix", "gpu.subgroup_mma_compute",
           "gpu.subgroup_mma_store_matrix")


def _index(n: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), n).result


def _square(body) -> None:
    """`body(i, j)` inside two scf.for loops over 0..16."""
    zero, top, one = _index(0), _index(TILE), _index(1)
    outer = scf.ForOp(zero, top, one)
    with ir.InsertionPoint(outer.body):
        inner = scf.ForOp(zero, top, one)
        with ir.InsertionPoint(inner.body):
            body(outer.induction_variable, inner.induction_variable)
            scf.YieldOp([])
        scf.YieldOp([])


def _element(value: ir.Value) -> ir.Type:
    """The element type of an `!gpu.mma_matrix<16x16xT, "...">`."""
    return ir.Type.parse(str(value.type).split("<", 1)[1].split("x")[2].split(",")[0])


def _tile_indices(op: ir.Operation, i: ir.Value, j: ir.Value) -> list[ir.Value]:
    """The buffer indices of element (i, j) of the tile at `op`'s indices: the last two
    advance by i and j (the buffer's rows are its leading dimension apart)."""
    indices = list(op.operands)[-ir.MemRefType(_buffer(op).type).rank:]
    return indices[:-2] + [arith.AddIOp(indices[-2], i).result,
                           arith.AddIOp(indices[-1], j).result]


def _buffer(op: ir.Operation) -> ir.Value:
    return op.operands[1] if op.name == "gpu.subgroup_mma_store_matrix" else op.operands[0]


def _emulate_op(op: ir.Operation, tiles: dict, body_start: ir.Block, ends: list) -> None:
    """Replaces one mma op by loops over 16 x 16 buffers (`tiles`: value -> buffer)."""
    if op.name == "gpu.subgroup_mma_store_matrix":
        tile = tiles[op.operands[0]]
        _square(lambda i, j: memref.StoreOp(memref.LoadOp(tile, [i, j]).result, op.operands[1],
                                            _tile_indices(op, i, j)))
        return
    element = _element(op.results[0])
    with ir.InsertionPoint.at_block_begin(body_start):
        tile = memref.AllocOp(ir.MemRefType.get([TILE, TILE], element), [], []).result
    ends.append(tile)
    tiles[op.results[0]] = tile
    if op.name == "gpu.subgroup_mma_load_matrix":
        _square(lambda i, j: memref.StoreOp(
            memref.LoadOp(op.operands[0], _tile_indices(op, i, j)).result, tile, [i, j]))
        return
    a, b, c = (tiles[v] for v in op.operands)

    def widen(v: ir.Value) -> ir.Value:
        return v if v.type == element else arith.ExtFOp(element, v).result

    def entry(i, j):
        loop = scf.ForOp(_index(0), _index(TILE), _index(1),
                         [memref.LoadOp(c, [i, j]).result])
        with ir.InsertionPoint(loop.body):
            k, acc = loop.induction_variable, loop.inner_iter_args[0]
            product = arith.MulFOp(widen(memref.LoadOp(a, [i, k]).result),
                                   widen(memref.LoadOp(b, [k, j]).result)).result
            scf.YieldOp([arith.AddFOp(acc, product).result])
        memref.StoreOp(loop.results[0], tile, [i, j])
    _square(entry)


def emulate(launch: ir.Operation) -> None:
    """Replaces `launch` by an scf.parallel over its grid (module docstring)."""
    grid, block_sizes = list(launch.operands)[0:3], list(launch.operands)[3:6]
    body = launch.regions[0].blocks[0]
    args = list(body.arguments)
    with ir.InsertionPoint(launch), launch.location:
        zero, one = _index(0), _index(1)
        upper = grid + block_sizes[1:]  # one iteration per warp: the lanes run as one
        loop = scf.ParallelOp([], [zero] * 5, upper, [one] * 5, [])
        inner = loop.region.blocks.append(*([ir.IndexType.get()] * 5))
        with ir.InsertionPoint(inner):
            terminator = scf.ReduceOp([], 0)
    ivs = list(inner.arguments)
    for arg, value in zip(args, ivs[:3] + [zero] + ivs[3:] + grid + block_sizes):
        arg.replace_all_uses_with(value)
    for op in list(body.operations):
        op = op.operation
        if op.name == "gpu.terminator":
            continue
        op.move_before(terminator.operation)
    mma: list = []
    loop.operation.walk(lambda o: (mma.append(o.operation) if o.name in MMA_OPS else None)
                        or ir.WalkResult.ADVANCE)
    tiles: dict = {}
    ends: list = []
    for op in mma:
        with ir.InsertionPoint(op), op.location:
            _emulate_op(op, tiles, inner, ends)
    for op in reversed(mma):
        op.erase()
    with ir.InsertionPoint(terminator.operation), launch.location:
        for tile in ends:
            memref.DeallocOp(tile)
    launch.erase()


@dataclasses.dataclass(frozen=True)
class GpuMmaEmulatePass(Pass):
    name: ClassVar[str] = "ember-gpu-mma-emulate"
    per_function: ClassVar[bool] = True

    def run(self, module: ir.Module, stats: Statistics) -> None:
        root = module.operation if isinstance(module, ir.Module) else module
        launches: list = []

        def visit(op):
            if op.name == "gpu.launch":
                found: list = []
                op.operation.walk(lambda o: (found.append(o) if o.name ==
                                             "gpu.subgroup_mma_compute" else None)
                                  or ir.WalkResult.ADVANCE)
                warp = ir.IntegerAttr(op.operands[3].owner.attributes["value"]).value \
                    if len(op.operands) == 6 and isinstance(op.operands[3].owner, ir.OpView) \
                    and op.operands[3].owner.name == "arith.constant" else None
                if found and warp == 32:  # warps in x; no async tokens, no dynamic shared
                    launches.append(op.operation)
            return ir.WalkResult.ADVANCE
        root.walk(visit)
        for launch in launches:
            emulate(launch)
            stats.add("launches")
