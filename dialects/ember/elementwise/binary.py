"""Binary arithmetic ops: numpy broadcasting, no dtype promotion."""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Op, OpShapeError, broadcast_total, register,
                                       require_dtype, same_dtype)
from ember.dialects.ember.elementwise.common import (COMMUTATIVE, ELEMENTWISE, NUMERIC_NAMES,
                                                     IntegerDivisionTotal, constant_all, floordiv,
                                                     maximum, minimum, mod, power, truediv)
from ember.dialects.ember.types import TensorType, broadcast_shapes


def broadcast_result(op: type[Op], *types: TensorType) -> tuple:
    ok, shape = broadcast_shapes(*(t.shape for t in types))
    if not ok:
        listed = " and ".join(str(t) for t in types)
        raise OpShapeError(op.name, f"operand types {listed} are not broadcast-compatible")
    return shape


WITH_COMPLEX = dtypes.NUMERIC + dtypes.COMPLEX
WITH_COMPLEX_NAMES = "numeric (integer, floating-point or complex)"


class BinaryOp(Op):
    """Base of binary elementwise ops with numpy broadcasting and no dtype promotion."""

    operands = ("lhs", "rhs")
    traits = ELEMENTWISE
    allowed: tuple = dtypes.NUMERIC
    allowed_what: str = NUMERIC_NAMES
    result_dtype = None
    family = "binary"

    @classmethod
    def infer(cls, x: TensorType, y: TensorType):
        dtype = same_dtype(cls, x, y)
        require_dtype(cls, x, cls.allowed, cls.allowed_what, "operands")
        return TensorType(cls.out_dtype(dtype), broadcast_result(cls, x, y))

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        """Broadcasting fails at run time only where a `?` dim meets another dim not 1."""
        return broadcast_total(operand_types)

    @classmethod
    def out_dtype(cls, dtype):
        return cls.result_dtype or dtype


@register
class AddOp(BinaryOp):
    """Elementwise x + y with broadcasting; concatenates string tensors.

    Example:
      %z = "ember.add"(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    """

    name = "ember.add"
    reference = staticmethod(lambda x, y: x + y)
    traits = COMMUTATIVE
    allowed = dtypes.NUMERIC + dtypes.COMPLEX + (dtypes.string,)
    allowed_what = "numeric, complex or string"


@register
class SubOp(BinaryOp):
    """Elementwise x - y with broadcasting.

    Example:
      %z = "ember.sub"(%x, %y) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
    """

    name = "ember.sub"
    allowed = WITH_COMPLEX
    allowed_what = WITH_COMPLEX_NAMES
    reference = staticmethod(np.subtract)


@register
class MulOp(BinaryOp):
    """Elementwise x * y with broadcasting.

    Example:
      %z = "ember.mul"(%x, %y) : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
    """

    name = "ember.mul"
    allowed = WITH_COMPLEX
    allowed_what = WITH_COMPLEX_NAMES
    reference = staticmethod(np.multiply)
    traits = COMMUTATIVE


@register
class DivOp(BinaryOp):
    """Elementwise true division x / y; int8/int16/uint8 give f32, int32/int64 give f64.

    Example:
      %z = "ember.div"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xf64>
    """

    name = "ember.div"
    allowed = WITH_COMPLEX
    allowed_what = WITH_COMPLEX_NAMES
    reference = staticmethod(truediv)

    @classmethod
    def out_dtype(cls, dtype):
        if dtype.is_integer:
            return dtypes.float64 if dtype.bits >= 32 else dtypes.float32
        return dtype


@register
class FloorDivOp(IntegerDivisionTotal, BinaryOp):
    """Elementwise floor(x / y) (rounds toward -inf, as Python's //). Floats follow numpy's
    divmod: (x - fmod(x, y)) / y snapped to an integer, so inf // 3 is NaN and
    0.5 // 1e-8 is 49999999.0 (the exact quotient, 49999999.99..., floored).

    Example:
      %z = "ember.floordiv"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    """

    name = "ember.floordiv"
    reference = staticmethod(floordiv)


@register
class ModOp(IntegerDivisionTotal, BinaryOp):
    """Elementwise floor modulus: the result has the sign of y, as Python's % (zeros too:
    mod(4.0, -2.0) is -0.0; mod(inf, y) and mod(x, 0.0) are NaN).

    Example:
      %z = "ember.mod"(%x, %y) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
    """

    name = "ember.mod"
    reference = staticmethod(mod)


@register
class PowOp(BinaryOp):
    """Elementwise x ** y.

    Example:
      %z = "ember.pow"(%x, %y) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    """

    name = "ember.pow"
    allowed = WITH_COMPLEX
    allowed_what = WITH_COMPLEX_NAMES
    reference = staticmethod(power)

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        """Integers fail on a negative exponent: total only with a constant one >= 0."""
        integer = operand_types[0].dtype.is_integer
        return broadcast_total(operand_types) and (
            not integer or constant_all(values[1], np.greater_equal, 0))


@register
class MaximumOp(BinaryOp):
    """Elementwise max(x, y); NaN propagates; -0.0 < +0.0 (IEEE 754-2019 maximum).

    Example:
      %z = "ember.maximum"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.maximum"
    reference = staticmethod(maximum)
    traits = COMMUTATIVE


@register
class MinimumOp(BinaryOp):
    """Elementwise min(x, y); NaN propagates; -0.0 < +0.0 (IEEE 754-2019 minimum).

    Example:
      %z = "ember.minimum"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.minimum"
    reference = staticmethod(minimum)
    traits = COMMUTATIVE
