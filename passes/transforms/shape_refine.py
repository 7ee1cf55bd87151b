"""ember-shape-refine: make result types as static as the operands allow (upstream: the
`ReifyRankedShapedTypeOpInterface`/`tensor.cast` folding in `canonicalize`, which IRDL ops do
not implement).

Tracing records `?` wherever a size was unknown at trace time: `ember.fill` of a computed shape,
`ember.range` of computed bounds, and everything downstream. Once constant folding has made
those operands constants, re-running each op's type inference gives static types, which
later passes and lowering to linalg use (static sizes need no `tensor.dim`).

Algorithm:
  1. Walk every function's ops in program order (producers before users, nested regions
     included), so a refined operand type is seen by its users; an `scf.if` is visited
     again after its regions (step 6).
  2. For each ember op, re-run its spec's inference on the current operand types, with the
     known operand values (`passes/known_values.py`: constants, and small results this walk
     computed, so `fill(fill(shape(shape(x)), 1), v)` refines in one walk) and the decoded
     attributes.
  3. Where an inferred result type is strictly more static than the declared one (same dtype,
     every declared static dim unchanged, at least one `?` or the unknown rank made known),
     set the result's type; count `refined`.
  4. Ops whose types must not change (`func.return`, `scf.yield`, `scf.condition`,
     `func.call`, loops and any other non-ember user, except `tensor.cast` and
     `tensor.extract`) get a `tensor.cast` back to the old type for their use.
  5. A `tensor.cast` from a more static type (an inlined call's argument, a specialised
     function argument passed to a loop) is looked through: its users that do not pin
     their operand types take the cast's source instead; count `casts-bypassed`.
  6. An `scf.if` result whose branches all yield values of one more static type (looking
     through the casts of step 4) takes that type; count `if-results-refined`.
  7. An `scf.while` whose initial values (looking through casts) are more static than the
     types it carries takes their types for its block arguments and results, if its body
     maps values of those types to the same types (`passes/loop_types.py`, checked before
     its regions are walked); after them, its terminators pass the matching values.
     Count `loops-refined`.

Before:
    %d = "ember.constant"() {value = dense<[2, 3]> : tensor<2xi32>} : () -> tensor<2xi32>
    %f = "ember.fill"(%d, %v) : (tensor<2xi32>, tensor<f32>) -> tensor<?x?xf32>
    return %f : tensor<?x?xf32>
After:
    %d = "ember.constant"() {value = dense<[2, 3]> : tensor<2xi32>} : () -> tensor<2xi32>
    %f = "ember.fill"(%d, %v) : (tensor<2xi32>, tensor<f32>) -> tensor<2x3xf32>
    %c = tensor.cast %f : tensor<2x3xf32> to tensor<?x?xf32>
    return %c : tensor<?x?xf32>
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Optional

from mlir import ir
from mlir.dialects import tensor

from ember.dialects.ember.base import OpError
from ember.dialects.ember.convert import type_from_mlir, type_to_mlir
from ember.dialects.ember.types import TensorType
from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import (decoded_attrs, functions, has_uses, spec_of, uncast,
                                   walk_regions_last)
from ember.passes.known_values import known_operands_in_walk, remember, tensor_type_of
from ember.passes.loop_types import keeps_types

# Users that accept a more static operand type without changing their own types.
TYPE_AGNOSTIC_USERS = frozenset({"tensor.cast", "tensor.extract"})


@dataclasses.dataclass(frozen=True)
class ShapeRefinePass(Pass):
    name: ClassVar[str] = "ember-shape-refine"
    per_function: ClassVar[bool] = True

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for fn in functions(module):
            known: dict = {}  # ir.Value -> numpy value computed during this walk
            for op, after_regions in list(walk_regions_last(fn)):
                if after_regions:
                    refined = _refine_if(op) if op.name == "scf.if" else 0
                    if refined:
                        stats.add("if-results-refined", refined)
                    if op.name == "scf.while":
                        _match_loop_terminators(op)
                    continue
                if op.name == "scf.while" and _refine_loop(op):
                    stats.add("loops-refined")
                    continue
                if op.name == "tensor.cast":
                    if _bypass_cast(op):
                        stats.add("casts-bypassed")
                    continue
                spec = spec_of(op)
                if spec is None:
                    continue
                inferred = _infer(op, spec, known)
                if inferred is None:
                    continue
                for result, new in zip(op.results, inferred):
                    old = tensor_type_of(result.type)
                    if old is None or not isinstance(new, TensorType) \
                            or not more_static(new, old):
                        continue
                    _refine(result, new)
                    stats.add("refined")
                remember(op, spec, known)


def _refine_if(op: ir.Operation) -> int:
    """Step 6 for one scf.if; returns how many results it refined."""
    terminators = [list(region.blocks[0].operations)[-1].operation for region in op.regions
                   if len(region.blocks)]
    if len(terminators) != len(op.regions) or not terminators:
        return 0
    count = 0
    for i, result in enumerate(op.results):
        old = tensor_type_of(result.type)
        sources = [uncast(term.operands[i]) for term in terminators]
        if old is None or len({str(v.type) for v in sources}) != 1:
            continue
        new = tensor_type_of(sources[0].type)
        if new is None or not more_static(new, old):
            continue
        for term, source in zip(terminators, sources):
            _replace_operand(term, i, source)
        _refine(result, new)
        count += 1
    return count


def _refine_loop(op: ir.Operation) -> bool:
    """Step 7 for one scf.while, before its regions are walked: True if retyped."""
    inits = [uncast(v) for v in op.operands]
    old = [tensor_type_of(r.type) for r in op.results]
    new = [tensor_type_of(v.type) for v in inits]
    if None in old or None in new or len(old) != len(new) \
            or any(n != o and not more_static(n, o) for n, o in zip(new, old)) \
            or new == old or not keeps_types(op, new):
        return False
    for i, value in enumerate(inits):
        _replace_operand(op, i, value)
    for value, t in zip([*op.regions[0].blocks[0].arguments,
                         *op.regions[1].blocks[0].arguments, *op.results], new * 3):
        if value.type != type_to_mlir(t):
            retype(value, type_to_mlir(t))  # the terminators see casts until step 7 ends
    return True


def _match_loop_terminators(op: ir.Operation) -> None:
    """After an scf.while's regions were walked: its scf.condition and scf.yield pass
    values of its block arguments' types (the casts of step 4 looked through; a cast to
    the type proved by step 7 otherwise)."""
    before, after = (region.blocks[0] for region in op.regions)
    condition = list(before.operations)[-1].operation
    yielded = list(after.operations)[-1].operation
    for term, skip, args in ((condition, 1, after.arguments), (yielded, 0, before.arguments)):
        for i, arg in enumerate(args):
            value = term.operands[i + skip]
            if value.type == arg.type:
                continue
            source = uncast(value)
            if source.type != arg.type:
                with term.location:
                    source = tensor.CastOp(arg.type, value, ip=ir.InsertionPoint(term)).result
            _replace_operand(term, i + skip, source)


def _replace_operand(op: ir.Operation, i: int, value: ir.Value) -> None:
    """Sets operand `i`, erasing the tensor.cast it was if nothing else uses that."""
    cast = op.operands[i].owner
    op.operands[i] = value
    if isinstance(cast, ir.OpView) and cast.name == "tensor.cast" \
            and not has_uses(cast.operation):
        cast.operation.erase()  # made by step 4 or by tracing, for this use only


def more_static(new: TensorType, old: TensorType) -> bool:
    """Whether `new` keeps everything `old` states and knows strictly more.

    >>> from ember.dialects.ember.dtypes import float32
    >>> more_static(TensorType(float32, (2, 3)), TensorType(float32, (None, 3)))
    True
    >>> more_static(TensorType(float32, (2, 3)), TensorType(float32, (2, 3)))
    False
    """
    if new.dtype is not old.dtype or new.shape is None:
        return False
    if old.shape is None:
        return True
    if len(new.shape) != len(old.shape):
        return False
    if any(o is not None and n != o for n, o in zip(new.shape, old.shape)):
        return False
    return any(o is None and n is not None for n, o in zip(new.shape, old.shape))


def _infer(op: ir.Operation, spec, known: dict) -> Optional[tuple]:
    try:
        types = tuple(type_from_mlir(v.type) for v in op.operands)
        values = known_operands_in_walk(spec, op.operands, known) if spec.uses_values else None
        return spec.infer_types(types, decoded_attrs(op), values)
    except (OpError, TypeError, ValueError):
        return None  # the verifier reports bad ops; refinement just leaves them alone


def _refine(value: ir.Value, new: TensorType) -> None:
    retype(value, type_to_mlir(new))


def retype(value: ir.Value, new: ir.Type) -> None:
    """Gives `value` (an op's result or a block's argument) the type `new`; users that need
    the old type see a tensor.cast of it (placed after its producer, or at the top of its
    block)."""
    old_type = value.type
    pinned = [use.owner.operation for use in value.uses if _pins_type(use.owner.operation)]
    value.set_type(new)
    if not pinned:
        return
    owner = value.owner
    if isinstance(owner, ir.Block):
        where, loc = ir.InsertionPoint.at_block_begin(owner), owner.owner.location
    else:
        where, loc = ir.InsertionPoint.after(owner.operation), owner.operation.location
    with loc:
        cast = tensor.CastOp(old_type, value, ip=where).result
    for user in pinned:
        user.replace_uses_of_with(value, cast)


def _bypass_cast(cast: ir.Operation) -> bool:
    """Lets the users of a tensor.cast to a less static type that need no particular type
    (ember ops re-infer theirs) use its more static source; True if any did."""
    source, result = cast.operands[0], cast.results[0]
    old, new = tensor_type_of(result.type), tensor_type_of(source.type)
    if old is None or new is None or not more_static(new, old):
        return False
    users = [use.owner.operation for use in result.uses]
    users = [user for user in users if not _pins_type(user)]
    for user in users:
        user.replace_uses_of_with(result, source)
    return bool(users)


def _pins_type(user: ir.Operation) -> bool:
    return spec_of(user) is None and user.name not in TYPE_AGNOSTIC_USERS
