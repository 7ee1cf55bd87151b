"""Norms with TensorFlow's names and signatures: `em.norm` / `em.linalg.norm` (vector norms
for any positive real `ord`, the matrix norms 1, inf and Frobenius over a pair of axes) and
`em.math.reduce_euclidean_norm`. Compositions of abs, pow, sum and max."""

from __future__ import annotations

import math
import numbers

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.tensor import convert_to_tensor


def _float_tensor(tensor, what: str):
    x = convert_to_tensor(tensor)
    if not x.dtype.is_floating:
        raise TypeError(f"em.{what} needs a floating-point tensor (as tf.norm), got "
                        f"{x.dtype.name}; cast it first (em.cast(x, em.float32))")
    return x


def _check_axis(a, rank, what: str) -> int:
    if isinstance(a, bool) or not isinstance(a, numbers.Integral):
        raise TypeError(f"em.{what}: axis must be an int or a pair of ints, got {a!r}")
    a = int(a)
    if rank is not None and not -rank <= a < rank:
        raise ValueError(f"em.{what}: axis {a} is out of range for a tensor of rank {rank}")
    return a


def _is_number(ord) -> bool:  # noqa: A002
    return isinstance(ord, numbers.Real) and not isinstance(ord, bool)


def norm(tensor, ord="euclidean", axis=None, keepdims=False, name=None):  # noqa: A002
    """The norm of `tensor` (tf.norm / tf.linalg.norm).

    `axis` None: the norm of the whole tensor taken as one vector (also for matrices, as
    TensorFlow; numpy takes the matrix norm of a 2-D array). `axis` an int: vector norms
    along it, `ord` 'euclidean' (= 2), 1, inf or any positive real p, (sum |x|^p)^(1/p).
    `axis` a pair of ints: matrix norms over those dims, `ord` 'fro'/'euclidean'
    (Frobenius), 1 (largest column abs sum) or inf (largest row abs sum); ord=2 (the
    spectral norm) needs singular values, which Ember does not have: it raises ValueError.
    `keepdims` keeps the reduced dims with size 1.

    Example:
      >>> import ember as em
      >>> float(em.linalg.norm(em.constant([[2.0, -1.0], [1.0, 3.0]]), ord=1, axis=[-2, -1]))
      4.0
    """
    del name
    what = "norm"
    x = _float_tensor(tensor, what)
    rank = x.shape.rank
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    if isinstance(axis, (list, tuple)):
        if len(axis) != 2:
            raise ValueError(f"em.{what}: axis must be None, an int or a pair of ints (a "
                             f"matrix norm), got {list(axis)}")
        a0, a1 = (_check_axis(a, rank, what) for a in axis)
        if rank is not None:
            a0, a1 = a0 % rank, a1 % rank
        if a0 == a1:
            raise ValueError(f"em.{what}: the two axes of a matrix norm must differ, got "
                             f"{list(axis)}")
        return _matrix_norm(x, ord, a0, a1, keepdims, what)
    if axis is not None:
        axis = _check_axis(axis, rank, what)
    return _vector_norm(x, ord, axis, keepdims, what)


def _vector_norm(x, ord, axis, keepdims, what):  # noqa: A002
    if ord in ("euclidean",) or (_is_number(ord) and ord == 2):
        return ops.sqrt(ops.reduce_sum(ops.square(ops.abs(x)), axis=axis, keepdims=keepdims))
    if not _is_number(ord) or math.isnan(ord) or ord <= 0:
        raise ValueError(f"em.{what}: a vector norm's ord must be 'euclidean', inf or a "
                         f"positive real number, got {ord!r}"
                         + (" ('fro' is for matrix norms: give a pair of axes)"
                            if ord == "fro" else ""))
    if ord == 1:
        return ops.reduce_sum(ops.abs(x), axis=axis, keepdims=keepdims)
    if math.isinf(ord):
        return ops.reduce_max(ops.abs(x), axis=axis, keepdims=keepdims)
    p = float(ord)
    total = ops.reduce_sum(ops.pow(ops.abs(x), convert_to_tensor(p, dtype=x.dtype)), axis=axis,
                           keepdims=keepdims)
    return ops.pow(total, convert_to_tensor(1.0 / p, dtype=x.dtype))


def _matrix_norm(x, ord, a0, a1, keepdims, what):  # noqa: A002
    if ord in ("fro", "euclidean"):
        return ops.sqrt(ops.reduce_sum(ops.square(ops.abs(x)), axis=[a0, a1],
                                       keepdims=keepdims))
    if _is_number(ord) and ord == 2:
        raise ValueError(f"em.{what}: ord=2 over a pair of axes is the spectral norm, which "
                         f"needs singular values (not supported, as in TensorFlow); use "
                         f"'fro', 1 or inf, or a vector norm over one axis")
    if not (_is_number(ord) and (ord == 1 or ord == math.inf)):
        raise ValueError(f"em.{what}: a matrix norm's ord must be 'fro', 'euclidean', 1 or "
                         f"inf, got {ord!r}")
    summed, maxed = (a0, a1) if ord == 1 else (a1, a0)
    sums = ops.reduce_sum(ops.abs(x), axis=summed, keepdims=True)
    # `sums` has size 1 along `summed`: the max over both axes is the max along `maxed`
    return ops.reduce_max(sums, axis=[a0, a1], keepdims=keepdims)


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x ** 2)) over `axis` (tf.math.reduce_euclidean_norm; all dims if None).

    As TensorFlow, integer tensors give an integer result (the square root truncated).

    Example:
      >>> import ember as em
      >>> em.math.reduce_euclidean_norm(em.constant([[3.0, 4.0], [6.0, 8.0]]), axis=1).numpy()
      array([ 5., 10.], dtype=float32)
    """
    del name
    x = convert_to_tensor(input_tensor)
    if x.dtype.is_floating:
        return ops.sqrt(ops.reduce_sum(ops.square(x), axis=axis, keepdims=keepdims))
    if not x.dtype.is_integer:
        raise TypeError(f"em.math.reduce_euclidean_norm needs a numeric tensor, got "
                        f"{x.dtype.name}")
    total = ops.reduce_sum(ops.square(ops.cast(x, dtypes.float64)), axis=axis,
                           keepdims=keepdims)
    return ops.cast(ops.floor(ops.sqrt(total)), x.dtype)
