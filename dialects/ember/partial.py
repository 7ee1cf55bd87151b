"""What is known of an integer shape value at compile time: TensorFlow's
`constant_value_as_shape`, read from the IR alone.

`em.zeros(em.shape(x))` builds its shape operand from `ember.shape`, not from a constant;
`em.zeros([n, 3])` stacks a traced scalar with a Python int. The ops that build shapes
(`ember.constant`, `ember.shape`, slices of them, `expand_dims` + `tensor.concat` (stack),
reshape and integer casts) carry partial values: each element an int or unknown. Type
inference of ops with shape operands (`uses_values`) reads them through `known_operand`, so the
tracer, the verifier, shape refinement and lowering all compute the same result type, e.g.
`em.zeros([n, 3])` is `tensor<?x3xf32>` and `em.zeros(em.shape(x))` of a `tensor<4xf32>` is
`tensor<4xf32>`.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from mlir import ir

from ember.dialects.ember import dtypes
from ember.dialects.ember.convert import attr_from_mlir, known_value, type_from_mlir
from ember.dialects.ember.types import TensorType

_MAX_DEPTH = 64  # shape computations are short chains; deeper ones are left unknown
_INTS = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8)


class Dim:
    """Dim `index` of the tensor `value`, unknown at compile time: two are the same size when
    they are the same dim (what lets `reshape(x, [shape(x)[0], -1])` infer `?x8`)."""

    __slots__ = ("value", "index")

    def __init__(self, value: ir.Value, index: int):
        self.value, self.index = value, index

    def __eq__(self, other) -> bool:
        return isinstance(other, Dim) and self.index == other.index and self.value == other.value

    def __hash__(self) -> int:
        return hash((self.value, self.index))

    def __repr__(self) -> str:
        return f"Dim({self.index})"


def known_operands(spec, operands) -> tuple:
    """The `values` an op spec with `uses_values` infers from: per operand, `known_operand`;
    specs with `uses_dims` also get the non-integer operands' dims as ints and `Dim`s and
    keep `Dim`s in partial shapes (for other specs they are None)."""
    dims = getattr(spec, "uses_dims", False)
    out = []
    for v in operands:
        known = known_operand(v)
        if isinstance(known, tuple) and not dims:
            known = tuple(None if isinstance(d, Dim) else d for d in known)
        elif known is None and dims and _int_type(v) is None:
            known = dims_of(v)
        out.append(known)
    return tuple(out)


def dims_of(value: ir.Value) -> Optional[tuple]:
    """The dims of `value`'s ranked tensor type, `Dim`s where they are `?`."""
    try:
        t = type_from_mlir(value.type)
    except (TypeError, ValueError):
        return None
    if not isinstance(t, TensorType) or t.shape is None:
        return None
    return tuple(Dim(value, i) if d is None else d for i, d in enumerate(t.shape))


def known_operand(value: ir.Value):
    """What inference may assume of `value`: its numpy value when it is fully known, a tuple
    of ints and unknowns (`Dim`s or None) when it is a 1-D integer tensor known in part,
    else None."""
    full = known_value(value)
    if full is not None:
        return full
    vtype = _int_type(value)
    if vtype is None:
        return None
    known = partial_value(value)
    if known is None:
        return None
    if all(isinstance(v, int) for v in known.reshape(-1)):
        return np.array(known.tolist(), dtype=np.int64).astype(vtype.dtype.np_dtype)
    return tuple(known.tolist()) if known.ndim == 1 else None


def partial_value(value: ir.Value, depth: int = 0) -> Optional[np.ndarray]:
    """An object array (of `value`'s static shape, rank <= 1) of ints and unknowns (`Dim`s
    or None), or None
    when nothing is known or `value` is not a small integer tensor."""
    vtype = _int_type(value)
    if vtype is None or depth > _MAX_DEPTH:
        return None
    full = known_value(value)
    if full is not None:
        return np.array([int(v) for v in full.reshape(-1)], dtype=object).reshape(full.shape)
    owner = value.owner
    op = owner.operation if isinstance(owner, ir.OpView) else owner
    rule = _RULES.get(op.name) if isinstance(op, ir.Operation) else None
    if rule is None:
        return None
    try:
        out = rule(op, depth + 1)
    except (IndexError, ValueError, TypeError, KeyError):
        return None
    if out is None or out.shape != vtype.shape:
        return None
    return out


def _int_type(value: ir.Value) -> Optional[TensorType]:
    try:
        t = type_from_mlir(value.type)
    except (TypeError, ValueError):
        return None
    if not isinstance(t, TensorType) or t.dtype not in _INTS or t.shape is None:
        return None
    if len(t.shape) > 1 or None in t.shape:
        return None
    return t


def _operand(op: ir.Operation, i: int, depth: int) -> Optional[np.ndarray]:
    """Operand i's partial value, or all-unknown of its static shape."""
    known = partial_value(op.operands[i], depth)
    if known is not None:
        return known
    t = _int_type(op.operands[i])
    if t is None:
        return None
    return np.full(t.shape, None, dtype=object)


def _attr(op: ir.Operation, name: str):
    from ember.dialects.ember.base import REGISTRY
    spec = REGISTRY[op.name]
    slot = spec.attrs[name]
    if name not in op.attributes:
        return slot.default
    return attr_from_mlir(spec.name, name, slot, op.attributes[name])


def _shape(op: ir.Operation, depth: int):
    dims = dims_of(op.operands[0])
    return None if dims is None else np.array(list(dims) + [0], dtype=object)[:-1]


def _strided_slice(op: ir.Operation, depth: int):
    from ember.dialects.ember.indexing import slice_index
    known = _operand(op, 0, depth)
    if known is None:
        return None
    names = ("begin", "end", "strides", "begin_mask", "end_mask", "ellipsis_mask",
             "new_axis_mask", "shrink_axis_mask")
    index = slice_index(**{n: _attr(op, n) for n in names})
    return np.array(known[index], dtype=object)


def _concat(op: ir.Operation, depth: int):
    parts = [_operand(op, i, depth) for i in range(len(op.operands))]
    if any(p is None or p.ndim != 1 for p in parts):
        return None
    return np.concatenate(parts) if parts else None


def _reshape(op: ir.Operation, depth: int):
    known = _operand(op, 0, depth)
    out = _int_type(op.results[0])
    return None if known is None or out is None else known.reshape(out.shape)


def _cast(op: ir.Operation, depth: int):
    known = _operand(op, 0, depth)
    out = _int_type(op.results[0])
    if known is None or out is None:
        return None
    info = np.iinfo(out.dtype.np_dtype)
    fits = [not isinstance(v, int) or info.min <= v <= info.max for v in known.reshape(-1)]
    return known if all(fits) else None


_RULES = {
    "ember.shape": _shape,
    "ember.strided_slice": _strided_slice,
    "tensor.concat": _concat,
    "ember.expand_dims": _reshape,
    "ember.reshape": _reshape,
    "ember.squeeze": _reshape,
    "ember.cast": _cast,
}
