"""ember-gpu-map's mapping of a loop nest that is already a parallel reduction: an
`scf.parallel` whose body holds one reducing `scf.parallel` (`init`/`scf.reduce`, each
reduction one combiner of gpu_map_common.COMBINERS on f32, f64, i32 or i64), as written by
hand or by another pass rather than from a `linalg.generic` (ember-gpu-map-reductions
writes those itself).

The outer loop becomes a block per iteration (block_x over its dims, delinearised), the
inner one `threads` threads (fewer, whole warps, for a short known reduction) each folding
a strided share of its iterations into partials that start at the combiners' identities;
its `scf.reduce` then becomes gpu.all_reduce, whose result is combined with the inner
loop's init (gpu.all_reduce ignores it). The rest of the outer body runs in every thread.
"""

from __future__ import annotations

from mlir import ir

from ember.dialects.ember.verifier import find_op
from ember.passes.transforms.gpu_map_common import (COMBINERS, Index, combine,
                                                     identity, index_type, op, parallel,
                                                     reduce_terminator, when_nonempty)

_TYPES = ("f32", "f64", "i32", "i64")


def nested_reduction(loop: ir.Operation):
    """(inner loop, its combiners) when `loop` is such a nest, else None."""
    inner = [o.operation for o in loop.regions[0].blocks[0].operations
             if o.operation.name == "scf.parallel"]
    if len(inner) != 1 or not inner[0].results or any(
            _has_parallel(o.operation) for o in loop.regions[0].blocks[0].operations
            if o.operation != inner[0]):
        return None
    reduced = inner[0]
    body = reduced.regions[0].blocks[0]
    if any(_has_parallel(o.operation) for o in body.operations):
        return None
    combiners = []
    for region, result in zip(list(body.operations)[-1].regions, reduced.results):
        ops = [o.operation for o in region.blocks[0].operations]
        args = list(region.blocks[0].arguments)
        if len(ops) != 2 or ops[0].name not in COMBINERS or str(result.type) not in _TYPES \
                or sorted(map(hash, ops[0].operands)) != sorted(map(hash, args)) or \
                ops[1].operands[0] != ops[0].result:
            return None
        combiners.append(ops[0])
    return reduced, combiners


def map_nested(loop: ir.Operation, reduced: ir.Operation, combiners: list,
               threads: int) -> None:
    ix = Index()
    n = len(loop.regions[0].blocks[0].arguments)
    with ir.InsertionPoint(loop):
        lowers, uppers, steps = (list(loop.operands[k * n:(k + 1) * n]) for k in range(3))
        counts = [ix.trip_count(lo, up, st) for lo, up, st in zip(lowers, uppers, steps)]
        total = 1
        for c in counts:
            total = ix.mul(total, c)
        if ix.known(total) is not None and ix.known(total) <= 0:
            loop.erase()
            return
        here = when_nonempty(ix, [total]) or ir.InsertionPoint(loop)
    with here:
        _, grid_body = parallel(ix, [total], ["block_x"])
    _move_body(ix, loop, grid_body, grid_body.arguments[0], counts, lowers, steps)
    m = len(reduced.regions[0].blocks[0].arguments)
    with ir.InsertionPoint(reduced):
        lowers, uppers, steps = (list(reduced.operands[k * m:(k + 1) * m]) for k in range(3))
        inits = list(reduced.operands[3 * m:])
        counts = [ix.trip_count(lo, up, st) for lo, up, st in zip(lowers, uppers, steps)]
        total = 1
        for c in counts:
            total = ix.mul(total, c)
        if ix.known(total) is not None:
            threads = max(1, min(threads, -(-ix.known(total) // 32) * 32))
        starts = [identity(c.name, v.type) for c, v in zip(combiners, inits)]
        thread_loop, thread_body = parallel(ix, [threads], ["thread_x"], starts)
    with ir.InsertionPoint(thread_body):
        stride = op("scf.for", [thread_body.arguments[0], ix.value(total), ix.value(threads)]
                    + starts, [v.type for v in starts], regions=1)
        strided = stride.regions[0].blocks.append(index_type(), *[v.type for v in starts])
    reduce_terminator(thread_body, list(stride.results), combiners)
    old = reduced.regions[0].blocks[0]
    values = list(list(old.operations)[-1].operands)
    with ir.InsertionPoint(strided):
        end = op("scf.yield", [], [])
    ivs = _move_body(ix, reduced, strided, strided.arguments[0], counts, lowers, steps, end)
    args = list(old.arguments)
    values = [ivs[args.index(v)] if v in args else v for v in values]
    with ir.InsertionPoint(end):
        op("scf.yield", [combine(c, acc, v) for c, acc, v in
                         zip(combiners, strided.arguments[1:], values)], [])
    end.erase()
    with ir.InsertionPoint(reduced):
        finals = [combine(c, init, r) for c, init, r in
                  zip(combiners, inits, thread_loop.results)]
    for result, final in zip(reduced.results, finals):
        result.replace_all_uses_with(final)
    reduced.erase()
    loop.erase()


def _move_body(ix: Index, loop: ir.Operation, block: ir.Block, flat, counts, lowers, steps,
               before: ir.Operation | None = None) -> list:
    """Moves `loop`'s body (not its terminator) into `block` (before `before`, else before
    its terminator), its induction variables delinearised from `flat`; returns them."""
    before = before or block.operations[len(block.operations) - 1]
    with ir.InsertionPoint(before):
        index = ix.delinearize(flat, counts)
        ivs = [ix.value(ix.add(lo, ix.mul(i, st))) for lo, i, st in zip(lowers, index, steps)]
    old = loop.regions[0].blocks[0]
    for operation in list(old.operations)[:-1]:
        operation.move_before(before)
    for arg, iv in zip(old.arguments, ivs):
        arg.replace_all_uses_with(iv)
    return ivs


def _has_parallel(operation: ir.Operation) -> bool:
    return operation.name == "scf.parallel" or \
        find_op(operation, lambda o: o.name == "scf.parallel") is not None
