"""Conversions between the op specs' Python values and MLIR types and attributes.

Reading attributes from parsed IR validates them: a malformed attribute becomes an
`OpAttributeError` naming the op, the attribute and what was expected, never a crash.
"""

from __future__ import annotations

import functools

from mlir import ir

from ember.dialects.ember import dtypes, elements
from ember.dialects.ember.base import ATTR_KINDS, Attr, OpAttributeError
from ember.dialects.ember.types import IRType, TensorType, parse_type


def type_to_mlir(t: IRType) -> ir.Type:
    """The MLIR type for an ember value type (needs a context with the ember dialect)."""
    context = ir.Context.current
    try:
        return _MLIR_TYPES[context, t]
    except (KeyError, TypeError):  # TypeError: an unhashable type, parsed every time
        pass
    mlir_type = ir.Type.parse(str(t))
    if context is not None:
        if len(_MLIR_TYPES) >= 4096:  # bounded: it keeps the contexts of its types alive
            _MLIR_TYPES.clear()
        try:
            _MLIR_TYPES[context, t] = mlir_type
        except TypeError:
            pass
    return mlir_type


# (context, ember type) -> its MLIR type: parsing the text costs a trace ~5 us per op
_MLIR_TYPES: dict = {}


def type_from_mlir(t: ir.Type) -> IRType:
    """The ember value type of an MLIR type; raises TypeError for non-ember types."""
    return _parse_type(str(t))


_parse_type = functools.lru_cache(maxsize=4096)(parse_type)  # types are immutable values


def attr_to_mlir(slot: Attr, value, result_type: TensorType | None = None) -> ir.Attribute:
    """Builds the MLIR attribute for an already-normalised Python attribute value."""
    kind = slot.kind
    if kind == "i64":
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if kind == "i64_array":
        return ir.DenseI64ArrayAttr.get(list(value))
    if kind == "bool":
        return ir.BoolAttr.get(value)
    if kind == "f64":
        return ir.FloatAttr.get_f64(value)
    if kind == "str":
        return ir.StringAttr.get(value)
    if kind == "dtype":
        return ir.TypeAttr.get(ir.Type.parse(value.mlir))
    if kind == "elements":
        ttype = result_type or TensorType(dtypes.as_dtype(value.dtype), value.shape)
        return elements.from_numpy(value, ttype)
    raise AssertionError(kind)


def _elements_type(attr: ir.Attribute) -> TensorType:
    if isinstance(attr, (ir.DenseIntElementsAttr, ir.DenseFPElementsAttr)):
        t = parse_type(str(attr.type))
    else:
        text = str(attr)
        if not text.startswith("dense<"):
            raise TypeError("not a dense elements attribute")
        t = parse_type(text.rsplit(":", 1)[1])
    if not isinstance(t, TensorType) or not t.is_static:
        raise TypeError("dense elements need a static tensor type")
    return t


def attr_from_mlir(op_name: str, name: str, slot: Attr, attr: ir.Attribute):
    """Reads and validates one attribute of a parsed op into its Python value."""
    kind = slot.kind
    bad = OpAttributeError(op_name, f"attribute '{name}' expects {ATTR_KINDS[kind][1]}, "
                           f"got {attr}")
    if kind == "bool":
        if not isinstance(attr, ir.BoolAttr):
            raise bad
        return bool(attr.value)
    if kind == "i64":
        if isinstance(attr, ir.BoolAttr) or not isinstance(attr, ir.IntegerAttr):
            raise bad
        return int(attr.value)
    if kind == "i64_array":
        if not isinstance(attr, ir.DenseI64ArrayAttr):
            raise bad
        return tuple(int(v) for v in attr)
    if kind == "f64":
        if not isinstance(attr, ir.FloatAttr):
            raise bad
        return float(attr.value)
    if kind == "str":
        if not isinstance(attr, ir.StringAttr):
            raise bad
        return attr.value
    if kind == "dtype":
        if not isinstance(attr, ir.TypeAttr):
            raise bad
        try:
            return dtypes.from_mlir(str(attr.value))
        except TypeError as e:
            raise OpAttributeError(op_name, f"attribute '{name}': {e}") from None
    if kind == "elements":
        try:
            ttype = _elements_type(attr)
        except TypeError as e:
            raise OpAttributeError(op_name, f"attribute '{name}' expects a dense elements "
                                   f"attribute of a static ember tensor type ({e})") from None
        return elements.to_numpy(attr, ttype)
    raise AssertionError(kind)


def known_value(value: ir.Value):
    """The numpy value of an SSA value defined by `ember.constant`, else None."""
    owner = value.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)):
        return None
    op = owner.operation if isinstance(owner, ir.OpView) else owner
    if op.name != "ember.constant" or "value" not in op.attributes:
        return None
    try:
        ttype = _elements_type(op.attributes["value"])
        return elements.to_numpy(op.attributes["value"], ttype)
    except (TypeError, ValueError):
        return None


__all__ = ["attr_from_mlir", "attr_to_mlir", "known_value", "type_from_mlir",
           "type_to_mlir"]
