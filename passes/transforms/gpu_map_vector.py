"""ember-gpu-map's vector step: an elementwise loop nest whose innermost dim is contiguous
gets 4 elements per thread, loaded and stored as one `vector<4xT>` (PTX `ld.global.v4`:
a quarter of the memory instructions).

Taken only when it is plainly right: the innermost loop runs from 0 by 1 to a known
multiple of 4; its body is loads, stores and arith ops on 32-bit elements (no regions, no
math: those stay scalar); the innermost index appears only as the last index of a load or
store, of a buffer with the identity layout whose last dim is a known multiple of 4 (so
every access is 16-byte aligned, given 16-byte-aligned buffers); everything else the body
computes from it is arithmetic on elements. Loads that do not use the innermost index
(broadcast operands) stay scalar and are splat where vectors meet them.
"""

from __future__ import annotations

from mlir import ir

from ember.passes.transforms.gpu_map_common import Index, constant_index, op

WIDTH = 4


def vectorize(loop: ir.Operation) -> bool:
    """Rewrites `loop` (an scf.parallel, not mapped yet) so each iteration of its
    innermost dim handles WIDTH elements; False (untouched) when it does not qualify."""
    n = len(loop.regions[0].blocks[0].arguments)
    lower, upper, step = (loop.operands[k * n + n - 1] for k in range(3))
    count = constant_index(upper)
    if constant_index(lower) != 0 or constant_index(step) != 1 or count is None or \
            count % WIDTH or count < WIDTH:
        return False
    block = loop.regions[0].blocks[0]
    inner = block.arguments[n - 1]
    body = [o.operation for o in block.operations][:-1]
    varying = _plan(body, inner)
    if varying is None:
        return False
    ix = Index()
    alignment = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), WIDTH * 4)
    with ir.InsertionPoint(loop):
        loop.operands[2 * n - 1] = ix.value(count // WIDTH)
    with ir.InsertionPoint(body[0]):
        first = ix.value(WIDTH)
        first = op("arith.muli", [inner, first], [first.type]).result
    new_values = {}

    def vector_of(value):
        if _key(value) in new_values:
            return new_values[_key(value)]
        return op("vector.broadcast", [value], [ir.VectorType.get([WIDTH], value.type)]).result
    for o in body:
        if _key(o) not in varying:
            continue
        with ir.InsertionPoint(o):
            if o.name == "memref.load":
                where = [first if v == inner else v for v in o.operands[1:]]
                vec = ir.VectorType.get([WIDTH], o.result.type)
                new = op("vector.load", [o.operands[0]] + where, [vec],
                         {"alignment": alignment}).result
            elif o.name == "memref.store":
                where = [first if v == inner else v for v in o.operands[2:]]
                op("vector.store", [vector_of(o.operands[0]), o.operands[1]] + where, [],
                   {"alignment": alignment})
                continue
            else:
                operands = [vector_of(v) if _key(v) in new_values or _key(o) in varying
                            else v for v in o.operands]
                attrs = {name: o.attributes[name] for name in o.attributes}
                new = op(o.name, operands, [ir.VectorType.get([WIDTH], r.type)
                                            for r in o.results], attrs).result
        new_values[_key(o.result)] = new
    for o in reversed(body):
        if _key(o) in varying:
            o.erase()
    return True


def _plan(body: list, inner: ir.Value) -> set | None:
    """The ops of `body` to vectorise (keys), or None when the loop does not qualify."""
    varying, values, accesses = set(), set(), 0
    for o in body:
        name, dialect = o.name, o.name.split(".")[0]
        uses_inner = any(v == inner for v in o.operands)
        from_varying = any(_key(v) in values for v in o.operands)
        if o.regions:
            return None
        if name in ("memref.load", "memref.store"):
            at = 1 if name == "memref.load" else 2
            memref, where = o.operands[at - 1], list(o.operands[at:])
            if any(v == inner for v in where[:-1]) or any(_key(v) in values for v in where):
                return None
            if not where or where[-1] != inner:
                if name == "memref.store" or uses_inner:
                    return None
                continue  # a broadcast operand: scalar
            if not _contiguous(memref.type):
                return None
            varying.add(_key(o))
            if name == "memref.load":
                values.add(_key(o.result))
            accesses += 1
        elif dialect == "arith" and not uses_inner:
            if from_varying:
                if any(not _element(r.type) for r in o.results):
                    return None
                varying.add(_key(o))
                values.update(_key(r) for r in o.results)
        else:
            return None
    return varying if accesses else None


def _element(t: ir.Type) -> bool:
    return (isinstance(t, ir.F32Type) or isinstance(t, ir.IntegerType) and
            t.width in (1, 32))


def _contiguous(t: ir.Type) -> bool:
    if not isinstance(t, ir.MemRefType) or not t.shape or t.shape[-1] < 0 or \
            t.shape[-1] % WIDTH or not (isinstance(t.element_type, ir.F32Type) or
                                        isinstance(t.element_type, ir.IntegerType) and
                                        t.element_type.width == 32):
        return False
    return str(t.layout) == str(ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank)))


def _key(x) -> int:
    return hash(x.operation) if hasattr(x, "operation") else hash(x)
