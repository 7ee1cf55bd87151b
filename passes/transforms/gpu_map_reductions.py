"""ember-gpu-map-reductions: a reducing `linalg.generic` whose body is one combiner becomes
a block per output element reducing in parallel over its threads.

convert-linalg-to-parallel-loops would give each output element one thread looping over
the whole reduction; this pass runs before it, on memrefs, and writes the nest itself.

Algorithm:
  1. Match a `linalg.generic` on memrefs with reduction iterators and one output whose
     body yields `combiner(out, v)` (or `(v, out)`), `out` used by nothing else, the
     combiner one of gpu_map_common.COMBINERS on f32, f64, i32 or i64 (what gpu.all_reduce
     lowers), every loop's size readable from an operand's shape, more than
     `min-reduction` reduced elements (or an unknown number). Anything else (argmax's two
     outputs, bool reductions, tiny reductions) is left to convert-linalg-to-parallel-loops
     and ember-gpu-map: a thread per output element, the reduction a loop in it.
  2. Write a block per output element (block_x over the kept dims, delinearised) holding
     a thread-mapped `scf.parallel` with `init`/`scf.reduce` (convert-parallel-loops-to-gpu
     makes it `gpu.all_reduce`: warp shuffles and shared memory). Each thread folds a
     strided share of the reduced elements (delinearised, the innermost dim fastest: loads
     coalesce) into a partial that starts at the combiner's identity, as gpu.all_reduce
     ignores the loop's init; the body is moved into that loop with `out` the partial.
  3. Combine the result with the output's old value (the reduction's init), loaded
     before the reduction, and store it (every thread stores the same value).

Before:
    linalg.generic {iterator_types = ["parallel", "reduction"]}
        ins(%a : memref<10x100xf32>) outs(%o : memref<10xf32>) { %s = arith.addf %out, %in }
After:
    scf.parallel (%m) = (%c0) to (%c10) step (%c1) {
      %old = memref.load %o[%m]
      %r = scf.parallel (%t) = (%c0) to (%c128) step (%c1) init (%neg0) -> f32 {
        %p = scf.for %k = %t to %c100 step %c128 iter_args(%acc = %neg0) -> f32 {
          %in = memref.load %a[%m, %k]; %s = arith.addf %acc, %in; scf.yield %s }
        scf.reduce(%p : f32) { arith.addf }
      } {mapping = [thread_x]}
      memref.store (arith.addf %old, %r), %o[%m]
    } {mapping = [block_x]}
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir

from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import functions
from ember.passes.transforms.gpu_map_common import (COMBINERS, GRID_LIMIT, Index, identity,
                                                     index_type, op, parallel,
                                                     reduce_terminator)

_TYPES = ("f32", "f64", "i32", "i64")


@dataclasses.dataclass(frozen=True)
class GpuMapReductionsPass(Pass):
    name: ClassVar[str] = "ember-gpu-map-reductions"
    per_function: ClassVar[bool] = True
    threads: int = 256  # threads per block (per output element), at most
    min_reduction: int = 16  # reductions of at most this many elements stay serial

    def __post_init__(self):
        if not 1 <= self.threads <= 1024 or self.min_reduction < 0:
            raise ValueError(f"ember-gpu-map-reductions: threads={self.threads}, min-reduction="
                             f"{self.min_reduction}: threads from 1 to 1024 (per block), "
                             "min-reduction at least 0")

    def run(self, module: ir.Module, stats: Statistics) -> None:
        with ir.Location.unknown():
            for fn in functions(module):
                generics = []
                fn.walk(lambda o: (generics.append(o.operation)
                                   if o.operation.name == "linalg.generic" else None)
                        or ir.WalkResult.ADVANCE)
                for generic in generics:
                    plan = self.match(generic)
                    if plan is not None:
                        self.rewrite(generic, *plan)
                        stats.add("parallel-reductions")

    def match(self, generic: ir.Operation):
        """(sizes, combiner op, its other operand) when `generic` is a reduction this pass
        writes, else None."""
        ins, outs = ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])
        iterators = [str(a) for a in ir.ArrayAttr(generic.attributes["iterator_types"])]
        if outs != 1 or generic.results or not any("reduction" in i for i in iterators) or \
                not all(isinstance(v.type, ir.MemRefType) for v in generic.operands):
            return None
        body = generic.regions[0].blocks[0]
        out = body.arguments[ins]
        if str(out.type) not in _TYPES:
            return None
        yielded = list(body.operations)[-1].operands[0]
        combiner = yielded.owner.operation if isinstance(yielded, ir.OpResult) else None
        if combiner is None or combiner.name not in COMBINERS or \
                len(list(out.uses)) != 1 or len(list(yielded.uses)) != 1 or \
                combiner.block != body or out not in list(combiner.operands):
            return None
        other = [v for v in combiner.operands if v != out]
        if len(other) != 1:
            return None
        sizes = self._loop_sizes(generic, len(iterators))
        if sizes is None:
            return None
        reduced = 1
        for s, it in zip(sizes, iterators):
            if "reduction" in it:
                reduced = reduced * s if isinstance(s, int) and isinstance(reduced, int) \
                    else None
        if reduced is not None and reduced <= self.min_reduction:
            return None
        outputs = 1
        for s, it in zip(sizes, iterators):
            if "reduction" not in it and isinstance(s, int):
                outputs *= s
        if outputs > GRID_LIMIT["block_x"]:
            return None  # more outputs than a grid's x has blocks: left to ember-gpu-map
        return sizes, iterators, combiner

    @staticmethod
    def _loop_sizes(generic: ir.Operation, loops: int):
        """Each loop's size: an int, or (operand, dim) to read with memref.dim."""
        maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(generic.attributes[
            "indexing_maps"])]
        sizes: list = [None] * loops
        for value, amap in zip(generic.operands, maps):
            shape = ir.MemRefType(value.type).shape
            for pos, expr in enumerate(amap.results):
                if isinstance(expr, ir.AffineDimExpr):
                    d = expr.position
                    if sizes[d] is None or not isinstance(sizes[d], int):
                        sizes[d] = shape[pos] if shape[pos] >= 0 else (value, pos)
        return None if any(s is None for s in sizes) else sizes

    def rewrite(self, generic: ir.Operation, sizes, iterators, combiner) -> None:
        ix = Index()
        body = generic.regions[0].blocks[0]
        ins = len(body.arguments) - 1
        maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(generic.attributes[
            "indexing_maps"])]
        element = body.arguments[ins].type
        output = generic.operands[ins]
        with ir.InsertionPoint(generic):
            sizes = [s if isinstance(s, int) else
                     op("memref.dim", [s[0], ix.value(s[1])], [index_type()]).result
                     for s in sizes]
            kept = [d for d, it in enumerate(iterators) if "reduction" not in it]
            reduced = [d for d, it in enumerate(iterators) if "reduction" in it]
            outputs, total = 1, 1
            for d in kept:
                outputs = ix.mul(outputs, sizes[d])
            for d in reduced:
                total = ix.mul(total, sizes[d])
            threads = self.threads
            if isinstance(total, int):
                threads = max(1, min(threads, -(-total // 32) * 32))  # whole warps
            block_loop, block_body = parallel(ix, [outputs], ["block_x"])
        ivs: list = [None] * len(iterators)
        with ir.InsertionPoint(block_body.operations[0]):
            for d, v in zip(kept, ix.delinearize(block_body.arguments[0],
                                                 [sizes[d] for d in kept])):
                ivs[d] = ix.value(v)
            out_index = self._indices(ix, maps[ins], ivs)
            old = op("memref.load", [output] + out_index, [element]).result
            start = identity(combiner.name, element)
            thread_loop, thread_body = parallel(ix, [threads], ["thread_x"], [start])
        with ir.InsertionPoint(thread_body):
            step = ix.value(threads)
            loop = op("scf.for", [thread_body.arguments[0], ix.value(total), step, start],
                      [element], regions=1)
            inner = loop.regions[0].blocks.append(index_type(), element)
        reduce_terminator(thread_body, [loop.result], combiner)
        with ir.InsertionPoint(inner):
            for d, v in zip(reduced, ix.delinearize(inner.arguments[0],
                                                    [sizes[d] for d in reduced])):
                ivs[d] = ix.value(v)
            loaded = []
            for k in range(ins):
                value = generic.operands[k]
                if isinstance(value.type, ir.MemRefType):
                    value = op("memref.load", [value] + self._indices(ix, maps[k], ivs),
                               [body.arguments[k].type]).result
                loaded.append(value)
            terminator = op("scf.yield", [combiner.result], [])
        for operation in list(body.operations)[:-1]:
            operation.move_before(terminator)
        for arg, value in zip(body.arguments, loaded + [inner.arguments[1]]):
            arg.replace_all_uses_with(value)
        self._replace_indices(inner, ivs)
        with ir.InsertionPoint(block_body.operations[len(block_body.operations) - 1]):
            attrs = {name: combiner.attributes[name] for name in combiner.attributes}
            new = op(combiner.name, [old, thread_loop.result], [element], attrs).result
            op("memref.store", [new, output] + out_index, [])
        generic.erase()

    @staticmethod
    def _indices(ix: Index, amap: ir.AffineMap, ivs: list) -> list:
        """The indices `amap` gives for loop indices `ivs` (affine.apply for compound
        expressions: lower-affine expands them)."""
        out = []
        for expr in amap.results:
            if isinstance(expr, ir.AffineDimExpr):
                out.append(ivs[expr.position])
            elif isinstance(expr, ir.AffineConstantExpr):
                out.append(ix.value(expr.value))
            else:
                single = ir.AffineMap.get(amap.n_dims, amap.n_symbols, [expr])
                out.append(op("affine.apply", ivs, [index_type()],
                              {"map": ir.AffineMapAttr.get(single)}).result)
        return out

    @staticmethod
    def _replace_indices(block: ir.Block, ivs: list) -> None:
        found = []
        for o in block.operations:
            o.operation.walk(lambda x: (found.append(x.operation)
                                        if x.operation.name == "linalg.index" else None)
                             or ir.WalkResult.ADVANCE)
        for index_op in found:
            d = ir.IntegerAttr(index_op.attributes["dim"]).value
            index_op.result.replace_all_uses_with(ivs[d])
            index_op.erase()
