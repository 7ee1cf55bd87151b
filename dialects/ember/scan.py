"""Scans and sorted search: `ember.cumsum`, `ember.cumprod` (tf.math.cumsum/cumprod) and
`ember.searchsorted` (tf.searchsorted).

These are ops rather than compositions because neither has an efficient expression in the
other ops: a scan as a triangular matmul is O(n^2) and wrong for integers that wrap, and a
sorted search as a comparison against every element is O(n m) where a binary search is
O(m log n). Upstream has no scan op on tensors (`linalg` has none; `tosa` none either).
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpShapeError, Total,
                                       normalize_axis, register, require_dtype, same_dtype)
from ember.dialects.ember.elementwise.common import NUMERIC_NAMES
from ember.dialects.ember.types import TensorType


class CumulativeOp(Op):
    """Base of the scans along one axis: result[..., k, ...] = x[..., 0, ...] (op) ...
    (op) x[..., k, ...]; `exclusive` leaves out x[k] (result[0] is the identity), `reverse`
    scans from the last element. Floats accumulate in the result dtype, each step rounded
    to it, as TensorFlow's kernel does (a float16 cumsum accumulates in float16); integers
    wrap."""

    operands = ("input",)
    attrs = {"axis": Attr("i64", 0), "exclusive": Attr("bool", False),
             "reverse": Attr("bool", False)}
    family = "scan"
    total_when = Total.RANKED  # the axis is checked against the rank when it is known
    identity: int = 0
    ufunc = np.add

    @classmethod
    def infer(cls, x: TensorType, *, axis, exclusive, reverse):
        del exclusive, reverse
        require_dtype(cls, x, dtypes.NUMERIC, NUMERIC_NAMES)
        if x.rank is not None:
            if x.rank == 0:
                raise OpAttributeError(cls.name, f"axis {axis} is out of range for rank 0: "
                                       "a scan needs an operand of rank >= 1")
            normalize_axis(cls, axis, x.rank)
        return x

    @classmethod
    def reference(cls, x, *, axis, exclusive, reverse):
        axis %= x.ndim
        if reverse:
            x = np.flip(x, axis)
        with np.errstate(all="ignore"):  # overflow to inf, inf * 0: as the kernel computes
            out = cls.ufunc.accumulate(x, axis=axis, dtype=x.dtype)
        if exclusive and x.shape[axis]:
            first = np.full_like(np.take(out, [0], axis=axis), cls.identity)
            out = np.concatenate([first, np.take(out, np.arange(x.shape[axis] - 1), axis)],
                                 axis)
        return np.ascontiguousarray(np.flip(out, axis) if reverse else out)


@register
class CumsumOp(CumulativeOp):
    """Cumulative sum along `axis` (tf.math.cumsum: exclusive, reverse; see CumulativeOp).

    Example:
      %y = "ember.cumsum"(%x) {axis = 1 : i64, exclusive = false, reverse = true} : (tensor<2x?xf32>) -> tensor<2x?xf32>
    """

    name = "ember.cumsum"


@register
class CumprodOp(CumulativeOp):
    """Cumulative product along `axis` (tf.math.cumprod: exclusive, reverse; see
    CumulativeOp).

    Example:
      %y = "ember.cumprod"(%x) {axis = 0 : i64, exclusive = true, reverse = false} : (tensor<4xi32>) -> tensor<4xi32>
    """

    name = "ember.cumprod"
    identity = 1
    ufunc = np.multiply


def _bound(seq, values, right: bool):
    """libstdc++'s std::lower_bound (upper_bound when `right`) of each row of `values` in
    the same row of `seq`, vectorised: the same probes in the same order, so NaN behaves
    as in TensorFlow's kernel (a NaN value compares false with everything)."""
    rows, n = seq.shape
    first = np.zeros(values.shape, np.int64)
    count = np.full(values.shape, n, np.int64)
    row = np.arange(rows)[:, None]
    with np.errstate(invalid="ignore"):
        while (count > 0).any():
            step = count // 2
            probe = seq[row, np.minimum(first + step, n - 1)]  # n > 0 while count > 0
            go = ~(values < probe) if right else probe < values
            go &= count > 0
            first = np.where(go, first + step + 1, first)
            count = np.where(go, count - step - 1, np.where(count > 0, step, 0))
    return first


_SIDES = ("left", "right")


@register
class SearchSortedOp(Op):
    """Insertion points of `values` in `sorted_sequence` along the innermost dim
    (tf.searchsorted), batched over the leading dims, which must be equal in both.

    side = "left": the first index i with !(seq[i] < v) (std::lower_bound); "right": the
    first i with v < seq[i] (std::upper_bound). NaN follows TensorFlow, not numpy: a NaN
    value goes to 0 ("left") or n ("right"), since it compares false with every element
    (numpy sorts NaN last and puts it at n); NaNs inside the sequence give what the binary
    search's probes give. The sequence is assumed sorted (not checked, as in TensorFlow).

    Example:
      %i = "ember.searchsorted"(%s, %v) {out_type = i32, side = "left"} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x3xi32>
    """

    name = "ember.searchsorted"
    operands = ("sorted_sequence", "values")
    attrs = {"side": Attr("str", "left"), "out_type": Attr("dtype", dtypes.int32)}
    family = "scan"
    total_when = Total.STATIC  # `?` leading dims are compared when it runs

    @classmethod
    def infer(cls, seq: TensorType, values: TensorType, *, side, out_type):
        require_dtype(cls, seq, dtypes.NUMERIC, NUMERIC_NAMES, "sorted_sequence")
        same_dtype(cls, seq, values)
        if side not in _SIDES:
            raise OpAttributeError(cls.name, f"side must be 'left' or 'right', got {side!r}")
        if out_type not in (dtypes.int32, dtypes.int64):
            raise OpAttributeError(cls.name, f"out_type must be i32 or i64, got {out_type.mlir}")
        for what, t in (("sorted_sequence", seq), ("values", values)):
            if t.rank == 0:
                raise OpShapeError(cls.name, f"{what} of type {t} must have rank >= 1")
        if seq.rank is not None and values.rank is not None:
            if seq.rank != values.rank or any(
                    a is not None and b is not None and a != b
                    for a, b in zip(seq.shape[:-1], values.shape[:-1])):
                raise OpShapeError(cls.name, f"sorted_sequence {seq} and values {values} must "
                                   "have the same rank and leading dims (all but the last)")
        return values.with_dtype(out_type)

    @staticmethod
    def reference(seq, values, *, side, out_type):
        rows = int(np.prod(seq.shape[:-1]))  # infer checked the leading dims agree
        seq2 = seq.reshape(rows, seq.shape[-1])
        val2 = values.reshape(rows, values.shape[-1])
        out = _bound(seq2, val2, side == "right")
        return out.reshape(values.shape).astype(out_type.np_dtype)
