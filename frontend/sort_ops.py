"""Sorting with TensorFlow's names: em.sort, em.argsort, em.math.top_k.

All three run `ember.sort` (dialects/ember/sorting.py), a stable sort of the innermost dim
that gives values and int32 indices at once, as TensorFlow builds tf.sort and tf.argsort
on top_k: another axis is a transpose before and after, top_k a slice of the descending
sort. The order is the op's: ties keep their input order, -0.0 == 0.0, NaN above every
number (last ascending, first descending).
"""

from __future__ import annotations

import builtins
import collections
import numbers

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember import sorting as S
from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend.dispatch import execute
from ember.frontend.indexing import is_tensor
from ember.frontend.shape_args import trace_time_value
from ember.frontend.tensor import convert_to_tensor

_DIRECTIONS = ("ASCENDING", "DESCENDING")

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])
TopKV2.__doc__ = "What em.math.top_k returns (tf.math.top_k's `TopKV2`): values, indices."


def _sortable(values, where: str):
    x = convert_to_tensor(values)
    if not x.dtype.is_numeric:
        raise TypeError(f"{where}: cannot sort a tensor of dtype {x.dtype.name}: TensorFlow "
                        "sorts integer and float tensors only; cast it first (e.g. "
                        "em.cast(x, em.int32) for bools)")
    return x


def _sorted_along(x, axis, descending: bool, where: str):
    """(values, int32 indices) of `x` sorted stably along `axis`."""
    rank = x.ndim
    if rank is None:
        raise ValueError(f"{where}: the rank of {x!r} must be known; give the function's "
                         "input_signature a shape (None for unknown dims)")
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, np.integer)):
        value = trace_time_value(convert_to_tensor(axis)) if is_tensor(axis) else None
        if value is None or value.ndim != 0 or value.dtype.kind not in "iu":
            raise TypeError(f"{where}: axis must be a Python int, got {axis!r}")
        axis = int(value)
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"{where}: axis {axis} is out of range for a tensor of rank {rank} "
                         f"(it must lie in [-{rank}, {rank}); sorting needs rank >= 1)"
                         if rank else f"{where}: cannot sort a scalar (rank 0); sorting "
                         "needs a tensor of rank >= 1")
    axis %= rank
    if axis == rank - 1:
        return execute(S.SortOp, [x], {"descending": descending})
    from ember.frontend.ops import transpose
    perm = list(builtins.range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    values, indices = execute(S.SortOp, [transpose(x, perm)], {"descending": descending})
    return transpose(values, perm), transpose(indices, perm)


def _descending(direction, where: str) -> bool:
    if direction not in _DIRECTIONS:
        raise ValueError(f"{where}: direction must be one of {', '.join(_DIRECTIONS)}, got "
                         f"{direction!r}")
    return direction == "DESCENDING"


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """Sorts `values` along `axis` (tf.sort).

    Ties keep their input order; -0.0 and 0.0 are equal; NaN sorts above every number, so
    NaNs come last ascending and first descending (TensorFlow leaves NaN's place undefined;
    numpy puts NaNs last ascending too). Integer and float dtypes; bool raises TypeError,
    as in TensorFlow.

    Example:
      >>> import ember as em
      >>> em.sort(em.constant([3, 1, 2]), direction="DESCENDING").numpy().tolist()
      [3, 2, 1]
    """
    del name
    x = _sortable(values, "em.sort")
    return _sorted_along(x, axis, _descending(direction, "em.sort"), "em.sort")[0]


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The int32 indices that sort `values` along `axis` (tf.argsort).

    Always stable, whatever `stable` says (TensorFlow allows a stable result when
    `stable=False`): equal values keep their input order, descending too. NaN and -0.0 as
    for em.sort.

    Example:
      >>> import ember as em
      >>> em.argsort(em.constant([2.0, 1.0, 2.0])).numpy().tolist()
      [1, 0, 2]
    """
    del name, stable
    x = _sortable(values, "em.argsort")
    return _sorted_along(x, axis, _descending(direction, "em.argsort"), "em.argsort")[1]


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):  # noqa: A002
    """The `k` largest entries of the last dim of `input` and their indices
    (tf.math.top_k), as a namedtuple `TopKV2(values, indices)`.

    `k` is a Python int or a scalar integer tensor (the result's last dim is then `?`
    when its value is unknown while tracing). Equal values: the lower index comes first;
    NaN counts as larger than every number. The result is always sorted, whatever
    `sorted` says (TensorFlow allows that). `k` outside [0, n] for n the size of the last
    dim raises InvalidArgumentError: when tracing if both are known then, else when the
    code runs (an em.debugging assertion, an InvalidArgumentError too). A Python `k` up to
    8 over a static last dim of 1024 or more selects the largest entry k times; otherwise
    top_k sorts the last dim.

    Example:
      >>> import ember as em
      >>> em.math.top_k(em.constant([1, 5, 3, 5]), k=2).indices.numpy().tolist()
      [1, 3]
    """
    del name, sorted
    where = "em.math.top_k"
    x = _sortable(input, where)
    index_type = dtypes.as_dtype(index_type)
    if index_type not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{where}: index_type must be int32 or int64, got {index_type.name}")
    if x.ndim == 0:
        raise ValueError(f"{where}: input must have rank >= 1, got a scalar")
    k = _k_value(k, where)
    n = x.shape[-1] if x.ndim is not None else None
    message = "k must lie in [0, n] for n the size of the last dim of input"
    if isinstance(k, int) and 0 < k <= _SELECT_MAX_K and n is not None and \
            _SELECT_MIN_N <= n and k <= n:
        values, indices = _select_largest(x, k)
        from ember.frontend.ops import cast
        return TopKV2(values, indices if index_type is dtypes.int32 else
                      cast(indices, index_type))
    values, indices = _sorted_along(x, -1, True, where)
    begin = [0] * x.ndim
    size = [-1] * (x.ndim - 1)
    message = "k must lie in [0, n] for n the size of the last dim of input"
    if isinstance(k, int) and n is not None:
        if not 0 <= k <= n:
            raise InvalidArgumentError(where, f"{message}; got k = {k}, n = {n}")
    else:
        _check_k_at_run_time(x, k, message)
    from ember.frontend.ops import cast
    from ember.frontend.slicing import slice as take
    values, indices = take(values, begin, size + [k]), take(indices, begin, size + [k])
    return TopKV2(values, indices if index_type is dtypes.int32 else cast(indices, index_type))


# Up to this k, top_k selects the largest entry k times (k rounds over the data) instead of
# sorting (about log2(n)^2 passes): 8 of 10**6 floats take 46 ms here against the sort's 400.
# The rounds are unrolled (about 2 s more to compile than the sort at k = 8), so selection
# is for a small k over a long, static last dim, where the run time is what counts.
_SELECT_MAX_K = 8
_SELECT_MIN_N = 1024


def _select_largest(x, k: int):
    """top_k by k rounds of selection, in the sort's order: NaN above every number, equal
    values lower index first."""
    from ember.frontend import ops
    taken = ops.zeros(ops.shape(x), dtypes.bool_)
    lowest = float("-inf") if x.dtype.is_floating else x.dtype.min
    floor = ops.fill(ops.shape(x), convert_to_tensor(lowest, dtype=x.dtype))
    nan = ops.is_nan(x) if x.dtype.is_floating else None
    values, indices = [], []
    for _ in range(k):
        free = ops.logical_not(taken)
        if nan is None:
            best = ops.reduce_max(ops.where(free, x, floor), axis=-1, keepdims=True)
            pick = ops.logical_and(free, ops.equal(x, best))
        else:
            free_nan = ops.logical_and(free, nan)
            best = ops.reduce_max(ops.where(ops.logical_and(free, ops.logical_not(nan)), x,
                                            floor), axis=-1, keepdims=True)
            pick = ops.where(ops.reduce_any(free_nan, axis=-1, keepdims=True), free_nan,
                             ops.logical_and(free, ops.equal(x, best)))
        index = ops.argmax(ops.cast(pick, dtypes.int32), axis=-1, output_type=dtypes.int32)
        chosen = ops.equal(ops.range(ops.shape(x)[-1]), ops.expand_dims(index, -1))
        taken = ops.logical_or(taken, chosen)
        values.append(ops.gather(x, ops.expand_dims(index, -1), batch_dims=x.ndim - 1)[..., 0])
        indices.append(index)
    return ops.stack(values, axis=-1), ops.stack(indices, axis=-1)


def _k_value(k, where: str):
    """`k` as a Python int when it is known while tracing, else as a scalar int tensor."""
    if is_tensor(k):
        t = convert_to_tensor(k)
        if not t.dtype.is_integer or t.ndim != 0:
            raise TypeError(f"{where}: k must be an int or a scalar integer tensor, got a "
                            f"tensor of shape {t.shape} and dtype {t.dtype.name}")
        value = trace_time_value(t)
        if value is None:
            return t
        return int(value)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (numbers.Integral, np.integer)):
        raise TypeError(f"{where}: k must be an int or a scalar integer tensor, got {k!r}")
    return int(k)


def _check_k_at_run_time(x, k, message: str) -> None:
    from ember.frontend.creation_ops import shape
    from ember.frontend.effects import assert_true
    from ember.frontend.ops import cast, less_equal, logical_and
    n = shape(x, out_type=dtypes.int64)[-1]
    k = cast(convert_to_tensor(k), dtypes.int64) if is_tensor(k) else \
        convert_to_tensor(np.int64(k))
    zero = convert_to_tensor(np.int64(0))
    assert_true(logical_and(less_equal(zero, k), less_equal(k, n)), message)


UniqueOutput = collections.namedtuple("Unique", ["y", "idx"])
UniqueOutput.__doc__ = "What em.unique returns (tf.unique's namedtuple): y, idx."


def unique(x, out_idx=dtypes.int32, name=None):
    """The distinct values of the 1-D tensor `x` in order of first occurrence, and for each
    element of `x` the index of its value in them (tf.unique), as a namedtuple `(y, idx)`:
    `x == em.gather(y, idx)`.

    As TensorFlow (and unlike numpy.unique, which sorts and merges NaNs): `y` keeps the
    order of first occurrence, -0.0 and 0.0 are one value (the first one seen is kept) and
    every NaN is a value of its own. Compiled too (no host fallback): `y`'s size depends on
    the values, so its dim is `?` (a stable sort, then two compaction loops).

    Example:
      >>> import ember as em
      >>> y, idx = em.unique(em.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))
      >>> y.numpy().tolist(), idx.numpy().tolist()
      ([1, 2, 4, 7, 8], [0, 0, 1, 2, 2, 2, 3, 4, 4])
    """
    del name
    t = convert_to_tensor(x)
    out_idx = dtypes.as_dtype(out_idx)
    if out_idx not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"em.unique: out_idx must be int32 or int64, got {out_idx.name}")
    if t.ndim is not None and t.ndim != 1:
        raise ValueError(f"em.unique: x must be 1-D (tf.unique takes vectors), got shape "
                         f"{t.shape}; flatten it first (em.reshape(x, [-1]))")
    return UniqueOutput(*execute(S.UniqueOp, [t], {"out_idx": out_idx}))
