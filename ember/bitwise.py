"""`em.bitwise`: tf.bitwise's ops on integer tensors (int8, int16, int32, int64, uint8), also
spelled `&`, `|`, `^`, `~`, `<<` and `>>` on em.Tensor (on bool tensors, `&`, `|`, `^` and
`~` are the logical ops, as TensorFlow's). Shift amounts are clamped to [0, bits - 1], as
TensorFlow's kernels do: `1 << 40` on int32 is `1 << 31`, and a negative amount shifts by 0.

Example:
  >>> import ember as em
  >>> em.bitwise.left_shift(em.constant([1, 3], em.int32), 2)
  <ember.Tensor: shape=(2,), dtype=int32, numpy=array([ 4, 12], dtype=int32)>
"""

from ember.frontend.math_ops import (bitwise_and, bitwise_or, bitwise_xor, invert, left_shift,
                                     right_shift)

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]
