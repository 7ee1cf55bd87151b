"""`em.numpy_function` (tf.numpy_function): a Python function of numpy arrays, run on every
call, even inside an em.function, as `em.py_function` runs one of tensors."""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from ember.frontend.autodiff import recording
from ember.frontend.effects import py_function


def numpy_function(func: Callable, inp, Tout, stateful: bool = True, name=None):
    """Runs `func` on numpy arrays (copies of the values of the tensors in `inp`; a 0-d
    tensor comes as a numpy scalar, `bytes` for a string, as TensorFlow's PyFunc kernel
    hands them over through `PyArray_Return`) on every call, even inside an em.function;
    `func` returns numpy arrays or Python values of the
    dtypes `Tout` lists (a dtype or a list of them). As TensorFlow's, it has no gradient:
    a tape sees no path through it. `stateful` is accepted (every call runs `func`).

    Example:
      >>> import ember as em, numpy as np
      >>> em.numpy_function(lambda x: np.sort(x)[::-1], [em.constant([2, 9, 4])], em.int32)
      <ember.Tensor: shape=(3,), dtype=int32, numpy=array([9, 4, 2], dtype=int32)>
      >>> em.numpy_function(lambda s: type(s).__name__, [em.constant(2.0)], em.string)
      <ember.Tensor: shape=(), dtype=string, numpy=b'float32'>
    """
    del stateful, name

    @functools.wraps(func)  # (py_function's errors name the user's function)
    def on_arrays(*tensors):
        return func(*[_as_numpy(t) for t in tensors])
    with recording.new_context():  # no tape records it: not differentiable
        return py_function(on_arrays, inp, Tout)


def _as_numpy(tensor):
    """A writable copy of `tensor`'s value; a 0-d one as a numpy scalar (np.float32(2.0),
    np.True_, bytes), as `PyArray_Return` gives tf.numpy_function's callbacks."""
    array = np.array(tensor._value)
    return array[()] if array.ndim == 0 else array
