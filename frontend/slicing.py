"""`em.strided_slice` and `em.slice`.

A strided slice's bounds are Python ints (the attribute form, `ember.strided_slice`) or
integer tensors (`ember.dynamic_strided_slice`); `x[...]` reaches it through
`indexing.slice_spec`. `em.slice` is `ember.slice` (begin and size operands, checked
rather than clamped). Upstream equivalent: TF's StridedSlice and Slice kernels, whose
bounds are operands.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember import indexing as I
from ember.frontend.dispatch import execute
from ember.frontend.indexing import as_index, is_tensor
from ember.frontend.tensor import Tensor, convert_to_tensor


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, name=None):
    """TensorFlow's strided slice with its bit masks (what `x[...]` uses).

    `begin`, `end` and `strides` are lists of Python ints (`ember.strided_slice`, bounds
    as attributes) or 1-D integer tensors, or lists mixing ints and scalar integer tensors
    (`ember.dynamic_strided_slice`, bounds as operands).
    """
    del name
    strides = [1] * len(begin) if strides is None else strides
    masks = {"begin_mask": begin_mask, "end_mask": end_mask, "ellipsis_mask": ellipsis_mask,
             "new_axis_mask": new_axis_mask, "shrink_axis_mask": shrink_axis_mask}
    x = convert_to_tensor(input_)
    if not any(_holds_tensor(v) for v in (begin, end, strides)):
        attrs = {"begin": list(begin), "end": list(end), "strides": list(strides)}
        return execute(I.StridedSliceOp, [x], attrs | masks)
    dtype = _index_dtype(begin, end, strides)
    bounds = [_index_vector(v, dtype, what) for v, what in
              ((begin, "begin"), (end, "end"), (strides, "strides"))]
    return execute(I.DynamicStridedSliceOp, [x, *bounds], masks)


def slice(input_, begin, size, name=None):  # noqa: A001 - TensorFlow's name
    """`size[i]` elements of dim i from `begin[i]` on (tf.slice, `ember.slice`); a size of
    -1 takes the rest of the dim. Bounds may be Python ints, scalar integer tensors or 1-D
    integer tensors. As in TensorFlow nothing clamps: `begin[i]` must lie in [0, n] and
    `size[i]` in [0, n - begin[i]], an OpShapeError otherwise (when tracing if the bounds
    are known then, else when the code runs). A size known when tracing is a static dim.

    Example:
      >>> import ember as em
      >>> em.slice(em.constant([1, 2, 3, 4]), [1], [2]).numpy().tolist()
      [2, 3]
    """
    del name
    x = convert_to_tensor(input_)
    dtype = _index_dtype(begin, size)
    return execute(I.SliceOp, [x, _index_vector(begin, dtype, "begin", "slice"),
                               _index_vector(size, dtype, "size", "slice")])


def _holds_tensor(value) -> bool:
    if is_tensor(value):
        return True
    return isinstance(value, (list, tuple)) and any(is_tensor(v) for v in value)


def _index_dtype(*values) -> dtypes.DType:
    """int64 if a bound is an int64 tensor or outside int32, else int32 (as TensorFlow)."""
    items = []
    for v in values:
        items.extend([v] if is_tensor(v) else list(v))
    for v in items:
        if is_tensor(v):
            t = v._as_tensor() if hasattr(v, "_as_tensor") else v
            if t.dtype is dtypes.int64:
                return dtypes.int64
        elif not -2**31 <= int(v) < 2**31:
            return dtypes.int64
    return dtypes.int32


def _index_vector(value, dtype: dtypes.DType, what: str, op: str = "strided_slice") -> Tensor:
    """A 1-D `dtype` tensor of slice bounds from a 1-D integer tensor or a list of ints and
    scalar integer tensors."""
    from ember.frontend import ops  # ops imports this module
    if is_tensor(value):
        t = value._as_tensor() if hasattr(value, "_as_tensor") else value
        if not t.dtype.is_integer or t.ndim != 1:
            raise TypeError(f"{op} {what} must be a 1-D integer tensor or a list of "
                            f"ints and scalar integer tensors, got a tensor of shape {t.shape} "
                            f"and dtype {t.dtype.name}")
        return t if t.dtype is dtype else ops.cast(t, dtype)
    items = [as_index(v, f"in {op} {what}") for v in value]
    if not any(is_tensor(v) for v in items):
        return convert_to_tensor(np.array(items, dtype=dtype.np_dtype).reshape(-1))
    return ops.stack([v if is_tensor(v) and v.dtype is dtype else
                      ops.cast(v, dtype) if is_tensor(v) else convert_to_tensor(v, dtype=dtype)
                      for v in items])
