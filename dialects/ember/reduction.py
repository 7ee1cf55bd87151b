"""Reductions over a set of axes (with `keepdims`), and argmax/argmin over one axis.

`axes` lists the reduced dimensions explicitly (the frontend turns `axis=None` into all of
them); an empty list reduces nothing. Reducing an empty dimension gives the identity (0 for
sum, 1 for prod, -inf/lowest for max, ...), as TensorFlow does. Integer `reduce_mean` divides
with truncation, as TensorFlow does. `reduce_max`/`reduce_min` take the IEEE maximum/minimum
(NaN propagates, -0.0 < +0.0), so their result does not depend on the order of the elements
(numpy's does on a tie of zeros). Upstream equivalent: `linalg.reduce`.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpShapeError, Total,
                                       normalize_axis, register, require_dtype)
from ember.dialects.ember.types import TensorType


def reduce_axes(op: type[Op], rank: int, axes) -> tuple:
    """Normalises `axes` to sorted non-negative ints, rejecting duplicates."""
    out = sorted(normalize_axis(op, a, rank) for a in axes)
    if len(set(out)) != len(out):
        raise OpAttributeError(op.name, f"axes {list(axes)} contain a duplicate")
    return tuple(out)


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


class ReduceOp(Op):
    operands = ("input",)
    attrs = {"axes": Attr("i64_array"), "keepdims": Attr("bool", False)}
    allowed: tuple = dtypes.NUMERIC
    allowed_what = "numeric"
    family = "reduction"
    total_when = Total.RANKED

    @classmethod
    def infer(cls, x: TensorType, *, axes, keepdims):
        require_dtype(cls, x, cls.allowed, cls.allowed_what)
        if x.rank is None:
            return x.with_shape(None)
        axes = reduce_axes(cls, x.rank, axes)
        return x.with_shape(reduced_shape(x.shape, axes, keepdims))

    @classmethod
    def kernel(cls, x, axes, keepdims):
        raise AssertionError("subclasses define kernel")

    @classmethod
    def reference(cls, x, *, axes, keepdims):
        axes = tuple(a % x.ndim for a in axes) if x.ndim else ()
        half = dtypes.as_dtype(x.dtype).is_floating and x.dtype.itemsize == 2  # f16, bf16
        compute = np.float32 if half else x.dtype
        return cls.kernel(x.astype(compute, copy=False), axes, keepdims)


@register
class ReduceSumOp(ReduceOp):
    """Sum over `axes`.

    Example:
      %s = "ember.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
    """

    name = "ember.reduce_sum"
    allowed = dtypes.NUMERIC + dtypes.COMPLEX
    allowed_what = "numeric or complex"

    @classmethod
    def kernel(cls, x, axes, keepdims):
        return np.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


@register
class ReduceProdOp(ReduceOp):
    """Product over `axes`.

    Example:
      %s = "ember.reduce_prod"(%x) {axes = array<i64: 0, 1>, keepdims = true} : (tensor<2x3xi32>) -> tensor<1x1xi32>
    """

    name = "ember.reduce_prod"
    allowed = dtypes.NUMERIC + dtypes.COMPLEX
    allowed_what = "numeric or complex"

    @classmethod
    def kernel(cls, x, axes, keepdims):
        return np.prod(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


@register
class ReduceMeanOp(ReduceOp):
    """Arithmetic mean over `axes` (integers: truncating division, as TensorFlow).

    Example:
      %m = "ember.reduce_mean"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<?x8xf32>) -> tensor<8xf32>
    """

    name = "ember.reduce_mean"
    allowed = dtypes.NUMERIC + dtypes.COMPLEX
    allowed_what = "numeric or complex"

    @classmethod
    def kernel(cls, x, axes, keepdims):
        count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
        if x.dtype.kind in "iu":
            total = np.sum(x, axis=axes, keepdims=keepdims, dtype=np.int64)
            if count == 0:
                return np.zeros_like(total)
            quotient = total // count  # floors; truncation rounds negatives up
            quotient += (total < 0) & (total % count != 0)
            return quotient.astype(x.dtype)
        with np.errstate(invalid="ignore", divide="ignore"):
            total = np.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)
            return total / x.dtype.type(count) if count else total * np.nan


def _signed_zeros(x, out, axes, keepdims, negative: bool):
    """`out` with a zero result signed as IEEE max (`negative` False) or min says: max is
    +0.0 if any reduced element is +0.0, min is -0.0 if any is -0.0."""
    if x.dtype.kind != "f":
        return out
    which = np.signbit(x) if negative else ~np.signbit(x)
    found = np.any((x == 0) & which, axis=axes, keepdims=keepdims)
    zero = np.zeros((), out.dtype)
    want = -zero if negative else zero
    other = zero if negative else -zero
    return np.where(out == 0, np.where(found, want, other), out)


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


@register
class ReduceMaxOp(ReduceOp):
    """Maximum over `axes`; NaN propagates; -0.0 < +0.0; empty gives -inf (or the lowest
    integer).

    Example:
      %m = "ember.reduce_max"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
    """

    name = "ember.reduce_max"

    @classmethod
    def kernel(cls, x, axes, keepdims):
        out = np.max(x, axis=axes, keepdims=keepdims, initial=_lowest(x.dtype))
        return _signed_zeros(x, out, axes, keepdims, negative=False)


@register
class ReduceMinOp(ReduceOp):
    """Minimum over `axes`; NaN propagates; -0.0 < +0.0; empty gives +inf (or the highest
    integer).

    Example:
      %m = "ember.reduce_min"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<5xi64>) -> tensor<i64>
    """

    name = "ember.reduce_min"

    @classmethod
    def kernel(cls, x, axes, keepdims):
        out = np.min(x, axis=axes, keepdims=keepdims, initial=_highest(x.dtype))
        return _signed_zeros(x, out, axes, keepdims, negative=True)


class LogicalReduceOp(ReduceOp):
    allowed = (dtypes.bool_,)
    allowed_what = "bool (i1)"


@register
class ReduceAnyOp(LogicalReduceOp):
    """Logical or over `axes` (false for an empty reduction).

    Example:
      %a = "ember.reduce_any"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<4xi1>) -> tensor<i1>
    """

    name = "ember.reduce_any"

    @classmethod
    def kernel(cls, x, axes, keepdims):
        return np.any(x, axis=axes, keepdims=keepdims)


@register
class ReduceAllOp(LogicalReduceOp):
    """Logical and over `axes` (true for an empty reduction).

    Example:
      %a = "ember.reduce_all"(%x) {axes = array<i64: 0>, keepdims = false} : (tensor<4xi1>) -> tensor<i1>
    """

    name = "ember.reduce_all"

    @classmethod
    def kernel(cls, x, axes, keepdims):
        return np.all(x, axis=axes, keepdims=keepdims)


class ArgReduceOp(Op):
    operands = ("input",)
    attrs = {"axis": Attr("i64"), "dtype": Attr("dtype", dtypes.int64, "i32 or i64")}
    family = "reduction"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, x: TensorType, *, axis, dtype):
        require_dtype(cls, x, dtypes.NUMERIC, "numeric")
        if dtype not in (dtypes.int32, dtypes.int64):
            raise OpAttributeError(cls.name, f"dtype must be i32 or i64, got {dtype.mlir}")
        if x.rank is None:
            return TensorType(dtype, None)
        if x.rank == 0:
            raise OpShapeError(cls.name, f"operand of type {x} must have rank >= 1")
        axis = normalize_axis(cls, axis, x.rank)
        if x.shape[axis] == 0:
            raise OpShapeError(cls.name, f"cannot reduce empty dimension {axis} of {x}")
        return TensorType(dtype, reduced_shape(x.shape, (axis,), False))


@register
class ArgMaxOp(ArgReduceOp):
    """Index of the largest value along `axis` (the first one on ties).

    Example:
      %i = "ember.argmax"(%x) {axis = 1 : i64, dtype = i64} : (tensor<2x3xf32>) -> tensor<2xi64>
    """

    name = "ember.argmax"

    @staticmethod
    def reference(x, *, axis, dtype):
        return np.argmax(x, axis=axis).astype(dtype.np_dtype)


@register
class ArgMinOp(ArgReduceOp):
    """Index of the smallest value along `axis` (the first one on ties).

    Example:
      %i = "ember.argmin"(%x) {axis = 0 : i64, dtype = i32} : (tensor<4xi32>) -> tensor<i32>
    """

    name = "ember.argmin"

    @staticmethod
    def reference(x, *, axis, dtype):
        return np.argmin(x, axis=axis).astype(dtype.np_dtype)
