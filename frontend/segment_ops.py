"""Segment reductions and bincount (tf.math.segment_*, tf.math.unsorted_segment_*,
tf.math.bincount), built on `ember.tensor_scatter` as TensorFlow's kernels scatter.

Each is a scatter of the data rows into a tensor filled with the reduction's identity,
with one extra row that catches what TensorFlow drops (negative segment ids, values at or
above `maxlength`), sliced off afterwards. The number of segments of the sorted family
(last id + 1) and bincount's length depend on the values: they are run-time dims (`?`).
Empty segments get TensorFlow's values: 0 for sums and means, 1 for products, and for
max/min the lowest/highest representable value for the unsorted family (-FLT_MAX, not
-inf, as `numeric_limits<T>::lowest()`) but 0 for the sorted one.
"""

from __future__ import annotations

from ember.dialects.ember import dtypes
from ember.dialects.ember import scatter as S
from ember.frontend import ops
from ember.frontend.dispatch import execute
from ember.frontend.effects import assert_true
from ember.frontend.math_composites import truncatediv
from ember.frontend.tensor import convert_to_tensor

_MODES = {"sum": "add", "prod": "mul", "max": "max", "min": "min"}


def _identity(kind: str, dtype: dtypes.DType):
    """The value an empty segment of the unsorted family holds (TensorFlow's)."""
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    return dtype.min if kind == "max" else dtype.max


def _ids(segment_ids, what: str):
    ids = convert_to_tensor(segment_ids, dtype_hint=dtypes.int32)
    if ids.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"em.math.{what}: segment_ids must be int32 or int64, got "
                        f"{ids.dtype.name}")
    if ids.ndim is None:
        raise ValueError(f"em.math.{what} needs segment_ids of known rank, got {ids!r}")
    return ops.cast(ids, dtypes.int64)


def _reduce(kind: str, data, ids, num, what: str):
    """Unsorted segment `kind` of `data` by int64 `ids` into `num` (an int64 scalar)
    segments; negative ids are dropped (they land in row `num`, sliced off)."""
    if not data.dtype.is_integer and not data.dtype.is_floating:
        raise TypeError(f"em.math.{what} needs numeric data, got {data.dtype.name}")
    r = ids.ndim
    if data.ndim is None or data.ndim < r:
        raise ValueError(f"em.math.{what}: data {data!r} must have the segment_ids' rank "
                         f"{r} leading dims")
    tail = ops.shape(data, dtypes.int64)[r:]
    rows = ops.concat([ops.reshape(num + 1, [1]), tail], 0)
    init = ops.fill(rows, convert_to_tensor(_identity(kind, data.dtype), dtype=data.dtype))
    target = ops.where(ids < 0, ops.broadcast_to(num, ops.shape(ids, dtypes.int64)), ids)
    out = execute(S.TensorScatterOp, [init, ops.expand_dims(target, -1), data],
                  {"mode": _MODES[kind]})
    return out[:num]


def _counts(ids, num, dtype):
    ones = ops.ones(ops.shape(ids, dtypes.int64), dtype)
    return _reduce("sum", ones, ids, num, "segment count")


def _per_segment(values, data):
    """`values` ([num]) reshaped to broadcast against segment rows of `data`'s tail."""
    return ops.reshape(values, ops.concat([ops.reshape(ops.size(values, dtypes.int64), [1]),
                                           ops.ones_like(ops.shape(data, dtypes.int64))[1:]],
                                          0))


def _mean(data, ids, num, what: str):
    total = _reduce("sum", data, ids, num, what)
    count = _counts(ids, num, data.dtype)
    count = _per_segment(ops.maximum(count, ops.ones_like(count)), total)
    return truncatediv(total, count)


def _unsorted(kind: str, name: str):
    def fn(data, segment_ids, num_segments, name=None):
        del name
        x, ids = convert_to_tensor(data), _ids(segment_ids, fn.__name__)
        num = ops.cast(convert_to_tensor(num_segments), dtypes.int64)
        assert_true(ops.reduce_all(ids < num), f"em.math.{fn.__name__}: segment ids must "
                    "be < num_segments")
        if kind == "mean":
            return _mean(x, ids, num, fn.__name__)
        return _reduce(kind, x, ids, num, fn.__name__)
    fn.__name__ = fn.__qualname__ = name
    empty = {"sum": "0", "prod": "1", "mean": "0", "max": "the dtype's lowest value",
             "min": "the dtype's highest value"}[kind]
    fn.__doc__ = (f"The {kind} of the rows of `data` in each of `num_segments` segments "
                  f"(tf.math.{name}).\n\n`segment_ids` (any order) match the leading dims of "
                  f"`data`; negative ids are dropped; an id >= num_segments is an "
                  f"InvalidArgumentError (as on TensorFlow's CPU). An empty segment holds {empty}.")
    return fn


unsorted_segment_sum = _unsorted("sum", "unsorted_segment_sum")
unsorted_segment_prod = _unsorted("prod", "unsorted_segment_prod")
unsorted_segment_max = _unsorted("max", "unsorted_segment_max")
unsorted_segment_min = _unsorted("min", "unsorted_segment_min")
unsorted_segment_mean = _unsorted("mean", "unsorted_segment_mean")


def _sorted(kind: str, name: str):
    def fn(data, segment_ids, name=None):
        del name
        x, ids = convert_to_tensor(data), _ids(segment_ids, fn.__name__)
        if ids.ndim != 1:
            raise ValueError(f"em.math.{fn.__name__}: segment_ids must be 1-D, got {ids!r}")
        assert_true(ops.reduce_all(ids >= 0), f"em.math.{fn.__name__}: segment ids must be "
                    ">= 0")
        assert_true(ops.reduce_all(ids[1:] >= ids[:-1]), f"em.math.{fn.__name__}: segment "
                    "ids are not increasing")
        num = ops.reduce_max(ops.concat([convert_to_tensor([-1], dtype=dtypes.int64), ids],
                                        0)) + 1
        if kind == "mean":
            return _mean(x, ids, num, fn.__name__)
        out = _reduce(kind, x, ids, num, fn.__name__)
        if kind in ("max", "min"):  # TensorFlow's sorted kernels give 0 for an empty one
            empty = ops.equal(_counts(ids, num, dtypes.int32), 0)
            out = ops.where(_per_segment(empty, out), ops.zeros_like(out), out)
        return out
    fn.__name__ = fn.__qualname__ = name
    empty = {"sum": "0", "prod": "1", "mean": "0", "max": "0", "min": "0"}[kind]
    fn.__doc__ = (f"The {kind} of the rows of `data` in each segment (tf.math.{name}).\n\n"
                  "`segment_ids` is 1-D, sorted and non-negative (else an "
                  "InvalidArgumentError); the result has last id + 1 rows, a run-time dim. "
                  f"A segment no id names holds {empty}.")
    return fn


segment_sum = _sorted("sum", "segment_sum")
segment_prod = _sorted("prod", "segment_prod")
segment_max = _sorted("max", "segment_max")
segment_min = _sorted("min", "segment_min")
segment_mean = _sorted("mean", "segment_mean")


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32,
             name=None, axis=None, binary_output=False):
    """How often each value 0, 1, ... occurs in the int32 `arr` (tf.math.bincount), or the
    sum of its `weights` (then of their dtype).

    The length is max(arr) + 1 (0 for an empty arr), at least `minlength` and at most
    `maxlength`; values at or above it are skipped. A negative value is an
    InvalidArgumentError, as TensorFlow's. `axis` None or 0 counts every element; -1
    counts each row of a 2-D `arr` apart ([rows, length]). `binary_output` gives 1 where
    a value occurs (no weights then).

    Example:
      >>> import ember as em
      >>> em.math.bincount([1, 1, 3]).numpy()
      array([0, 2, 0, 1], dtype=int32)
    """
    del name
    values = convert_to_tensor(arr, dtype_hint=dtypes.int32)
    if values.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"em.math.bincount: arr must be int32 or int64, got "
                        f"{values.dtype.name}")
    if axis not in (None, 0, -1):
        raise ValueError(f"em.math.bincount: axis must be None, 0 or -1, got {axis!r}")
    if axis == -1 and values.shape.rank != 2:
        raise ValueError(f"em.math.bincount: axis=-1 needs a 2-D arr, got {values!r}")
    if binary_output and weights is not None:
        raise ValueError("em.math.bincount: binary_output and weights are mutually exclusive")
    flat = ops.cast(ops.reshape(values, [-1]), dtypes.int64)
    assert_true(ops.reduce_all(flat >= 0), "em.math.bincount: Input arr must be "
                "non-negative!")
    size = ops.reduce_max(ops.concat([convert_to_tensor([-1], dtype=dtypes.int64), flat],
                                     0)) + 1
    if minlength is not None:
        size = ops.maximum(size, ops.cast(convert_to_tensor(minlength), dtypes.int64))
    if maxlength is not None:
        size = ops.minimum(size, ops.cast(convert_to_tensor(maxlength), dtypes.int64))
    if weights is None:
        counts = ops.ones(ops.shape(values, dtypes.int64), dtypes.as_dtype(dtype))
    else:
        counts = convert_to_tensor(weights)
        if counts.shape.rank is not None and values.shape.rank is not None and \
                not counts.shape.is_compatible_with(values.shape):
            raise ValueError(f"em.math.bincount: weights of shape {counts.shape} must have "
                             f"the shape of arr, {values.shape}")
    ids = ops.cast(values, dtypes.int64)
    ids = ops.where(ids >= size, ops.fill(ops.shape(ids, dtypes.int64), size), ids)
    if axis == -1:
        out = _count_rows(counts, ids, size)
    else:
        out = _reduce("sum", ops.reshape(counts, [-1]), ops.reshape(ids, [-1]), size,
                      "bincount")
    return ops.cast(ops.greater(out, ops.zeros_like(out)), out.dtype) if binary_output \
        else out


def _count_rows(counts, ids, size):
    """Per row of the 2-D `ids` (each < size, or size to drop), the sum of `counts` at each
    value: [rows, size]."""
    shape = ops.shape(ids, dtypes.int64)
    rows = ops.broadcast_to(ops.expand_dims(ops.range(shape[0], dtype=dtypes.int64), 1),
                            shape)
    zero = convert_to_tensor(0, dtype=counts.dtype)
    init = ops.fill(ops.stack([shape[0], size + 1]), zero)
    out = execute(S.TensorScatterOp, [init, ops.stack([rows, ids], -1), counts],
                  {"mode": "add"})
    return out[:, :size]
