"""Python indexing (`x[1:3, ::2]`, `x[..., None]`, `x[i]`) to a strided_slice spec.

The encoding is TensorFlow's: one entry per index item with begin/end/stride, and bit masks
for omitted bounds, `...`, new axes and integer (dim-dropping) indices.
"""

from __future__ import annotations

import numbers

import numpy as np

_VALID = ("only integers, slices (`:`), ellipsis (`...`), None (new axis) and scalar "
          "integer tensors are valid indices")


def _int(value, where: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{_VALID}; got the bool {value!r} {where}")
    if isinstance(value, numbers.Integral):
        return int(value)
    if hasattr(value, "__index__"):
        try:
            return int(value.__index__())
        except (TypeError, ValueError):
            pass
    raise TypeError(f"{_VALID}; got {type(value).__name__} {value!r} {where}")


def slice_spec(key) -> dict:
    """Returns the strided_slice arguments (begin, end, strides and masks) for `key`."""
    items = key if isinstance(key, tuple) else (key,)
    spec = {"begin": [], "end": [], "strides": [], "begin_mask": 0, "end_mask": 0,
            "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}
    seen_ellipsis = False
    for i, item in enumerate(items):
        bit = 1 << i
        begin, end, stride = 0, 0, 1
        if item is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            spec["ellipsis_mask"] |= bit
        elif item is None or item is np.newaxis:
            spec["new_axis_mask"] |= bit
        elif isinstance(item, slice):
            stride = 1 if item.step is None else _int(item.step, "as a slice step")
            if stride == 0:
                raise ValueError("slice step cannot be zero")
            if item.start is None:
                spec["begin_mask"] |= bit
            else:
                begin = _int(item.start, "as a slice start")
            if item.stop is None:
                spec["end_mask"] |= bit
            else:
                end = _int(item.stop, "as a slice stop")
        else:
            begin = _int(item, "as an index")
            end = begin + 1
            spec["shrink_axis_mask"] |= bit
        spec["begin"].append(begin)
        spec["end"].append(end)
        spec["strides"].append(stride)
    return spec
