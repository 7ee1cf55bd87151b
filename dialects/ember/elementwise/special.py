"""Special functions (floats only): `ember.lgamma` (tf.math.lgamma) and `ember.digamma`
(tf.math.digamma). Upstream's `math` dialect has neither (it stops at erf/erfc).

lgamma is libm's lgamma (lgammaf for float32 and half floats), as TensorFlow's CPU kernel
(Eigen calls std::lgamma); the reference kernel calls the same functions (ctypes). digamma
has no libm function: it is Eigen's (Cephes') algorithm, written out here once as
`digamma64` (the reference kernel) and once in arith/math by the lowering, which follows
these same steps.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from ember.dialects.ember.base import register
from ember.dialects.ember.elementwise.unary import FloatUnaryOp

# Cephes psi: the asymptotic series' Bernoulli terms B_2k / (2k), highest power of 1/s^2
# first (Horner order). Eigen's float64 polynomial.
PSI_SERIES = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
              -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
              8.33333333333333333333E-2)
PSI_SHIFT = 10  # psi(x) = psi(x + 1) - 1/x, applied until x >= 10: at most 10 steps for x > 0


@functools.lru_cache(maxsize=1)
def _libm_lgamma():
    """libm's lgamma and lgammaf through ctypes: the functions the compiled code calls, so
    eager, constant folding and compiled agree bit for bit (Python's math.lgamma is its own
    Lanczos sum, tens of ulp away from libm near the negative zeros, e.g. at -2.5). Found
    on first use: `ctypes.util` and its search for libm cost tens of ms of `import ember`."""
    import ctypes.util
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    f64, f32 = libm.lgamma, libm.lgammaf
    f64.restype, f64.argtypes = ctypes.c_double, [ctypes.c_double]
    f32.restype, f32.argtypes = ctypes.c_float, [ctypes.c_float]
    return (np.vectorize(f64, otypes=[np.float64]), np.vectorize(f32, otypes=[np.float32]))



def lgamma(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)| by libm: float64 by lgamma, the others by lgammaf (half floats widened
    to float32 and rounded once); +inf at the poles and at +-inf."""
    if not x.size:
        return x.copy()
    with np.errstate(all="ignore"):  # libm raises divide-by-zero at the poles
        lgamma64, lgamma32 = _libm_lgamma()
        if x.dtype == np.float64:
            return lgamma64(x)
        return lgamma32(x.astype(np.float32)).astype(x.dtype)


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


def _rounded(y: np.ndarray, dtype) -> np.ndarray:
    """float64 `y` rounded to `dtype`; half floats through float32, as the compiled code
    rounds them (LLVM's f64 -> f16 conversion is a compiler-rt call the JIT lacks)."""
    if np.dtype(dtype).itemsize == 2:
        return y.astype(np.float32).astype(dtype)
    return y.astype(dtype)


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
    reference = staticmethod(lambda x: _rounded(digamma64(x), x.dtype))
