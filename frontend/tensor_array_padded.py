"""`em.TensorArray` elements of partially known shape (`element_shape=[None, 3]`, or
`infer_shape=False`): tf.TensorArray's list of tensors of differing shapes, as tensors a
staged loop can carry.

TensorFlow keeps such elements as a list (a TensorList); here they are three tensors:
  buffer  [capacity, *dims]  every element, padded with zeros to the largest in each dim
  shapes  [capacity, rank]   int32: each element's shape (-1 where an element never
                             written leaves a dim of the element_shape open)
  fixed   [rank]             int32: with infer_shape=True, the first element's shape,
                             which every later one must have (-1 before it is written)
A write pads the buffer when the element is larger in some dim, then replaces one row
(O(row), in place in compiled loops); the buffer keeps at least one row and a size of at
least 1 in each dim (see `allocate`). `read`, `stack` and `concat` slice the padding off.
An element never written is zeros: of its dims the element_shape gives, of the written
elements' in the others for stack() (as TensorFlow's TensorListStack), and 0 rows in
concat().

Whether elements fit is known only when the code runs (a `?` dim): those checks are asserts,
so eagerly and compiled the same `AssertionFailedError` (an `InvalidArgumentError`) says
the same thing. What tracing already sees raises `ValueError` while tracing.
"""

from __future__ import annotations

from ember.dialects.ember import dtypes
from ember.frontend.shape import TensorShape
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tracing import SymbolicTensor


def _ops():
    from ember.frontend import ops
    return ops


def _int32(value) -> Tensor:
    return convert_to_tensor(value, dtype=dtypes.int32)


def allocate(dtype, capacity, shape: TensorShape) -> tuple:
    """(buffer, shapes, fixed) with room for `capacity` (an int or a scalar tensor)
    elements, never written, of the partially known `shape`. Every dim of the buffer is at
    least 1 (a spare row, a `None` dim 1): upstream's folding of a cast into a slice makes
    IR that fails to verify where a buffer of size 0 reaches a slice through a loop."""
    ops = _ops()
    dims = [1 if d is None else d for d in shape.dims]
    if isinstance(capacity, int):
        rows = max(capacity, 1)
        buffer = ops.zeros([rows] + dims, dtype)
        shapes = ops.broadcast_to(open_row(shape)[None], [rows, shape.rank])
    else:
        rows = ops.reshape(ops.maximum(_int32(capacity), 1), [1])
        buffer = ops.zeros(ops.concat([rows, _int32(dims)], 0), dtype)
        shapes = ops.broadcast_to(open_row(shape)[None], ops.concat([rows, [shape.rank]], 0))
    return buffer, shapes, ops.fill([shape.rank], -1)


def open_row(shape: TensorShape) -> Tensor:
    """The row of `shapes` of an element never written."""
    return _int32([-1 if d is None else d for d in shape.dims])


def fits(value: Tensor, dims, message: str, static: str) -> None:
    """Checks that `value` has the shape `dims` (ints, None for any size, or int32 scalar
    tensors): a `ValueError(static)` while tracing where the traced shape shows it does
    not, else an assert (eagerly at once) saying `message`."""
    from ember.frontend.effects import assert_true
    ops = _ops()
    have = value.shape
    if have.rank != len(dims) or any(isinstance(d, int) and h is not None and h != d
                                     for h, d in zip(have.dims, dims)):
        if isinstance(value, SymbolicTensor):
            raise ValueError(static)
        assert_true(convert_to_tensor(False), message)
    pairs = [(k, d) for k, (h, d) in enumerate(zip(have.dims, dims))
             if d is not None and not (isinstance(d, int) and h is not None)]
    if not pairs:
        return
    shape = ops.shape(value)
    assert_true(ops.reduce_all(ops.stack([ops.equal(shape[k], _int32(d)) for k, d in pairs])),
                message)


def write(ta, index: Tensor, value: Tensor, check_index) -> tuple:
    """(buffer, shapes, fixed) of `ta` with element `index` set to `value` (checked to fit
    the element_shape, and with infer_shape the first element's shape). `index` must be
    below the size (the capacity of a dynamic array, grown first)."""
    from ember.frontend.effects import assert_true
    from ember.frontend.scatter_ops import tensor_scatter_nd_update
    ops = _ops()
    element = ta.element_shape
    fits(value, list(element.dims), ta.misfit_message("write"),
         ta.misfit_message("write", value.shape))
    shape = ops.shape(value)
    fixed = ta._fixed
    if ta.infer_shape:
        assert_true(ops.reduce_all(ops.logical_or(fixed < 0, ops.equal(fixed, shape))),
                    infer_message())
        fixed = shape
    buffer, shapes = ta._buffer, ta._shapes
    if ta.dynamic_size:
        buffer, shapes = _grown(buffer, shapes, open_row(element), index)
    check_index(index, ops.shape(buffer)[0] if ta.dynamic_size else _int32(ta._size), "write")
    inner = ops.shape(buffer)[1:]
    need = ops.maximum(inner, shape)
    rows = buffer.shape[0]  # (the padding loses every static dim: given back below)
    buffer = _cond(ops.reduce_any(need > inner),
                   lambda: _padded(buffer, ops.concat([[0], need - inner], 0)),
                   lambda: buffer)
    row = _padded(value, need - shape)
    buffer = tensor_scatter_nd_update(_refined(buffer, (rows,) + element.dims),
                                      ops.reshape(index, [1, 1]),
                                      ops.expand_dims(_refined(row, element.dims), 0))
    shapes = tensor_scatter_nd_update(shapes, ops.reshape(index, [1, 1]),
                                      ops.expand_dims(shape, 0))
    return buffer, shapes, fixed


def infer_message(shapes: str = "") -> str:
    return (f"em.TensorArray.write: an element of a shape other than that of the elements "
            f"written before it{shapes}: with infer_shape=True (the default) every element "
            f"has the first one's shape; pass infer_shape=False to collect elements of "
            f"different shapes (stack() then needs them of one shape, concat() only their "
            f"dims after the first)")


def read(ta, index, check_index) -> Tensor:
    """Element `index` (below the size), its padding cut off."""
    ops = _ops()
    index = _int32(index)
    check_index(index, _int32(ta._size), "read")
    dims = ops.maximum(ta._shapes[index], 0)
    return _cut(ta._buffer[index], dims, ta.element_shape, 0)


def stacked(buffer: Tensor, shapes: Tensor, element: TensorShape, what: str) -> Tensor:
    """The elements in `buffer` (rows of shapes `shapes`) as one tensor: all written ones
    must have one shape, which those never written take."""
    from ember.frontend.effects import assert_true
    ops = _ops()
    target = _widest(shapes, element.rank)
    assert_true(ops.reduce_all(ops.logical_or(shapes < 0, ops.equal(shapes, target[None]))),
                f"em.TensorArray.{what}: elements of different shapes; {what}() needs "
                f"every element of one shape (concat() joins elements that differ in their "
                f"first dimension)")
    return _cut(buffer, target, element, 1)


def concatenated(ta) -> Tensor:
    """The elements joined along their first dimension: their other dims must agree."""
    from ember.frontend.effects import assert_true
    ops = _ops()
    element = ta.element_shape
    buffer, shapes = ta._buffer[:ta._size], ta._shapes[:ta._size]
    target = _widest(shapes, element.rank)
    if element.rank > 1:
        rest = shapes[:, 1:]
        assert_true(ops.reduce_all(ops.logical_or(rest < 0, ops.equal(rest, target[None, 1:]))),
                    "em.TensorArray.concat: elements that differ in a dimension other than "
                    "the first; concat() joins elements along their first dimension, so "
                    "their other dimensions must be equal (pad them to one size first)")
    inner = ops.shape(buffer)[1]
    dims = [target[k] if d is None else d for k, d in enumerate(element.dims)]
    trimmed = _cut(buffer, [inner] + dims[1:], element, 1)
    flat = ops.reshape(trimmed, [-1] + dims[1:])
    lengths = ops.maximum(shapes[:, 0], 0)
    keep = ops.range(inner)[None, :] < lengths[:, None]
    from ember.frontend.scatter_ops import boolean_mask
    return boolean_mask(flat, ops.reshape(keep, [-1]))


def unstacked(ta, value: Tensor) -> tuple:
    """(buffer, shapes, fixed) holding the rows of `value`."""
    ops = _ops()
    element = ta.element_shape
    fits(value, [None] + list(element.dims), ta.misfit_message("unstack"),
         ta.misfit_message("unstack", value.shape[1:]))
    shape = ops.shape(value)[1:]
    shapes = ops.broadcast_to(shape[None], ops.concat([ops.shape(value)[:1],
                                                       [element.rank]], 0))
    fixed = shape if ta.infer_shape else ops.fill([element.rank], -1)
    return value, shapes, fixed


def _widest(shapes: Tensor, rank: int) -> Tensor:
    """The largest of each dim over the rows of `shapes` (0 where none is known)."""
    ops = _ops()
    rows = ops.concat([shapes, ops.fill([1, rank], -1)], 0)  # (a max over no rows)
    return ops.maximum(ops.reduce_max(rows, axis=0), 0)


def _cut(x: Tensor, dims, element: TensorShape, lead: int) -> Tensor:
    """`x` ([*lead dims, *element dims]) cut to the element dims `dims` (a tensor or a list
    of scalars) where the element_shape leaves them open (the others are its already)."""
    key = (slice(None),) * lead + tuple(slice(None, dims[k]) if d is None else slice(None)
                                        for k, d in enumerate(element.dims))
    return x[key]


def _padded(x: Tensor, after: Tensor) -> Tensor:
    """`x` with `after[k]` zeros appended along each dim k."""
    ops = _ops()
    return ops.pad(x, ops.stack([ops.zeros_like(after), after], 1))


def _refined(x: Tensor, want: tuple) -> Tensor:
    """`x` with the static dims `want` (None: unknown) its dynamic padding lost."""
    dims = x.shape.dims
    if dims is not None and all(w is None or d == w for d, w in zip(dims, want)):
        return x
    ops = _ops()
    shape = ops.shape(x)
    return ops.reshape(x, [shape[k] if w is None else w for k, w in enumerate(want)])


def _grown(buffer: Tensor, shapes: Tensor, fill: Tensor, index: Tensor) -> tuple:
    """(buffer, shapes) with their capacity doubled (or raised to index + 1) where index is
    past it: new elements are zeros, never written."""
    ops = _ops()
    capacity = ops.shape(buffer)[0]

    def grow():
        new = ops.maximum(capacity * 2, index + 1)
        rows = ops.reshape(new - capacity, [1])
        pad = ops.zeros(ops.concat([rows, ops.shape(buffer)[1:]], 0), buffer.dtype)
        more = ops.broadcast_to(fill[None], ops.concat([rows, ops.shape(fill)], 0))
        return ops.concat([buffer, pad], 0), ops.concat([shapes, more], 0)
    return _cond(index >= capacity, grow, lambda: (buffer, shapes))


def _cond(pred, true_fn, false_fn):
    from ember.frontend.control_flow import smart_cond
    return smart_cond(pred, true_fn, false_fn)  # a known predicate: a Python `if`
