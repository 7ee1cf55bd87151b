"""Trigonometric and hyperbolic ops beyond sin/cos/tanh (unary.py): tan, the inverse
functions, sinh/cosh and their inverses, and atan2 (tf.math's names). Float dtypes; 16-bit
floats compute in float32 (numpy's kernels, and libm's on the compiled side). Outside an
inverse function's domain the result is NaN, as in numpy and TensorFlow (no error).
Upstream equivalents: the `math` dialect's tan, asin, ..., atan2 (libm calls on the CPU).
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import register
from ember.dialects.ember.elementwise.binary import BinaryOp
from ember.dialects.ember.elementwise.common import via_f32
from ember.dialects.ember.elementwise.unary import FloatUnaryOp


def _quiet(fn):
    """`fn` without numpy's warnings for NaN results outside its domain (asin(2))."""
    def kernel(*xs):
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return fn(*xs)
    return kernel


@register
class TanOp(FloatUnaryOp):
    """Elementwise tangent (radians).

    Example:
      %y = "ember.tan"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.tan"
    reference = staticmethod(via_f32(_quiet(np.tan)))


@register
class AsinOp(FloatUnaryOp):
    """Elementwise arcsine, in [-pi/2, pi/2]; NaN outside [-1, 1].

    Example:
      %y = "ember.asin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.asin"
    reference = staticmethod(via_f32(_quiet(np.arcsin)))


@register
class AcosOp(FloatUnaryOp):
    """Elementwise arccosine, in [0, pi]; NaN outside [-1, 1].

    Example:
      %y = "ember.acos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.acos"
    reference = staticmethod(via_f32(_quiet(np.arccos)))


@register
class AtanOp(FloatUnaryOp):
    """Elementwise arctangent, in [-pi/2, pi/2].

    Example:
      %y = "ember.atan"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.atan"
    reference = staticmethod(via_f32(_quiet(np.arctan)))


@register
class SinhOp(FloatUnaryOp):
    """Elementwise hyperbolic sine.

    Example:
      %y = "ember.sinh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.sinh"
    reference = staticmethod(via_f32(_quiet(np.sinh)))


@register
class CoshOp(FloatUnaryOp):
    """Elementwise hyperbolic cosine.

    Example:
      %y = "ember.cosh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.cosh"
    reference = staticmethod(via_f32(_quiet(np.cosh)))


@register
class AsinhOp(FloatUnaryOp):
    """Elementwise inverse hyperbolic sine.

    Example:
      %y = "ember.asinh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.asinh"
    reference = staticmethod(via_f32(_quiet(np.arcsinh)))


@register
class AcoshOp(FloatUnaryOp):
    """Elementwise inverse hyperbolic cosine; NaN below 1.

    Example:
      %y = "ember.acosh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.acosh"
    reference = staticmethod(via_f32(_quiet(np.arccosh)))


@register
class AtanhOp(FloatUnaryOp):
    """Elementwise inverse hyperbolic tangent; +-inf at +-1, NaN outside [-1, 1].

    Example:
      %y = "ember.atanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.atanh"
    reference = staticmethod(via_f32(_quiet(np.arctanh)))


def _atan2(y, x):
    if y.dtype.itemsize == 2:
        return np.arctan2(y.astype(np.float32), x.astype(np.float32)).astype(y.dtype)
    return np.arctan2(y, x)


@register
class Atan2Op(BinaryOp):
    """Elementwise arctangent of y / x (operands in that order) in (-pi, pi], the quadrant
    from both signs, with broadcasting.

    Example:
      %z = "ember.atan2"(%y, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.atan2"
    operands = ("y", "x")
    allowed = dtypes.FLOATS
    allowed_what = "floating-point"
    reference = staticmethod(_quiet(_atan2))
