"""Comparisons (returning i1), logical and/or, and select."""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import Op, OpTypeError, broadcast_total, register, same_dtype
from ember.dialects.ember.elementwise.binary import BinaryOp, broadcast_result
from ember.dialects.ember.elementwise.common import COMMUTATIVE, ELEMENTWISE, NUMERIC_NAMES
from ember.dialects.ember.types import TensorType


class CompareOp(BinaryOp):
    result_dtype = dtypes.bool_
    family = "compare"


class EqualityOp(CompareOp):
    """Base of == and !=: any dtype, strings included."""
    allowed = dtypes.ALL
    allowed_what = "any"


class OrderedCompareOp(CompareOp):
    """Base of <, <=, >, >=: numeric dtypes."""
    allowed = dtypes.NUMERIC
    allowed_what = NUMERIC_NAMES


@register
class EqualOp(EqualityOp):
    """Elementwise x == y (any dtype, strings included); returns i1.

    Example:
      %z = "ember.equal"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    """

    name = "ember.equal"
    reference = staticmethod(np.equal)
    traits = COMMUTATIVE


@register
class NotEqualOp(EqualityOp):
    """Elementwise x != y; returns i1.

    Example:
      %z = "ember.not_equal"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    """

    name = "ember.not_equal"
    reference = staticmethod(np.not_equal)
    traits = COMMUTATIVE


@register
class LessOp(OrderedCompareOp):
    """Elementwise x < y; returns i1.

    Example:
      %z = "ember.less"(%x, %y) : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
    """

    name = "ember.less"
    reference = staticmethod(np.less)


@register
class LessEqualOp(OrderedCompareOp):
    """Elementwise x <= y; returns i1.

    Example:
      %z = "ember.less_equal"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    """

    name = "ember.less_equal"
    reference = staticmethod(np.less_equal)


@register
class GreaterOp(OrderedCompareOp):
    """Elementwise x > y; returns i1.

    Example:
      %z = "ember.greater"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    """

    name = "ember.greater"
    reference = staticmethod(np.greater)


@register
class GreaterEqualOp(OrderedCompareOp):
    """Elementwise x >= y; returns i1.

    Example:
      %z = "ember.greater_equal"(%x, %y) : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi1>
    """

    name = "ember.greater_equal"
    reference = staticmethod(np.greater_equal)


class LogicalOp(BinaryOp):
    """Base of logical_and and logical_or: bool (i1) operands."""
    allowed = (dtypes.bool_,)
    allowed_what = "bool (i1)"


@register
class LogicalAndOp(LogicalOp):
    """Elementwise boolean and.

    Example:
      %z = "ember.logical_and"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    """

    name = "ember.logical_and"
    reference = staticmethod(np.logical_and)
    traits = COMMUTATIVE


@register
class LogicalOrOp(LogicalOp):
    """Elementwise boolean or.

    Example:
      %z = "ember.logical_or"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    """

    name = "ember.logical_or"
    reference = staticmethod(np.logical_or)
    traits = COMMUTATIVE


@register
class SelectOp(Op):
    """Elementwise `condition ? x : y` with three-way broadcasting (tf.where with x and y).

    Example:
      %z = "ember.select"(%c, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    """

    name = "ember.select"
    operands = ("condition", "true_value", "false_value")
    traits = ELEMENTWISE
    family = "select"
    reference = staticmethod(np.where)

    @classmethod
    def infer(cls, c: TensorType, x: TensorType, y: TensorType):
        if c.dtype is not dtypes.bool_:
            raise OpTypeError(cls.name, f"condition of type {c} must have i1 elements")
        dtype = same_dtype(cls, x, y)
        return TensorType(dtype, broadcast_result(cls, c, x, y))

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        return broadcast_total(operand_types)
