"""`em.TensorArray`: a list of same-typed tensors that staged loops can carry (tf.TensorArray).

It is a value: `write` returns the new array (`ta = ta.write(i, x)`, as in TensorFlow 2).
Its tensors are a buffer of shape `[capacity, *element_shape]` and its size; being a
container of those two (`__ember_components__`, nest.py), it is a loop variable and a
branch output like a tuple of tensors, so `em.while_loop`, `em.cond` and AutoGraph's
staged loops carry it. A write replaces one row of the buffer (`ember.tensor_scatter`: in
place in compiled loops, O(row) per write); with `dynamic_size=True` a write past the end
first doubles the
capacity (the buffer's first dimension then varies across a loop's iterations, which
AutoGraph's loops and em.while_loop allow for it). The buffer is made once the element
type is known: at creation where element_shape gives the rank, else at the first write; a
staged loop that writes an array first learns that type by tracing its body once more.

Elements of a partially known shape (`element_shape=[None, 3]`, or `infer_shape=False`,
whose elements may differ in shape as TensorFlow's may) are kept padded to the largest,
with each one's shape beside it (tensor_array_padded.py); `stack()` needs them of one
shape when the code runs, `concat()` only their dims after the first.

`clear_after_read` is accepted for TensorFlow's signature and does nothing: like
TensorFlow 2's list-backed arrays in tf.function, reads never clear an element.
"""

from __future__ import annotations

from ember.dialects.ember import dtypes
from ember.frontend import tensor_array_padded as padded
from ember.frontend.shape import TensorShape, TensorSpec
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tracing import SymbolicTensor


def _ops():
    from ember.frontend import ops
    return ops


class TensorArray:
    """A list of tensors of one dtype, for accumulating in loops: of one shape, or of
    shapes that differ where `element_shape` leaves a dim open (None) and `infer_shape` is
    False.

    Example:
      >>> import ember as em
      >>> ta = em.TensorArray(em.float32, size=3)
      >>> for i in range(3):
      ...     ta = ta.write(i, float(i) * 2)
      >>> ta.stack()
      <ember.Tensor: shape=(3,), dtype=float32, numpy=array([0., 2., 4.], dtype=float32)>
      >>> ta = em.TensorArray(em.int32, size=2, element_shape=[None], infer_shape=False)
      >>> ta.write(0, [1, 2]).write(1, [3]).concat().numpy()
      array([1, 2, 3], dtype=int32)
    """

    def __init__(self, dtype, size=None, dynamic_size: bool = False, clear_after_read=True,
                 element_shape=None, name=None, infer_shape: bool = True):
        del clear_after_read, name
        self.dtype = dtypes.as_dtype(dtype)
        self.dynamic_size = bool(dynamic_size)
        self.infer_shape = bool(infer_shape)
        self._element_shape = self._declared = TensorShape(element_shape)
        if size is None and not dynamic_size:
            raise ValueError("em.TensorArray needs a size, or dynamic_size=True")
        self._size = 0 if size is None else size
        self._buffer = self._shapes = self._fixed = None
        if self._element_shape.rank is not None:
            allocated = self._with_element(self._element_shape)
            self._buffer, self._shapes, self._fixed = (allocated._buffer, allocated._shapes,
                                                       allocated._fixed)

    # -- as a container of tensors (nest.py) -------------------------------------------------

    def __ember_components__(self):
        if self._shapes is None:
            return (self._buffer, self._size)
        return (self._buffer, self._size, self._shapes, self._fixed)

    def __ember_rebuild__(self, parts):
        out = object.__new__(TensorArray)
        out.__dict__.update(self.__dict__)
        out._buffer, out._size = parts[:2]
        out._shapes, out._fixed = parts[2:] if len(parts) > 2 else (None, None)
        return out

    @property
    def allocated(self) -> bool:
        """Whether the buffer exists (the element type is known)."""
        return self._buffer is not None

    @property
    def is_padded(self) -> bool:
        """Whether the elements may differ in shape (kept padded, tensor_array_padded.py)."""
        return self._shapes is not None

    @property
    def changes_shape_in_loops(self) -> bool:
        """Whether a loop carrying the array needs `loop_invariants()`: its buffer grows."""
        return self.dynamic_size or self.is_padded

    def allocated_like(self, spec: "TensorArray") -> "TensorArray":
        """This array with a buffer of zeros of the type `spec` (the same array as a
        trial trace left it, its components TensorSpecs) says its elements have."""
        buffer = spec._buffer
        if not isinstance(buffer, TensorSpec):
            raise ValueError("em.TensorArray: nothing is written to it in the loop, so its "
                             "element shape is unknown; give element_shape=")
        return self.allocated_as(spec, TensorShape(buffer.shape[1:]))

    def allocated_as(self, other: "TensorArray", shape=None) -> "TensorArray":
        """This (empty) array stored as `other` is, for elements of `shape` (by default
        `other`'s element shape): what a branch that writes nothing to it yields."""
        shape = other.element_shape if shape is None else shape
        return self._with_element(shape, padded_=other.is_padded)

    def loop_invariants(self):
        """Shapes of the components as loop variables: a growing buffer's first dim varies,
        and so do the dims padded elements leave open."""
        dims = list(self._buffer.shape.dims)
        if self.dynamic_size:
            dims[0] = None
        if not self.is_padded:
            return (TensorShape(dims), TensorShape([]))
        element = self._element_shape
        return (TensorShape(dims[:1] + list(element.dims)), TensorShape([]),
                TensorShape([dims[0], element.rank]), TensorShape([element.rank]))

    # -- the TensorFlow API ----------------------------------------------------------------

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    def size(self, name=None):
        """The number of elements, as a tensor."""
        return convert_to_tensor(self._size, dtype=dtypes.int32)

    def read(self, index, name=None):
        """Element `index` (zeros of its type where it was never written)."""
        if not self.allocated:
            raise ValueError("em.TensorArray.read: nothing was written to the array yet")
        if self.is_padded:
            return padded.read(self, index, _check_index)
        return self._buffer[index]

    def write(self, index, value, name=None) -> "TensorArray":
        """The array with element `index` set to `value` (grown first, if dynamic)."""
        value = convert_to_tensor(value, dtype=self.dtype)
        out = self if self.allocated else self._with_element(self._first(value))
        index = convert_to_tensor(index, dtype=dtypes.int32)
        if out.is_padded:
            buffer, shapes, fixed = padded.write(out, index, value, _check_index)
            return out.__ember_rebuild__([buffer, _grown_size(out, index), shapes, fixed])
        padded.fits(value, out._dims_of_elements(), out.misfit_message("write"),
                    out.misfit_message("write", value.shape))
        ops = _ops()
        buffer = out._buffer
        if out.dynamic_size:
            buffer = _grown(buffer, index)
        _check_index(index, ops.shape(buffer)[0], "write")
        from ember.frontend.scatter_ops import tensor_scatter_nd_update
        buffer = tensor_scatter_nd_update(buffer, ops.reshape(index, [1, 1]),
                                          ops.expand_dims(value, 0))
        return out.__ember_rebuild__([buffer, _grown_size(out, index)])

    def stack(self, name=None):
        """The elements as one tensor, `[size, *element_shape]`."""
        if not self.allocated:
            return _ops().zeros([0] + list(_dims(self._element_shape)), self.dtype)
        if self.is_padded:
            return padded.stacked(self._buffer[:self._size], self._shapes[:self._size],
                                  self._element_shape, "stack")
        static = _static(self._size)
        if static is not None and static == self._buffer.shape[0]:
            return self._buffer
        return self._buffer[:self._size]

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked."""
        ops = _ops()
        if self.is_padded:
            indices = convert_to_tensor(indices, dtype=dtypes.int32)
            return padded.stacked(ops.gather(self._buffer, indices),
                                  ops.gather(self._shapes, indices), self._element_shape,
                                  "gather")
        return ops.gather(self.stack(), indices)

    def concat(self, name=None):
        """The elements joined along their first dimension."""
        if self.is_padded:
            return padded.concatenated(self)
        stacked = self.stack()
        rest = list(stacked.shape.dims[2:])
        return _ops().reshape(stacked, [-1] + [d if d is not None else -1 for d in rest])

    def unstack(self, value, name=None) -> "TensorArray":
        """The array holding the rows of `value` as its elements."""
        value = convert_to_tensor(value, dtype=self.dtype)
        if value.shape.rank is None or value.shape.rank == 0:
            raise ValueError(f"em.TensorArray.unstack needs a value of at least one "
                             f"dimension, got shape {value.shape}")
        element = TensorShape(value.shape[1:])
        out = self._with_element(self._first(element) if self._declared.rank is None
                                 else self._declared)
        size = value.shape[0] if value.shape[0] is not None else _ops().shape(value)[0]
        if out.is_padded:
            buffer, shapes, fixed = padded.unstacked(out, value)
            return out.__ember_rebuild__([buffer, size, shapes, fixed])
        padded.fits(value, [None] + out._dims_of_elements(), out.misfit_message("unstack"),
                    out.misfit_message("unstack", element))
        return out.__ember_rebuild__([value, size])

    def scatter(self, indices, value, name=None) -> "TensorArray":
        """The array with element `indices[k]` set to `value[k]` for each k."""
        value = convert_to_tensor(value, dtype=self.dtype)
        count = convert_to_tensor(indices).shape[0]
        if count is None:
            raise ValueError("em.TensorArray.scatter needs indices of a static length")
        out = self
        for k in range(count):
            out = out.write(indices[k], value[k])
        return out

    def __repr__(self) -> str:
        return f"<em.TensorArray dtype={self.dtype.name} size={self._size!r}>"

    # -- helpers ------------------------------------------------------------------------------

    def misfit_message(self, what: str, shape=None) -> str:
        """What a write (or unstack) of an element that does not fit the array says: of
        `shape` while tracing, of a shape known only when the code runs otherwise."""
        of = "" if shape is None else f" of shape {shape}"
        if self._declared.rank is None and self.infer_shape:
            seen = "" if shape is None else f" (of shape {shape}, the elements before " \
                f"it of shape {self._element_shape})"
            return padded.infer_message(seen).replace(".write:", f".{what}:")
        if self._declared.rank is None:
            return (f"em.TensorArray.{what}: an element{of} in an array of elements of "
                    f"rank {self._element_shape.rank} (its first element's); elements may "
                    f"differ in shape (infer_shape=False) but not in rank")
        return (f"em.TensorArray.{what}: an element{of} does not fit the array's "
                f"element_shape {self._declared}; write elements that fit it, or give the "
                f"array an element_shape that allows theirs (None for a dimension that "
                f"varies, with infer_shape=False for elements of different shapes)")

    def _first(self, value) -> TensorShape:
        """The element shape the array takes at its first write (of `value`, or of a
        value of that shape), where its element_shape left the rank unknown."""
        shape = TensorShape(value.shape if isinstance(value, Tensor) else value)
        if shape.rank is None:
            raise ValueError("em.TensorArray: an element of unknown rank; give the array "
                             "an element_shape= of a known rank")
        return shape if self.infer_shape else TensorShape([None] * shape.rank)

    def _dims_of_elements(self) -> list:
        """Each element dim: an int, or the buffer's dim where its type leaves it `?`."""
        shape = _ops().shape(self._buffer) if None in self._element_shape.dims else None
        return [shape[k + 1] if d is None else d
                for k, d in enumerate(self._element_shape.dims)]

    def _with_element(self, shape, padded_=None) -> "TensorArray":
        """This array, empty, for elements of `shape`: a dense buffer where all elements
        have that fully known shape, else the padded form (`padded_` forces one)."""
        shape = TensorShape(shape)
        out = self.__ember_rebuild__([None, self._size])
        out._element_shape = shape
        capacity = _capacity(self._size, self.dynamic_size)
        if padded_ is None:
            padded_ = not shape.is_fully_defined()
        if padded_:
            out._buffer, out._shapes, out._fixed = padded.allocate(self.dtype, capacity, shape)
        else:
            out._buffer = out._zeros(capacity)
        return out

    def allocated_for(self, value) -> "TensorArray":
        """The (empty) array with room for elements of `value`'s run-time shape, which may
        have `?` dims: what a loop that writes such elements carries from its start."""
        value = convert_to_tensor(value, dtype=self.dtype)
        ops = _ops()
        out = self.__ember_rebuild__([None, self._size])
        out._element_shape = value.shape
        capacity = _capacity(self._size, self.dynamic_size)
        out._buffer = ops.zeros(ops.concat([ops.reshape(convert_to_tensor(
            capacity, dtype=dtypes.int32), [1]), ops.shape(value)], 0), self.dtype)
        return out

    def _zeros(self, capacity):
        ops = _ops()
        dims = _dims(self._element_shape)
        if isinstance(capacity, int):
            return ops.zeros([capacity] + dims, self.dtype)
        shape = ops.concat([ops.reshape(convert_to_tensor(capacity, dtype=dtypes.int32), [1]),
                            convert_to_tensor(dims, dtype=dtypes.int32)], 0)
        return ops.zeros(shape, self.dtype)


def _capacity(size, dynamic: bool):
    """The rows an array of `size` elements (an int, or a tensor known when the code runs)
    is made with: `size`, and at least one where it grows (doubling needs one)."""
    static = _static(size)
    if static is not None:
        return max(static, 1) if dynamic else static
    if not dynamic:
        return size
    return _ops().maximum(convert_to_tensor(size, dtype=dtypes.int32), 1)


def _grown_size(ta: TensorArray, index):
    """The array's size after a write at `index`: past the end grows a dynamic array."""
    if not ta.dynamic_size:
        return ta._size
    return _ops().maximum(convert_to_tensor(ta._size, dtype=dtypes.int32), index + 1)


def _grown(buffer, index):
    """`buffer` with its capacity doubled (or raised to index + 1) while index is past it."""
    ops = _ops()
    from ember.frontend.control_flow import smart_cond
    capacity = ops.shape(buffer)[0]

    def grow():
        new = ops.maximum(capacity * 2, index + 1)
        pad = ops.zeros(ops.concat([ops.reshape(new - capacity, [1]),
                                    ops.shape(buffer)[1:]], 0), buffer.dtype)
        return ops.concat([buffer, pad], 0)
    return smart_cond(index >= capacity, grow, lambda: buffer)  # eagerly a Python `if`


def _check_index(index, capacity, what: str) -> None:
    """An index outside the array is an error (never a write that goes nowhere), the same
    eagerly and compiled: `AssertionFailedError`, an `InvalidArgumentError`."""
    from ember.frontend.effects import assert_true
    ops = _ops()
    assert_true(ops.logical_and(index >= 0, index < capacity),
                f"em.TensorArray.{what}: index out of range for the array's size")


def _static(size):
    if isinstance(size, int):
        return size
    if isinstance(size, Tensor) and not isinstance(size, SymbolicTensor):
        return int(size.numpy())
    return None


def _dims(shape: TensorShape) -> list:
    return list(shape.dims or ())
