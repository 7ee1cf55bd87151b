"""The rewrites `ember-reduce` tries, each on a freshly parsed copy of the current module.

Every rewrite keeps the IR well formed by construction, so that no call into MLIR can trip
an assertion of the bindings: an op is erased only after each of its results' uses has been
handed a stand-in value of the same type (a new argument of the enclosing function, which
dominates every use in it; outside a function, an `ember.constant` zero when the type allows),
and only when nothing uses it any more. Whatever a rewrite makes is then verified (MLIR and
the ember specs) before the interestingness test sees it (reduce_tester.py).

The rewrites (`items` lists what a strategy can touch, `apply` rewrites a chosen subset):

- erase-functions: erase top-level functions (a function still called makes the candidate
  invalid, so it stays); mlir-reduce erases them as ops of the module's region;
- erase-ops: erase ops (with everything nested in them), their remaining uses replaced by
  stand-ins; mlir-reduce's reduction-tree pass erases the ops "not in range" instead and keeps
  only candidates that still verify;
- inline-regions: replace an `scf.if`/`scf.execute_region`/`scf.for`/`scf.while` by the body of
  one of its regions, run once (block arguments become the op's operands: the inits, the lower
  bound; results the values its terminator yields), when the types agree;
- forward-operands: replace an op's results by operands of the same types (an `scf.while` by
  its inits, an `ember.neg` by its input), then erase it (llvm-reduce's operands-skip);
- splat-constants: shrink a dense `ember.constant`/`arith.constant` tensor that is not a
  splat to a splat zero of the same type (upstream has no such rewrite);
- erase-arguments: drop function arguments nothing uses (a called function's calls then no
  longer verify, so it keeps them).
"""

from __future__ import annotations

from mlir import ir

from ember.dialects.ember.verifier import iter_ops

TERMINATORS = frozenset({"func.return", "scf.yield", "scf.condition", "cf.br", "cf.cond_br",
                         "tensor.yield", "linalg.yield", "scf.reduce", "scf.reduce.return"})
FUNCTION = "func.func"


def functions(module: ir.Module) -> list[ir.Operation]:
    """The top-level symbol ops of the module (functions and declarations)."""
    return [op.operation for op in module.body.operations]


def erase_functions(module: ir.Module, chosen: list[ir.Operation]) -> bool:
    for op in chosen:
        op.erase()  # a remaining call refers to it by name only: the verifier rejects that
    return True


def body_ops(module: ir.Module) -> list[ir.Operation]:
    """Every op inside a function body except terminators, in pre-order (an op's nested
    ops follow it)."""
    return [op for op in iter_ops(module.operation)
            if op.name not in TERMINATORS and op.name != FUNCTION
            and op.parent is not None and op.parent.name != "builtin.module"]


def _enclosing_function(op: ir.Operation) -> ir.Operation | None:
    parent = op.parent
    while parent is not None and parent.name != "builtin.module":
        if parent.name == FUNCTION:
            return parent
        parent = parent.parent
    return None


def _add_argument(fn: ir.Operation, ty: ir.Type) -> ir.Value:
    """A new last argument of function `fn` (its type and argument attributes updated)."""
    block = fn.regions[0].blocks[0]
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    value = block.add_argument(ty, fn.location)
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([*ftype.inputs, ty], list(ftype.results)))
    if "arg_attrs" in fn.attributes:
        attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"]))
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get([*attrs, ir.DictAttr.get({})])
    return value


def _zero_constant(before: ir.Operation, ty: ir.Type) -> ir.Value | None:
    """An `ember.constant` zero of tensor type `ty` before `before`, or None."""
    attr = zero_splat(ty)
    if attr is None:
        return None
    with ir.InsertionPoint(before), before.location:
        op = ir.Operation.create("ember.constant", results=[ty], attributes={"value": attr})
    return op.result


def zero_splat(ty: ir.Type) -> ir.DenseElementsAttr | None:
    """A splat zero of static tensor type `ty` with integer or float elements, or None."""
    if not isinstance(ty, ir.RankedTensorType) or not ty.has_static_shape:
        return None
    element = ty.element_type
    if isinstance(element, ir.IntegerType):
        zero = ir.IntegerAttr.get(element, 0)
    elif isinstance(element, ir.FloatType):
        zero = ir.FloatAttr.get(element, 0.0)
    else:
        return None
    return ir.DenseElementsAttr.get_splat(ty, zero)


def _stand_in(op: ir.Operation, ty: ir.Type) -> ir.Value | None:
    fn = _enclosing_function(op)
    if fn is not None and len(fn.regions) and len(fn.regions[0].blocks):
        return _add_argument(fn, ty)
    return _zero_constant(op, ty)


def _has_uses(op: ir.Operation) -> bool:
    return any(True for r in op.results for _ in r.uses)


def erase_ops(module: ir.Module, chosen: list[ir.Operation]) -> bool:
    """Erases `chosen` (later ops first; ops nested in a chosen op go with it), handing each
    use left to a stand-in; False when a use cannot be replaced."""
    picked = set(chosen)
    roots = [op for op in chosen if not _inside(op, picked)]
    for op in reversed(roots):
        for result in op.results:
            if not any(True for _ in result.uses):
                continue
            value = _stand_in(op, result.type)
            if value is None:
                return False
            result.replace_all_uses_with(value)
        if not erase_if_unused(op):
            return False
    return True


def _inside(op: ir.Operation, picked: set) -> bool:
    parent = op.parent
    while parent is not None:
        if parent in picked:
            return True
        parent = parent.parent
    return False


REGION_OPS = ("scf.if", "scf.execute_region", "scf.for", "scf.while")


def region_ops(module: ir.Module) -> list[tuple[ir.Operation, int]]:
    """(op, region index) for each region of each scf op `inline_region` can replace."""
    found = []
    for op in iter_ops(module.operation):
        if op.name in REGION_OPS:
            regions = (0, 1) if op.name in ("scf.if", "scf.while") else (0,)
            found += [(op, i) for i in regions if len(op.regions[i].blocks) == 1]
    return found


def inline_regions(module: ir.Module, chosen: list[tuple[ir.Operation, int]]) -> bool:
    """Inlines the first chosen region of each chosen op, inner ops first (an inner op's
    body then moves out with it)."""
    first: dict[ir.Operation, int] = {}
    for op, index in chosen:
        first.setdefault(op, index)
    return all(inline_region(op, index) for op, index in reversed(list(first.items())))


def inline_region(op: ir.Operation, index: int) -> bool:
    """Replaces `op` by the ops of its region `index` run once; False when the types of the
    block arguments or of the yielded values do not match."""
    block = op.regions[index].blocks[0]
    operands = list(op.operands)
    if op.name == "scf.for":  # (lower, upper, step, inits...) for (iv, iter_args...)
        inputs = [operands[0], *operands[3:]]
    else:  # scf.while's regions run on the inits (one trip); if/execute_region take none
        inputs = operands if op.name == "scf.while" else []
    arguments = list(block.arguments)
    if len(arguments) != len(inputs) or any(a.type != v.type for a, v in
                                            zip(arguments, inputs)):
        return False
    ops = [o.operation for o in block.operations]
    if not ops or ops[-1].name not in ("scf.yield", "scf.condition"):
        return False
    skip = 1 if ops[-1].name == "scf.condition" else 0  # its first operand is the condition
    results = list(op.results)
    types = [v.type for v in list(ops[-1].operands)[skip:]]
    if types != [r.type for r in results]:
        return False
    for argument, value in zip(arguments, inputs):
        argument.replace_all_uses_with(value)
    # read after the arguments are replaced: a yielded block argument (`scf.condition(%c) %i`)
    # must not become a use of a value that is erased with `op`
    yielded = list(ops[-1].operands)[skip:]
    for inner in ops[:-1]:
        inner.move_before(op)
    for result, value in zip(results, yielded):
        result.replace_all_uses_with(value)
    ops[-1].erase()  # the terminator uses the yielded values: drop it before `op`
    return erase_if_unused(op)


def erase_if_unused(op: ir.Operation) -> bool:
    """Erases `op` unless a value it defines (a result, or a block argument or result inside
    its regions) is still used outside it: MLIR aborts when a used value is destroyed."""
    if _has_uses(op):
        return False
    for value in _defined_inside(op):
        if any(not _within(use.owner.operation, op) for use in value.uses):
            return False
    op.erase()
    return True


def _defined_inside(op: ir.Operation):
    """The block arguments and results of everything nested in `op`."""
    for holder in [op, *iter_ops(op)]:
        if holder != op:
            yield from holder.results
        for region in holder.regions:
            for block in region.blocks:
                yield from block.arguments


def _within(inner: ir.Operation, op: ir.Operation) -> bool:
    while inner is not None:
        if inner == op:
            return True
        inner = inner.parent
    return False


def _forwarded(op: ir.Operation) -> list[ir.Value] | None:
    """For each result of `op`, an operand of the same type (positional first), or None."""
    operands, results = list(op.operands), list(op.results)
    if not results:
        return None
    tail = operands[len(operands) - len(results):]  # scf.for/while: the inits come last
    found = []
    for i, result in enumerate(results):
        same = [v for v in ([tail[i]] if len(tail) == len(results) else []) + operands
                if v.type == result.type]
        if not same:
            return None
        found.append(same[0])
    return found


def forwardable_ops(module: ir.Module) -> list[ir.Operation]:
    """Ops each of whose results has an operand of the same type."""
    return [op for op in body_ops(module) if _forwarded(op) is not None]


def forward_operands(module: ir.Module, chosen: list[ir.Operation]) -> bool:
    picked = set(chosen)
    for op in reversed(chosen):
        if _inside(op, picked):
            continue
        values = _forwarded(op)
        if values is None:
            return False
        for result, value in zip(op.results, values):
            result.replace_all_uses_with(value)
        if not erase_if_unused(op):
            return False
    return True


CONSTANTS = ("ember.constant", "arith.constant")


def dense_constants(module: ir.Module) -> list[ir.Operation]:
    """Constants holding a dense tensor of more than one distinct element (not a splat)."""
    found = []
    for op in iter_ops(module.operation):
        if op.name not in CONSTANTS or "value" not in op.attributes:
            continue
        value = op.attributes["value"]
        if not isinstance(value, ir.DenseElementsAttr):
            continue
        if not value.is_splat and zero_splat(value.type) is not None:
            found.append(op)
    return found


def splat_constants(module: ir.Module, chosen: list[ir.Operation]) -> bool:
    for op in chosen:
        op.attributes["value"] = zero_splat(op.attributes["value"].type)
    return True


def unused_arguments(module: ir.Module) -> list[tuple[ir.Operation, int]]:
    """(function, index) of each argument nothing uses."""
    found = []
    for fn in functions(module):
        if fn.name != FUNCTION or not len(fn.regions[0].blocks):
            continue
        for arg in fn.regions[0].blocks[0].arguments:
            if not any(True for _ in arg.uses):
                found.append((fn, arg.arg_number))
    return found


def erase_arguments(module: ir.Module, chosen: list[tuple[ir.Operation, int]]) -> bool:
    for fn, index in sorted(chosen, key=lambda c: -c[1]):  # later arguments first
        block = fn.regions[0].blocks[0]
        if any(True for _ in block.arguments[index].uses):
            return False
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        inputs = list(ftype.inputs)
        del inputs[index]
        block.erase_argument(index)
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(inputs, list(ftype.results)))
        if "arg_attrs" in fn.attributes:
            attrs = list(ir.ArrayAttr(fn.attributes["arg_attrs"]))
            del attrs[index]
            fn.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    return True
