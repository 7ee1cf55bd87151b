"""ember-gpu-map: maps every loop nest of a bufferized function onto GPU blocks × threads.

Replaces upstream scf-parallel-loop-tiling + gpu-map-parallel-loops, which tile every
dim by one list of sizes and map dims in order (the outermost to thread_x: uncoalesced),
with a choice per loop nest. Runs after convert-linalg-to-parallel-loops; nests that
already carry a `mapping` (ember-gpu-map-reductions, ember-gpu-tile-matmul) are left alone.

Algorithm:
  0. (`vectorize`) An elementwise nest whose innermost dim is contiguous, f32 or i32 and
     a known multiple of 4 long handles 4 elements per iteration, as `vector<4xT>`
     loads and stores (PTX ld.global.v4; gpu_map_vector.py says when exactly).
  1. Each outermost `scf.parallel` without a mapping, of n dims with trip counts c_i:
     the innermost dim (contiguous in memory) is tiled by `threads-x` threads (by
     `threads-1d` when n = 1) mapped to thread_x and block_x, dim n-2 by `threads-y` to
     thread_y and block_y, the dims before folded into block_z (delinearised in the
     kernel). A known inner dim shorter than `threads-x` gets the power of two above it
     along x and the rest of the block's threads along y (3 columns: 4 × 64), a known
     dim n-2 shorter than that the power of two above it. Index i = block * tile +
     thread; ragged edges are guarded by one `scf.if` (i < c for each tiled dim whose c
     is not a known multiple of its tile), never by min/max bounds
     (convert-parallel-loops-to-gpu needs constant thread bounds). A grid dim larger
     than the launch allows (2^31-1 in x, 65535 in y and z), or of unknown size there,
     gets min(count, limit) blocks and a grid-stride `scf.for` in each thread.
     A loop whose body holds a reducing `scf.parallel` (a parallel reduction already,
     not from linalg) is a block per outer iteration, the inner loop its threads
     (gpu_map_nested.py).
  2. What is left outside mapped loops and touches memory (loads, stores, copies, linalg
     ops, loops and ifs over them) would run on the host: each run of such ops becomes
     the body of a 1-block, 1-thread `scf.parallel` (serial on the GPU, correct). Loops
     and ifs that contain launches stay on the host (their bodies are mapped the same
     way). A load whose value the host needs (a loop bound, an if or while condition)
     stays on the host: Ember's device buffers are managed memory, readable there after
     the launches before it have synchronised.

Before:
    scf.parallel (%i, %j) = (%c0, %c0) to (%c3, %c100) step (%c1, %c1) { body(%i, %j) }
After:
    scf.parallel (%bx, %by) = (%c0, %c0) to (%c4, %c1) step (%c1, %c1) {
      scf.parallel (%tx, %ty) = (%c0, %c0) to (%c32, %c8) step (%c1, %c1) {
        %j = %bx * 32 + %tx ; %i = %by * 8 + %ty
        scf.if (%j < 100 and %i < 3) { body(%i, %j) }
      } {mapping = [thread_x, thread_y]}
    } {mapping = [block_x, block_y]}
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir

from ember.passes.base import Pass, Statistics
from ember.passes.pipeline_syntax import PipelineError
from ember.passes.ir_utils import functions
from ember.passes.transforms.gpu_map_common import (GRID_LIMIT, Index, index_type,
                                                     is_mapped, op, parallel, when_nonempty)
from ember.passes.transforms.gpu_map_leftovers import serialize_leftovers
from ember.passes.transforms.gpu_map_nested import map_nested, nested_reduction
from ember.passes.transforms.gpu_map_vector import vectorize

@dataclasses.dataclass(frozen=True)
class GpuMapPass(Pass):
    name: ClassVar[str] = "ember-gpu-map"
    per_function: ClassVar[bool] = True
    threads_1d: int = 256  # threads per block of a 1-D loop
    threads_x: int = 32  # of a loop of 2 or more dims: along the innermost dim
    threads_y: int = 8  # along the next one
    vectorize: bool = True  # 4 contiguous elements per thread where plainly right

    def __post_init__(self):
        if min(self.threads_1d, self.threads_x, self.threads_y) < 1 or \
                self.threads_1d > 1024 or self.threads_x * self.threads_y > 1024:
            raise PipelineError(
                f"ember-gpu-map: threads-1d={self.threads_1d}, threads-x={self.threads_x}, "
                f"threads-y={self.threads_y}: each at least 1, and at most 1024 threads "
                "per block (threads-1d, threads-x * threads-y)")

    def run(self, module: ir.Module, stats: Statistics) -> None:
        with ir.Location.unknown():
            for fn in functions(module):
                for loop in _outermost_parallels(fn):
                    nested = nested_reduction(loop)
                    if nested is not None:  # a parallel reduction already
                        map_nested(loop, *nested, self.threads_1d)
                        stats.add("nested-reductions")
                        continue
                    if self.vectorize and vectorize(loop):
                        stats.add("vectorized-loops")
                    self.map_loop(loop)
                    stats.add("mapped-loops")
                for block in fn.regions[0].blocks:
                    stats.add("serial-kernels", serialize_leftovers(block))

    def map_loop(self, loop: ir.Operation) -> None:
        n = len(loop.regions[0].blocks[0].arguments)
        lowers, uppers, steps = (list(loop.operands[k * n:(k + 1) * n]) for k in range(3))
        ix = Index()
        with ir.InsertionPoint(loop):
            counts = [ix.trip_count(lo, up, st) for lo, up, st in zip(lowers, uppers, steps)]
            empty = any(ix.known(c) is not None and ix.known(c) <= 0 for c in counts)
            here = None if empty else when_nonempty(ix, counts) or ir.InsertionPoint(loop)
        if empty:
            loop.erase()  # no iteration: nothing to launch
            return
        with here:
            tiles = [self.threads_1d] if n == 1 else self._tiles(ix.known(counts[-1]),
                                                                  ix.known(counts[-2]))
            tiled = [n - 1 - k for k in range(len(tiles))]  # loop dims along x, y
            blocks = [ix.ceildiv(counts[d], t) for d, t in zip(tiled, tiles)]
            outer = counts[:max(n - 2, 0)]
            if outer:
                total = 1
                for c in outer:
                    total = ix.mul(total, c)
                blocks.append(total)
            names = ["block_x", "block_y", "block_z"][:len(blocks)]
            grids = [b if (ix.known(b) is not None and ix.known(b) <= GRID_LIMIT[p])
                     else ix.min(b, GRID_LIMIT[p]) for b, p in zip(blocks, names)]
            grid_loop, grid_body = parallel(ix, grids, names)
        with ir.InsertionPoint.at_block_begin(grid_body):
            thread_loop, thread_body = parallel(ix, tiles, ["thread_x", "thread_y"][:len(tiles)])
        at = ir.InsertionPoint(thread_body.operations[0])  # before its scf.reduce
        block_ids = list(grid_body.arguments)
        for k, (b, g) in enumerate(zip(blocks, grids)):
            if b is not g:  # grid-stride: blocks k, k + grid, ... below b
                with at:
                    stride = op("scf.for", [block_ids[k], ix.value(b), ix.value(g)], [],
                                regions=1)
                body = stride.regions[0].blocks.append(index_type())
                with ir.InsertionPoint(body):
                    yield_op = op("scf.yield", [], [])
                block_ids[k] = body.arguments[0]
                at = ir.InsertionPoint(yield_op)
        with at:
            index, guard = [None] * n, None
            for k, (d, t) in enumerate(zip(tiled, tiles)):
                index[d] = ix.add(ix.mul(block_ids[k], t), thread_body.arguments[k])
                c = ix.known(counts[d])
                if c is None or c % t:
                    guard = ix.both(guard, ix.less(index[d], counts[d]))
            if guard is not None:
                branch = op("scf.if", [guard], [], regions=2)
                then = branch.regions[0].blocks.append()
                with ir.InsertionPoint(then):
                    op("scf.yield", [], [])
                at = ir.InsertionPoint(then.operations[0])
        with at:
            if outer:
                index[:len(outer)] = ix.delinearize(block_ids[len(tiles)], outer)
            ivs = [ix.add(lo, ix.mul(i, st)) for lo, i, st in zip(lowers, index, steps)]
            ivs = [ix.value(v) for v in ivs]
        old = loop.regions[0].blocks[0]
        for operation in list(old.operations)[:-1]:
            operation.move_before(at.ref_operation)
        for arg, iv in zip(old.arguments, ivs):
            arg.replace_all_uses_with(iv)
        loop.erase()


    def _tiles(self, columns: int | None, rows: int | None) -> list[int]:
        """Threads along x and y for a nest of `columns` × `rows` (None: unknown): the
        options' sizes, x narrowed to a power of two just above a short known inner dim
        and y widened to keep the block's threads, then y narrowed the same way."""
        x, y = self.threads_x, self.threads_y
        if columns is not None and 0 < columns < x:
            x = 1 << (columns - 1).bit_length()
            y = self.threads_x * self.threads_y // x
        if rows is not None and 0 < rows < y:
            y = 1 << (rows - 1).bit_length()
        return [x, y]


def _outermost_parallels(fn: ir.Operation) -> list[ir.Operation]:
    found = []

    def visit(o):
        o = o.operation
        if o.name == "scf.parallel" or is_mapped(o):
            if not is_mapped(o) and not o.results:
                found.append(o)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE
    fn.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found
