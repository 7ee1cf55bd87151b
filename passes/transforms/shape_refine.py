"""ember-shape-refine: make result types as static as the operands allow (upstream: the
`ReifyRankedShapedTypeOpInterface`/`tensor.cast` folding in `canonicalize`, which IRDL ops do
not implement).

Tracing records `?` wherever a size was unknown at trace time: `ember.fill` of a computed shape,
`ember.range` of computed bounds, and everything downstream. Once constant folding has made
those operands constants, re-running each op's type inference gives static types, which
later passes and lowering to linalg use (static sizes need no `tensor.dim`).

Algorithm:
  1. Walk every function's ops in program order (producers before users, nested regions
     included), so a refined operand type is seen by its users.
  2. For each ember op, re-run its spec's inference on the current operand types, with the
     known constant operand values and the decoded attributes.
  3. Where an inferred result type is strictly more static than the declared one (same dtype,
     every declared static dim unchanged, at least one `?` or the unknown rank made known),
     set the result's type; count `refined`.
  4. Ops whose types must not change (`func.return`, `scf.yield`, `scf.condition`,
     `func.call`, loops and any other non-ember user, except `tensor.cast` and
     `tensor.extract`) get a `tensor.cast` back to the old type for their use.
  5. A `tensor.cast` from a more static type (an inlined call's argument, a specialised
     function argument passed to a loop) is looked through: its users that do not pin
     their operand types take the cast's source instead; count `casts-bypassed`.

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
from ember.dialects.ember.verifier import iter_ops
from ember.passes.base import Pass, Statistics
from ember.dialects.ember.partial import known_operands
from ember.passes.ir_utils import decoded_attrs, functions, spec_of

# Users that accept a more static operand type without changing their own types.
TYPE_AGNOSTIC_USERS = frozenset({"tensor.cast", "tensor.extract"})


@dataclasses.dataclass(frozen=True)
class ShapeRefinePass(Pass):
    name: ClassVar[str] = "ember-shape-refine"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for fn in functions(module):
            for op in list(iter_ops(fn)):
                if op.name == "tensor.cast":
                    if _bypass_cast(op):
                        stats.add("casts-bypassed")
                    continue
                spec = spec_of(op)
                if spec is None:
                    continue
                inferred = _infer(op, spec)
                if inferred is None:
                    continue
                for result, new in zip(op.results, inferred):
                    old = _tensor_type(result.type)
                    if old is None or not isinstance(new, TensorType) \
                            or not more_static(new, old):
                        continue
                    _refine(result, new)
                    stats.add("refined")


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


def _infer(op: ir.Operation, spec) -> Optional[tuple]:
    try:
        types = tuple(type_from_mlir(v.type) for v in op.operands)
        values = known_operands(spec, op.operands) if spec.uses_values else None
        return spec.infer_types(types, decoded_attrs(op), values)
    except (OpError, TypeError, ValueError):
        return None  # the verifier reports bad ops; refinement just leaves them alone


def _tensor_type(t: ir.Type) -> Optional[TensorType]:
    try:
        parsed = type_from_mlir(t)
    except TypeError:
        return None
    return parsed if isinstance(parsed, TensorType) else None


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
    old, new = _tensor_type(result.type), _tensor_type(source.type)
    if old is None or new is None or not more_static(new, old):
        return False
    users = [use.owner.operation for use in result.uses]
    users = [user for user in users if not _pins_type(user)]
    for user in users:
        user.replace_uses_of_with(result, source)
    return bool(users)


def _pins_type(user: ir.Operation) -> bool:
    return spec_of(user) is None and user.name not in TYPE_AGNOSTIC_USERS
