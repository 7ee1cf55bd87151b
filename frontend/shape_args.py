"""Shape arguments: a list mixing Python ints and scalar integer tensors, or a 1-D integer
tensor, wherever TensorFlow takes a shape (`em.zeros([n, 3])`, `em.reshape(x, [em.shape(x)[0],
-1])`, `em.broadcast_to(1.0, em.shape(y))`).

What is known at trace time stays known, as TensorFlow's `constant_value_as_shape`: the dims
of a shape built from `em.shape(x)` and Python ints are read back from the IR
(dialects/ember/partial.py), so a shape known in full becomes the op's attribute form, and
only a shape that depends on run-time values becomes a shape operand.
"""

from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.partial import known_operand
from ember.frontend.indexing import is_tensor
from ember.frontend.tensor import Tensor

_WHAT = "a list of ints and scalar integer tensors, or a 1-D integer tensor"


def _tensor(value) -> Tensor:
    return value._as_tensor() if hasattr(value, "_as_tensor") else value


def trace_time_value(t: Tensor):
    """`t`'s value as a numpy array when it is known at trace time (eager, or traced from
    shapes and constants), else None."""
    from ember.frontend.tracing import SymbolicTensor
    if not isinstance(t, SymbolicTensor):
        return t._numpy_array()
    value = known_operand(t._ir)
    return None if value is None or isinstance(value, tuple) else np.asarray(value)


def shape_argument(shape, where: str) -> tuple[Optional[list], Optional[Tensor]]:
    """(dims, None) when every dim of `shape` is known at trace time (ints; None where a
    Python shape leaves a dim out), else (None, the shape as a 1-D int32/int64 tensor).

    Raises:
      TypeError: `shape` holds a float, bool or non-scalar tensor (says which, in `where`).
    """
    if is_tensor(shape) and _tensor(shape).ndim == 0:
        shape = [shape]  # a scalar n is the shape [n], as a Python int is
    if is_tensor(shape):
        t = _tensor(shape)
        if not t.dtype.is_integer or t.ndim != 1:
            raise TypeError(f"{where}: a shape must be {_WHAT}; got a tensor of shape "
                            f"{t.shape} and dtype {t.dtype.name}")
        value = trace_time_value(t)
        if value is not None:
            return [int(d) for d in value], None
        return None, t if t.dtype in (dtypes.int32, dtypes.int64) else _cast(t, dtypes.int64)
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = [shape]
    if hasattr(shape, "dims") and not isinstance(shape, (list, tuple)):
        shape = shape.dims  # a TensorShape
        if shape is None:
            raise ValueError(f"{where}: a shape of unknown rank cannot be used here")
    try:
        items = list(shape)
    except TypeError:
        raise TypeError(f"{where}: a shape must be {_WHAT}; got {type(shape).__name__} "
                        f"{shape!r}") from None
    dims = [_dim(item, i, where) for i, item in enumerate(items)]
    if not any(is_tensor(d) for d in dims):
        return dims, None
    wide = any(is_tensor(d) and d.dtype is dtypes.int64 for d in dims)
    dtype = dtypes.int64 if wide else dtypes.int32
    from ember.frontend.ops import stack
    return None, stack([_cast(d, dtype) if is_tensor(d) else
                        Tensor(np.array(-1 if d is None else d, dtype.np_dtype), dtype)
                        for d in dims])


def mentions_tensor(shape) -> bool:
    """Whether `shape` is a tensor or a list holding one: its values are then checked by the
    op (eagerly as when traced), not by TensorShape."""
    if is_tensor(shape):
        return True
    return isinstance(shape, (list, tuple)) and any(is_tensor(d) for d in shape)


def _dim(item, i: int, where: str):
    """One dim: an int, None, or a scalar integer tensor not known at trace time."""
    if item is None:
        return None
    if is_tensor(item):
        t = _tensor(item)
        if not t.dtype.is_integer or t.ndim != 0:
            raise TypeError(f"{where}: dim {i} of a shape must be an int or a scalar integer "
                            f"tensor; got a tensor of shape {t.shape} and dtype {t.dtype.name}")
        value = trace_time_value(t)
        return t if value is None else int(value)
    if isinstance(item, bool) or not isinstance(item, (numbers.Integral, np.integer)):
        raise TypeError(f"{where}: dim {i} of a shape must be an int or a scalar integer "
                        f"tensor; got {type(item).__name__} {item!r}")
    return int(item)


def _cast(t: Tensor, dtype) -> Tensor:
    from ember.frontend.ops import cast
    return t if t.dtype is dtype else cast(t, dtype)
