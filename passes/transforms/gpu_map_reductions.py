"""ember-gpu-map-reductions: a reducing `linalg.generic` whose body is one combiner becomes
a block per output element reducing in parallel over its threads; any other reduction a
loop per output element, the outputs in parallel.

convert-linalg-to-parallel-loops puts each reduced dim where it is in the loop order (a
reduction over the outer dim becomes a host loop around a launch per step) and gives each
output element one thread looping over the whole reduction; this pass runs before it, on
memrefs, and writes the nests itself.

Algorithm:
  1. Match a `linalg.generic` on memrefs with reduction iterators and one output whose
     body yields `combiner(out, v)` (or `(v, out)`), `out` used by nothing else, the
     combiner one of gpu_map_common.COMBINERS on f32, f64, i32 or i64 (what gpu.all_reduce
     lowers), every loop's size readable from an operand's shape, more than
     `min-reduction` reduced elements (or an unknown number), and not a reduction over
     outer dims into 4096 outputs or more (there a thread per output reads coalesced).
     Any other reduction (argmax's two outputs, bool reductions, tiny reductions, matmul
     and convolution bodies) becomes an unmapped `scf.parallel` over the kept dims (for
     ember-gpu-map to map: a thread per output element) holding a `scf.for` nest over the
     reduced dims that carries the outputs' values (each loaded before, stored after);
     with no kept dim, just the nest (a 1 x 1 kernel).
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
from ember.passes.pipeline_syntax import PipelineError
from ember.passes.ir_utils import functions
from ember.passes.transforms.gpu_map_common import (COMBINERS, GRID_LIMIT, Index, identity,
                                                     index_type, op, parallel,
                                                     reduce_terminator, when_nonempty)
from ember.passes.transforms.gpu_map_loops import (indices, load_inputs, loop_sizes,
                                                    maps_of, materialize, move_body,
                                                    serial_reduction)

_TYPES = ("f32", "f64", "i32", "i64")
# A reduction over outer dims into this many outputs, or more, is better a thread per
# output: the innermost dim is kept, so a warp's loads are contiguous, and there are
# threads enough (a block per output would read each column alone, strided).
_MANY_OUTPUTS = 4096


@dataclasses.dataclass(frozen=True)
class GpuMapReductionsPass(Pass):
    name: ClassVar[str] = "ember-gpu-map-reductions"
    per_function: ClassVar[bool] = True
    threads: int = 256  # threads per block (per output element), at most
    min_reduction: int = 16  # reductions of at most this many elements stay serial

    def __post_init__(self):
        if not 1 <= self.threads <= 1024 or self.min_reduction < 0:
            raise PipelineError(f"ember-gpu-map-reductions: threads={self.threads}, min-reduction="
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
                    shape = _reduction(generic)
                    if shape is None:
                        continue
                    combiner = self.combiner(generic, *shape)
                    if combiner is not None:
                        self.rewrite(generic, *shape, combiner)
                        stats.add("parallel-reductions")
                    else:
                        serial_reduction(generic, *shape)
                        stats.add("serial-reductions")

    def combiner(self, generic: ir.Operation, sizes: list, iterators: list):
        """The combiner op when `generic` reduces in parallel (step 1), else None."""
        ins, outs = ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])
        body = generic.regions[0].blocks[0]
        out = body.arguments[ins]
        if outs != 1 or str(out.type) not in _TYPES:
            return None
        yielded = list(body.operations)[-1].operands[0]
        combiner = yielded.owner.operation if isinstance(yielded, ir.OpResult) else None
        if combiner is None or combiner.name not in COMBINERS or \
                len(list(out.uses)) != 1 or len(list(yielded.uses)) != 1 or \
                combiner.block != body or len(combiner.operands) != 2 or \
                out not in list(combiner.operands) or \
                combiner.operands[0] == combiner.operands[1]:
            return None
        reduced, outputs = 1, 1
        for s, it in zip(sizes, iterators):
            if "reduction" in it:
                reduced = reduced * s if isinstance(s, int) and reduced is not None else None
            elif isinstance(s, int):
                outputs *= s
        if reduced is not None and reduced <= self.min_reduction or \
                outputs > GRID_LIMIT["block_x"]:
            return None
        if outputs >= _MANY_OUTPUTS and "reduction" not in iterators[-1]:
            return None  # enough threads already, and neighbours read neighbours serially
        return combiner

    def rewrite(self, generic: ir.Operation, sizes, iterators, combiner) -> None:
        ix = Index()
        body = generic.regions[0].blocks[0]
        ins = len(body.arguments) - 1
        maps = maps_of(generic)
        element = body.arguments[ins].type
        output = generic.operands[ins]
        with ir.InsertionPoint(generic):
            sizes = materialize(ix, sizes)
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
            here = when_nonempty(ix, [outputs]) or ir.InsertionPoint(generic)
        if outputs == 0:
            generic.erase()  # no output element
            return
        with here:
            block_loop, block_body = parallel(ix, [outputs], ["block_x"])
        ivs: list = [None] * len(iterators)
        with ir.InsertionPoint(block_body.operations[0]):
            for d, v in zip(kept, ix.delinearize(block_body.arguments[0],
                                                 [sizes[d] for d in kept])):
                ivs[d] = ix.value(v)
            out_index = indices(ix, maps[ins], ivs)
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
            inputs = load_inputs(ix, generic, ivs)
            terminator = op("scf.yield", [combiner.result], [])
        move_body(generic, terminator, inputs, [inner.arguments[1]], ivs)
        with ir.InsertionPoint(block_body.operations[len(block_body.operations) - 1]):
            attrs = {name: combiner.attributes[name] for name in combiner.attributes}
            new = op(combiner.name, [old, thread_loop.result], [element], attrs).result
            op("memref.store", [new, output] + out_index, [])
        generic.erase()


def _reduction(generic: ir.Operation):
    """(loop sizes, iterator types) of a reducing generic on memrefs whose loops' sizes are
    operands' dims and whose outputs are indexed by kept dims only, else None."""
    ins, outs = ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])
    iterators = [str(a) for a in ir.ArrayAttr(generic.attributes["iterator_types"])]
    if generic.results or not any("reduction" in i for i in iterators) or \
            not all(isinstance(v.type, ir.MemRefType) for v in generic.operands[ins:]) or \
            not all(isinstance(v.type, ir.MemRefType) or not isinstance(v.type, ir.ShapedType)
                    for v in generic.operands[:ins]):
        return None
    for amap in maps_of(generic)[ins:]:
        if any(not isinstance(e, ir.AffineDimExpr) or "reduction" in iterators[e.position]
               for e in amap.results):
            return None
    sizes = loop_sizes(generic, len(iterators))
    return None if sizes is None else (sizes, iterators)
