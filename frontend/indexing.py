"""Python indexing (`x[1:3, ::2]`, `x[..., None]`, `x[i]`) to a strided_slice spec.

The encoding is TensorFlow's: one entry per index item with begin/end/stride, and bit masks
for omitted bounds, `...`, new axes and integer (dim-dropping) indices. A bound may be a scalar
integer tensor (`x[i]`, `x[i:i + 2]` with a traced `i`): the spec then holds that tensor, and
`em.strided_slice` emits `ember.dynamic_strided_slice`.
"""

from __future__ import annotations

import numbers

import numpy as np

_VALID = ("only integers, slices (`:`), ellipsis (`...`), None (new axis) and scalar "
          "integer tensors are valid indices")


def is_tensor(value) -> bool:
    """Whether `value` is an ember tensor or reads as one (a Variable)."""
    from ember.frontend.tensor import Tensor
    return isinstance(value, Tensor) or hasattr(value, "_as_tensor")


def as_index(value, where: str):
    """`value` as a Python int, or as a scalar integer tensor when it is one."""
    if is_tensor(value):
        t = value._as_tensor() if hasattr(value, "_as_tensor") else value
        if t.dtype.is_integer and t.shape == ():
            return t
        raise TypeError(f"{_VALID}; got a tensor of shape {t.shape} and dtype "
                        f"{t.dtype.name} {where}")
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
            stride = 1 if item.step is None else as_index(item.step, "as a slice step")
            if not is_tensor(stride) and stride == 0:
                raise ValueError("slice step cannot be zero")
            if item.start is None:
                spec["begin_mask"] |= bit
            else:
                begin = as_index(item.start, "as a slice start")
            if item.stop is None:
                spec["end_mask"] |= bit
            else:
                end = as_index(item.stop, "as a slice stop")
        else:
            begin = as_index(item, "as an index")
            end = 0 if is_tensor(begin) else begin + 1  # an index reads only begin
            spec["shrink_axis_mask"] |= bit
        spec["begin"].append(begin)
        spec["end"].append(end)
        spec["strides"].append(stride)
    return spec
