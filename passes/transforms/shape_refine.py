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
     known operand values and the decoded attributes. A value is known if a constant gives
     it, or if this walk computed it: the small static results of a pure op whose operands
     are known (or, for an op that reads only shapes like `ember.shape`, static), by its
     reference kernel. So `fill(fill(shape(shape(x)), 1), v)` (a keepdims reduction of a
     tensor of unknown rank) becomes static in one walk once `x` is, without waiting for
     constant folding between walks.
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
     through the casts of step 4) takes that type, and the branches yield those values;
     count `if-results-refined`. (A tensor of unknown rank that both branches compute
     alike gets its call's shape, so it can be compiled.)

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

import numpy as np

from ember.dialects.ember.base import OpError, Trait
from ember.dialects.ember.convert import type_from_mlir, type_to_mlir
from ember.dialects.ember.types import TensorType
from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import (constant_of, decoded_attrs, functions, has_uses, spec_of,
                                   uncast, walk_regions_last)

# Users that accept a more static operand type without changing their own types.
TYPE_AGNOSTIC_USERS = frozenset({"tensor.cast", "tensor.extract"})


@dataclasses.dataclass(frozen=True)
class ShapeRefinePass(Pass):
    name: ClassVar[str] = "ember-shape-refine"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for fn in functions(module):
            known: dict = {}  # ir.Value -> numpy value computed during this walk
            for op, after_regions in list(walk_regions_last(fn)):
                if after_regions:
                    refined = _refine_if(op) if op.name == "scf.if" else 0
                    if refined:
                        stats.add("if-results-refined", refined)
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
                    old = _tensor_type(result.type)
                    if old is None or not isinstance(new, TensorType) \
                            or not more_static(new, old):
                        continue
                    _refine(result, new)
                    stats.add("refined")
                _remember(op, spec, known)


def _refine_if(op: ir.Operation) -> int:
    """Step 6 for one scf.if; returns how many results it refined."""
    terminators = [list(region.blocks[0].operations)[-1].operation for region in op.regions
                   if len(region.blocks)]
    if len(terminators) != len(op.regions) or not terminators:
        return 0
    count = 0
    for i, result in enumerate(op.results):
        old = _tensor_type(result.type)
        sources = [uncast(term.operands[i]) for term in terminators]
        if old is None or len({str(v.type) for v in sources}) != 1:
            continue
        new = _tensor_type(sources[0].type)
        if new is None or not more_static(new, old):
            continue
        for term, source in zip(terminators, sources):
            cast = term.operands[i].owner
            term.operands[i] = source
            if isinstance(cast, ir.OpView) and cast.name == "tensor.cast" \
                    and not has_uses(cast.operation):
                cast.operation.erase()  # step 4 made it for the yield
        _refine(result, new)
        count += 1
    return count


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


# Values computed while walking are shape-sized: larger ones are left to constant folding.
MAX_KNOWN_ELEMENTS = 64


def _known(value: ir.Value, known: dict) -> Optional[np.ndarray]:
    found = constant_of(value)
    return known.get(value) if found is None else found


def _remember(op: ir.Operation, spec, known: dict) -> None:
    """Records the values of `op`'s results in `known` when they are small, static and
    computable now: a pure op, every operand known (or static, if it reads only shapes)."""
    if not spec.has(Trait.PURE) or spec.has(Trait.SIDE_EFFECTING) or spec.has(Trait.RANDOM):
        return
    types = [_tensor_type(r.type) for r in op.results]
    if not types or any(t is None or not t.is_static or t.dtype.is_string
                        or t.num_elements > MAX_KNOWN_ELEMENTS for t in types):
        return
    arrays = []
    for v in op.operands:
        array = _known(v, known)
        if array is None and spec.reads_shapes_only:
            array = _shape_placeholder(v)
        if array is None or array.size > MAX_KNOWN_ELEMENTS and not spec.reads_shapes_only:
            return
        arrays.append(array)
    try:
        with np.errstate(all="ignore"):
            out = spec.reference(*arrays, **decoded_attrs(op))
    except Exception:  # noqa: BLE001 - the op fails when it runs: nothing is known
        return
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != len(types) or any(np.shape(o) != t.shape for o, t in zip(outs, types)):
        return
    for result, value, t in zip(op.results, outs, types):
        known[result] = np.asarray(value).astype(t.dtype.np_dtype, copy=False)


def _shape_placeholder(value: ir.Value) -> Optional[np.ndarray]:
    """Read-only zeros of `value`'s static type (broadcast from one element: no memory for
    its size) for a kernel that reads only shapes; None unless the type is static."""
    t = _tensor_type(value.type)
    if t is None or not t.is_static:
        return None
    return np.broadcast_to(np.zeros((), t.dtype.np_dtype), t.shape)


def _infer(op: ir.Operation, spec, known: dict) -> Optional[tuple]:
    try:
        types = tuple(type_from_mlir(v.type) for v in op.operands)
        values = tuple(_known(v, known) for v in op.operands) if spec.uses_values else None
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
