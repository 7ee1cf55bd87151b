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


def _unary(cls_name: str, short: str, summary: str, kernel) -> type[FloatUnaryOp]:
    """A registered float unary op `ember.<short>` computing numpy's `kernel`; its docstring
    (`summary` and an Example, as every spec has) is made from the table below."""
    doc = (f"{summary}\n\n    Example:\n      %y = \"ember.{short}\"(%x) : (tensor<4xf32>) -> "
           "tensor<4xf32>\n    ")
    return register(type(cls_name, (FloatUnaryOp,), {
        "__doc__": doc, "__module__": __name__, "name": f"ember.{short}",
        "reference": staticmethod(via_f32(_quiet(kernel)))}))


TanOp = _unary("TanOp", "tan", "Elementwise tangent (radians).", np.tan)
AsinOp = _unary("AsinOp", "asin", "Elementwise arcsine, in [-pi/2, pi/2]; NaN outside [-1, 1].",
                np.arcsin)
AcosOp = _unary("AcosOp", "acos", "Elementwise arccosine, in [0, pi]; NaN outside [-1, 1].",
                np.arccos)
AtanOp = _unary("AtanOp", "atan", "Elementwise arctangent, in [-pi/2, pi/2].", np.arctan)
SinhOp = _unary("SinhOp", "sinh", "Elementwise hyperbolic sine.", np.sinh)
CoshOp = _unary("CoshOp", "cosh", "Elementwise hyperbolic cosine.", np.cosh)
AsinhOp = _unary("AsinhOp", "asinh", "Elementwise inverse hyperbolic sine.", np.arcsinh)
AcoshOp = _unary("AcoshOp", "acosh", "Elementwise inverse hyperbolic cosine; NaN below 1.",
                 np.arccosh)
AtanhOp = _unary("AtanhOp", "atanh", "Elementwise inverse hyperbolic tangent; +-inf at +-1, "
                 "NaN outside [-1, 1].", np.arctanh)


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
