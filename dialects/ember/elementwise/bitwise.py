"""Bitwise ops on integer tensors (tf.bitwise): and, or, xor, invert and the two shifts.

Shifts follow TensorFlow's kernels, which define every shift amount: `y` is clamped to
[0, bits - 1] first (so `1 << 40` on int32 is `1 << 31`, and a negative `y` shifts by 0),
a left shift wraps (it shifts the unsigned bits), and a right shift is arithmetic for
signed types (the sign fills in) and logical for unsigned ones. LLVM's `shl` and `shr` by
the bit width or more are poison; the lowering clamps as the reference kernels here do.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import register
from ember.dialects.ember.elementwise.binary import BinaryOp
from ember.dialects.ember.elementwise.common import COMMUTATIVE
from ember.dialects.ember.elementwise.unary import UnaryOp

INTEGER_NAMES = "integer (int8, int16, int32, int64 or uint8)"


def clamped_shift(y: np.ndarray, bits: int) -> np.ndarray:
    """TensorFlow's shift amount: `y` clamped to [0, bits - 1]."""
    return np.clip(y, 0, bits - 1).astype(y.dtype)


def left_shift(x, y):
    x, y = np.asarray(x), np.asarray(y)
    bits = 8 * x.dtype.itemsize
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    return np.left_shift(x.view(unsigned), clamped_shift(y, bits).astype(unsigned)) \
        .astype(unsigned).view(x.dtype)


def right_shift(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return np.right_shift(x, clamped_shift(y, 8 * x.dtype.itemsize)).astype(x.dtype)


class BitwiseOp(BinaryOp):
    """Base of the binary bitwise ops: integer operands of one dtype, broadcast."""
    allowed = dtypes.INTEGERS
    allowed_what = INTEGER_NAMES


@register
class BitwiseAndOp(BitwiseOp):
    """Elementwise bitwise and of integers, x & y (tf.bitwise.bitwise_and).

    Example:
      %z = "ember.bitwise_and"(%x, %y) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
    """

    name = "ember.bitwise_and"
    reference = staticmethod(np.bitwise_and)
    traits = COMMUTATIVE


@register
class BitwiseOrOp(BitwiseOp):
    """Elementwise bitwise or of integers, x | y (tf.bitwise.bitwise_or).

    Example:
      %z = "ember.bitwise_or"(%x, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    """

    name = "ember.bitwise_or"
    reference = staticmethod(np.bitwise_or)
    traits = COMMUTATIVE


@register
class BitwiseXorOp(BitwiseOp):
    """Elementwise bitwise exclusive or of integers, x ^ y (tf.bitwise.bitwise_xor).

    Example:
      %z = "ember.bitwise_xor"(%x, %y) : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
    """

    name = "ember.bitwise_xor"
    reference = staticmethod(np.bitwise_xor)
    traits = COMMUTATIVE


@register
class LeftShiftOp(BitwiseOp):
    """Elementwise x << y of integers (tf.bitwise.left_shift): `y` clamped to
    [0, bits - 1], the shifted-out bits dropped (it wraps).

    Example:
      %z = "ember.left_shift"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    """

    name = "ember.left_shift"
    reference = staticmethod(left_shift)


@register
class RightShiftOp(BitwiseOp):
    """Elementwise x >> y of integers (tf.bitwise.right_shift): `y` clamped to
    [0, bits - 1]; arithmetic (the sign fills in) for signed types, logical for uint8.

    Example:
      %z = "ember.right_shift"(%x, %y) : (tensor<4xi8>, tensor<i8>) -> tensor<4xi8>
    """

    name = "ember.right_shift"
    reference = staticmethod(right_shift)


@register
class InvertOp(UnaryOp):
    """Elementwise bitwise complement of integers, ~x (tf.bitwise.invert).

    Example:
      %y = "ember.invert"(%x) : (tensor<4xui8>) -> tensor<4xui8>
    """

    name = "ember.invert"
    reference = staticmethod(np.invert)
    allowed = dtypes.INTEGERS
    allowed_what = INTEGER_NAMES
