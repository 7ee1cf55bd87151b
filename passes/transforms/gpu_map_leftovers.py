"""ember-gpu-map's step 2: what is left outside mapped loops and touches memory runs as a
1-block, 1-thread kernel, so the host only allocates, computes indices, launches and
branches.

A run is a maximal sequence of consecutive ops of one block that touch memory (loads,
stores, copies, linalg ops, loops and ifs over them, none containing a launch), with the
pure ops between them. The run's pure ops that depend on none of its memory accesses stay
on the host (moved before the kernel); the rest become the body of one
`scf.parallel (%b) = (0) to (1)` mapped to block_x. A value of the kernel used after it
(a loop's flag, an error check's result, a loaded scalar) goes through a 0-d buffer: the
kernel stores it, a later kernel loads it where it is used, the host loads it once after
the kernel when it needs it (a loop bound, an if or while condition, a launch's size):
Ember's device buffers are managed memory, readable on the host once the launches before
have synchronised. A run that is one such read already (`memref.load` of a flag the host
branches on) stays as it is. Loops and ifs that contain launches stay on the host, their
bodies treated the same way.
"""

from __future__ import annotations

from mlir import ir

from ember.passes.transforms.gpu_map_common import (Index, contains_mapped, is_mapped, op,
                                                     parallel)

# Memref ops that read or write the elements (the others allocate, free or make views).
_ELEMENT_ACCESS = {"memref.load", "memref.store", "memref.copy", "memref.atomic_rmw",
                   "memref.generic_atomic_rmw"}
_PURE_DIALECTS = {"arith", "math", "affine", "index", "complex", "ub"}


def serialize_leftovers(block: ir.Block) -> int:
    """Wraps the runs of `block` and of the host loops and ifs in it; returns the kernels
    made."""
    made = 0
    operations = [o.operation for o in block.operations][:-1]  # not the terminator
    for o in operations:
        if not is_mapped(o) and o.regions and _is_host(o):
            for region in o.regions:
                for inner in region.blocks:
                    made += serialize_leftovers(inner)
    run, pending = [], []
    for o in operations + [None]:
        if o is not None and _is_device(o):
            run += pending + [o]
            pending = []
        elif o is not None and run and _is_pure_leaf(o):
            pending.append(o)
        else:  # the arithmetic after the run too: what it computes from loads for a
            # later kernel (a counter's seed) is computed in the kernel, not on the host
            made += _wrap_run(block, run + pending)
            run, pending = [], []
    return made


def _touches_memory(operation: ir.Operation) -> bool:
    found = []

    def visit(o):
        name = o.operation.name
        if name in _ELEMENT_ACCESS or name.split(".")[0] in ("linalg", "vector") or \
                name == "scf.parallel":
            found.append(o)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    operation.walk(visit)
    return bool(found)


def _is_host(operation: ir.Operation) -> bool:
    """Control flow that stays on the host: it launches kernels, or yields buffers."""
    return contains_mapped(operation) or any(
        isinstance(r.type, (ir.MemRefType, ir.UnrankedMemRefType)) for r in operation.results)


def _is_device(operation: ir.Operation) -> bool:
    return not _is_host(operation) and _touches_memory(operation)


def _is_pure_leaf(operation: ir.Operation) -> bool:
    return not operation.regions and operation.name.split(".")[0] in _PURE_DIALECTS and \
        not _is_host(operation)  # a select of buffers is the host's


def _in_kernel(operation) -> bool:
    """Whether `operation` lies inside a mapped loop (runs on the GPU)."""
    parent = operation.operation.parent
    while parent is not None and parent.name != "func.func":
        if is_mapped(parent):
            return True
        parent = parent.parent
    return False


def _wrap_run(block: ir.Block, run: list[ir.Operation]) -> int:
    if not run or (all(o.name == "memref.load" for o in run if _is_device(o)) and not any(
            _in_kernel(u.owner) for o in run for r in o.results for u in r.uses)):
        return 0  # nothing to run, or reads of values only the host uses
    dependent, kept, hoisted = set(), [], []
    for o in run:
        if _is_device(o) or any(isinstance(v, ir.OpResult) and
                                _key(v.owner) in dependent for v in o.operands):
            dependent.add(_key(o))
            kept.append(o)
        else:
            hoisted.append(o)
    for o in hoisted:
        o.move_before(kept[0])
    escaping = [(r, [u for u in r.uses if _outside(u.owner, dependent, block)])
                for o in kept for r in o.results]
    escaping = [(r, uses) for r, uses in escaping if uses]
    ix = Index()
    with ir.InsertionPoint(kept[0]):
        buffers = [op("memref.alloc", [], [ir.MemRefType.get([], r.type)],
                      {"operandSegmentSizes": ir.DenseI32ArrayAttr.get([0, 0])}).result
                   for r, _ in escaping]
        kernel, body = parallel(ix, [1], ["block_x"])
    end = body.operations[len(body.operations) - 1]
    for o in kept:
        o.move_before(end)
    host_values = {}
    for (value, uses), buffer in zip(escaping, buffers):
        with ir.InsertionPoint(end):
            op("memref.store", [value, buffer], [])
        for use in uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if _in_kernel(user):
                with ir.InsertionPoint(user):
                    loaded = op("memref.load", [buffer], [value.type]).result
            else:
                if _key(buffer.owner) not in host_values:
                    with ir.InsertionPoint.after(kernel):
                        host_values[_key(buffer.owner)] = op(
                            "memref.load", [buffer], [value.type]).result
                loaded = host_values[_key(buffer.owner)]
            user.operands[use.operand_number] = loaded
    terminator = block.operations[len(block.operations) - 1]
    for buffer in buffers:
        with ir.InsertionPoint(terminator):
            op("memref.dealloc", [buffer], [])
    return 1


def _outside(user, members: set, block: ir.Block) -> bool:
    """Whether `user` is outside the ops of `block` whose keys are `members`."""
    user = user.operation if hasattr(user, "operation") else user
    while user is not None:
        parent = user.parent
        if parent is None:
            return True
        if user.block == block:
            return _key(user) not in members
        user = parent
    return True


def _key(operation) -> int:
    return hash(operation.operation if hasattr(operation, "operation") else operation)
