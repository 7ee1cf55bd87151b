"""Scatter and data-dependent indexing ops: tensor_scatter (TensorFlow's TensorScatter
family) and where_indices (tf.where with one argument).

`ember.tensor_scatter` combines slices of `updates` into a copy of `tensor` at the rows of
`indices`; the segment reductions, bincount and scatter_nd are built on it in the frontend.
`ember.where_indices` is the one op whose result size depends on operand values: its
first dim is `?` whatever the operand's shape.
Upstream equivalents: `tensor.scatter` (which has no combining mode and leaves duplicates
undefined), `stablehlo.scatter`.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpShapeError, OpTypeError,
                                       Total, register, require_dtype, same_dtype)
from ember.dialects.ember.types import TensorType, shapes_compatible

SCATTER_MODES = ("update", "add", "sub", "mul", "max", "min")
# values, in order: the flattened row of indices, its column, the index, the dim's size,
# the column again (a compiled error site reports a list of i64 values: backends/cpu/native)
OUT_OF_RANGE = "indices[{}, {}] = {} is out of range [0, {}) for dim {} of the tensor"
_INDEX_DTYPES = (dtypes.int32, dtypes.int64)
_COMBINE = {"update": lambda old, new: new, "add": np.add, "sub": np.subtract,
            "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def scatter_rows(indices: np.ndarray, shape: tuple) -> np.ndarray:
    """`indices` as rows of int64 (one per update slice), checked against `shape`: an
    IndexError (eager's InvalidArgumentError) names the first component out of range,
    in row-major order, as compiled code does."""
    k = indices.shape[-1]
    rows = indices.reshape(int(np.prod(indices.shape[:-1])), k).astype(np.int64)
    bad = (rows < 0) | (rows >= np.array(shape[:k], np.int64))
    if bad.any():
        r, j = (int(v) for v in np.argwhere(bad)[0])
        raise IndexError(OUT_OF_RANGE.format(r, j, rows[r, j], shape[j], j))
    return rows


@register
class TensorScatterOp(Op):
    """Combines slices of `updates` into a copy of `tensor` at `indices`
    (tf.tensor_scatter_nd_update / _add / _sub / _max / _min, by `mode`; `mul` multiplies,
    for em.math.unsorted_segment_prod).

    `indices` has shape [..., k] (k static, k <= rank of `tensor`): each row of k ints
    indexes a slice `tensor[i0, ..., ik-1]` of shape tensor.shape[k:]; `updates` has shape
    indices.shape[:-1] + tensor.shape[k:]. Rows are applied in row-major order: duplicates
    accumulate for add/sub/mul/max/min, and for update the last row wins (TensorFlow leaves
    that order unspecified; ember fixes it). An index outside [0, dim) is an
    InvalidArgumentError, as on TensorFlow's CPU. max/min propagate NaN as em.maximum.

    Example:
      %r = "ember.tensor_scatter"(%t, %i, %u) {mode = "add"} : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
    """

    name = "ember.tensor_scatter"
    operands = ("tensor", "indices", "updates")
    attrs = {"mode": Attr("str", "update")}
    family = "indexing"

    @classmethod
    def infer(cls, t: TensorType, indices: TensorType, updates: TensorType, *, mode):
        if mode not in SCATTER_MODES:
            raise OpAttributeError(cls.name, f"mode must be one of {list(SCATTER_MODES)}, "
                                   f"got {mode!r}")
        dtype = same_dtype(cls, t, updates)
        require_dtype(cls, indices, _INDEX_DTYPES, "i32 or i64", "indices")
        if dtype.is_string or (mode != "update" and dtype.is_bool):
            raise OpTypeError(cls.name, f"mode {mode!r} needs numeric elements, got {t}")
        if t.rank is None or indices.rank is None or updates.rank is None:
            return t
        if t.rank == 0:
            raise OpShapeError(cls.name, f"tensor of type {t} must have rank >= 1")
        if indices.rank == 0:
            raise OpShapeError(cls.name, f"indices of type {indices} must have rank >= 1")
        k = indices.shape[-1]
        if k is None:
            raise OpShapeError(cls.name, f"the last dim of indices ({indices}) is the index "
                               "depth and must be static")
        if k > t.rank:
            raise OpShapeError(cls.name, f"index depth {k} of {indices} exceeds the rank of "
                               f"{t}")
        want = indices.shape[:-1] + t.shape[k:]
        if not shapes_compatible(updates.shape, want):
            shown = "x".join("?" if d is None else str(d) for d in want)
            raise OpShapeError(cls.name, f"updates of type {updates} must have shape "
                               f"indices.shape[:-1] + tensor.shape[{k}:] = [{shown}] for "
                               f"tensor {t} and indices {indices}")
        return t

    @staticmethod
    def reference(t, indices, updates, *, mode):
        rows = scatter_rows(indices, t.shape)
        k = indices.shape[-1]
        out = t.copy()
        slices = updates.reshape((rows.shape[0],) + t.shape[k:])
        if mode == "update" or k == 0:  # in order: the last duplicate wins
            combine = _COMBINE[mode]
            for row, value in zip(rows, slices):
                with np.errstate(all="ignore"):
                    out[tuple(row)] = combine(out[tuple(row)], value)
            return out
        with np.errstate(all="ignore"):
            _COMBINE[mode].at(out, tuple(rows.T), slices)
        return out


@register
class WhereIndicesOp(Op):
    """The coordinates of the true (non-zero) elements of `condition`, in row-major order
    (tf.where with one argument): an int64 tensor [num_true, rank].

    The first result dim is the number of trues, known only when the op runs: `?`.

    Example:
      %w = "ember.where_indices"(%c) : (tensor<3x4xi1>) -> tensor<?x2xi64>
    """

    name = "ember.where_indices"
    operands = ("condition",)
    family = "indexing"
    total_when = Total.RANKED

    @classmethod
    def infer(cls, condition: TensorType):
        if condition.dtype.is_string:
            raise OpTypeError(cls.name, f"condition of type {condition} must be bool or "
                              "numeric")
        if condition.rank is None:
            return TensorType(dtypes.int64, (None, None))
        return TensorType(dtypes.int64, (None, condition.rank))

    @staticmethod
    def reference(condition):
        if condition.ndim == 0:  # one row of no coordinates where true (numpy's argwhere)
            return np.zeros((int(condition != 0), 0), np.int64)
        return np.argwhere(condition != 0).astype(np.int64).reshape(-1, condition.ndim)
