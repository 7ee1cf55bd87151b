"""Streaming (non-temporal) stores for large elementwise outputs: bench case C at the memory's
speed rather than a copy's.

A store to memory not in the cache first reads the line it writes (read-for-ownership), so
an elementwise loop that reads N bytes and writes N moves 3N. A non-temporal store writes
whole lines around the cache: 2N. On this project's host (2 Zen 4 cores, 32 MiB L3) a
float32 loop over 40 MB takes 2.5 ms with ordinary vector stores and 1.9 ms with streaming
ones. An output that large leaves the cache before anyone reads it back, so nothing is
lost by not keeping it there; below `MIN_BYTES` the ordinary loop stays.

LLVM's loop vectoriser does not make them: a scalar store marked `!nontemporal` stops it
from vectorising the loop at all (a streaming vector store needs an aligned address, which
a scalar store of a float cannot promise). So `add` (in the CPU backend's `make_llvm`,
after vector_variants.add, on the bufferized module) writes the loop itself for each
`linalg.generic` that qualifies: every iterator parallel, identity indexing maps, static
memrefs of one float element type with identity layouts, at least `MIN_BYTES` of outputs,
and a body whose ops are elementwise (arith, the math ops LLVM has vector intrinsics
for) or calls of fastmath's functions (those with vector variants call them, the others
are widened inline). The generic becomes

    if every output's address is aligned to the vector's size:
        for i in [0, n - n % lanes) step lanes:  vector loads, the body on vectors,
                                                  streaming vector stores
        the last n % lanes elements:              masked loads and ordinary masked stores
        sfence                                    (streaming stores are weakly ordered)
    else:
        the generic as it was

so an output at any address is correct, and the streaming path runs on the addresses the
runtime gives (2 MiB-aligned blocks, and the row blocks parallel.py splits at multiples of
the lane count). Integer division and remainder keep the generic: a masked tail computes
its inactive lanes on zeros. The values are the generic's bit for bit: the same ops on
every lane, and sin/cos/tanh through the same vector variants LLVM's vectoriser calls.

Only x86 with AVX (`lanes_for`: 16 lanes with AVX-512, 8 with AVX) at the full tier.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, scf, vector

from ember.backends.cpu.vector_variants import lanes_for

__all__ = ["MIN_BYTES", "add"]

MIN_BYTES = 16 << 20  # outputs per call: half this host's L3

# math ops that lower to LLVM intrinsics on vectors (convert-math-to-llvm); the others
# would be unrolled into libm calls per lane
_MATH = {"math.fma", "math.absf", "math.sqrt", "math.floor", "math.ceil", "math.copysign",
         "math.roundeven", "math.round", "math.trunc", "math.absi", "math.ctlz",
         "math.cttz", "math.ctpop"}
# a masked tail computes its inactive lanes on zeros: these could trap there
_TRAPPING = {"arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.ceildivsi",
             "arith.ceildivui", "arith.floordivsi"}


def add(module: ir.Module, features: str | None, min_bytes: int | None = None) -> int:
    """Rewrites each qualifying generic of `module`'s functions (see the module doc), in the
    module's context under a location; `min_bytes`: the least output bytes (`MIN_BYTES` by
    default). Returns how many."""
    min_bytes = MIN_BYTES if min_bytes is None else min_bytes
    flags = set((features or "").split(","))
    if "+avx" not in flags and "+avx512f" not in flags:
        return 0
    f32_lanes = lanes_for(features)[0]
    functions = {ir.StringAttr(op.attributes["sym_name"]).value: op
                 for op in (o.operation for o in module.body.operations)
                 if op.name == "func.func"}
    count = 0
    for fn in list(functions.values()):
        if not fn.regions[0].blocks:
            continue
        for op in list(fn.regions[0].blocks[0].operations):
            op = op.operation
            if op.name != "linalg.generic":
                continue
            element = _element(op.operands[0].type) if len(op.operands) else None
            lanes = f32_lanes * 32 // element.width if isinstance(element, ir.FloatType) \
                else 0
            if lanes and _qualifies(op, lanes, functions, min_bytes):
                _rewrite(op, lanes, functions)
                count += 1
    return count


def _element(t: ir.Type):
    """The element type of a static memref with the identity layout, else None."""
    if not isinstance(t, ir.MemRefType):
        return None
    m = ir.MemRefType(t)
    if not m.has_static_shape or m.rank == 0 or not isinstance(m.layout, ir.AffineMapAttr) \
            or ir.AffineMapAttr(m.layout).value != ir.AffineMap.get_identity(m.rank):
        return None
    return m.element_type


def _qualifies(g: ir.Operation, lanes: int, functions: dict, min_bytes: int) -> bool:
    if len(g.results) or "iterator_types" not in g.attributes:
        return False
    if any("parallel" not in str(it) for it in ir.ArrayAttr(g.attributes["iterator_types"])):
        return False
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(g.attributes["indexing_maps"])]
    if any(m != ir.AffineMap.get_identity(m.n_dims) for m in maps):
        return False
    types = [v.type for v in g.operands]
    elements = {str(_element(t)) for t in types}
    if len(elements) != 1 or elements.pop() not in ("f32", "f64"):
        return False
    shapes = {tuple(ir.MemRefType(t).shape) for t in types}
    if len(shapes) != 1:
        return False
    outputs = _outputs(g)
    if not outputs:  # (a dead generic without results survives bufferization)
        return False
    width = ir.MemRefType(types[0]).element_type.width // 8
    count = 1
    for d in shapes.pop():
        count *= d
    if count < lanes or count * width * len(outputs) < min_bytes:
        return False
    return _widenable(g.regions[0].blocks[0], functions, set())


def _outputs(g: ir.Operation) -> list:
    segments = ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"])
    return list(g.operands)[segments[0]:segments[0] + segments[1]]


def _widenable(block: ir.Block, functions: dict, seen: set) -> bool:
    """Whether every op of `block` can run on vectors (`_widen`)."""
    for op in block.operations:
        op = op.operation
        name = op.name
        if name in ("linalg.yield", "func.return", "arith.constant"):
            continue
        if len(op.regions) or name in _TRAPPING:
            return False
        if name.startswith("arith.") or name in _MATH:
            continue
        if name != "func.call":
            return False
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        target = functions.get(callee)
        if target is None or not callee.startswith("__ember_") or callee in seen or \
                len(target.regions[0].blocks) != 1:
            return False
        if not _widenable(target.regions[0].blocks[0], functions, seen | {callee}):
            return False
    return True


def _vector(t: ir.Type, lanes: int) -> ir.Type:
    return ir.VectorType.get([lanes], t)


def _collapsed(value: ir.Value) -> ir.Value:
    """`value` (a contiguous static memref) as one dimension."""
    m = ir.MemRefType(value.type)
    if m.rank == 1:
        return value
    count = 1
    for d in m.shape:
        count *= d
    return memref.CollapseShapeOp(ir.MemRefType.get([count], m.element_type), value,
                                  ir.ArrayAttr.get([ir.ArrayAttr.get([
                                      ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
                                      for i in range(m.rank)])])).result


def _index(value: int) -> ir.Value:
    return arith.ConstantOp(ir.IndexType.get(), value).result


def _rewrite(g: ir.Operation, lanes: int, functions: dict) -> None:
    with ir.InsertionPoint(g), g.location:
        segments = ir.DenseI32ArrayAttr(g.attributes["operandSegmentSizes"])
        flat = [_collapsed(v) for v in g.operands]
        outputs = flat[segments[0]:segments[0] + segments[1]]
        element = ir.MemRefType(flat[0].type).element_type
        vt = _vector(element, lanes)
        align = lanes * element.width // 8
        count = ir.MemRefType(flat[0].type).shape[0]
        main = count - count % lanes
        # an output whose old value the body does not read is not loaded (that read is
        # the traffic streaming stores save)
        read = [len(list(a.uses)) > 0 for a in g.regions[0].blocks[0].arguments]
        aligned = None
        for out in outputs:
            address = memref.ExtractAlignedPointerAsIndexOp(out).result
            low = arith.AndIOp(address, _index(align - 1)).result
            ok = arith.CmpIOp(arith.CmpIPredicate.eq, low, _index(0)).result
            aligned = ok if aligned is None else arith.AndIOp(aligned, ok).result
        branch = scf.IfOp(aligned, [], has_else=True)
    with ir.InsertionPoint(branch.then_block), g.location:
        all_lanes = arith.ConstantOp(_vector(ir.IntegerType.get_signless(1), lanes),
                                     ir.DenseElementsAttr.get_splat(
                                         _vector(ir.IntegerType.get_signless(1), lanes),
                                         ir.BoolAttr.get(True))).result
        if main:
            loop = scf.ForOp(_index(0), _index(main), _index(lanes))
            with ir.InsertionPoint(loop.body):
                i = loop.induction_variable
                values = [vector.LoadOp(vt, v, [i]).result if used else None
                          for v, used in zip(flat, read)]
                results = _body(g, values, lanes, all_lanes, functions)
                for out, value in zip(outputs, results):
                    vector.StoreOp(value, out, [i], nontemporal=True, alignment=align)
                scf.YieldOp([])
        if count > main:
            mask_type = _vector(ir.IntegerType.get_signless(1), lanes)
            mask = vector.ConstantMaskOp(mask_type, [count - main]).result
            zero = arith.ConstantOp(vt, ir.DenseElementsAttr.get_splat(
                vt, ir.FloatAttr.get(element, 0.0))).result
            start = _index(main)
            values = [vector.MaskedLoadOp(vt, v, [start], mask, zero).result if used
                      else None for v, used in zip(flat, read)]
            results = _body(g, values, lanes, mask, functions)
            for out, value in zip(outputs, results):
                vector.MaskedStoreOp(out, [start], mask, value)
        llvm.CallIntrinsicOp(None, "llvm.x86.sse.sfence", [], [], [])
        scf.YieldOp([])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([])
    g.move_before(branch.else_block.operations[0])


def _body(g: ir.Operation, values: list, lanes: int, mask: ir.Value, functions: dict) -> list:
    """The generic's body on vectors: `values` for its block's arguments; returns what it
    yields."""
    block = g.regions[0].blocks[0]
    mapping = {a: v for a, v in zip(block.arguments, values) if v is not None}
    return _widen(block, mapping, lanes, mask, functions)


def _widen(block: ir.Block, mapping: dict, lanes: int, mask: ir.Value, functions: dict) -> list:
    """Builds `block`'s ops on vectors of `lanes` at the insertion point (`mapping`: vector
    of each value met so far, its arguments first); returns the vectors its terminator
    yields or returns."""
    def operand(v: ir.Value) -> ir.Value:
        found = mapping.get(v)
        if found is None:  # defined above the generic: the same value in every lane
            found = mapping[v] = vector.BroadcastOp(_vector(v.type, lanes), v).result
        return found

    for op in block.operations:
        op = op.operation
        name = op.name
        if name in ("linalg.yield", "func.return"):
            return [operand(v) for v in op.operands]
        if name == "arith.constant":
            t = _vector(op.results[0].type, lanes)
            new = [arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(
                t, op.attributes["value"])).result]
        elif name == "func.call":
            new = _call(op, [operand(v) for v in op.operands], lanes, mask, functions)
        else:
            created = ir.Operation.create(
                name, [_vector(r.type, lanes) for r in op.results],
                [operand(v) for v in op.operands],
                {n: op.attributes[n] for n in op.attributes})
            new = list(created.results)
        for old, value in zip(op.results, new):
            mapping[old] = value
    raise ValueError("a block without a terminator")


def _call(op: ir.Operation, args: list, lanes: int, mask: ir.Value, functions: dict) -> list:
    """A call of a fastmath function on vectors: its vector variant (vector_variants.py) if
    the module has one, else its body widened in place."""
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    for kind in ("m", "v"):
        variant = functions.get(f"{callee}_{kind}{lanes}")
        if variant is not None:
            operands = args + ([mask] if kind == "m" else [])
            return list(func.CallOp([a.type for a in args[:1]],
                                    ir.FlatSymbolRefAttr.get(f"{callee}_{kind}{lanes}"),
                                    operands).results)
    body = functions[callee].regions[0].blocks[0]
    mapping = {a: v for a, v in zip(body.arguments, args)}
    return _widen(body, mapping, lanes, mask, functions)

