"""The op functions that make tensors: `em.fill`, `em.zeros`/`ones` (and `_like`),
`em.range`, `em.shape`/`size`/`rank`, and the stateless random ops. Shapes may be lists
of ints and scalar integer tensors, or a 1-D integer tensor (shape_args.py).
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import creation as C
from ember.dialects.ember import dtypes
from ember.dialects.ember.base import Op
from ember.frontend.dispatch import execute
from ember.frontend.math_ops import cast, group
from ember.frontend.shape import TensorShape
from ember.frontend.shape_args import mentions_tensor, shape_argument
from ember.frontend.tensor import Tensor, convert_to_tensor


def _shape_tensor(shape, where: str) -> Tensor:
    """The shape operand of a fill: known dims as a constant, else the traced tensor."""
    if isinstance(shape, Tensor) and shape.dtype in (dtypes.int32, dtypes.int64) \
            and shape.ndim == 1:
        return shape
    dims, traced = shape_argument(shape, where)
    if traced is not None:
        return traced
    if mentions_tensor(shape) and None not in dims:  # FillOp checks them, as when traced
        return Tensor(np.array(dims, dtype=np.int64))
    shape = TensorShape(dims)
    if not shape.is_fully_defined():
        raise ValueError(f"{where}: shape {shape} must be fully defined here")
    return Tensor(np.array(shape.as_list(), dtype=np.int64))


def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with the scalar `value` (tf.fill). `dims` is a list of
    ints and scalar integer tensors, or a 1-D integer tensor."""
    del name
    return execute(C.FillOp, [_shape_tensor(dims, "em.fill"), convert_to_tensor(value)])


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of zeros (False for bool, "" for string)."""
    dtype = dtypes.as_dtype(dtype)
    zero = "" if dtype.is_string else np.zeros((), dtype.np_dtype)
    return fill(shape, convert_to_tensor(zero, dtype=dtype), name)


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ones (True for bool)."""
    dtype = dtypes.as_dtype(dtype)
    one = 1 if dtype.is_string else np.ones((), dtype.np_dtype)  # strings: a TypeError
    return fill(shape, convert_to_tensor(one, dtype=dtype), name)


def zeros_like(x, dtype=None, name=None):
    """Zeros with the shape (and by default dtype) of `x`."""
    x = convert_to_tensor(x)
    return zeros(shape(x), dtype or x.dtype, name)


def ones_like(x, dtype=None, name=None):
    """Ones with the shape (and by default dtype) of `x`."""
    x = convert_to_tensor(x)
    return ones(shape(x), dtype or x.dtype, name)


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001
    """start, start + delta, ... below `limit` (`range(n)` counts from 0), as tf.range."""
    del name
    if limit is None:
        start, limit = 0, start
    values = group(start, limit, delta) if dtype is None else [
        convert_to_tensor(v, dtype=dtype) for v in (start, limit, delta)]
    if len({v.dtype for v in values}) > 1:  # tf.range promotes mixed ints/floats
        widest = max((v.dtype for v in values), key=lambda d: (d.is_floating, d.bits))
        values = [cast(v, widest) for v in values]
    return execute(C.RangeOp, values)


def shape(x, out_type=dtypes.int32, name=None):
    """The shape of `x` as a 1-D int32 (or `out_type`) tensor."""
    del name
    return execute(C.ShapeOp, [convert_to_tensor(x)], {"dtype": dtypes.as_dtype(out_type)})


def size(x, out_type=dtypes.int32, name=None):
    """The number of elements of `x`."""
    from ember.frontend import ops  # ops imports this module
    return ops.reduce_prod(shape(x, out_type), name=name)


def rank(x, name=None):
    """The rank of `x` as a scalar int32 tensor (computed when the program runs if the rank
    is unknown while tracing)."""
    del name
    x = convert_to_tensor(x)
    if x.ndim is None:
        return size(shape(x))
    return convert_to_tensor(x.ndim, dtype=dtypes.int32)


def stateless_random_uniform(shape, seed, minval=0.0, maxval=1.0, dtype=dtypes.float32,
                             name=None):
    """Uniform numbers in [minval, maxval), fully determined by the [2] `seed`."""
    del name
    attrs = {"dtype": dtype, "minval": minval, "maxval": maxval}
    return _random(C.RandomUniformOp, C.DynamicRandomUniformOp, shape, seed, attrs,
                   "em.stateless_random_uniform")


def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                            name=None):
    """Normal numbers with `mean` and `stddev`, fully determined by the [2] `seed`."""
    del name
    attrs = {"dtype": dtype, "mean": mean, "stddev": stddev}
    return _random(C.RandomNormalOp, C.DynamicRandomNormalOp, shape, seed, attrs,
                   "em.stateless_random_normal")


def _random(static: type[Op], dynamic: type[Op], shape, seed, attrs: dict, where: str):
    dims, traced = shape_argument(shape, where)
    if traced is None and mentions_tensor(shape) and None not in dims:
        traced = Tensor(np.array(dims, dtype=np.int64))  # checked by the op, as when traced
    if traced is not None:
        return execute(dynamic, [_seed(seed), traced], attrs)
    return execute(static, [_seed(seed)], attrs | {"shape": TensorShape(dims).as_list()})


def _seed(seed) -> Tensor:
    t = convert_to_tensor(seed, dtype_hint=dtypes.int64)
    return t if t.dtype in (dtypes.int32, dtypes.int64) else cast(t, dtypes.int64)
