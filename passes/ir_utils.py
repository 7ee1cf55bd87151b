"""Helpers the ember passes share: op identity and specs, constants, rewriting, walks.

What an op may do (effects, purity, failing at run time) is `passes/analysis/effects.py`.
"""

from __future__ import annotations

import ctypes
from typing import Iterator, Optional

import numpy as np
from mlir import ir

from ember.dialects.ember import creation
from ember.dialects.ember.base import REGISTRY, Op
from ember.dialects.ember.builder import emit
from ember.dialects.ember.convert import attr_from_mlir, known_value, type_from_mlir
from ember.dialects.ember.verifier import iter_ops

# Terminators and structure that passes must never move or erase on their own.
STRUCTURAL = frozenset({"func.return", "scf.yield", "scf.condition", "func.func",
                        "builtin.module"})
LOOPS = frozenset({"scf.while", "scf.for"})


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def op_id(op: ir.Operation) -> int:
    """An operation's identity while it lives, for dict keys: its `MlirOperation` pointer.

    `hash(op)` is not one: it changes when the bindings recreate an op's Python wrapper,
    which erasing a nearby op can cause, so a dict keyed by ops misses after a rewrite.
    """
    return _capsule_pointer(op._CAPIPtr, b"mlir.ir.Operation._CAPIPtr")


def as_operation(op) -> ir.Operation:
    """`op` as an `ir.Operation` (an op view such as `func.FuncOp`, or the operation)."""
    return getattr(op, "operation", op)


def symbol_name(op) -> Optional[str]:
    """The op's `sym_name` (a function's name), or None if it has none."""
    op = as_operation(op)
    return ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes \
        else None


def symbol_table(module) -> dict[str, ir.Operation]:
    """The named ops directly in the body of `module` (an `ir.Module` or its operation),
    by name."""
    body = module.body if isinstance(module, ir.Module) else module.regions[0].blocks[0]
    table = {}
    for op in body.operations:
        name = symbol_name(op)
        if name is not None:
            table[name] = as_operation(op)
    return table


def spec_of(op: ir.Operation) -> Optional[type[Op]]:
    return REGISTRY.get(op.name)


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


def functions(root) -> Iterator[ir.Operation]:
    """The functions of a module (an `ir.Module` or its operation), or `root` itself when
    it is a function (a pass nested under `func.func(...)` is given each function)."""
    op = root.operation if isinstance(root, ir.Module) else as_operation(root)
    if op.name == "func.func":
        yield op
        return
    for child in op.regions[0].blocks[0].operations:
        if child.operation.name == "func.func":
            yield child.operation


def until_fixed_point(module, step, max_iterations: int) -> None:
    """Runs `step(fn)` on every function of `module` (a module or a function), again and
    again until no call returns True or `max_iterations` rounds ran."""
    for _ in range(max_iterations):
        changed = False
        for fn in functions(module):
            changed |= bool(step(fn))
        if not changed:
            return


def ops_named(root, names) -> list[ir.Operation]:
    """The ops under `root` (a module or an op) whose name is in `names`, in walk order:
    collected first, so a pass may rewrite them as it goes."""
    root = root.operation if isinstance(root, ir.Module) else root
    found: list[ir.Operation] = []

    def visit(op):
        if op.name in names:
            found.append(op.operation)
        return ir.WalkResult.ADVANCE
    root.walk(visit)
    return found


def count_ops(module: ir.Module) -> int:
    """Operations inside functions, excluding the function ops themselves."""
    return sum(len(iter_ops(fn)) for fn in functions(module))


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
