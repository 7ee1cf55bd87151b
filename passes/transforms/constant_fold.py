"""ember-constant-fold: evaluate pure ops on constants with their reference kernels.

This is Grappler's constant folding: an op whose operands are all known is run at compile
time by the same numpy kernel eager mode uses, and replaced by an `ember.constant`. Upstream
MLIR folds through each op's `fold` hook; IRDL ops have none, so upstream `canonicalize` and
`sccp` cannot fold ember ops — the spec registry supplies the kernel instead.

Algorithm:
  1. Walk every function's ops in program order, so a folded producer is already a constant
     when its users are visited (chains fold in one walk).
  2. Take pure ember ops (and `tensor.concat`, an upstream op with a spec) whose operands are
     all `ember.constant`. Never effects (SIDE_EFFECTING); a RANDOM op qualifies only through
     its seed operand being constant.
  3. Skip an op unless every declared result type is static; skip it (`skipped-size-cap`)
     when a result would take more than `size_cap` bytes — checked before running the kernel.
  4. Run the kernel on the decoded attributes; an op whose kernel raises (integer division
     by zero, an index out of range) stays, so the error still happens at run time, as does
     an op its operand types make invalid (a specialisation's static shapes).
  5. Replace each result by an `ember.constant` of the declared type (`folded`), then erase
     the operand constants left without uses. They were visited already, unless a block
     listed after the op's defines them (an unstructured body, `cf.br`): the walk skips
     those, erased (freed) before it reached them.
  6. Fold `tensor.extract` of a constant at constant indices into an `arith.constant` of the
     element (i1, signless integers, floats), so `scf.if`/`scf.while` on a constant predicate
     can be simplified by ember-canonicalize.

Before:
    %a = "ember.constant"() {value = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
    %b = "ember.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
    %s = "ember.add"(%a, %b) : (tensor<2xi32>, tensor<i32>) -> tensor<2xi32>
    return %s : tensor<2xi32>
After:
    %0 = "ember.constant"() {value = dense<[11, 12]> : tensor<2xi32>} : () -> tensor<2xi32>
    return %0 : tensor<2xi32>
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Optional

import numpy as np
from mlir import ir

from ember.dialects.ember.types import TensorType, parse_type
from ember.dialects.ember.verifier import iter_ops
from ember.passes.base import Pass, Statistics
from ember.passes.analysis.effects import foldable
from ember.passes.analysis.effects import op_error
from ember.passes.ir_utils import (constant_of, decoded_attrs, functions, has_uses,
                                   make_constant, op_id, replace_op, spec_of)


@dataclasses.dataclass(frozen=True)
class ConstantFoldPass(Pass):
    name: ClassVar[str] = "ember-constant-fold"
    per_function: ClassVar[bool] = True
    size_cap: int = 1048576  # bytes of one produced constant

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for fn in functions(module):
            erased: set[int] = set()  # op_ids of constants erased before the walk met them
            for op in iter_ops(fn):
                if erased and op_id(op) in erased:
                    continue  # freed: its wrapper must not be read
                folded = _fold_extract(op, erased) if op.name == "tensor.extract" \
                    else self._fold(op, stats, erased)
                if folded:
                    stats.add("folded")

    def _fold(self, op: ir.Operation, stats: Statistics, erased: set[int]) -> bool:
        """Folds one spec'd op whose operands are constants; True if it was replaced."""
        spec = spec_of(op)
        if not foldable(spec):
            return False
        arrays = [constant_of(v) for v in op.operands]
        if not arrays or any(a is None for a in arrays):  # no operands: ember.constant itself
            return False
        types = _static_result_types(op)
        if types is None or op_error(op, spec) is not None:  # it raises when it runs
            return False
        if any(_nbytes(t) > self.size_cap for t in types):
            stats.add("skipped-size-cap")
            return False
        outputs = _evaluate(op, spec, arrays, types)
        if outputs is None:
            return False
        if any(_nbytes(t, out) > self.size_cap for t, out in zip(types, outputs)):
            stats.add("skipped-size-cap")  # strings: only the value tells their size
            return False
        producers = _defining_ops(op)
        replace_op(op, [make_constant(out, r, op) for out, r in zip(outputs, op.results)])
        _erase_dead_constants(producers, erased)
        return True


def _static_result_types(op: ir.Operation) -> Optional[list[TensorType]]:
    """The declared result types, or None unless all are static tensors."""
    try:
        types = [parse_type(str(r.type)) for r in op.results]
    except TypeError:
        return None
    if not types or not all(isinstance(t, TensorType) and t.is_static for t in types):
        return None
    return types


def _nbytes(t: TensorType, value: Optional[np.ndarray] = None) -> int:
    """Bytes of a constant of type `t` (strings: their encoded length, once known)."""
    if t.dtype.is_string:
        if value is None:
            return t.num_elements
        return sum(len(v if isinstance(v, bytes) else str(v).encode())
                   for v in np.asarray(value).reshape(-1))
    return t.num_elements * max(1, t.dtype.bits // 8)


def _evaluate(op: ir.Operation, spec, arrays: list, types: list) -> Optional[list]:
    """Runs the reference kernel; None if it raises or gives values of the wrong shape."""
    try:
        attrs = decoded_attrs(op)
        with np.errstate(all="ignore"):
            out = spec.reference(*arrays, **attrs)
    except Exception:  # the op fails at run time as well: leave it there
        return None
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != len(types):
        return None
    values = [np.asarray(v) for v in outs]
    if any(v.shape != t.shape for v, t in zip(values, types)):
        return None
    with np.errstate(all="ignore"):  # a f32 accumulator overflows to inf as f16, silently
        return [v if t.dtype.is_string else v.astype(t.dtype.np_dtype, copy=False)
                for v, t in zip(values, types)]


def _defining_ops(op: ir.Operation) -> list[ir.Operation]:
    """The distinct ops defining `op`'s operands (block arguments left out)."""
    found: list[ir.Operation] = []
    for v in op.operands:
        owner = v.owner
        if isinstance(owner, ir.OpView):
            owner = owner.operation
        if isinstance(owner, ir.Operation) and not any(owner == f for f in found):
            found.append(owner)
    return found


def _erase_dead_constants(ops: list[ir.Operation], erased: set[int]) -> None:
    """Erases the constants among `ops` that the fold left without uses. One in a region of
    one block precedes the folded op (it dominates it); one in a region of several blocks
    may come later in the walk, so its `op_id` is added to `erased`."""
    for op in ops:
        if op.name in ("ember.constant", "arith.constant") and not has_uses(op):
            if len(op.block.region.blocks) > 1:
                erased.add(op_id(op))
            op.erase()


def _fold_extract(op: ir.Operation, erased: set[int]) -> bool:
    """tensor.extract %c[%i...] of a constant at constant indices -> arith.constant."""
    array = constant_of(op.operands[0])
    indices = [_index_constant(v) for v in list(op.operands)[1:]]
    if array is None or any(i is None for i in indices):
        return False
    if any(not 0 <= i < d for i, d in zip(indices, array.shape)):
        return False  # out of bounds: undefined behaviour, not ours to fold
    attr = _scalar_attr(array[tuple(indices)], op.results[0].type)
    if attr is None:
        return False
    producers = _defining_ops(op)
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create("arith.constant", results=[op.results[0].type],
                                  attributes={"value": attr})
    replace_op(op, [new.results[0]])
    _erase_dead_constants(producers, erased)
    return True


def _index_constant(value: ir.Value) -> Optional[int]:
    owner = value.owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "arith.constant":
        return None
    attr = owner.operation.attributes["value"]
    return int(attr.value) if isinstance(attr, ir.IntegerAttr) else None


def _scalar_attr(element, mlir_type: ir.Type) -> Optional[ir.Attribute]:
    """The arith.constant attribute for one element, or None for other element types."""
    if isinstance(mlir_type, ir.IntegerType):
        if not mlir_type.is_signless:
            return None  # arith.constant takes signless integers only (not ui8)
        if mlir_type.width == 1:
            return ir.BoolAttr.get(bool(element))
        return ir.IntegerAttr.get(mlir_type, int(element))
    if isinstance(mlir_type, ir.FloatType):
        return ir.FloatAttr.get(mlir_type, float(element))
    return None
