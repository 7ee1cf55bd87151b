"""Scans, sorted search and special functions: `em.cumsum`, `em.cumprod`, `em.searchsorted`,
`em.math.lgamma`, `em.math.digamma` (TensorFlow's names and signatures; the ops are
dialects/ember/scan.py and dialects/ember/elementwise/special.py).
"""

from __future__ import annotations

import numbers

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember import scan as S
from ember.dialects.ember.elementwise import DigammaOp, LgammaOp
from ember.frontend.dispatch import execute
from ember.frontend.indexing import is_tensor
from ember.frontend.math_ops import group
from ember.frontend.shape_args import trace_time_value
from ember.frontend.tensor import convert_to_tensor


def _axis(axis, where: str) -> int:
    """A scan axis: a Python int, or a scalar integer tensor whose value is known when
    tracing (a constant); anything else is a TypeError saying what to pass."""
    if is_tensor(axis):
        t = convert_to_tensor(axis)
        value = trace_time_value(t) if t.ndim == 0 and t.dtype.is_integer else None
        if value is None:
            raise TypeError(f"{where}: axis must be a Python int or a scalar integer tensor "
                            f"known when tracing (a constant); got a tensor of shape "
                            f"{t.shape} and dtype {t.dtype.name}"
                            + (" whose value is only known at run time"
                               if t.ndim == 0 and t.dtype.is_integer else ""))
        return int(value)
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, np.integer)):
        raise TypeError(f"{where}: axis must be an int, got {type(axis).__name__} {axis!r}")
    return int(axis)


def _scan(spec, x, axis, exclusive, reverse, where: str):
    attrs = {"axis": _axis(axis, where), "exclusive": bool(exclusive),
             "reverse": bool(reverse)}
    return execute(spec, [convert_to_tensor(x)], attrs)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative sum of `x` along `axis` (tf.math.cumsum).

    `exclusive=True` leaves each element out of its own sum (the first is 0); `reverse=True`
    sums from the end. Floats accumulate in x's dtype, rounded at every step, as TensorFlow
    does (float16 sums drift as they do there); integers wrap.

    Args:
      x: a numeric tensor (or value) of rank >= 1.
      axis: a Python int or a constant scalar integer tensor in [-rank, rank).
      exclusive, reverse: bools.
    Returns:
      A tensor of x's shape and dtype.
    Raises:
      OpAttributeError: axis out of range. TypeError: a non-numeric x, or a non-int axis.

    Example:
      >>> import ember as em
      >>> em.cumsum(em.constant([1, 2, 3]), exclusive=True, reverse=True)
      <ember.Tensor: shape=(3,), dtype=int32, numpy=array([5, 3, 0], dtype=int32)>
    """
    del name
    return _scan(S.CumsumOp, x, axis, exclusive, reverse, "em.cumsum")


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative product of `x` along `axis` (tf.math.cumprod); see `cumsum` (the
    exclusive product starts at 1).

    Example:
      >>> import ember as em
      >>> em.cumprod(em.constant([[1., 2.], [3., 4.]]), axis=-1, exclusive=True)
      <ember.Tensor: shape=(2, 2), dtype=float32, numpy=
      array([[1., 1.],
             [1., 3.]], dtype=float32)>
    """
    del name
    return _scan(S.CumprodOp, x, axis, exclusive, reverse, "em.cumprod")


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """Insertion indices of `values` in `sorted_sequence` along the innermost dim
    (tf.searchsorted), batched over the leading dims, which must match.

    side "left" gives the first i with values <= seq[i], "right" the first i with
    values < seq[i]. NaN follows TensorFlow (a NaN value goes to 0 for "left", to the
    end for "right"), not numpy (which sorts NaN last).

    Args:
      sorted_sequence: N-D tensor (N >= 1), sorted along its last dim.
      values: N-D tensor with the same leading dims and dtype.
      side: "left" or "right".
      out_type: em.int32 or em.int64.
    Returns:
      A tensor of `values`' shape and dtype `out_type`.

    Example:
      >>> import ember as em
      >>> em.searchsorted(em.constant([1., 2., 2., 5.]), em.constant([2., 6.]), side="right")
      <ember.Tensor: shape=(2,), dtype=int32, numpy=array([3, 4], dtype=int32)>
    """
    del name
    if side not in ("left", "right"):
        raise ValueError(f"em.searchsorted: side must be 'left' or 'right', got {side!r}")
    seq, vals = group(sorted_sequence, values)
    return execute(S.SearchSortedOp, [seq, vals],
                   {"side": side, "out_type": dtypes.as_dtype(out_type)})


def lgamma(x, name=None):
    """Elementwise log|Gamma(x)| (tf.math.lgamma): +inf at 0 and the negative integers.

    Example:
      >>> import ember as em
      >>> em.math.lgamma(em.constant([1., 3., 0.5]))
      <ember.Tensor: shape=(3,), dtype=float32,
        numpy=array([0.       , 0.6931472, 0.5723649], dtype=float32)>
    """
    del name
    return execute(LgammaOp, [convert_to_tensor(x)])


def digamma(x, name=None):
    """Elementwise digamma, the derivative of lgamma (tf.math.digamma). At the poles (0 and
    the negative integers) the result is NaN, as in TensorFlow (scipy gives -inf or inf).

    Example:
      >>> import ember as em
      >>> em.math.digamma(em.constant([1., 0., -1.5]))
      <ember.Tensor: shape=(3,), dtype=float32,
        numpy=array([-0.5772157 ,         nan,  0.70315665], dtype=float32)>
    """
    del name
    return execute(DigammaOp, [convert_to_tensor(x)])
