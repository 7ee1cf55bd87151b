"""Stateful and effectful ops: variable reads and writes on `!ember.resource`, print and
assert.

These carry `SIDE_EFFECTING`: passes keep their order and never merge, hoist or erase them.
Their reference kernels are the pure state transitions (the interpreter owns the state):
`assign_add_variable(old, delta) -> old + delta`; `print(x) -> the text to write`;
`assert(c) -> whether it holds`.
Upstream equivalents: `memref.load`/`memref.store` after bufferization; `vector.print`.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpShapeError, OpTypeError,
                                       Total, Trait, register, require_dtype)
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
    total_when = Total.ALWAYS

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
    total_when = Total.STATIC

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


EDGE_ITEMS = 3  # tf.print's default `summarize`: first and last 3 of each longer dim


def format_value(x: np.ndarray, summarize: int = EDGE_ITEMS) -> str:
    """Formats a tensor value the way tf.print does (TensorFlow's `SummarizeValue`).

    `[1 2 3]`, scalars bare, no padding; a dim longer than 2 * `summarize` shows its first
    and last `summarize` entries around `...` (`summarize` -1: every entry); rows of a
    matrix on new lines (`[[1 2]\n [3 4]]`). Floats use TensorFlow's shortest-of-two
    precisions: `%.6g` when it reads back exactly, else `%.9g` (`%.15g`/`%.17g` for
    float64; float16 and bfloat16 print as float32). Bools print as `1`/`0`; a scalar
    string prints as its raw (UTF-8 decoded) text, string elements of an array in double
    quotes (`["a" "b"]`), as current tf.print does.
    """
    if x.size == 0:
        return "[]"
    edge = summarize if summarize >= 0 else max(x.shape, default=0)
    if x.dtype == np.float64:
        return _summarize(x, lambda v: _float_text(float(v), 15, 17, np.float64), edge)
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16.np_dtype:
        x = x.astype(np.float32)
        return _summarize(x, lambda v: _float_text(float(v), 6, 9, np.float32), edge)
    if x.dtype == np.bool_:
        return _summarize(x, lambda v: "1" if v else "0", edge)
    if x.dtype == object:
        def text(v):
            return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
        if x.ndim == 0:
            return text(x[()])
        return _summarize(x, lambda v: f'"{text(v)}"', edge)
    return _summarize(x, str, edge)


def _float_text(value: float, digits: int, more_digits: int, np_type) -> str:
    text = "%.*g" % (digits, value)
    if np_type(float(text)) != np_type(value):  # does not read back: print more digits
        text = "%.*g" % (more_digits, value)
    return text


def _summarize(x: np.ndarray, element, edge: int, depth: int = 0) -> str:
    if x.ndim == 0:
        return element(x[()])
    n = x.shape[0]
    shown = [*range(min(n, edge)), *range(max(edge, n - edge), n)]
    parts = [element(x[i]) if x.ndim == 1 else _summarize(x[i], element, edge, depth + 1)
             for i in shown]
    if n > 2 * edge:
        parts.insert(edge, "...")
    sep = " " if x.ndim == 1 else "\n" * (x.ndim - 1) + " " * (depth + 1)
    return "[" + sep.join(parts) + "]"


@register
class PrintOp(Op):
    """Prints one value on every execution: `format` with `{}` replaced by it, then `end`.

    `stream` is "stderr" (the default, as tf.print) or "stdout". A `format` without `{}`
    prints only its text and `end`: the operand is not shown (em.print of text alone, whose
    text is known at trace time, still prints on every call, in order with the others).

    `summarize` is how many entries at each end of a dim are shown (tf.print's: default 3,
    -1 for all; format_value).

    Example:
      "ember.print"(%x) {end = "\\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xi32>) -> ()
    """

    name = "ember.print"
    operands = ("input",)
    results = ()
    attrs = {"format": Attr("str", "{}"), "end": Attr("str", "\n"),
             "stream": Attr("str", "stderr"), "summarize": Attr("i64", EDGE_ITEMS)}
    traits = _EFFECT
    family = "state"
    total_when = Total.ALWAYS

    @classmethod
    def infer(cls, x: TensorType, *, format, end, stream, summarize):
        if summarize < -1:
            raise OpAttributeError(cls.name, f"summarize must be -1 (every entry) or >= 0, "
                                   f"got {summarize}")
        if format.count("{}") > 1:
            raise OpAttributeError(cls.name, f"format must contain at most one {{}}, "
                                   f"got {format!r}")
        if stream not in ("stderr", "stdout"):
            raise OpAttributeError(cls.name, f"stream must be \"stderr\" or \"stdout\", "
                                   f"got {stream!r}")
        return ()

    @staticmethod
    def reference(x, *, format, end, stream, summarize):
        if "{}" not in format:
            return format + end
        head, tail = format.split("{}")
        return head + format_value(x, summarize) + tail + end


@register
class AssertOp(Op):
    """Raises `InvalidArgumentError` with `message` where `condition` (a bool tensor) has a
    false element (tf.debugging.Assert; AutoGraph's `assert` on a tensor). The reference
    kernel says whether the assertion holds; the interpreter and compiled code raise.

    Example:
      "ember.assert"(%c) {message = "x must be positive"} : (tensor<i1>) -> ()
    """

    name = "ember.assert"
    operands = ("condition",)
    results = ()
    attrs = {"message": Attr("str", "assertion failed")}
    traits = _EFFECT
    family = "state"
    total_when = Total.NEVER

    @classmethod
    def infer(cls, condition: TensorType, *, message):
        if not condition.dtype.is_bool:
            raise OpTypeError(cls.name, f"condition must be a bool tensor, got {condition}")
        return ()

    @staticmethod
    def reference(condition, *, message):
        return bool(np.all(condition))
