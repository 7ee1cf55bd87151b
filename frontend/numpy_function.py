"""`em.numpy_function` (tf.numpy_function): a Python function of numpy arrays, run on every
call, even inside an em.function, as `em.py_function` runs one of tensors."""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from ember.frontend.autodiff import recording
from ember.frontend.effects import py_function


def numpy_function(func: Callable, inp, Tout, stateful: bool = True, name=None):
    """Runs `func` on numpy arrays (copies of the values of the tensors in `inp`) on every
    call, even inside an em.function; `func` returns numpy arrays or Python values of the
    dtypes `Tout` lists (a dtype or a list of them). As TensorFlow's, it has no gradient:
    a tape sees no path through it. `stateful` is accepted (every call runs `func`).

    Example:
      >>> import ember as em, numpy as np
      >>> em.numpy_function(lambda x: np.sort(x)[::-1], [em.constant([2, 9, 4])], em.int32)
      <ember.Tensor: shape=(3,), dtype=int32, numpy=array([9, 4, 2], dtype=int32)>
    """
    del stateful, name

    @functools.wraps(func)  # (py_function's errors name the user's function)
    def on_arrays(*tensors):
        return func(*[np.array(t._value) for t in tensors])
    with recording.new_context():  # no tape records it: not differentiable
        return py_function(on_arrays, inp, Tout)
