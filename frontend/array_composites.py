"""Shaping and linear-algebra functions that are compositions of other ops, as in
TensorFlow's Python layer: `eye`, `linspace`, `tile`, `repeat`, `unstack`, `split`,
`reverse`, `roll`, `meshgrid`, and em.linalg's `matvec`, `diag`, `diag_part`, `trace`,
`band_part`. They need the ranks (and, where noted, the sizes) they work on to be
known while tracing, and say so when they are not."""

from __future__ import annotations

import builtins

from ember.dialects.ember import dtypes
from ember.frontend import ops
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


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """The identity matrix (`num_rows` x `num_columns`, in a batch of `batch_shape`)."""
    num_columns = num_rows if num_columns is None else num_columns
    rows = ops.expand_dims(ops.range(num_rows), 1)
    out = ops.cast(ops.equal(rows, ops.range(num_columns)), dtype)
    if batch_shape:
        out = ops.broadcast_to(out, list(batch_shape) + [num_rows, num_columns])
    return out


def linspace(start, stop, num, name=None, axis=0):
    """`num` evenly spaced values from `start` to `stop`, both included (floats)."""
    start = convert_to_tensor(start)
    if not start.dtype.is_floating:
        start = ops.cast(start, dtypes.float32)
    stop = convert_to_tensor(stop, dtype=start.dtype)
    if isinstance(num, int) and num < 1:
        raise ValueError(f"em.linspace: num must be positive, got {num}")
    steps = ops.cast(ops.range(num), start.dtype)
    span = ops.cast(ops.maximum(convert_to_tensor(num) - 1, 1), start.dtype)
    return start + steps * ((stop - start) / span)


def tile(input, multiples, name=None):  # noqa: A002
    """`input` repeated `multiples[i]` times along each dim i."""
    x = convert_to_tensor(input)
    rank = _rank(x, "tile")
    multiples = [int(m) for m in multiples]
    if len(multiples) != rank:
        raise ValueError(f"em.tile: {len(multiples)} multiples for a rank-{rank} tensor")
    dims = [_dim(x, i, "tile") for i in builtins.range(rank)]
    expanded = ops.reshape(x, [d for size in dims for d in (1, size)])
    wide = ops.broadcast_to(expanded, [d for m, size in zip(multiples, dims) for d in (m, size)])
    return ops.reshape(wide, [m * size for m, size in zip(multiples, dims)])


def repeat(input, repeats: int, axis=None, name=None):  # noqa: A002
    """Each element repeated `repeats` times along `axis` (flattened first if None)."""
    x = convert_to_tensor(input)
    if axis is None:
        x, axis = ops.reshape(x, [-1]), 0
    rank = _rank(x, "repeat")
    axis = _axis(axis, rank, "repeat")
    dims = [_dim(x, i, "repeat") for i in builtins.range(rank)]
    wide = ops.broadcast_to(ops.expand_dims(x, axis + 1), dims[:axis + 1] + [int(repeats)] +
                            dims[axis + 1:])
    return ops.reshape(wide, dims[:axis] + [dims[axis] * int(repeats)] + dims[axis + 1:])


def _take(x, axis: int, start: int, stop: int, step: int = 1):
    index = [builtins.slice(None)] * _rank(x, "slice") + []
    index[axis] = builtins.slice(start, stop, step)
    return x[tuple(index)]


def unstack(value, num=None, axis=0, name=None):
    """The slices of `value` along `axis`, as a list (its size known while tracing)."""
    x = convert_to_tensor(value)
    axis = _axis(axis, _rank(x, "unstack"), "unstack")
    n = _dim(x, axis, "unstack") if num is None else num
    return [ops.squeeze(_take(x, axis, i, i + 1), [axis]) for i in builtins.range(n)]


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """`value` cut along `axis` into equal parts or parts of the given sizes."""
    x = convert_to_tensor(value)
    axis = _axis(axis, _rank(x, "split"), "split")
    total = _dim(x, axis, "split")
    if isinstance(num_or_size_splits, int):
        if total % num_or_size_splits:
            raise ValueError(f"em.split: dim {axis} of size {total} does not split into "
                             f"{num_or_size_splits} equal parts")
        sizes = [total // num_or_size_splits] * num_or_size_splits
    else:
        sizes = [int(s) for s in num_or_size_splits]
        if -1 in sizes:
            sizes[sizes.index(-1)] = total - (sum(sizes) + 1)
        if sum(sizes) != total or min(sizes) < 0:
            raise ValueError(f"em.split: sizes {list(num_or_size_splits)} do not add up to "
                             f"dim {axis} of size {total}")
    out, start = [], 0
    for size in sizes:
        out.append(_take(x, axis, start, start + size))
        start += size
    return out


def reverse(tensor, axis, name=None):
    """`tensor` with the order of each dim in `axis` reversed."""
    x = convert_to_tensor(tensor)
    rank = _rank(x, "reverse")
    for a in ([axis] if isinstance(axis, int) else list(axis)):
        x = _take(x, _axis(a, rank, "reverse"), None, None, -1)
    return x


def roll(input, shift, axis, name=None):  # noqa: A002
    """Elements shifted `shift` places along `axis`, wrapping around (static shifts)."""
    x = convert_to_tensor(input)
    rank = _rank(x, "roll")
    shifts = [shift] if isinstance(shift, int) else list(shift)
    axes = [axis] if isinstance(axis, int) else list(axis)
    for s, a in zip(shifts, axes):
        a = _axis(a, rank, "roll")
        size = _dim(x, a, "roll")
        if size == 0:
            continue
        s = int(s) % size
        if s:
            x = ops.concat([_take(x, a, size - s, size), _take(x, a, 0, size - s)], a)
    return x


def meshgrid(*args, indexing="xy", name=None):
    """Coordinate grids from 1-D tensors ("xy": the first two dims swapped, as numpy)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"em.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [ops.reshape(convert_to_tensor(a), [-1]) for a in args]
    sizes = [_dim(v, 0, "meshgrid") for v in vectors]
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


# -- em.linalg ----------------------------------------------------------------------------


def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    """a @ b for a (batch of) matrices and vectors."""
    product = ops.matmul(a, ops.expand_dims(b, -1), transpose_a=transpose_a or adjoint_a)
    return ops.squeeze(product, [-1])


def diag(diagonal, name=None):
    """The square matrix with `diagonal` on its diagonal (batched over leading dims)."""
    d = convert_to_tensor(diagonal)
    n = _dim(d, -1, "linalg.diag")
    return ops.expand_dims(d, -1) * eye(n, dtype=d.dtype)


def diag_part(input, name=None):  # noqa: A002
    """The main diagonal of a (batch of) matrices."""
    x = convert_to_tensor(input)
    rows, cols = _dim(x, -2, "linalg.diag_part"), _dim(x, -1, "linalg.diag_part")
    k = min(rows, cols)
    square = x[..., :k, :k] if (rows, cols) != (k, k) else x
    return ops.reduce_sum(square * eye(k, dtype=x.dtype), axis=-1)


def trace(x, name=None):
    """The sum of the main diagonal of a (batch of) matrices."""
    return ops.reduce_sum(diag_part(x), axis=-1)


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keeps the elements within `num_lower` below and `num_upper` above the diagonal
    (negative: all of them)."""
    x = convert_to_tensor(input)
    rows = ops.expand_dims(ops.range(ops.shape(x)[-2]), 1)
    cols = ops.range(ops.shape(x)[-1])
    keep = ops.logical_and(
        (rows - cols <= num_lower) if num_lower >= 0 else ops.equal(rows, rows),
        (cols - rows <= num_upper) if num_upper >= 0 else ops.equal(cols, cols))
    return ops.where(keep, x, ops.zeros_like(x))
