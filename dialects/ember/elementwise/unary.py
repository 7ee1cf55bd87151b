"""Unary elementwise ops: `allowed` dtypes in, the same dtype (or `result_dtype`) out."""

from __future__ import annotations

import math

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import Op, Total, register, require_dtype
from ember.dialects.ember.elementwise.common import (ELEMENTWISE, NUMERIC_NAMES, maximum,
                                                     sigmoid, sign, via_f32)
from ember.dialects.ember.types import TensorType


class UnaryOp(Op):
    """Base of unary elementwise ops: `allowed` dtypes in, same (or `result_dtype`) out."""

    operands = ("input",)
    traits = ELEMENTWISE
    allowed: tuple = dtypes.NUMERIC
    allowed_what: str = NUMERIC_NAMES
    result_dtype = None
    family = "unary"
    total_when = Total.ALWAYS

    @classmethod
    def infer(cls, x: TensorType):
        require_dtype(cls, x, cls.allowed, cls.allowed_what)
        return x.with_dtype(cls.result_dtype or x.dtype)


class FloatUnaryOp(UnaryOp):
    allowed = dtypes.FLOATS
    allowed_what = "floating-point"


class ComplexCapable:
    """Mixin of the unary ops TensorFlow also defines on complex64/complex128 (the MLIR
    `complex` dialect has each one)."""

    allowed = UnaryOp.allowed + dtypes.COMPLEX
    allowed_what = "numeric (integer, floating-point or complex)"


class FloatOrComplexUnaryOp(FloatUnaryOp):
    allowed = dtypes.FLOATS + dtypes.COMPLEX
    allowed_what = "floating-point or complex"


@register
class NegOp(ComplexCapable, UnaryOp):
    """Elementwise negation, -x.

    Example:
      %y = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.neg"
    reference = staticmethod(np.negative)


@register
class AbsOp(ComplexCapable, UnaryOp):
    """Elementwise absolute value |x| (the most negative integer maps to itself); of a
    complex tensor the modulus, real-valued (complex64 -> f32), as tf.math.abs.

    Example:
      %y = "ember.abs"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    """

    name = "ember.abs"
    reference = staticmethod(np.abs)

    @classmethod
    def infer(cls, x: TensorType):
        return super().infer(x).with_dtype(x.dtype.real_dtype)


@register
class SignOp(ComplexCapable, UnaryOp):
    """Elementwise sign: -1, 0 or 1 (NaN stays NaN; sign(-0.0) is +0.0, as numpy); of a
    complex x, x / |x| (0 at 0), as tf.math.sign.

    Example:
      %y = "ember.sign"(%x) : (tensor<?xf32>) -> tensor<?xf32>
    """

    name = "ember.sign"
    reference = staticmethod(sign)


@register
class SquareOp(ComplexCapable, UnaryOp):
    """Elementwise x * x.

    Example:
      %y = "ember.square"(%x) : (tensor<2x3xf64>) -> tensor<2x3xf64>
    """

    name = "ember.square"
    reference = staticmethod(np.square)


@register
class ReluOp(UnaryOp):
    """Elementwise max(x, 0); NaN propagates, relu(-0.0) is +0.0.

    Example:
      %y = "ember.relu"(%x) : (tensor<8xf32>) -> tensor<8xf32>
    """

    name = "ember.relu"
    reference = staticmethod(lambda x: maximum(x, np.zeros((), x.dtype)))


@register
class ExpOp(FloatOrComplexUnaryOp):
    """Elementwise e**x.

    Example:
      %y = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.exp"
    reference = staticmethod(via_f32(np.exp))


@register
class Expm1Op(FloatOrComplexUnaryOp):
    """Elementwise e**x - 1, accurate near zero.

    Example:
      %y = "ember.expm1"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.expm1"
    reference = staticmethod(via_f32(np.expm1))


@register
class LogOp(FloatOrComplexUnaryOp):
    """Elementwise natural logarithm (log(0) = -inf, log(x<0) = NaN).

    Example:
      %y = "ember.log"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.log"
    reference = staticmethod(via_f32(np.log))


@register
class Log1pOp(FloatOrComplexUnaryOp):
    """Elementwise log(1 + x), accurate near zero.

    Example:
      %y = "ember.log1p"(%x) : (tensor<4xf64>) -> tensor<4xf64>
    """

    name = "ember.log1p"
    reference = staticmethod(via_f32(np.log1p))


@register
class SqrtOp(FloatOrComplexUnaryOp):
    """Elementwise square root (NaN for negative inputs).

    Example:
      %y = "ember.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.sqrt"
    reference = staticmethod(via_f32(np.sqrt))


@register
class RsqrtOp(FloatOrComplexUnaryOp):
    """Elementwise 1 / sqrt(x).

    Example:
      %y = "ember.rsqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.rsqrt"
    reference = staticmethod(via_f32(lambda x: 1 / np.sqrt(x)))


@register
class TanhOp(FloatOrComplexUnaryOp):
    """Elementwise hyperbolic tangent.

    Example:
      %y = "ember.tanh"(%x) : (tensor<1000xf32>) -> tensor<1000xf32>
    """

    name = "ember.tanh"
    reference = staticmethod(via_f32(np.tanh))


def _libm(fn):
    """A float kernel from a scalar function of Python's math module (numpy has no erf):
    evaluated in float64 and rounded once to the input's dtype."""
    vector = np.vectorize(fn, otypes=[np.float64])

    def kernel(x):
        return vector(x.astype(np.float64)).astype(x.dtype)
    return kernel


@register
class ErfOp(FloatUnaryOp):
    """Elementwise error function, 2/sqrt(pi) * integral from 0 to x of exp(-t**2) dt.

    Example:
      %y = "ember.erf"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.erf"
    reference = staticmethod(_libm(math.erf))


@register
class ErfcOp(FloatUnaryOp):
    """Elementwise complementary error function, 1 - erf(x) without its cancellation.

    Example:
      %y = "ember.erfc"(%x) : (tensor<4xf64>) -> tensor<4xf64>
    """

    name = "ember.erfc"
    reference = staticmethod(_libm(math.erfc))


@register
class SigmoidOp(FloatUnaryOp):
    """Elementwise logistic function 1 / (1 + e**-x), computed without overflow.

    Example:
      %y = "ember.sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.sigmoid"
    reference = staticmethod(via_f32(sigmoid))


@register
class SinOp(FloatOrComplexUnaryOp):
    """Elementwise sine (radians).

    Example:
      %y = "ember.sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.sin"
    reference = staticmethod(via_f32(np.sin))


@register
class CosOp(FloatOrComplexUnaryOp):
    """Elementwise cosine (radians).

    Example:
      %y = "ember.cos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.cos"
    reference = staticmethod(via_f32(np.cos))


@register
class FloorOp(FloatUnaryOp):
    """Elementwise round toward negative infinity.

    Example:
      %y = "ember.floor"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.floor"
    reference = staticmethod(np.floor)


@register
class CeilOp(FloatUnaryOp):
    """Elementwise round toward positive infinity.

    Example:
      %y = "ember.ceil"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.ceil"
    reference = staticmethod(np.ceil)


@register
class RoundOp(FloatUnaryOp):
    """Elementwise round half to even (banker's rounding, as tf.math.round).

    Example:
      %y = "ember.round"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.round"
    reference = staticmethod(np.round)


@register
class LogicalNotOp(UnaryOp):
    """Elementwise boolean negation.

    Example:
      %y = "ember.logical_not"(%x) : (tensor<4xi1>) -> tensor<4xi1>
    """

    name = "ember.logical_not"
    reference = staticmethod(np.logical_not)
    allowed = (dtypes.bool_,)
    allowed_what = "bool (i1)"


@register
class IsNanOp(FloatUnaryOp):
    """Elementwise test for NaN; returns i1.

    Example:
      %y = "ember.is_nan"(%x) : (tensor<4xf32>) -> tensor<4xi1>
    """

    name = "ember.is_nan"
    reference = staticmethod(np.isnan)
    result_dtype = dtypes.bool_


@register
class IsFiniteOp(FloatUnaryOp):
    """Elementwise test for a finite value (not NaN, not +-inf); returns i1.

    Example:
      %y = "ember.is_finite"(%x) : (tensor<4xf32>) -> tensor<4xi1>
    """

    name = "ember.is_finite"
    reference = staticmethod(np.isfinite)
    result_dtype = dtypes.bool_
