"""Loop nests written from a `linalg.generic` on memrefs, for ember-gpu-map-reductions:
its loops' sizes, the indices its indexing maps give, its body moved into a loop, and
the serial form of a reduction (a loop over the reduced dims inside an `scf.parallel`
over the kept ones, which ember-gpu-map then maps: one thread per output element)."""

from __future__ import annotations

from mlir import ir

from ember.passes.transforms.gpu_map_common import Index, index_type, op, parallel


def maps_of(generic: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(generic.attributes[
        "indexing_maps"])]


def loop_sizes(generic: ir.Operation, loops: int):
    """Each loop's size: an int, or (operand, dim) to read with memref.dim; None if some
    loop's size is no operand's dim."""
    sizes: list = [None] * loops
    for value, amap in zip(generic.operands, maps_of(generic)):
        if not isinstance(value.type, ir.MemRefType):
            continue  # a scalar operand
        shape = ir.MemRefType(value.type).shape
        for pos, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr) and not isinstance(sizes[expr.position], int):
                sizes[expr.position] = shape[pos] if shape[pos] >= 0 else (value, pos)
    return None if any(s is None for s in sizes) else sizes


def materialize(ix: Index, sizes: list) -> list:
    """The sizes as ints or index values (memref.dim at the insertion point)."""
    return [s if isinstance(s, int) else
            op("memref.dim", [s[0], ix.value(s[1])], [index_type()]).result for s in sizes]


def indices(ix: Index, amap: ir.AffineMap, ivs: list) -> list:
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


def move_body(generic: ir.Operation, before: ir.Operation, inputs: list, outputs: list,
              ivs: list) -> None:
    """Moves `generic`'s body (not its yield) before `before`, its block arguments
    replaced by `inputs` + `outputs` and `linalg.index` by `ivs`."""
    body = generic.regions[0].blocks[0]
    for operation in list(body.operations)[:-1]:
        operation.move_before(before)
    for arg, value in zip(body.arguments, inputs + outputs):
        arg.replace_all_uses_with(value)
    found = []
    before.parent.walk(lambda x: (found.append(x.operation)
                                  if x.operation.name == "linalg.index" else None)
                       or ir.WalkResult.ADVANCE)
    for index_op in found:
        index_op.result.replace_all_uses_with(ivs[ir.IntegerAttr(index_op.attributes["dim"])
                                                  .value])
        index_op.erase()


def load_inputs(ix: Index, generic: ir.Operation, ivs: list) -> list:
    """Each input's element at `ivs` (a scalar input as it is)."""
    body = generic.regions[0].blocks[0]
    maps = maps_of(generic)
    ins = ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])[0]
    values = []
    for k in range(ins):
        value = generic.operands[k]
        if isinstance(value.type, ir.MemRefType):
            value = op("memref.load", [value] + indices(ix, maps[k], ivs),
                       [body.arguments[k].type]).result
        values.append(value)
    return values


def serial_reduction(generic: ir.Operation, sizes: list, iterators: list) -> None:
    """Rewrites `generic` as an unmapped `scf.parallel` over its kept dims (none: no loop)
    holding a nest of `scf.for` over its reduced dims that carries every output's value
    (loaded before, stored after)."""
    ix = Index()
    ins, outs = ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])
    body = generic.regions[0].blocks[0]
    maps = maps_of(generic)
    kept = [d for d, it in enumerate(iterators) if "reduction" not in it]
    reduced = [d for d, it in enumerate(iterators) if "reduction" in it]
    ivs: list = [None] * len(iterators)
    with ir.InsertionPoint(generic):
        sizes = materialize(ix, sizes)
        at = ir.InsertionPoint(generic)
        if kept:
            _, block = parallel(ix, [sizes[d] for d in kept], None)
            for d, arg in zip(kept, block.arguments):
                ivs[d] = arg
            at = ir.InsertionPoint(block.operations[0])
    with at:
        targets = [(generic.operands[ins + k], indices(ix, maps[ins + k], ivs))
                   for k in range(outs)]
        values = [op("memref.load", [buffer] + where, [body.arguments[ins + k].type]).result
                  for k, (buffer, where) in enumerate(targets)]
    here, loops = at, []
    for d in reduced:
        with here:
            loop = op("scf.for", [ix.value(0), ix.value(sizes[d]), ix.value(1)] + values,
                      [v.type for v in values], regions=1)
        inner = loop.regions[0].blocks.append(index_type(), *[v.type for v in values])
        ivs[d], values = inner.arguments[0], list(inner.arguments[1:])
        loops.append(loop)
        here = ir.InsertionPoint(inner)
    with here:
        inputs = load_inputs(ix, generic, ivs)
        yielded = op("scf.yield", list(list(body.operations)[-1].operands), [])
    move_body(generic, yielded, inputs, values, ivs)
    for outer, inner_loop in zip(loops, loops[1:]):
        with ir.InsertionPoint(outer.regions[0].blocks[0]):
            op("scf.yield", list(inner_loop.results), [])
    with at:
        for (buffer, where), result in zip(targets, loops[0].results):
            op("memref.store", [result, buffer] + where, [])
    generic.erase()
