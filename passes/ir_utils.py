"""Helpers the ember passes share: op traits from the registry, constants, rewriting.

Upstream passes see IRDL ops as opaque and effectful; these helpers are how ember passes
know what each op may do — from its spec's traits (`is_pure`) and totality (`may_fail`) —
and how they build replacements. Questions about an op with regions walk what it holds
once; a pass asking about every op of a function uses `pure_ops`, one bottom-up walk, so
its cost stays linear in the op count at any nesting depth.
"""

from __future__ import annotations

import ctypes
from typing import Iterator, Optional

import numpy as np
from mlir import ir

from ember.dialects.ember import creation
from ember.dialects.ember.base import REGISTRY, Op, Trait
from ember.dialects.ember.builder import emit
from ember.dialects.ember.convert import attr_from_mlir, known_value, type_from_mlir
from ember.dialects.ember.verifier import iter_ops

# Upstream ops the tracer emits that have no effects.
PURE_UPSTREAM = frozenset({"tensor.extract", "tensor.cast", "tensor.from_elements",
                           "tensor.concat", "arith.constant", "arith.index_cast"})
# Terminators and structure that passes must never move or erase on their own.
STRUCTURAL = frozenset({"func.return", "scf.yield", "scf.condition", "func.func",
                        "builtin.module"})
LOOPS = frozenset({"scf.while", "scf.for"})
# Region ops with no effects of their own: they are what they hold.
REGION_OPS = frozenset({"scf.if", "scf.while", "scf.for", "scf.execute_region"})
# Upstream ops the tracer emits that cannot fail at run time.
TOTAL_UPSTREAM = frozenset({"arith.constant", "arith.index_cast", "tensor.from_elements"})


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def op_id(op: ir.Operation) -> int:
    """An operation's identity while it lives, for dict keys: its `MlirOperation` pointer.

    `hash(op)` is not one: it changes when the bindings recreate an op's Python wrapper,
    which erasing a nearby op can cause, so a dict keyed by ops misses after a rewrite.
    """
    return _capsule_pointer(op._CAPIPtr, b"mlir.ir.Operation._CAPIPtr")


def spec_of(op: ir.Operation) -> Optional[type[Op]]:
    return REGISTRY.get(op.name)


def _own_pure(op: ir.Operation) -> bool:
    """No effects of the op itself, not counting the ops its regions hold."""
    spec = spec_of(op)
    if spec is not None:
        return spec.has(Trait.PURE)
    return op.name in PURE_UPSTREAM or op.name in REGION_OPS


def is_pure(op: ir.Operation) -> bool:
    """No side effects: the op may be erased when unused, merged or moved.

    A region op is pure when every op nested in it is, judged on its own effects in one
    walk (linear in what it holds, however deep)."""
    if not _own_pure(op):
        return False
    return all(_own_pure(inner) or inner.name in STRUCTURAL for inner in iter_ops(op))


def pure_ops(root: ir.Operation) -> set[int]:
    """The `op_id`s of the ops nested in `root` that `is_pure` accepts, in one bottom-up walk.

    Asking `is_pure` of every op of a nest would walk each level's contents again (time
    quadratic in the depth); this visits each op once. The set describes the ops as they
    are now: rewrites after the call are not reflected.
    """
    ops = list(iter_ops(root))
    clean: dict = {}  # op_id -> neither the op nor anything nested in it has effects
    pure = set()
    for op in reversed(ops):  # pre-order reversed: an op comes after everything it holds
        key = op_id(op)
        own = _own_pure(op)
        clean[key] = (own or op.name in STRUCTURAL) and all(
            clean[op_id(child.operation)] for region in op.regions
            for block in region.blocks for child in block.operations)
        if own and clean[key]:
            pure.add(key)
    return pure


def may_fail(op: ir.Operation) -> bool:
    """Whether `op` may raise at run time for some operand values (shapes that only run
    time knows, an integer division by zero, an index out of range).

    An ember op's spec decides (`Op.total`, given the operand types, attributes and the
    constant operands); an upstream op may fail unless it is known total; a region op may
    if anything it holds may (one walk).
    """
    if len(op.regions):
        return op.name not in REGION_OPS or any(_own_may_fail(inner) for inner in iter_ops(op))
    return _own_may_fail(op)


def _own_may_fail(op: ir.Operation) -> bool:
    if op.name in STRUCTURAL or op.name in REGION_OPS:
        return False
    spec = spec_of(op)
    try:
        if spec is None:
            return not _upstream_total(op)
        types = tuple(type_from_mlir(v.type) for v in op.operands)
    except (TypeError, ValueError):
        return True  # a type Ember does not know: assume the worst
    values = tuple(constant_of(v) for v in op.operands)
    return not spec.total(types, decoded_attrs(op), values)


def _upstream_total(op: ir.Operation) -> bool:
    if op.name in TOTAL_UPSTREAM:
        return True
    if op.name == "tensor.extract":  # without indices (a rank-0 tensor) nothing is checked
        return len(op.operands) == 1
    if op.name == "tensor.cast":  # total when it only forgets static sizes
        source, target = (type_from_mlir(v.type).shape for v in (op.operands[0], op.results[0]))
        return source is not None and target is not None and len(source) == len(target) \
            and all(t is None or s == t for s, t in zip(source, target))
    return False



def writes_variables(op: ir.Operation) -> bool:
    """Whether `op` (or anything nested in it) may write a variable or call unknown code."""
    def writes(o: ir.Operation) -> bool:
        spec = spec_of(o)
        if spec is not None:
            return spec.has(Trait.SIDE_EFFECTING) and o.name != "ember.read_variable" \
                and o.name != "ember.print"
        return o.name == "func.call"
    return writes(op) or any(writes(inner) for inner in iter_ops(op))


def decoded_attrs(op: ir.Operation) -> dict:
    """The op's attributes as its spec's Python values (defaults filled in)."""
    spec = spec_of(op)
    attrs = {k: attr_from_mlir(spec.name, k, slot, op.attributes[k])
             for k, slot in spec.attrs.items() if k in op.attributes}
    return spec.normalize_attrs(attrs)


def constant_of(value: ir.Value) -> Optional[np.ndarray]:
    """The numpy value of `value` if it is defined by `ember.constant`."""
    return known_value(value)


def is_splat(value: ir.Value, scalar) -> bool:
    """Whether `value` is a constant whose every element equals `scalar` (exactly)."""
    array = constant_of(value)
    if array is None or array.size == 0:
        return False
    if array.dtype == object:
        return False
    if array.strides and not any(array.strides):  # a broadcast splat view: one element
        array = array.reshape(-1)[:1]
    with np.errstate(all="ignore"):
        return bool(np.all(array == scalar))


def same_type(a: ir.Value, b: ir.Value) -> bool:
    return str(a.type) == str(b.type)


def make_constant(array: np.ndarray, like: ir.Value, before: ir.Operation) -> ir.Value:
    """An `ember.constant` of `array` with `like`'s type, inserted before `before`."""
    ttype = type_from_mlir(like.type)
    array = np.asarray(array).astype(ttype.dtype.np_dtype, copy=False)
    with ir.InsertionPoint(before), before.location:
        return emit(creation.ConstantOp, (), {"value": array}, loc=before.location)


def replace_op(op: ir.Operation, values) -> None:
    """Replaces every result of `op` by the given values and erases it."""
    for result, value in zip(op.results, values):
        result.replace_all_uses_with(value)
    op.erase()


def has_uses(op: ir.Operation) -> bool:
    return any(True for r in op.results for _ in r.uses)


def functions(module: ir.Module) -> Iterator[ir.Operation]:
    for op in module.body.operations:
        if op.operation.name == "func.func":
            yield op.operation


def count_ops(module: ir.Module) -> int:
    """Operations inside functions, excluding the function ops themselves."""
    return sum(1 for fn in functions(module) for _ in iter_ops(fn))


def walk_regions_last(root: ir.Operation):
    """(op, False) for every op nested in `root`, in program order (pre-order), and
    (op, True) for an op with regions once all ops inside them were yielded."""
    stack = [(root, _nested(root))]
    while stack:
        parent, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            if stack:
                yield parent, True
            continue
        yield child, False
        if len(child.regions):
            stack.append((child, _nested(child)))


def _nested(op: ir.Operation):
    return (inner.operation for region in op.regions for block in region.blocks
            for inner in block.operations)


def uncast(value: ir.Value) -> ir.Value:
    """The value behind a chain of tensor.casts."""
    while True:
        owner = value.owner
        if isinstance(owner, ir.OpView):
            owner = owner.operation
        if not isinstance(owner, ir.Operation) or owner.name != "tensor.cast":
            return value
        value = owner.operands[0]
