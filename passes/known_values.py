"""Values ember-shape-refine knows while it walks: constants, and the small static results
of pure ops it can compute from them (`ember.shape` of a static operand, a fill of known
dims), so that ops inferring from operand values (`ember.fill`) refine in the same walk.
This is constant folding without rewriting the IR (upstream: the constant lattice of
`sccp`); `ember-constant-fold` later replaces what is worth it.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from mlir import ir

from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.partial import known_operands
from ember.dialects.ember.types import TensorType
from ember.passes.analysis.effects import computable
from ember.passes.ir_utils import constant_of, decoded_attrs


# Values computed while walking are shape-sized: larger ones are left to constant folding.
MAX_KNOWN_ELEMENTS = 64


def known_value(value: ir.Value, known: dict) -> Optional[np.ndarray]:
    found = constant_of(value)
    return known.get(value) if found is None else found


def known_operands_in_walk(spec, operands, known: dict) -> tuple:
    """What inference may assume of each operand: its value when a constant or the walk
    (this module) gives it in full, else what the IR says of it in part
    (dialects/ember/partial.py: symbolic dims, constant_value_as_shape)."""
    partial = known_operands(spec, operands)
    return tuple(p if (full := known_value(v, known)) is None else full
                 for v, p in zip(operands, partial))


def remember(op: ir.Operation, spec, known: dict) -> None:
    """Records the values of `op`'s results in `known` when they are small, static and
    computable now: a pure op, every operand known (or static, if it reads only shapes)."""
    if not computable(spec):
        return
    types = [tensor_type_of(r.type) for r in op.results]
    if not types or any(t is None or not t.is_static or t.dtype.is_string
                        or t.num_elements > MAX_KNOWN_ELEMENTS for t in types):
        return
    arrays = []
    for v in op.operands:
        array = known_value(v, known)
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
    t = tensor_type_of(value.type)
    if t is None or not t.is_static:
        return None
    return np.broadcast_to(np.zeros((), t.dtype.np_dtype), t.shape)


def tensor_type_of(t: ir.Type) -> Optional[TensorType]:
    """The ember TensorType of an MLIR type, or None (not a tensor type ember knows)."""
    try:
        parsed = type_from_mlir(t)
    except TypeError:
        return None
    return parsed if isinstance(parsed, TensorType) else None

