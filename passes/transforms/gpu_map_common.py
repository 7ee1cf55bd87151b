"""IR building blocks of the GPU mapping passes (gpu_map.py, gpu_map_reduce.py): index
arithmetic that folds constants in Python, `scf.parallel` nests carrying the `mapping`
attribute convert-parallel-loops-to-gpu reads, and the combiners a parallel reduction
knows (with their identities)."""

from __future__ import annotations

import math

from mlir import ir

MAPPING = "mapping"
# Launch limits: the grid's x dimension holds 2^31 - 1 blocks, y and z 65535.
GRID_LIMIT = {"block_x": 2 ** 31 - 1, "block_y": 65535, "block_z": 65535}

# Combiners an `scf.reduce` (then gpu.all_reduce) can carry, with each one's identity as a
# function of the element type: a thread that reduces nothing contributes it.
_INF = float("inf")
COMBINERS = {
    "arith.addf": lambda t: -0.0, "arith.mulf": lambda t: 1.0,
    "arith.maximumf": lambda t: -_INF, "arith.minimumf": lambda t: _INF,
    "arith.maxnumf": lambda t: math.nan, "arith.minnumf": lambda t: math.nan,
    "arith.addi": lambda t: 0, "arith.muli": lambda t: 1,
    "arith.maxsi": lambda t: -(1 << (t.width - 1)),
    "arith.minsi": lambda t: (1 << (t.width - 1)) - 1,
    "arith.maxui": lambda t: 0, "arith.minui": lambda t: -1,
    "arith.andi": lambda t: -1, "arith.ori": lambda t: 0, "arith.xori": lambda t: 0,
}


def index_type() -> ir.Type:
    return ir.IndexType.get()


def constant_index(value) -> int | None:
    """The value of an `arith.constant` of index type, else None."""
    owner = value.owner.operation if isinstance(value, ir.OpResult) else None
    if owner is None or owner.name != "arith.constant" or \
            not isinstance(value.type, ir.IndexType):
        return None
    return ir.IntegerAttr(owner.attributes["value"]).value


def identity(name: str, element: ir.Type) -> ir.Value:
    """The identity of combiner `name` as an `arith.constant` of `element` type."""
    value = COMBINERS[name](element)
    if isinstance(element, ir.IntegerType):
        if element.width == 1:
            value &= 1  # i1: all ones is `true`
        attr = ir.IntegerAttr.get(element, value)
    else:
        attr = ir.FloatAttr.get(element, value)
    return op("arith.constant", [], [element], {"value": attr}).result


def op(name: str, operands, results, attributes=None, regions: int = 0) -> ir.Operation:
    return ir.Operation.create(name, results=list(results), operands=list(operands),
                               attributes=dict(attributes or {}), regions=regions)


class Index:
    """Index arithmetic at the current insertion point; Python ints fold (constants are
    materialised once per value, as `arith.constant`)."""

    def value(self, x) -> ir.Value:
        if isinstance(x, int):
            return op("arith.constant", [], [index_type()],
                      {"value": ir.IntegerAttr.get(index_type(), x)}).result
        return x

    def known(self, x) -> int | None:
        return x if isinstance(x, int) else constant_index(x)

    def _binary(self, name: str, a, b, fold):
        ka, kb = self.known(a), self.known(b)
        if ka is not None and kb is not None:
            return fold(ka, kb)
        return op(name, [self.value(a), self.value(b)], [index_type()]).result

    def add(self, a, b):
        if self.known(a) == 0:
            return b
        if self.known(b) == 0:
            return a
        return self._binary("arith.addi", a, b, lambda x, y: x + y)

    def sub(self, a, b):
        if self.known(b) == 0:
            return a
        return self._binary("arith.subi", a, b, lambda x, y: x - y)

    def mul(self, a, b):
        if self.known(a) == 1:
            return b
        if self.known(b) == 1:
            return a
        return self._binary("arith.muli", a, b, lambda x, y: x * y)

    def div(self, a, b):
        if self.known(b) == 1:
            return a
        return self._binary("arith.divui", a, b, lambda x, y: x // y)

    def rem(self, a, b):
        return self._binary("arith.remui", a, b, lambda x, y: x % y)

    def ceildiv(self, a, b):
        if self.known(b) == 1:
            return a
        return self._binary("arith.ceildivui", a, b, lambda x, y: -(-x // y))

    def min(self, a, b):
        return self._binary("arith.minui", a, b, min)

    def less(self, a, b) -> ir.Value:
        predicate = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 6)  # ult
        return op("arith.cmpi", [self.value(a), self.value(b)],
                  [ir.IntegerType.get_signless(1)], {"predicate": predicate}).result

    def both(self, a: ir.Value | None, b: ir.Value) -> ir.Value:
        if a is None:
            return b
        return op("arith.andi", [a, b], [ir.IntegerType.get_signless(1)]).result

    def trip_count(self, lower, upper, step):
        return self.ceildiv(self.sub(upper, lower), step)

    def delinearize(self, flat, sizes: list) -> list:
        """The multi-index (last dim fastest) of linear index `flat` over `sizes`."""
        out = []
        for i in reversed(range(len(sizes))):
            if i == 0:
                out.append(flat)
            else:
                out.append(self.rem(flat, sizes[i]))
                flat = self.div(flat, sizes[i])
        return list(reversed(out))


def when_nonempty(ix: Index, counts: list) -> ir.InsertionPoint | None:
    """An insertion point inside `scf.if (0 < c for each count c not known)` at the
    current one, or None when every count is known: a launch of 0 blocks is an error
    (CUDA_ERROR_INVALID_VALUE), so a grid sized at run time is launched only when it is
    not empty (the host branches, the kernel stays inside)."""
    condition = None
    for c in counts:
        if ix.known(c) is None:
            condition = ix.both(condition, ix.less(0, c))
    if condition is None:
        return None
    branch = op("scf.if", [condition], [], regions=2)
    then = branch.regions[0].blocks.append()
    with ir.InsertionPoint(then):
        op("scf.yield", [], [])
    return ir.InsertionPoint(then.operations[0])


def mapping_attr(processors: list[str]) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse(
        f"#gpu.loop_dim_map<processor = {p}, map = (d0) -> (d0), bound = (d0) -> (d0)>")
        for p in processors])


def parallel(ix: Index, uppers: list, processors: list[str] | None, inits=()) -> tuple:
    """An `scf.parallel` from 0 to each of `uppers` by 1, mapped to `processors` (None:
    not mapped); returns (op, body block). Without `inits` the body ends in an empty
    `scf.reduce` already."""
    n = len(uppers)
    zero, one = ix.value(0), ix.value(1)
    attributes = {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([n, n, n, len(inits)])}
    if processors is not None:
        attributes[MAPPING] = mapping_attr(processors)
    loop = op("scf.parallel", [zero] * n + [ix.value(u) for u in uppers] + [one] * n +
              list(inits), [v.type for v in inits], attributes, regions=1)
    block = loop.regions[0].blocks.append(*([index_type()] * n))
    if not inits:
        with ir.InsertionPoint(block):
            op("scf.reduce", [], [])
    return loop, block


def combine(combiner: ir.Operation, a: ir.Value, b: ir.Value) -> ir.Value:
    """An op like `combiner` (same name and attributes) of `a` and `b`."""
    attrs = {name: combiner.attributes[name] for name in combiner.attributes}
    return op(combiner.name, [a, b], [a.type], attrs).result


def reduce_terminator(block: ir.Block, values: list, combiners) -> None:
    """Ends `block` (a reducing scf.parallel's body) with `scf.reduce` of `values`, each
    combined by an op like its combiner (`combiners`: one op for all, or one each)."""
    if not isinstance(combiners, list):
        combiners = [combiners] * len(values)
    with ir.InsertionPoint(block):
        red = op("scf.reduce", values, [], regions=len(values))
    for region, v, combiner in zip(red.regions, values, combiners):
        inner = region.blocks.append(v.type, v.type)
        with ir.InsertionPoint(inner):
            op("scf.reduce.return", [combine(combiner, *inner.arguments)], [])


def is_mapped(operation: ir.Operation) -> bool:
    """A mapped `scf.parallel`, or a launch written directly (ember-gpu-mma's)."""
    return operation.name == "scf.parallel" and MAPPING in operation.attributes or \
        operation.name in ("gpu.launch", "gpu.launch_func")


def contains_mapped(operation: ir.Operation) -> bool:
    found = []

    def visit(o):
        if is_mapped(o.operation):
            found.append(o)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    operation.walk(visit)
    return bool(found)
