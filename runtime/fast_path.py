"""The fast path of a call: a cheap key of its arguments (types and shapes of tensors and
arrays, values of Python literals) under which a Function keeps the compiled entry that
served an earlier call with an equal key, so the call needs no binding and no trace type.
"""

from __future__ import annotations

import numpy as np

from ember.frontend.tensor import Tensor
from ember.frontend.trace_types import float_bits

MAX_FAST_ENTRIES = 64  # per Function
_FAST_LITERALS = (int, float, bool, str, type(None))


def fast_key(args: tuple):
    """A cheap key for calls whose arguments are eager tensors, C-contiguous aligned numpy
    arrays and Python literals: equal keys have equal trace types, so a compiled entry
    recorded for one serves the other.
    None when some argument needs the general path."""
    key = []
    for a in args:
        kind = type(a)
        if kind is Tensor:
            key.append((a._dtype, a._value.shape))
        elif kind is np.ndarray:  # traced as a tensor of its dtype and shape
            if not (a.flags.c_contiguous and a.flags.aligned):
                return None  # the general path copies it
            key.append((kind, a.dtype, a.shape))
        elif kind is float:  # by bits, as trace types: -0.0 is not 0.0, a NaN is itself
            key.append((kind, float_bits(a)))
        elif kind in _FAST_LITERALS:
            key.append((kind, a))
        else:
            return None
    return tuple(key)


def drop_entry(table: dict, key, value) -> None:
    """Removes `key` from `table` if it still maps to `value`."""
    if table.get(key) is value:
        table.pop(key, None)
