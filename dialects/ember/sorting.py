"""Sorting: `ember.sort`, a stable sort of the innermost dim giving values and indices.

tf.sort, tf.argsort and tf.math.top_k are all built on it in the frontend (other axes are a
transpose there, top_k a slice of the descending sort). Upstream has no tensor-level sort
(TOSA and linalg have none; `stablehlo.sort` takes a comparator region); the lowering is a
merge sort written in linalg/scf (passes/conversions/ember_to_linalg/sorting.py).
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpShapeError, OpTypeError,
                                       Total, register)
from ember.dialects.ember.types import TensorType


_MAX_INDEX = 2**31 - 1  # the indices are int32, as tf.math.top_k's


def stable_order(x: np.ndarray, descending: bool) -> np.ndarray:
    """The int64 permutation of the innermost dim that sorts `x` stably (see SortOp)."""
    keys = x.astype(np.float32) if x.dtype.kind == "V" or x.dtype == np.float16 or \
        x.dtype.name == "bfloat16" else x  # exact: f32 holds every half float
    if not descending:
        return np.argsort(keys, axis=-1, kind="stable")
    # a stable ascending sort of the reversed row, reversed: largest first, ties (and NaNs)
    # in input order
    n = keys.shape[-1]
    return (n - 1 - np.argsort(keys[..., ::-1], axis=-1, kind="stable"))[..., ::-1]


@register
class SortOp(Op):
    """Stable sort along the innermost dim: the sorted values and their int32 indices.

    `indices[..., j]` is the position in `input[..., :]` of `values[..., j]`, so
    `values == take_along_axis(input, indices, -1)`. The order (TensorFlow's, where it is
    defined):
      - ties keep their input order in both directions (tf.argsort(stable=True), and
        tf.math.top_k: "the lower-index element appears first");
      - -0.0 and 0.0 are equal (a tie), as TensorFlow's comparisons say;
      - NaN sorts above every number, +inf included, whatever its sign bit: last when
        ascending, first when descending (so top_k returns NaNs first). TensorFlow's CPU
        kernel gives no defined order for NaN (its comparator is not a strict weak order
        then); this is numpy's choice for ascending sorts and XLA's total order for
        positive NaNs, and it makes the two directions mirror each other.
    Integers of every width and floats (f16, bf16, f32, f64) sort; bool does not (as
    tf.sort). The input needs rank >= 1.

    Example:
      %v, %i = "ember.sort"(%x) {descending = false} : (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xi32>)
    """

    name = "ember.sort"
    operands = ("input",)
    attrs = {"descending": Attr("bool", False)}
    results = ("values", "indices")
    family = "sorting"
    total_when = Total.RANKED

    @classmethod
    def infer(cls, x: TensorType, *, descending):
        if not x.dtype.is_numeric:
            raise OpTypeError(cls.name, f"input of type {x} must have integer or float "
                              "elements (TensorFlow sorts no bool or string tensors: cast "
                              "bools to an integer type first)")
        if x.rank == 0:
            raise OpShapeError(cls.name, f"input of type {x} must have rank >= 1")
        if x.rank and x.shape[-1] is not None and x.shape[-1] > _MAX_INDEX:
            raise OpShapeError(cls.name, f"input of type {x} has more elements in its last "
                               "dim than int32 indices count")
        return x, TensorType(dtypes.int32, x.shape)

    @staticmethod
    def reference(x, *, descending):
        order = stable_order(x, descending)
        return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)


@register
class UniqueOp(Op):
    """The distinct values of a 1-D tensor in order of first occurrence, and for each input
    element the position of its value in them (tf.unique): `input == output[idx]`.

    Values are equal as TensorFlow's kernel compares them (a hash map with `==`): -0.0 and
    0.0 are one value (the first occurrence's sign is kept), and every NaN is a value of its
    own (numpy.unique merges NaNs and sorts its output; TensorFlow and this op do neither).
    The output's size depends on the values, so its dim is always `?`. `out_idx` is the
    index dtype, i32 or i64.

    Example:
      %y, %idx = "ember.unique"(%x) {out_idx = i32} : (tensor<6xi64>) -> (tensor<?xi64>, tensor<6xi32>)
    """

    name = "ember.unique"
    operands = ("input",)
    attrs = {"out_idx": Attr("dtype", dtypes.int32)}
    results = ("output", "idx")
    family = "sorting"
    total_when = Total.RANKED

    @classmethod
    def infer(cls, x: TensorType, *, out_idx):
        if out_idx not in (dtypes.int32, dtypes.int64):
            raise OpAttributeError(cls.name, f"out_idx must be i32 or i64, got {out_idx.mlir}")
        if x.rank is None:
            return x, TensorType(out_idx, (None,))
        if x.rank != 1:
            raise OpShapeError(cls.name, f"input of type {x} must be 1-D")
        return x.with_shape((None,)), TensorType(out_idx, x.shape)

    @staticmethod
    def reference(x, *, out_idx):
        keys = x.astype(np.float32) if x.dtype.kind == "f" and x.dtype.itemsize < 4 or \
            x.dtype.name == "bfloat16" else x
        if keys.dtype.kind == "f":
            keys = keys + keys.dtype.type(0.0)  # -0.0 + 0.0 is 0.0: one value with 0.0
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        starts = np.ones(len(x), bool)
        starts[1:] = ordered[1:] != ordered[:-1]  # NaN != NaN: each NaN starts a group
        group = np.cumsum(starts) - 1  # the group of each sorted position
        first = order[starts]  # each group's first position in x (the sort is stable)
        rank = np.empty(len(first), np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        idx = np.empty(len(x), np.int64)
        idx[order] = rank[group]
        return x[np.sort(first)], idx.astype(out_idx.np_dtype)
