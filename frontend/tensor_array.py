"""`em.TensorArray`: a list of same-typed tensors that staged loops can carry (tf.TensorArray).

It is a value: `write` returns the new array (`ta = ta.write(i, x)`, as in TensorFlow 2).
Its tensors are a buffer of shape `[capacity, *element_shape]` and its size; being a
container of those two (`__ember_components__`, nest.py), it is a loop variable and a
branch output like a tuple of tensors, so `em.while_loop`, `em.cond` and AutoGraph's
staged loops carry it. A write replaces one row of the buffer (`ember.tensor_scatter`: in
place in compiled loops, O(row) per write); with `dynamic_size=True` a write past the end
first doubles the
capacity (the buffer's first dimension then varies across a loop's iterations, which
AutoGraph's loops allow for it). The buffer is made at the first write, once the element
type is known; a staged loop that writes an array first learns that type by tracing its
body once more.

`clear_after_read` is accepted for TensorFlow's signature and does nothing: like
TensorFlow 2's list-backed arrays in tf.function, reads never clear an element.
"""

from __future__ import annotations

from ember.dialects.ember import dtypes
from ember.frontend.shape import TensorShape, TensorSpec
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tracing import SymbolicTensor


def _ops():
    from ember.frontend import ops
    return ops


class TensorArray:
    """A list of tensors of one dtype and shape, for accumulating in loops.

    Example:
      >>> import ember as em
      >>> ta = em.TensorArray(em.float32, size=3)
      >>> for i in range(3):
      ...     ta = ta.write(i, float(i) * 2)
      >>> ta.stack()
      <ember.Tensor: shape=(3,), dtype=float32, numpy=array([0., 2., 4.], dtype=float32)>
    """

    def __init__(self, dtype, size=None, dynamic_size: bool = False, clear_after_read=True,
                 element_shape=None, name=None, infer_shape: bool = True):
        del clear_after_read, name
        self.dtype = dtypes.as_dtype(dtype)
        self.dynamic_size = bool(dynamic_size)
        self.infer_shape = infer_shape
        self._element_shape = TensorShape(element_shape)
        if size is None and not dynamic_size:
            raise ValueError("em.TensorArray needs a size, or dynamic_size=True")
        self._size = 0 if size is None else size
        self._buffer = None
        if self._element_shape.is_fully_defined():
            self._buffer = self._with_element(self._element_shape)._buffer

    # -- as a container of tensors (nest.py) -------------------------------------------------

    def __ember_components__(self):
        return (self._buffer, self._size)

    def __ember_rebuild__(self, parts):
        out = object.__new__(TensorArray)
        out.__dict__.update(self.__dict__)
        out._buffer, out._size = parts
        return out

    @property
    def allocated(self) -> bool:
        """Whether the buffer exists (the element type is known)."""
        return self._buffer is not None

    def allocated_like(self, spec: "TensorArray") -> "TensorArray":
        """This array with a buffer of zeros of the type `spec` (the same array as a
        trial trace left it, its components TensorSpecs) says its elements have."""
        buffer = spec._buffer
        if not isinstance(buffer, TensorSpec):
            raise ValueError("em.TensorArray: nothing is written to it in the loop, so its "
                             "element shape is unknown; give element_shape=")
        return self._with_element(buffer.shape[1:])  # its element shape known from here on

    def loop_invariants(self):
        """Shapes of the components as loop variables: a growing buffer's first dim varies."""
        dims = list(self._buffer.shape.dims)
        if self.dynamic_size:
            dims[0] = None
        return (TensorShape(dims), TensorShape([]))

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
        return self._buffer[index]

    def write(self, index, value, name=None) -> "TensorArray":
        """The array with element `index` set to `value` (grown first, if dynamic)."""
        value = convert_to_tensor(value, dtype=self.dtype)
        out = self if self.allocated else self._with_element(value.shape)
        if self.infer_shape and not TensorShape(out._element_shape).is_compatible_with(
                value.shape):
            raise ValueError(f"em.TensorArray.write: a value of shape {value.shape} into an "
                             f"array of elements of shape {out._element_shape}")
        ops = _ops()
        index = convert_to_tensor(index, dtype=dtypes.int32)
        buffer = out._buffer
        if out.dynamic_size:
            buffer = _grown(buffer, index)
        _check_index(index, ops.shape(buffer)[0], "write")
        from ember.frontend.scatter_ops import tensor_scatter_nd_update
        buffer = tensor_scatter_nd_update(buffer, ops.reshape(index, [1, 1]),
                                          ops.expand_dims(value, 0))
        size = out._size
        if out.dynamic_size:
            size = ops.maximum(convert_to_tensor(size, dtype=dtypes.int32), index + 1)
        return out.__ember_rebuild__([buffer, size])

    def stack(self, name=None):
        """The elements as one tensor, `[size, *element_shape]`."""
        if not self.allocated:
            return _ops().zeros([0] + list(_dims(self._element_shape)), self.dtype)
        static = _static(self._size)
        if static is not None and static == self._buffer.shape[0]:
            return self._buffer
        return self._buffer[:self._size]

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked."""
        return _ops().gather(self.stack(), indices)

    def concat(self, name=None):
        """The elements joined along their first dimension."""
        stacked = self.stack()
        rest = list(stacked.shape.dims[2:])
        return _ops().reshape(stacked, [-1] + [d if d is not None else -1 for d in rest])

    def unstack(self, value, name=None) -> "TensorArray":
        """The array holding the rows of `value` as its elements."""
        value = convert_to_tensor(value, dtype=self.dtype)
        out = self._with_element(value.shape[1:])
        return out.__ember_rebuild__([value, value.shape[0] if value.shape[0] is not None
                                      else _ops().shape(value)[0]])

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

    def _with_element(self, shape) -> "TensorArray":
        shape = TensorShape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"em.TensorArray: elements of shape {shape} (not fully known); "
                             f"give element_shape=")
        out = self.__ember_rebuild__([None, self._size])
        out._element_shape = shape
        capacity = _static(self._size)
        if capacity is None:  # a size known when the code runs
            capacity = 1 if self.dynamic_size else self._size
        out._buffer = out._zeros(max(capacity, 1) if self.dynamic_size and
                                 isinstance(capacity, int) else capacity)
        return out

    def allocated_for(self, value) -> "TensorArray":
        """The (empty) array with room for elements of `value`'s run-time shape, which may
        have `?` dims: what a loop that writes such elements carries from its start."""
        value = convert_to_tensor(value, dtype=self.dtype)
        ops = _ops()
        out = self.__ember_rebuild__([None, self._size])
        out._element_shape = value.shape
        capacity = _static(self._size)
        capacity = (max(capacity, 1) if self.dynamic_size else capacity) \
            if capacity is not None else self._size
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


def _grown(buffer, index):
    """`buffer` with its capacity doubled (or raised to index + 1) while index is past it."""
    ops = _ops()
    from ember.frontend.control_flow import cond
    capacity = ops.shape(buffer)[0]

    def grow():
        new = ops.maximum(capacity * 2, index + 1)
        pad = ops.zeros(ops.concat([ops.reshape(new - capacity, [1]),
                                    ops.shape(buffer)[1:]], 0), buffer.dtype)
        return ops.concat([buffer, pad], 0)
    return cond(index >= capacity, grow, lambda: buffer)  # eagerly a Python `if`


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
