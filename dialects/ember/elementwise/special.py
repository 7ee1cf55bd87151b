"""Special functions (floats only): `ember.lgamma` (tf.math.lgamma) and `ember.digamma`
(tf.math.digamma). Upstream's `math` dialect has neither (it stops at erf/erfc).

lgamma is libm's lgamma (lgammaf for float32 and half floats), as TensorFlow's CPU kernel
(Eigen calls std::lgamma). digamma has no libm function: it is Eigen's (Cephes') algorithm,
written out here once as `digamma64` (the reference kernel) and once in arith/math by the
lowering, which follows these same steps.
"""

from __future__ import annotations

import math

import numpy as np

from ember.dialects.ember.base import register
from ember.dialects.ember.elementwise.unary import FloatUnaryOp

# Cephes psi: the asymptotic series' Bernoulli terms B_2k / (2k), highest power of 1/s^2
# first (Horner order). Eigen's float64 polynomial.
PSI_SERIES = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)
PSI_SHIFT = 10  # psi(x) = psi(x + 1) - 1/x, applied until x >= 10: at most 10 steps for x > 0


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):  # a pole (0, -1, -2, ...) or beyond float64: +inf
        return math.inf


_LGAMMA = np.vectorize(_lgamma_scalar, otypes=[np.float64])


def lgamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)| in float64, rounded once to x's dtype; +inf at the poles and +-inf."""
    return _LGAMMA(x.astype(np.float64)).astype(x.dtype)


def digamma64(x: np.ndarray) -> np.ndarray:
    """Eigen's digamma in float64 (every dtype computes in float64, then rounds once):

    1. x <= 0: NaN at the poles (x an integer, -inf included); else reflect,
       psi(x) = psi(1 - x) - pi / tan(pi * r), r = x - (the nearest integer), 0 at r = 1/2.
    2. Shift: w = 1/s + 1/(s+1) + ... while s < 10 (branch-free: PSI_SHIFT masked steps).
    3. psi(s) = log(s) - 1/(2s) - z P(z), z = 1/s^2 (PSI_SERIES); result - w.
    """
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        negative = x <= 0
        floor = np.floor(x)
        pole = negative & (floor == x)
        r = x - floor
        r = np.where(r > 0.5, r - 1.0, r)
        reflection = np.where(r == 0.5, 0.0, np.pi / np.tan(np.pi * r))
        s = np.where(negative, 1.0 - x, x)
        w = np.zeros_like(s)
        for _ in range(PSI_SHIFT):
            small = s < PSI_SHIFT
            w = w + np.where(small, 1.0 / s, 0.0)
            s = s + np.where(small, 1.0, 0.0)
        z = 1.0 / (s * s)
        poly = np.zeros_like(z)
        for c in PSI_SERIES:
            poly = poly * z + c
        y = np.log(s) - 0.5 / s - z * poly - w
        y = np.where(negative, y - reflection, y)
        return np.where(pole, np.nan, y)


@register
class LgammaOp(FloatUnaryOp):
    """Elementwise log|Gamma(x)| (tf.math.lgamma): +inf at 0, the negative integers and
    +-inf; NaN stays NaN. Computed by libm (lgammaf; half floats through float32).

    Example:
      %y = "ember.lgamma"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    name = "ember.lgamma"
    reference = staticmethod(lgamma)


@register
class DigammaOp(FloatUnaryOp):
    """Elementwise digamma psi(x) = Gamma'(x) / Gamma(x) (tf.math.digamma): NaN at 0, the
    negative integers and -inf, as TensorFlow (scipy gives -inf/+-inf at the poles); +inf
    at +inf. Every dtype is computed in float64 and rounded once, so float32 is within an
    ulp of the exact value (TensorFlow's float32 kernel computes in float32).

    Example:
      %y = "ember.digamma"(%x) : (tensor<?xf64>) -> tensor<?xf64>
    """

    name = "ember.digamma"
    reference = staticmethod(lambda x: digamma64(x).astype(x.dtype))
