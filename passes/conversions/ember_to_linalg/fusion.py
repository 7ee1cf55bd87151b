"""Elementwise fusion while lowering: a chain of elementwise ops becomes one `linalg.generic`.

Every elementwise rule ends in `Lowering.elementwise(inputs, types, out, body)`, where
`body` builds the op's scalar computation. With fusion on (the pass's default), the
generic an elementwise op produced is remembered with its inputs, their indexing maps and
its body. When a later elementwise op takes that generic's result as an operand of the
same shape as its own result (no broadcasting) and nothing else uses it, the new generic
reads the producer's inputs instead and calls the producer's body inside its own: one
loop, no intermediate tensor. The producer, now unused, is erased.

This is what upstream `linalg-fuse-elementwise-ops` does, built in as the ops are lowered:
upstream fuses one producer at a time, copying the growing body into each new generic, so a
chain of n ops costs O(n^2); here each op's body is built once.
Broadcast operands, results used twice and results used across a region boundary stay
separate generics (upstream fusion still runs after, for what is left).

A value whose only user will fuse it is not built as a generic at all (building each generic
of a chain with the whole chain's body so far would be O(n^2) again): it is "deferred", an
`unrealized_conversion_cast` of its leaves and its destination standing in for it, so its
leaves stay real uses (nothing they depend on is erased) and replacing a value updates them.
A deferred value that something other than an ember op comes to use (a linalg op, a
return, a region) is built then; so is any left at the end of the function.

Before (two ops), after (one generic, `%t` never materialised):
    %t = "ember.tanh"(%x)             %0 = linalg.generic ins(%x, %c) ... {
    %0 = "ember.mul"(%t, %c)              %t = <tanh of %in0>; %m = arith.mulf %t, %in1
                                          linalg.yield %m }
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

from mlir import ir

from ember.dialects.ember.base import REGISTRY, Trait
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.types import TensorType
from ember.passes.ir_utils import as_operation


@dataclasses.dataclass
class Recipe:
    """How a fusible value is computed per element: `body` over one scalar per leaf. The
    leaf values are the first operands of `op` (its generic, or the cast standing in for
    it), so they follow replacements; `kinds` holds each leaf's (ember type, map)."""

    op: ir.Operation
    kinds: list
    body: Callable[..., ir.Value]
    out: TensorType
    deferred: bool

    def leaves(self) -> list:
        values = list(self.op.operands)[:len(self.kinds)]
        return [(v, t, m) for v, (t, m) in zip(values, self.kinds)]


class Composed:
    """The scalar body of a fused generic: `body` applied to one value per input, where an
    input is a leaf scalar (an index into the generic's block arguments) or a fused
    producer's body applied to some of them (`(recipe, leaf indices)`). A producer used
    twice (x * x of a fused x) is computed once.

    Producers' bodies are often Composed themselves, one level per op of a fused chain;
    calling evaluates them with an explicit stack, so chains of any length (100k ops)
    cannot exhaust Python's recursion limit."""

    def __init__(self, parts: list, body: Callable[..., ir.Value]):
        self.parts = parts
        self.body = body

    def __call__(self, *scalars: ir.Value) -> ir.Value:
        # A frame: (composed, its scalars, arguments so far, producers already computed).
        stack = [(self, scalars, [], {})]
        result = None
        while stack:
            composed, args_in, args, done = stack[-1]
            if result is not None:  # the producer the frame waited for has its value
                recipe = composed.parts[len(args)][0]
                done[id(recipe)] = result
                args.append(result)
                result = None
            while len(args) < len(composed.parts):
                part = composed.parts[len(args)]
                if isinstance(part, int):
                    args.append(args_in[part])
                    continue
                recipe, indices = part
                if id(recipe) in done:
                    args.append(done[id(recipe)])
                    continue
                inner = [args_in[i] for i in indices]
                if not isinstance(recipe.body, Composed):
                    done[id(recipe)] = recipe.body(*inner)
                    args.append(done[id(recipe)])
                    continue
                stack.append((recipe.body, inner, [], {}))
                break
            else:
                stack.pop()
                result = composed.body(*args)
        return result


class Fusion:
    """The fusible values of one function, and the producers fusion left without uses."""

    def __init__(self):
        self.recipes: dict[ir.Value, Recipe] = {}
        self.fused: list[ir.Operation] = []

    def producer(self, value: ir.Value, vtype: TensorType, out: TensorType,
                 consumer: ir.Operation) -> Recipe | None:
        """The recipe of `value` if the op being lowered (`consumer`) may fuse it: same
        shape as the consumer's result, same block, and no other user."""
        recipe = self.recipes.get(value)
        if recipe is None or vtype.shape != out.shape:
            return None
        if recipe.op.block != consumer.block:  # e.g. into a loop body: would recompute
            return None
        if any(as_operation(use.owner) != consumer for use in value.uses):
            return None
        return recipe

    def plan(self, inputs: Sequence[ir.Value], input_types: Sequence[TensorType],
             out: TensorType, body: Callable[..., ir.Value], consumer: ir.Operation,
             leaf_map: Callable[[TensorType], ir.AffineMap]):
        """The leaves (value, type, map) of the fused generic and its composed body."""
        leaves: list = []

        def leaf(value, vtype, amap) -> int:
            for i, (v, _, m) in enumerate(leaves):
                if v == value and m == amap:
                    return i
            leaves.append((value, vtype, amap))
            return len(leaves) - 1

        parts = []  # per input: a leaf index, or (recipe, its leaf indices)
        for value, vtype in zip(inputs, input_types):
            recipe = self.producer(value, vtype, out, consumer)
            if recipe is None:
                parts.append(leaf(value, vtype, leaf_map(vtype)))
            else:
                parts.append((recipe, [leaf(*lf) for lf in recipe.leaves()]))
                if recipe.op not in self.fused:
                    self.fused.append(recipe.op)

        return leaves, Composed(parts, body)

    def will_be_fused(self, op: ir.Operation, out: TensorType) -> bool:
        """Whether the ember op being lowered has one user (that may use it more than
        once, as `producer` allows), an elementwise ember op in the same block whose
        result has `out`'s shape (that user will take the recipe)."""
        results = list(op.results)
        if len(results) != 1:
            return False
        users = [as_operation(use.owner) for use in results[0].uses]
        if not users or any(u != users[0] for u in users):
            return False
        user = users[0]
        spec = REGISTRY.get(user.name)
        if spec is None or not spec.has(Trait.ELEMENTWISE) or user.block != op.block:
            return False
        user_out = type_from_mlir(user.results[0].type)
        return isinstance(user_out, TensorType) and user_out.shape == out.shape

    def defer(self, leaves: list, body, out: TensorType, dest: ir.Value,
              result_type: ir.Type) -> ir.Value:
        """A stand-in for the value (see the module docstring); returns it."""
        cast = ir.Operation.create("builtin.unrealized_conversion_cast",
                                   results=[result_type],
                                   operands=[v for v, _, _ in leaves] + [dest])
        self._record(cast, leaves, body, out, deferred=True)
        return cast.results[0]

    def record(self, generic: ir.Operation, leaves: list, body, out: TensorType) -> None:
        self._record(generic, leaves, body, out, deferred=False)

    def _record(self, op, leaves, body, out, deferred) -> None:
        op = as_operation(op)
        self.recipes[op.results[0]] = Recipe(op, [(t, m) for _, t, m in leaves], body, out,
                                             deferred)

    def materialize(self, build: Callable, only_for_non_ember_users: bool) -> None:
        """Builds the generic of every deferred value something still needs: after each
        op, those used by anything but an ember op (which could still fuse it); at the end
        of the function, all (`only_for_non_ember_users=False`)."""
        for value, recipe in list(self.recipes.items()):
            if not recipe.deferred:
                continue
            users = [as_operation(use.owner) for use in value.uses]
            if not users or (only_for_non_ember_users and
                             all(u.name.startswith("ember.") for u in users)):
                continue
            cast, leaves = recipe.op, recipe.leaves()
            with ir.InsertionPoint(cast), cast.location:
                generic = build(leaves, recipe.body, recipe.out, list(cast.operands)[-1])
            value.replace_all_uses_with(generic.results[0])
            del self.recipes[value]
            cast.erase()
            self.record(generic, leaves, recipe.body, recipe.out)

    def erase_fused(self) -> int:
        """Erases fused producers nothing uses any more (call after replacing the op);
        returns how many."""
        keep, erased = [], 0
        for op in self.fused:
            result = op.results[0]
            if any(True for _ in result.uses):
                keep.append(op)
                continue
            self.recipes.pop(result, None)
            dest = list(op.operands)[-1] if op.name == "builtin.unrealized_conversion_cast" \
                else None
            op.erase()
            erased += 1
            if dest is not None:
                _erase_if_dead(dest)  # the stand-in's tensor.empty, with its sizes
        self.fused = keep
        return erased


_SIZE_OPS = ("tensor.empty", "tensor.dim", "arith.constant")


def _erase_if_dead(value: ir.Value) -> None:
    """Erases the op defining `value` (a destination or one of its sizes) if nothing uses
    it any more, then does the same for its operands."""
    owner = as_operation(value.owner)
    if not isinstance(owner, ir.Operation) or owner.name not in _SIZE_OPS or \
            any(True for r in owner.results for _ in r.uses):
        return
    operands = list(owner.operands)
    owner.erase()
    for operand in operands:
        _erase_if_dead(operand)


