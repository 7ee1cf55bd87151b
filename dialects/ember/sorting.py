"""Sorting: `ember.sort`, a stable sort of the innermost dim giving values and indices.

tf.sort, tf.argsort and tf.math.top_k are all built on it in the frontend (other axes are a
transpose there, top_k a slice of the descending sort). Upstream has no tensor-level sort
(TOSA and linalg have none; `stablehlo.sort` takes a comparator region); the lowering is a
merge sort written in linalg/scf (passes/conversions/ember_to_linalg/sorting.py).
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpShapeError, OpTypeError, Total, register)
from ember.dialects.ember.types import TensorType


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
        return x, TensorType(dtypes.int32, x.shape)

    @staticmethod
    def reference(x, *, descending):
        order = stable_order(x, descending)
        return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)
