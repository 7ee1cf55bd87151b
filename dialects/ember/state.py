"""Stateful and effectful ops: variable reads and writes on `!ember.resource`, and print.

These carry `SIDE_EFFECTING`: passes keep their order and never merge, hoist or erase them.
Their reference kernels are the pure state transitions (the interpreter owns the state):
`assign_add_variable(old, delta) -> old + delta`; `print(x) -> the text to write`.
Upstream equivalents: `memref.load`/`memref.store` after bufferization; `vector.print`.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpShapeError, OpTypeError,
                                       Trait, register, require_dtype)
from ember.dialects.ember.types import ResourceType, TensorType, shapes_compatible

_EFFECT = frozenset({Trait.SIDE_EFFECTING})


@register
class ReadVariableOp(Op):
    """Reads the current value of a variable.

    Example:
      %v = "ember.read_variable"(%r) : (!ember.resource<tensor<2xf32>>) -> tensor<2xf32>
    """

    name = "ember.read_variable"
    operands = ("resource",)
    resource_operands = frozenset({"resource"})
    traits = _EFFECT
    family = "state"

    @classmethod
    def infer(cls, r: ResourceType):
        return r.value

    @staticmethod
    def reference(value):
        return value


class AssignOp(Op):
    operands = ("resource", "value")
    resource_operands = frozenset({"resource"})
    results = ()
    traits = _EFFECT
    family = "state"
    numeric_only = False

    @classmethod
    def infer(cls, r: ResourceType, value: TensorType):
        held = r.value
        if value.dtype is not held.dtype:
            raise OpTypeError(cls.name, f"value of type {value} does not match the variable's "
                              f"type {held}")
        if cls.numeric_only:
            require_dtype(cls, value, dtypes.NUMERIC, "numeric", "value")
        if not shapes_compatible(value.shape, held.shape):
            raise OpShapeError(cls.name, f"value of type {value} does not fit the variable's "
                               f"shape {held}")
        return ()


@register
class AssignVariableOp(AssignOp):
    """Replaces the value of a variable.

    Example:
      "ember.assign_variable"(%r, %v) : (!ember.resource<tensor<2xf32>>, tensor<2xf32>) -> ()
    """

    name = "ember.assign_variable"

    @staticmethod
    def reference(old, new):
        return new


@register
class AssignAddVariableOp(AssignOp):
    """Adds `value` to a variable in place.

    Example:
      "ember.assign_add_variable"(%r, %v) : (!ember.resource<tensor<i32>>, tensor<i32>) -> ()
    """

    name = "ember.assign_add_variable"
    numeric_only = True

    @staticmethod
    def reference(old, delta):
        return old + delta


@register
class AssignSubVariableOp(AssignOp):
    """Subtracts `value` from a variable in place.

    Example:
      "ember.assign_sub_variable"(%r, %v) : (!ember.resource<tensor<3xf64>>, tensor<3xf64>) -> ()
    """

    name = "ember.assign_sub_variable"
    numeric_only = True

    @staticmethod
    def reference(old, delta):
        return old - delta


def format_value(x: np.ndarray) -> str:
    """Formats a tensor value the way tf.print does: `[1 2 3]`, scalars bare, long dims elided."""
    if x.dtype == object:
        if x.ndim == 0:
            item = x.item()
            return item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
        # iterating a 1-D object array yields the bare items: re-wrap them as 0-d arrays
        return "[" + " ".join(format_value(np.asarray(v, dtype=object)) for v in x) + "]"
    if x.ndim == 0:
        return np.array2string(x)
    return np.array2string(x, separator=" ", threshold=1000, edgeitems=3,
                           max_line_width=10**9)


@register
class PrintOp(Op):
    """Prints one value on every execution: `format` with `{}` replaced by it, then `end`.

    `stream` is "stderr" (the default, as tf.print) or "stdout".

    Example:
      "ember.print"(%x) {end = "\\0A", format = "x = {}", stream = "stderr"} : (tensor<3xi32>) -> ()
    """

    name = "ember.print"
    operands = ("input",)
    results = ()
    attrs = {"format": Attr("str", "{}"), "end": Attr("str", "\n"),
             "stream": Attr("str", "stderr")}
    traits = _EFFECT
    family = "state"

    @classmethod
    def infer(cls, x: TensorType, *, format, end, stream):
        if format.count("{}") != 1:
            raise OpAttributeError(cls.name, f"format must contain exactly one {{}}, "
                                   f"got {format!r}")
        if stream not in ("stderr", "stdout"):
            raise OpAttributeError(cls.name, f"stream must be \"stderr\" or \"stdout\", "
                                   f"got {stream!r}")
        return ()

    @staticmethod
    def reference(x, *, format, end, stream):
        head, tail = format.split("{}")
        return head + format_value(x) + tail + end
