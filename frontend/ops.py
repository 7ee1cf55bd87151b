"""The public op functions (`em.add`, `em.reduce_sum`, ...) and Tensor's operators.

Each function converts its arguments (Python values take the dtype of the tensor they meet,
as in TensorFlow), turns TensorFlow-style arguments (`axis=None`, negative axes, shapes) into
the op's attributes and calls `dispatch.execute` with the op spec. Nothing here computes:
the spec's reference kernel does.
"""

from __future__ import annotations

import builtins
from typing import Sequence

import numpy as np

from ember.dialects.ember import creation as C
from ember.dialects.ember import dtypes
from ember.dialects.ember import elementwise as E
from ember.dialects.ember import indexing as I
from ember.dialects.ember import nn as N
from ember.dialects.ember import reduction as R
from ember.dialects.ember import structure as T
from ember.dialects.ember.base import Op, OpShapeError
from ember.frontend.dispatch import execute
from ember.frontend.indexing import is_tensor, slice_spec
from ember.frontend.shape_args import mentions_tensor, shape_argument, trace_time_value
from ember.frontend.slicing import slice, strided_slice  # noqa: A004 - re-exported
from ember.frontend.shape import TensorShape
from ember.frontend.tensor import Tensor, convert_to_tensor


def _group(*values) -> list[Tensor]:
    """Converts values that must share a dtype: Python values take the first tensor's dtype
    (or, when there is none, the first value's)."""
    hint = next((v.dtype if isinstance(v, Tensor) or hasattr(v, "_as_tensor")
                 else dtypes.as_dtype(v.dtype) for v in values
                 if isinstance(v, (Tensor, np.ndarray, np.generic)) or hasattr(v, "_as_tensor")),
                None)
    if hint is None and values:  # only Python values: the first one's dtype leads, as in TF
        hint = convert_to_tensor(values[0]).dtype
    return [convert_to_tensor(v, dtype_hint=hint) for v in values]


def _unary(spec: type[Op], name: str):
    def fn(x, name=None):
        del name
        return execute(spec, [convert_to_tensor(x)])
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{spec.summary()}\n\nRuns the `{spec.name}` op (see its spec for details)."
    return fn


def _binary(spec: type[Op], name: str):
    def fn(x, y, name=None):
        del name
        return execute(spec, _group(x, y))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{spec.summary()}\n\nRuns the `{spec.name}` op (see its spec for details)."
    return fn


negative = _unary(E.NegOp, "negative")
abs = _unary(E.AbsOp, "abs")  # noqa: A001 - TensorFlow's name
sign = _unary(E.SignOp, "sign")
exp = _unary(E.ExpOp, "exp")
expm1 = _unary(E.Expm1Op, "expm1")
log = _unary(E.LogOp, "log")
log1p = _unary(E.Log1pOp, "log1p")
sqrt = _unary(E.SqrtOp, "sqrt")
rsqrt = _unary(E.RsqrtOp, "rsqrt")
square = _unary(E.SquareOp, "square")
tanh = _unary(E.TanhOp, "tanh")
sigmoid = _unary(E.SigmoidOp, "sigmoid")
relu = _unary(E.ReluOp, "relu")
sin = _unary(E.SinOp, "sin")
cos = _unary(E.CosOp, "cos")
floor = _unary(E.FloorOp, "floor")
ceil = _unary(E.CeilOp, "ceil")
round = _unary(E.RoundOp, "round")  # noqa: A001
logical_not = _unary(E.LogicalNotOp, "logical_not")
is_nan = _unary(E.IsNanOp, "is_nan")
is_finite = _unary(E.IsFiniteOp, "is_finite")

add = _binary(E.AddOp, "add")
subtract = _binary(E.SubOp, "subtract")
multiply = _binary(E.MulOp, "multiply")
divide = _binary(E.DivOp, "divide")
truediv = divide
floordiv = _binary(E.FloorDivOp, "floordiv")
floormod = _binary(E.ModOp, "floormod")
mod = floormod
pow = _binary(E.PowOp, "pow")  # noqa: A001
maximum = _binary(E.MaximumOp, "maximum")
minimum = _binary(E.MinimumOp, "minimum")
equal = _binary(E.EqualOp, "equal")
not_equal = _binary(E.NotEqualOp, "not_equal")
less = _binary(E.LessOp, "less")
less_equal = _binary(E.LessEqualOp, "less_equal")
greater = _binary(E.GreaterOp, "greater")
greater_equal = _binary(E.GreaterEqualOp, "greater_equal")
logical_and = _binary(E.LogicalAndOp, "logical_and")
logical_or = _binary(E.LogicalOrOp, "logical_or")


def logical_xor(x, y, name=None):
    """`x != y` for bool tensors, elementwise with broadcasting (tf.math.logical_xor, which
    is written the same way: `(x | y) & ~(x & y)`).

    Example:
      >>> import ember as em
      >>> em.logical_xor(em.constant([True, False]), True)
      <ember.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    del name
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


def where(condition, x, y, name=None):
    """Elementwise `condition ? x : y` with broadcasting (x and y are required)."""
    del name
    c = convert_to_tensor(condition, dtype_hint=dtypes.bool_)
    return execute(E.SelectOp, [c, *_group(x, y)])


def cast(x, dtype, name=None):
    """Converts `x` to `dtype` (floats to ints truncate toward zero)."""
    del name
    return execute(C.CastOp, [convert_to_tensor(x)], {"dtype": dtypes.as_dtype(dtype)})


def identity(x, name=None):
    """Returns `x` as a tensor."""
    del name
    return convert_to_tensor(x)


# -- creation -----------------------------------------------------------------------------

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
    values = _group(start, limit, delta) if dtype is None else [
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
    return reduce_prod(shape(x, out_type), name=name)


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


# -- reductions -----------------------------------------------------------------------------

def _axes(x: Tensor, axis) -> list[int]:
    if axis is None:
        return list(builtins.range(_known_rank(x, "axis=None (every dim)")))
    if isinstance(axis, (Tensor, np.ndarray)):
        axis = np.asarray(axis).tolist()
    return [int(a) for a in axis] if isinstance(axis, (list, tuple)) else [int(axis)]


def _known_rank(x: Tensor, what: str) -> int:
    """`x.ndim`, or a ValueError saying that `what` needs it and how to give it."""
    if x.ndim is None:
        raise ValueError(
            f"{what} needs the rank of {x}, which is unknown while tracing; give the input a "
            "known rank (a shape in the input_signature's TensorSpec, or em.reshape(x, "
            "[...]) with the dims you expect) or pass the dims explicitly")
    return x.ndim


def _reduce_every_dim(spec: type[Op], x: Tensor, keepdims: bool) -> Tensor:
    """A reduction of every dim of `x` of unknown rank: the reduction of its elements in
    row-major order (those of `x` flattened), which is a scalar; with `keepdims`, that value
    in a tensor of x's rank with every dim 1. (TensorFlow reduces over `range(rank(x))`,
    computed when it runs; ember's axes are attributes.)"""
    flat = reshape(x, [-1])
    value = execute(spec, [flat], {"axes": [0], "keepdims": False})
    if not keepdims:
        return value
    return fill(ones_like(shape(x)), value)


def _reduction(spec: type[Op], name: str):
    def fn(input_tensor, axis=None, keepdims=False, name=None):
        del name
        x = convert_to_tensor(input_tensor)
        if axis is None and x.ndim is None:
            return _reduce_every_dim(spec, x, bool(keepdims))
        return execute(spec, [x], {"axes": _axes(x, axis), "keepdims": keepdims})
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{spec.summary()}\n\n`axis=None` reduces every dim; `keepdims` keeps them "
                  f"as size 1. Runs `{spec.name}`.")
    return fn


reduce_sum = _reduction(R.ReduceSumOp, "reduce_sum")
reduce_mean = _reduction(R.ReduceMeanOp, "reduce_mean")
reduce_max = _reduction(R.ReduceMaxOp, "reduce_max")
reduce_min = _reduction(R.ReduceMinOp, "reduce_min")
reduce_prod = _reduction(R.ReduceProdOp, "reduce_prod")
reduce_any = _reduction(R.ReduceAnyOp, "reduce_any")
reduce_all = _reduction(R.ReduceAllOp, "reduce_all")


def argmax(input, axis=0, output_type=dtypes.int64, name=None):  # noqa: A002
    """Index of the largest value along `axis` (default 0, also for None, as tf.argmax)."""
    del name
    return execute(R.ArgMaxOp, [convert_to_tensor(input)],
                   {"axis": 0 if axis is None else int(axis),
                    "dtype": dtypes.as_dtype(output_type)})


def argmin(input, axis=0, output_type=dtypes.int64, name=None):  # noqa: A002
    """Index of the smallest value along `axis` (default 0, also for None, as tf.argmin)."""
    del name
    return execute(R.ArgMinOp, [convert_to_tensor(input)],
                   {"axis": 0 if axis is None else int(axis),
                    "dtype": dtypes.as_dtype(output_type)})


# -- structure ------------------------------------------------------------------------------

def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """Matrix product over the last two dims (batch dims broadcast)."""
    del name
    return execute(T.MatmulOp, _group(a, b),
                   {"transpose_a": transpose_a, "transpose_b": transpose_b})


def transpose(a, perm=None, name=None):
    """Permutes dims (reverses them when `perm` is None)."""
    del name
    x = convert_to_tensor(a)
    if perm is None:
        perm = list(builtins.range(_known_rank(x, "transpose without perm")))[::-1]
    perm = [int(p) for p in perm]
    return execute(T.TransposeOp, [x], {"perm": perm})


def reshape(tensor, shape, name=None):
    """Row-major reshape; one dim of `shape` may be -1. `shape` is a list of ints and scalar
    integer tensors, or a 1-D integer tensor."""
    del name
    dims, traced = shape_argument(shape, "em.reshape")
    x = convert_to_tensor(tensor)
    if traced is not None:
        return execute(T.DynamicReshapeOp, [x, traced])
    return execute(T.ReshapeOp, [x], {"shape": [-1 if d is None else d for d in dims]})


def broadcast_to(input, shape, name=None):  # noqa: A002
    """Broadcasts `input` to `shape` (a list of ints and scalar integer tensors, or a 1-D
    integer tensor)."""
    del name
    dims, traced = shape_argument(shape, "em.broadcast_to")
    x = convert_to_tensor(input)
    if traced is not None:
        return execute(T.DynamicBroadcastToOp, [x, traced])
    if None in dims:
        raise ValueError(f"em.broadcast_to: shape {TensorShape(dims)} must be fully defined")
    return execute(T.BroadcastToOp, [x], {"shape": dims})


def expand_dims(input, axis, name=None):  # noqa: A002
    """Inserts a size-1 dim at `axis`."""
    del name
    return execute(T.ExpandDimsOp, [convert_to_tensor(input)], {"axis": int(axis)})


def squeeze(input, axis=None, name=None):  # noqa: A002
    """Removes size-1 dims (those in `axis`, or all of them)."""
    del name
    x = convert_to_tensor(input)
    return execute(T.SqueezeOp, [x], {"axes": [] if axis is None else _axes(x, axis)})


def concat(values: Sequence, axis: int, name=None):
    """Joins tensors along `axis` (negative counts from the end)."""
    del name
    tensors = _group(*values)
    if not tensors:
        raise ValueError("concat needs at least one tensor")
    rank_ = [_known_rank(t, "concat") for t in tensors][0]
    if not -rank_ <= axis < max(rank_, 1):
        raise ValueError(f"concat axis {axis} is out of range for rank {rank_}")
    return execute(T.ConcatOp, tensors, {"dim": axis % rank_ if rank_ else 0})


def stack(values: Sequence, axis: int = 0, name=None):
    """Stacks same-shaped tensors along a new `axis`."""
    tensors = _group(*values)
    if not tensors:
        raise ValueError("stack needs at least one tensor")
    rank_ = [_known_rank(t, "stack") for t in tensors][0]
    if not -rank_ - 1 <= axis <= rank_:
        raise ValueError(f"stack axis {axis} is out of range for rank {rank_ + 1}")
    axis %= rank_ + 1
    shapes = {t.shape for t in tensors}
    if len(shapes) > 1:
        raise ValueError(f"stack needs tensors of one shape, got {sorted(map(str, shapes))}")
    return concat([expand_dims(t, axis) for t in tensors], axis, name)


def _getitem(x, key):
    return strided_slice(x, **slice_spec(key))


def gather(params, indices, axis=0, name=None):
    """Slices of `params` along `axis` at `indices`."""
    del name
    idx = convert_to_tensor(indices, dtype_hint=dtypes.int32)
    return execute(I.GatherOp, [convert_to_tensor(params), idx], {"axis": int(axis)})


def one_hot(indices, depth, on_value=None, off_value=None, axis=-1, dtype=None, name=None):
    """One-hot rows of `depth` (float32 1/0 by default)."""
    del name
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if dtype is None:
        known = next((v for v in (on_value, off_value) if isinstance(v, Tensor)), None)
        dtype = known.dtype if known is not None else dtypes.float32
    on = convert_to_tensor(1 if on_value is None else on_value, dtype=dtype)
    off = convert_to_tensor(0 if off_value is None else off_value, dtype=dtype)
    idx = convert_to_tensor(indices, dtype_hint=dtypes.int32)
    if is_tensor(depth):
        value = trace_time_value(convert_to_tensor(depth))
        if value is None:
            return _one_hot_traced(idx, convert_to_tensor(depth), on, off, int(axis))
        depth = value
    return execute(I.OneHotOp, [idx, on, off], {"depth": int(depth), "axis": int(axis)})


def _one_hot_traced(idx: Tensor, depth: Tensor, on: Tensor, off: Tensor, axis: int):
    """one_hot with a depth known only at run time: positions 0..depth-1 along the new axis
    compared with the index (what OneHotOp.reference computes)."""
    if depth.ndim != 0 or not depth.dtype.is_integer:
        raise TypeError(f"em.one_hot: depth must be an int or a scalar integer tensor, got a "
                        f"tensor of shape {depth.shape} and dtype {depth.dtype.name}")
    rank_ = idx.ndim
    if not -rank_ - 1 <= axis <= rank_:
        raise ValueError(f"em.one_hot: axis {axis} is out of range for rank {rank_ + 1}")
    axis %= rank_ + 1
    positions = range(cast(depth, idx.dtype), dtype=idx.dtype)
    positions = reshape(positions, [-1] + [1] * (rank_ - axis))
    return where(equal(expand_dims(idx, axis), positions), on, off)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads with `paddings` = [[before, after], ...] per dim; mode CONSTANT/REFLECT/SYMMETRIC."""
    del name
    x = convert_to_tensor(tensor)
    flat = [int(p) for p in np.asarray(paddings).reshape(-1)]
    value = convert_to_tensor(constant_values, dtype_hint=x.dtype)
    return execute(I.PadOp, [x, value], {"paddings": flat, "mode": mode.upper()})


# -- nn -------------------------------------------------------------------------------------

def _pair(v, what: str) -> list[int]:
    v = [v] if isinstance(v, int) else list(v)
    if len(v) == 1:
        return v * 2
    if len(v) == 4:  # TensorFlow's NHWC form [1, h, w, 1]
        return v[1:3]
    if len(v) != 2:
        raise ValueError(f"{what} must be an int, a pair or NHWC 4-tuple, got {v}")
    return v


def conv2d(input, filters, strides=1, padding="VALID", dilations=1, name=None):  # noqa: A002
    """2-D convolution: input NHWC, filters HWIO."""
    del name
    attrs = {"strides": _pair(strides, "strides"), "dilations": _pair(dilations, "dilations"),
             "padding": padding.upper()}
    return execute(N.Conv2DOp, _group(input, filters), attrs)


def max_pool2d(input, ksize, strides, padding="VALID", name=None):  # noqa: A002
    """Max pooling over NHWC windows."""
    del name
    attrs = {"ksize": _pair(ksize, "ksize"), "strides": _pair(strides, "strides"),
             "padding": padding.upper()}
    return execute(N.MaxPool2DOp, [convert_to_tensor(input)], attrs)


def avg_pool2d(input, ksize, strides, padding="VALID", name=None):  # noqa: A002
    """Average pooling over NHWC windows (padding not counted)."""
    del name
    attrs = {"ksize": _pair(ksize, "ksize"), "strides": _pair(strides, "strides"),
             "padding": padding.upper()}
    return execute(N.AvgPool2DOp, [convert_to_tensor(input)], attrs)


def softmax(logits, axis=-1, name=None):
    """Softmax along `axis` (None means the last, as tf.nn.softmax)."""
    del name
    axis = -1 if axis is None else int(axis)
    return execute(N.SoftmaxOp, [convert_to_tensor(logits)], {"axis": axis})


def log_softmax(logits, axis=-1, name=None):
    """Log-softmax along `axis` (None means the last, as tf.nn.log_softmax)."""
    del name
    axis = -1 if axis is None else int(axis)
    return execute(N.LogSoftmaxOp, [convert_to_tensor(logits)], {"axis": axis})


# -- Tensor operators -----------------------------------------------------------------------

def _reflected(fn):
    return lambda x, y: fn(y, x)


def _eq(x, y):
    try:
        return equal(x, y)
    except (TypeError, OpShapeError):  # as TF2: other dtypes or unbroadcastable shapes
        return False


def _ne(x, y):
    try:
        return not_equal(x, y)
    except (TypeError, OpShapeError):
        return True


_OPERATORS = {
    "__add__": add, "__radd__": _reflected(add),
    "__sub__": subtract, "__rsub__": _reflected(subtract),
    "__mul__": multiply, "__rmul__": _reflected(multiply),
    "__truediv__": divide, "__rtruediv__": _reflected(divide),
    "__floordiv__": floordiv, "__rfloordiv__": _reflected(floordiv),
    "__mod__": floormod, "__rmod__": _reflected(floormod),
    "__pow__": pow, "__rpow__": _reflected(pow),
    "__matmul__": matmul, "__rmatmul__": _reflected(matmul),
    "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
    "__eq__": _eq, "__ne__": _ne,
    "__and__": logical_and, "__rand__": _reflected(logical_and),
    "__or__": logical_or, "__ror__": _reflected(logical_or),
    "__xor__": logical_xor, "__rxor__": _reflected(logical_xor),
    "__invert__": logical_not, "__neg__": negative, "__abs__": abs,
    "__getitem__": _getitem,
}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, _name, _fn)
Tensor.__hash__ = None
Tensor.__pos__ = lambda x: x

