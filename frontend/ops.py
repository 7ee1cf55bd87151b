"""The public op functions (`em.add`, `em.reduce_sum`, ...) and Tensor's operators.

Each function converts its arguments (Python values take the dtype of the tensor they meet,
as in TensorFlow), turns TensorFlow-style arguments (`axis=None`, negative axes, shapes) into
the op's attributes and calls `dispatch.execute` with the op spec. Nothing here computes:
the spec's reference kernel does. This module holds the reductions, the structural and
indexing ops and the operators; elementwise ops are math_ops.py, creation ops
creation_ops.py, nn ops nn_ops.py, slices slicing.py, all re-exported here.
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
# every op function is reachable from this module (ember/__init__ imports them from here):
# those of creation_ops, math_ops, nn_ops and slicing are re-exported
from ember.frontend.creation_ops import (fill, ones, ones_like, range, rank, shape, size,
                                         stateless_random_normal, stateless_random_uniform, zeros,
                                         zeros_like)
from ember.frontend import dynamic_pad
from ember.frontend.dispatch import execute
from ember.frontend.indexing import is_tensor, slice_spec
from ember.frontend.math_ops import (abs, add, cast, ceil, cos, divide, equal, erf, erfc, exp,
                                     expm1, floor,
                                     floordiv, floormod, greater, greater_equal, group, identity,
                                     is_finite, is_nan, less, less_equal, log, log1p, logical_and,
                                     logical_not, logical_or, logical_xor, maximum, minimum, mod,
                                     multiply, negative, not_equal, pow, relu, round, rsqrt,
                                     sigmoid, sign, sin, sqrt, square, subtract, tanh, truediv,
                                     where)
from ember.frontend.math_ops import (bitwise_and, bitwise_or, bitwise_xor, invert,  # noqa: F401
                                     left_shift, right_shift)
from ember.frontend.math_ops import (acos, acosh, asin, asinh, atan, atan2, atanh,  # noqa: F401
                                     cosh, sinh, tan)
from ember.frontend.nn_ops import avg_pool2d, conv2d, log_softmax, max_pool2d, softmax
from ember.frontend.shape import TensorShape
from ember.frontend.shape_args import shape_argument, trace_time_value
from ember.frontend.slicing import slice, strided_slice  # noqa: A004 - re-exported
from ember.frontend.tensor import Tensor, convert_to_tensor


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

def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None):
    """Matrix product over the last two dims (batch dims broadcast). `adjoint_a`/`adjoint_b`
    transpose and conjugate (for real dtypes: transpose); the sparsity hints are ignored,
    as TensorFlow's dense kernels ignore them; `output_type` casts the product."""
    del name, a_is_sparse, b_is_sparse
    for which, t, adj in (("a", transpose_a, adjoint_a), ("b", transpose_b, adjoint_b)):
        if t and adj:
            raise ValueError(f"em.matmul: only one of transpose_{which} and adjoint_{which} "
                             f"can be True")
    a, b = (_conjugated(v) if adj else v for v, adj in ((a, adjoint_a), (b, adjoint_b)))
    out = execute(T.MatmulOp, group(a, b), {"transpose_a": bool(transpose_a or adjoint_a),
                                            "transpose_b": bool(transpose_b or adjoint_b)})
    return out if output_type is None else cast(out, output_type)


def transpose(a, perm=None, conjugate=False, name=None):
    """Permutes dims (reverses them when `perm` is None). `conjugate` (tf.transpose's) also
    conjugates complex elements (real ones stay as they are)."""
    del name
    x = _conjugated(a) if conjugate else convert_to_tensor(a)
    if perm is None:
        perm = list(builtins.range(_known_rank(x, "transpose without perm")))[::-1]
    perm = [int(p) for p in perm]
    return execute(T.TransposeOp, [x], {"perm": perm})


def _conjugated(value):
    """`value` as a tensor, its complex elements conjugated (real ones as they are)."""
    from ember.frontend.complex_ops import conj
    return conj(value)


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
    tensors = group(*values)
    if not tensors:
        raise ValueError("concat needs at least one tensor")
    rank_ = [_known_rank(t, "concat") for t in tensors][0]
    if not -rank_ <= axis < max(rank_, 1):
        raise ValueError(f"concat axis {axis} is out of range for rank {rank_}")
    return execute(T.ConcatOp, tensors, {"dim": axis % rank_ if rank_ else 0})


def stack(values: Sequence, axis: int = 0, name=None):
    """Stacks same-shaped tensors along a new `axis`."""
    tensors = group(*values)
    if not tensors:
        raise ValueError("stack needs at least one tensor")
    rank_ = [_known_rank(t, "stack") for t in tensors][0]
    if not -rank_ - 1 <= axis <= rank_:
        raise ValueError(f"stack axis {axis} is out of range for rank {rank_ + 1}")
    axis %= rank_ + 1
    first = tensors[0].shape  # `?` dims are checked when the code runs (concat's check)
    if not all(t.shape.is_compatible_with(first) for t in tensors[1:]):
        shapes = {t.shape for t in tensors}
        raise ValueError(f"stack needs tensors of one shape, got {sorted(map(str, shapes))}")
    return concat([expand_dims(t, axis) for t in tensors], axis, name)


def _getitem(x, key):
    return strided_slice(x, **slice_spec(key))


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Slices of `params` along `axis` (default `batch_dims`) at `indices`, as tf.gather.

    With `batch_dims` b > 0 (negative counts from rank(indices)) the first b dims of params
    and indices are batch dims, which must be equal: batch element i gathers from params[i]
    at indices[i]; the result has shape params.shape[:axis] + indices.shape[b:] +
    params.shape[axis + 1:], needs b <= axis and runs as gather_nd. `validate_indices` is
    ignored (deprecated in TensorFlow): indices are always checked.

    Example:
      >>> import ember as em
      >>> em.gather(em.constant([[1, 2, 3], [4, 5, 6]]), [[2, 0], [1, 1]], batch_dims=1).numpy()
      array([[3, 1],
             [5, 5]], dtype=int32)
    """
    del name, validate_indices
    p = convert_to_tensor(params)
    idx = convert_to_tensor(indices, dtype_hint=dtypes.int32)
    if int(batch_dims) == 0:
        return execute(I.GatherOp, [p, idx], {"axis": 0 if axis is None else int(axis)})
    return _batch_gather(p, idx, axis, int(batch_dims))


def _batch_gather(p: Tensor, idx: Tensor, axis, batch_dims: int) -> Tensor:
    """gather with batch dims: params' `axis` moved next to the batch dims, gather_nd with
    one-component index tuples, and the dims of params before `axis` moved back."""
    from ember.frontend.scatter_ops import gather_nd
    prank = _known_rank(p, "em.gather with batch_dims")
    irank = _known_rank(idx, "em.gather with batch_dims")
    b = batch_dims + irank if batch_dims < 0 else batch_dims
    a = b if axis is None else int(axis)
    a = a + prank if a < 0 else a
    if not 0 <= b <= irank or not b <= a < prank:
        raise ValueError(f"em.gather: batch_dims={batch_dims} and axis={axis} do not fit "
                         f"params of rank {prank} and indices of rank {irank} (need 0 <= "
                         "batch_dims <= rank(indices) and batch_dims <= axis < rank(params))")
    for j in builtins.range(b):
        if None not in (p.shape[j], idx.shape[j]) and p.shape[j] != idx.shape[j]:
            raise ValueError(f"em.gather: the batch dims of params of shape {p.shape} and "
                             f"indices of shape {idx.shape} differ (batch_dims={batch_dims})")
    seq = list(builtins.range(prank))
    if a > b:
        p = transpose(p, seq[:b] + [a] + seq[b:a] + seq[a + 1:])
    out = gather_nd(p, expand_dims(idx, -1), batch_dims=b)
    if a == b:
        return out
    rank_ = irank + prank - b - 1
    middle = [irank + j for j in builtins.range(a - b)]
    rest = list(builtins.range(irank + a - b, rank_))
    return transpose(out, seq[:b] + middle + list(builtins.range(b, irank)) + rest)


def one_hot(indices, depth, on_value=None, off_value=None, axis=-1, dtype=None, name=None):
    """One-hot rows of `depth`: `on_value`/`off_value` (1/0 by default) of `dtype`, else of
    the dtype of the given on/off value (a Python int: int32), else float32, as TensorFlow's.
    """
    del name
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    given = {what: convert_to_tensor(v, dtype_hint=dtype)
             for what, v in (("on_value", on_value), ("off_value", off_value)) if v is not None}
    for what, v in given.items():
        if dtype is not None and v.dtype != dtype:
            raise TypeError(f"em.one_hot: {what} has dtype {v.dtype.name}, but dtype is "
                            f"{dtype.name}: pass {what} as a {dtype.name} value, or drop dtype")
    if len(given) == 2 and given["on_value"].dtype != given["off_value"].dtype:
        raise TypeError(f"em.one_hot: on_value has dtype {given['on_value'].dtype.name} and "
                        f"off_value {given['off_value'].dtype.name}: give both of one dtype")
    if dtype is None:
        dtype = next(iter(given.values())).dtype if given else dtypes.float32
    on = given.get("on_value", None)
    on = convert_to_tensor(1, dtype=dtype) if on is None else on
    off = given.get("off_value", None)
    off = convert_to_tensor(0, dtype=dtype) if off is None else off
    idx = convert_to_tensor(indices, dtype_hint=dtypes.int32)
    if is_tensor(depth):
        value = trace_time_value(convert_to_tensor(depth))
        if value is None or np.ndim(value) or int(value) < 0:  # the traced checks, eagerly
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
    from ember.frontend.effects import assert_true  # (effects imports this module)
    assert_true(depth >= 0, "em.one_hot: depth must be >= 0")  # eager's check, when it runs
    # compared in int64: depth cast to the indices' dtype wrapped (uint8 indices, depth 300)
    positions = range(cast(depth, dtypes.int64), dtype=dtypes.int64)
    positions = reshape(positions, [-1] + [1] * (rank_ - axis))
    return where(equal(expand_dims(cast(idx, dtypes.int64), axis), positions), on, off)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pads with `paddings` = [[before, after], ...] per dim; mode CONSTANT/REFLECT/SYMMETRIC."""
    x = convert_to_tensor(tensor)
    value = convert_to_tensor(constant_values, dtype_hint=x.dtype)
    padded = dynamic_pad.from_tensor(x, paddings, mode.upper(), value)  # None: the op pads
    if padded is not None:
        return padded
    flat = [int(p) for p in np.asarray(paddings).reshape(-1)]
    return execute(I.PadOp, [x, value], {"paddings": flat, "mode": mode.upper()})


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


def _bits(logical, bitwise):
    """An operator that is `logical` on a bool tensor and `bitwise` on an integer one (as
    tf.Tensor's `&`, `|`, `^`), and its reflected form."""
    def op(x, y):
        return (logical if x.dtype.is_bool else bitwise)(x, y)

    def reflected(x, y):
        return (logical if x.dtype.is_bool else bitwise)(y, x)
    return op, reflected


def _invert(x):
    return logical_not(x) if x.dtype.is_bool else invert(x)


_and, _rand = _bits(logical_and, bitwise_and)
_or, _ror = _bits(logical_or, bitwise_or)
_xor, _rxor = _bits(logical_xor, bitwise_xor)

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
    "__and__": _and, "__rand__": _rand, "__or__": _or, "__ror__": _ror,
    "__xor__": _xor, "__rxor__": _rxor, "__invert__": _invert,
    "__lshift__": left_shift, "__rlshift__": _reflected(left_shift),
    "__rshift__": right_shift, "__rrshift__": _reflected(right_shift),
    "__neg__": negative, "__abs__": abs,
    "__getitem__": _getitem,
}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, _name, _fn)
Tensor.__hash__ = None
Tensor.__pos__ = lambda x: x
Tensor.get_shape = lambda x: x.shape  # TensorFlow's older spelling of `shape`

