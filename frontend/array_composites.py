"""Shaping functions that are compositions of other ops, as in TensorFlow's Python layer:
`eye`, `linspace`, `tile`, `repeat`, `unstack`, `split`, `reverse`, `roll`, `meshgrid`
(em.linalg's compositions are linalg_composites.py). Their sizes may be `?` dims and their
counts (repeats, shifts, multiples, split sizes, num) run-time tensors, as in TensorFlow,
except where a docstring says that something must be known while tracing: ranks, axes,
the number of outputs of `unstack`/`split`. What is known while tracing stays static."""

from __future__ import annotations

import builtins

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.effects import assert_true
from ember.frontend.indexing import is_tensor
from ember.frontend.scan_ops import cumsum, searchsorted
from ember.frontend.shape_args import trace_time_value
from ember.frontend.tensor import convert_to_tensor


def _rank(x, what: str) -> int:
    if x.shape.rank is None:
        raise ValueError(f"em.{what} needs a tensor of known rank, got {x!r}")
    return x.shape.rank


def _dim(x, axis: int, what: str) -> int:
    size = x.shape[axis]
    if size is None:
        raise ValueError(f"em.{what} needs dim {axis} of {x!r} known while tracing (give a "
                         f"static shape in the input_signature)")
    return size


def _axis(axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"em.{what}: axis {axis} is out of range for rank {rank}")
    return axis % rank


def size_of(x, axis: int):
    """Dim `axis` of `x`: a Python int when known while tracing, else a scalar int32 tensor
    (read when the code runs)."""
    size = x.shape[axis]
    return size if size is not None else ops.shape(x)[axis]


def _dims(x) -> list:
    return [size_of(x, i) for i in builtins.range(x.shape.rank)]


def _known(value):
    """`value` as a numpy array when it is known while tracing, else None."""
    if is_tensor(value):
        return trace_time_value(convert_to_tensor(value))
    if isinstance(value, (list, tuple)) and any(is_tensor(v) for v in value):
        items = [_known(v) for v in value]
        return None if any(v is None for v in items) else np.asarray(items)
    return np.asarray(value)


def _counts(value, what: str, length=None, wide: bool = False) -> list:
    """A scalar or 1-D count argument as a list of Python ints and scalar int32 tensors (a
    1-D tensor of unknown length must have `length` elements, checked when it runs); with
    `wide`, int64 tensors stay int64 (a roll's shift), else each value must fit in int32
    (eager and compiled raise alike: a cast would wrap 3 - 2**32 around to 3)."""
    known = _known(value)
    if known is not None:
        if known.ndim > 1 or not (known.size == 0 or np.issubdtype(known.dtype, np.integer)):
            raise TypeError(f"em.{what} must be an int, a list of ints or a 0-D/1-D integer "
                            f"tensor, got {value!r}")
        counts = [int(v) for v in known.reshape(-1)]
        if not wide and _tensor_valued(value):
            for c in counts:
                _check(_INT32_MIN <= c <= _INT32_MAX, _outside_int32(what), True)
        return counts
    if isinstance(value, (list, tuple)):
        return [c for v in value for c in _counts(v, what, wide=wide)]
    t = _int32(value, what, wide)
    if t.ndim not in (0, 1) or (t.ndim and t.shape[0] is None and length is None):
        raise TypeError(f"em.{what} must be a 0-D or 1-D integer tensor of a length known "
                        f"while tracing (give its shape in the input_signature), got {t!r}")
    if t.ndim and t.shape[0] is None:
        _check_equal(ops.size(t), length, f"em.{what} must have {length} elements")
    return [t] if t.ndim == 0 else [t[i] for i in builtins.range(t.shape[0] or length)]


_INT32_MIN, _INT32_MAX = -2**31, 2**31 - 1


def _outside_int32(what: str) -> str:
    return f"em.{what} must lie in int32's range [-2**31, 2**31 - 1]"


def _int32(value, what: str, wide: bool = False):
    """An integer tensor as int32 (checked to fit when it is int64), or int64 with `wide`."""
    t = convert_to_tensor(value)
    if not t.dtype.is_integer:
        raise TypeError(f"em.{what} must be integers, got {t!r}")
    if t.dtype is dtypes.int64 and not wide:
        _check(ops.reduce_all(ops.logical_and(t >= _INT32_MIN, t <= _INT32_MAX)),
               _outside_int32(what), True)
    return t if t.dtype is dtypes.int32 or (wide and t.dtype is dtypes.int64) else \
        ops.cast(t, dtypes.int32)


def _tensor_valued(value) -> bool:
    return is_tensor(value) or (isinstance(value, (list, tuple)) and
                                any(is_tensor(v) for v in value))


def _fail(message: str, tensor_valued: bool) -> None:
    """A bad value known now: an AssertionFailedError (an InvalidArgumentError) when it came
    from a tensor, as it is when such a value is checked where the code runs, so eager and
    compiled raise alike; else a ValueError."""
    if tensor_valued:
        assert_true(convert_to_tensor(False), message)
    raise ValueError(message)


def _check(ok, message: str, tensor_valued: bool) -> None:
    """`ok` (a bool, or a bool tensor checked when the code runs) or the error `message`."""
    if is_tensor(ok):
        assert_true(ok, message)
    elif not ok:
        _fail(message, tensor_valued)


def _check_nonnegative(counts: list, what: str, tensor_valued: bool) -> None:
    for c in counts:
        _check(c >= 0, f"em.{what} must be >= 0" + ("" if is_tensor(c) else f", got {c}"),
               tensor_valued)


def _check_equal(a, b, message: str, tensor_valued: bool = False) -> None:
    """a == b, now when both are ints, else when the code runs."""
    _check(ops.equal(a, b) if is_tensor(a) or is_tensor(b) else a == b, message,
           tensor_valued)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """The identity matrix (`num_rows` x `num_columns`, in a batch of `batch_shape`)."""
    num_columns = num_rows if num_columns is None else num_columns
    rows = ops.expand_dims(ops.range(num_rows), 1)
    out = ops.cast(ops.equal(rows, ops.range(num_columns)), dtype)
    if batch_shape:
        out = ops.broadcast_to(out, list(batch_shape) + [num_rows, num_columns])
    return out


def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from `start` to `stop`, both included (floats), as
    tf.linspace: `start` and `stop` may be N-D (they broadcast), the values run along the
    new dim `axis` (in [-rank - 1, rank]); `num` may be a scalar integer tensor. The last
    value is `stop` exactly; `num` = 1 gives `start`.

    Example:
      >>> import ember as em
      >>> em.linspace([0., 1.], [2., 5.], 3, axis=1).numpy()
      array([[0., 1., 2.],
             [1., 3., 5.]], dtype=float32)
    """
    start = convert_to_tensor(start)
    if not start.dtype.is_floating:
        start = ops.cast(start, dtypes.float32)
    stop = convert_to_tensor(stop, dtype=start.dtype)
    if start.shape != stop.shape or start.shape.rank is None:
        shape = ops.shape(start + stop)
        start, stop = ops.broadcast_to(start, shape), ops.broadcast_to(stop, shape)
    rank = _rank(start, "linspace")
    axis = _axis(int(axis), rank + 1, "linspace")
    known, tensor_valued = _known(num), _tensor_valued(num)
    if known is not None and known.ndim:
        raise ValueError(f"em.linspace: num must be a scalar int, got {num!r}")
    num = int(known) if known is not None else convert_to_tensor(num)
    # a tensor's num: the same AssertionFailedError eagerly and where compiled code runs
    _check(num >= 0, "em.linspace: num must be >= 0" + ("" if tensor_valued else f", got {num}"),
           tensor_valued)
    steps = ops.reshape(ops.range(num), [1] * axis + [-1] + [1] * (rank - axis))
    first, last = ops.expand_dims(start, axis), ops.expand_dims(stop, axis)
    span = ops.cast(ops.maximum(convert_to_tensor(num) - 1, 1), start.dtype)
    values = first + ops.cast(steps, start.dtype) * ((last - first) / span)
    return ops.where(ops.logical_and(steps > 0, ops.equal(steps, num - 1)), last, values)


def tile(input, multiples, name=None):  # noqa: A002
    """`input` repeated `multiples[i]` times along each dim i (`multiples`: ints, or a 1-D
    integer tensor of length rank(input) known while tracing; the dims may be `?`)."""
    x = convert_to_tensor(input)
    rank = _rank(x, "tile")
    multiples_arg, multiples = multiples, _counts(multiples, "tile: multiples", length=rank)
    if len(multiples) != rank:
        raise ValueError(f"em.tile: {len(multiples)} multiples for a rank-{rank} tensor")
    _check_nonnegative(multiples, "tile: multiples", _tensor_valued(multiples_arg))
    dims = _dims(x)
    expanded = ops.reshape(x, [d for size in dims for d in (1, size)])
    wide = ops.broadcast_to(expanded, [d for m, size in zip(multiples, dims) for d in (m, size)])
    return ops.reshape(wide, [m * size for m, size in zip(multiples, dims)])


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Each element repeated along `axis` (flattened first if None), as tf.repeat:
    `repeats` is one count for all (an int or scalar tensor) or one per element along
    `axis` (a list, numpy array or 1-D tensor, also one known only when the code runs).

    Example:
      >>> import ember as em
      >>> em.repeat(em.constant([[1, 2], [3, 4]]), [2, 0], axis=0).numpy()
      array([[1, 2],
             [1, 2]], dtype=int32)
    """
    x = convert_to_tensor(input)
    if axis is None:
        x, axis = ops.reshape(x, [-1]), 0
    axis = _axis(axis, _rank(x, "repeat"), "repeat")
    known = _known(repeats)
    if known is None and not isinstance(repeats, (list, tuple)):
        counts = _int32(repeats, "repeat: repeats")
        if counts.ndim == 1 and counts.shape[0] != 1:  # one per element, known when run
            return _repeat_each(x, counts, axis)
    counts = _counts(repeats, "repeat: repeats")
    _check_nonnegative(counts, "repeat: repeats", _tensor_valued(repeats))
    if (known is not None and known.ndim == 0) or len(counts) == 1:
        dims = _dims(x)
        wide = ops.broadcast_to(ops.expand_dims(x, axis + 1),
                                dims[:axis + 1] + counts + dims[axis + 1:])
        return ops.reshape(wide, dims[:axis] + [dims[axis] * counts[0]] + dims[axis + 1:])
    _check_equal(size_of(x, axis), len(counts), _per_element(x, axis, len(counts)))
    if known is not None:
        index = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
        return ops.gather(x, index, axis=axis)
    return _repeat_each(x, ops.stack(counts), axis)


def _per_element(x, axis: int, count) -> str:
    return (f"em.repeat: {count} repeats for dim {axis} of the input of shape {x.shape}: "
            "give one per element along the axis (or a single one)")


def _repeat_each(x, counts, axis: int):
    """`x`'s slices along `axis` repeated counts[i] times (`counts` a 1-D int32 tensor, one
    count per slice or a single one; checked when the code runs): a gather at
    searchsorted(cumsum(counts), range(total), "right")."""
    n = size_of(x, axis)
    if counts.shape[0] not in (None, 1) and isinstance(n, int):
        _check_equal(n, counts.shape[0], _per_element(x, axis, counts.shape[0]))
    assert_true(ops.reduce_all(counts >= 0), "em.repeat: repeats must be >= 0")
    assert_true(ops.logical_or(ops.equal(ops.size(counts), 1), ops.equal(ops.size(counts), n)),
                _per_element(x, axis, "the"))
    counts = ops.broadcast_to(counts, [n])
    index = searchsorted(cumsum(counts), ops.range(ops.reduce_sum(counts)), side="right")
    return ops.gather(x, index, axis=axis)


def _take(x, axis: int, start: int, stop: int, step: int = 1):
    index = [builtins.slice(None)] * _rank(x, "slice")
    index[axis] = builtins.slice(start, stop, step)
    return x[tuple(index)]


def _cut(x, axis: int, start, size):
    """`size` elements of `x` from `start` along `axis` (ints or scalar tensors)."""
    if not is_tensor(start) and not is_tensor(size):
        return _take(x, axis, start, start + size)
    rank = x.shape.rank
    begin = [0] * rank
    sizes = [-1] * rank
    begin[axis], sizes[axis] = start, size
    return ops.slice(x, begin, sizes)


def unstack(value, num=None, axis=0, name=None):
    """The slices of `value` along `axis`, as a list (its size known while tracing)."""
    x = convert_to_tensor(value)
    axis = _axis(axis, _rank(x, "unstack"), "unstack")
    n = _dim(x, axis, "unstack") if num is None else num
    return [ops.squeeze(_take(x, axis, i, i + 1), [axis]) for i in builtins.range(n)]


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """`value` cut along `axis` into equal parts or parts of the given sizes (one may be -1:
    the rest). The number of parts must be known while tracing; the dim may be `?` and the
    sizes tensors, checked when the code runs."""
    x = convert_to_tensor(value)
    axis = _axis(axis, _rank(x, "split"), "split")
    total = size_of(x, axis)
    known = _known(num_or_size_splits)
    if known is None and is_tensor(num_or_size_splits) and \
            convert_to_tensor(num_or_size_splits).ndim == 0:
        raise ValueError("em.split: the number of parts must be known while tracing (an int "
                         f"or a constant), got {num_or_size_splits!r}")
    if known is not None and known.ndim == 0:
        parts = int(known)
        if parts < 1:
            raise ValueError(f"em.split: the number of parts must be >= 1, got {parts}")
        message = (f"em.split: dim {axis} of size {'?' if is_tensor(total) else total} does "
                   f"not split into {parts} equal parts")
        if is_tensor(total):
            assert_true(ops.equal(ops.floormod(total, parts), 0), message)
        elif total % parts:
            raise ValueError(message)
        sizes = [total // parts] * parts
    else:
        sizes = _counts(num_or_size_splits, "split: size_splits", length=num)
        rest = [i for i, s in enumerate(sizes) if not is_tensor(s) and s == -1]
        if len(rest) > 1:
            raise ValueError(f"em.split: at most one size may be -1, got {sizes}")
        valued = _tensor_valued(num_or_size_splits)
        _check_nonnegative([s for i, s in enumerate(sizes) if i not in rest],
                           "split: sizes", valued)
        given = builtins.sum((s for i, s in enumerate(sizes) if i not in rest), 0)
        shown = [s if isinstance(s, int) else "?" for s in sizes]
        message = f"em.split: sizes {shown} do not add up to dim {axis} of shape {x.shape}"
        if rest:
            sizes[rest[0]] = total - given
            _check(sizes[rest[0]] >= 0, message, valued)
        else:
            _check_equal(given, total, message, valued)
    out, start = [], 0
    for size in sizes:
        out.append(_cut(x, axis, start, size))
        start = start + size
    return out


def reverse(tensor, axis, name=None):
    """`tensor` with the order of each dim in `axis` reversed."""
    x = convert_to_tensor(tensor)
    rank = _rank(x, "reverse")
    for a in ([axis] if isinstance(axis, int) else list(axis)):
        x = _take(x, _axis(a, rank, "reverse"), None, None, -1)
    return x


def roll(input, shift, axis, name=None):  # noqa: A002
    """Elements shifted `shift` places along `axis`, wrapping around, as tf.roll: `shift`
    is an int, a scalar integer tensor or a list / 1-D tensor of them, one per axis in
    `axis` (ints known while tracing); the dims may be `?`."""
    x = convert_to_tensor(input)
    rank = _rank(x, "roll")
    axes = _known(axis)
    if axes is None or axes.ndim > 1 or not np.issubdtype(axes.dtype, np.integer):
        raise TypeError(f"em.roll: axis must be an int or a list of ints, got {axis!r}")
    axes = [int(a) for a in axes.reshape(-1)]
    shifts = _counts(shift, "roll: shift", length=len(axes), wide=True)
    if len(shifts) != len(axes):
        raise ValueError(f"em.roll: {len(shifts)} shifts for {len(axes)} axes")
    for s, a in zip(shifts, axes):
        a = _axis(a, rank, "roll")
        size = size_of(x, a)
        if is_tensor(s) or is_tensor(size):
            # the shift modulo the size first (in its own dtype: an int64 shift is not cut
            # to 32 bits), so range(size) - shift cannot overflow near INT_MIN
            if is_tensor(s):
                n = ops.maximum(ops.cast(size, s.dtype), 1) if is_tensor(size) else \
                    builtins.max(size, 1)
                s = ops.cast(ops.floormod(s, n), dtypes.int32)
            index = ops.floormod(ops.range(size) - s, ops.maximum(size, 1))
            x = ops.gather(x, index, axis=a)
        elif size and s % size:
            s %= size
            x = ops.concat([_take(x, a, size - s, size), _take(x, a, 0, size - s)], a)
    return x


def meshgrid(*args, indexing="xy", name=None):
    """Coordinate grids from 1-D tensors ("xy": the first two dims swapped, as numpy)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"em.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [ops.reshape(convert_to_tensor(a), [-1]) for a in args]
    sizes = [size_of(v, 0) for v in vectors]
    if indexing == "xy" and len(vectors) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, v in enumerate(vectors):
        position = i
        if indexing == "xy" and len(vectors) > 1 and i < 2:
            position = 1 - i
        shape = [1] * len(vectors)
        shape[position] = -1
        out.append(ops.broadcast_to(ops.reshape(v, shape), sizes))
    return out
