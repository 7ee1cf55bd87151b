"""What the elementwise ops share: their traits, and reference kernels with TensorFlow's and
IEEE 754's semantics where numpy's differ (integer division by zero raises, the sign of
zeros from maximum/minimum/sign, half floats computed through float32, true division of
integers to floats).
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import Trait, broadcast_total

ELEMENTWISE = frozenset({Trait.PURE, Trait.ELEMENTWISE})
COMMUTATIVE = ELEMENTWISE | {Trait.COMMUTATIVE}
NUMERIC_NAMES = "numeric (integer or floating-point)"


def via_f32(fn):
    """Runs a float kernel in float32 for 16-bit floats (numpy lacks fast half math)."""
    def kernel(x):
        if x.dtype.itemsize == 2 and x.dtype.kind != "i" and x.dtype.kind != "u":
            return fn(x.astype(np.float32)).astype(x.dtype)
        return fn(x)
    return kernel


def sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def no_int_zero_division(y):
    if y.dtype.kind in "iu" and np.any(y == 0):
        raise ZeroDivisionError("integer division by zero")


def floordiv(x, y):
    no_int_zero_division(y)
    return np.floor_divide(x, y)


def mod(x, y):
    no_int_zero_division(y)
    return np.mod(x, y)


def zero_tie(x, y, out, negative):
    """`out` with the sign of its zeros fixed to IEEE's: -0.0 where `negative` of the
    operands' sign bits says so, else +0.0 (floats only; NaN never compares equal to 0)."""
    if not dtypes.as_dtype(out.dtype).is_floating:
        return out
    zero = np.zeros((), out.dtype)
    signed = np.where(negative(np.signbit(x), np.signbit(y)), -zero, zero)
    return np.where(out == 0, signed, out)


def sign(x):
    """numpy's sign, with sign(-0.0) = +0.0 for every float dtype (ml_dtypes' bfloat16
    returns -0.0, numpy's own floats +0.0); complex: x / |x|, 0 at 0 (TensorFlow's)."""
    if x.dtype.kind == "c":
        with np.errstate(invalid="ignore", divide="ignore"):
            modulus = np.abs(x)
            return np.where(modulus == 0, np.zeros((), x.dtype), x / modulus).astype(x.dtype)
    out = np.sign(x)
    if not dtypes.as_dtype(x.dtype).is_floating:
        return out
    return np.where(out == 0, np.zeros((), out.dtype), out)


def maximum(x, y):
    """IEEE maximum: NaN propagates, and max(-0.0, +0.0) is +0.0 in either order."""
    return zero_tie(x, y, np.maximum(x, y), np.logical_and)


def minimum(x, y):
    """IEEE minimum: NaN propagates, and min(-0.0, +0.0) is -0.0 in either order."""
    return zero_tie(x, y, np.minimum(x, y), np.logical_or)


def power(x, y):
    if x.dtype.kind in "iu" and np.any(y < 0):
        raise ValueError("integers to negative integer powers are not allowed")
    out = np.power(x, y)
    if x.dtype.kind == "f" and np.size(y) == 1 and float(np.reshape(y, -1)[0]) == 0.5:
        # numpy takes sqrt for one exponent of 0.5: sqrt(-inf) = nan and sqrt(-0) = -0,
        # where C's pow (compiled code, and numpy for an array of exponents) gives +inf, +0
        out = np.where(np.isneginf(x), np.inf, np.where(x == 0, 0.0, out)).astype(out.dtype)
    return out


def constant_all(value, compare, bound) -> bool:
    return value is not None and value.size > 0 and bool(np.all(compare(value, bound)))


class IntegerDivisionTotal:
    """Integer floordiv and mod fail on a zero divisor: total only with a constant divisor
    that has no zero."""

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        integer = operand_types[1].dtype.is_integer
        return broadcast_total(operand_types) and (
            not integer or constant_all(values[1], np.not_equal, 0))


def truediv(x, y):
    if x.dtype.kind in "iu":
        out = np.float64 if x.dtype.itemsize >= 4 else np.float32
        return np.true_divide(x.astype(out), y.astype(out))
    return np.true_divide(x, y)
