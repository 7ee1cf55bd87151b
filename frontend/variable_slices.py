"""Sliced assignment of em.Variables (tf.Variable's `v[1:3].assign(x)`): what
`Variable.__getitem__` returns is its read's tensor with one more method, `assign`, which
writes the slice back into the variable."""

from __future__ import annotations

import weakref

from ember.dialects.ember import dtypes, state
from ember.frontend import tracing
from ember.frontend.tensor import Tensor, convert_to_tensor

_SLICES: dict[int, tuple] = {}  # id of a `v[key]` read -> (v, key), while the read lives


class _Slice:
    """What `Variable.__getitem__`'s result adds to its tensor class: `assign`."""

    __slots__ = ()

    def assign(self, value, read_value: bool = True):
        """Writes `value` (broadcast to this slice's shape) into the slice of the variable
        this tensor was read from; returns the variable. The element positions come from
        indexing `range(size)` reshaped as the variable with the same key, so every key
        `v[key]` reads (ints, slices with any step, `...`, new axes) writes alike."""
        variable, key = _SLICES[id(self)]
        from ember.frontend import creation_ops, ops, scatter_ops
        shape = creation_ops.shape(variable, out_type=dtypes.int64)
        positions = ops.reshape(creation_ops.range(ops.reduce_prod(shape), dtype=dtypes.int64),
                                shape)[key]
        value = convert_to_tensor(value, dtype_hint=variable.dtype)
        if value.dtype != variable.dtype:
            raise state.OpTypeError(state.AssignVariableOp.name, (
                f"value of dtype {value.dtype.name} assigned to a slice of variable "
                f"'{variable.name}' of dtype {variable.dtype.name}: cast it (em.cast)"))
        value = ops.broadcast_to(value, creation_ops.shape(positions))
        flat = scatter_ops.tensor_scatter_nd_update(
            ops.reshape(variable.read_value(), [-1]), ops.reshape(positions, [-1, 1]),
            ops.reshape(value, [-1]))
        return variable.assign(ops.reshape(flat, shape), read_value)


def _slice_class(cls: type) -> type:
    sliced = type(cls.__name__, (_Slice, cls), {"__slots__": ()})
    sliced.__qualname__, sliced.__module__ = cls.__qualname__, cls.__module__
    return sliced


_SLICE_CLASSES = {cls: _slice_class(cls) for cls in (Tensor, tracing.SymbolicTensor)}


def sliced(variable, key, out):
    """`out` (the read `variable[key]`) as a tensor whose `assign` writes that slice."""
    out.__class__ = _SLICE_CLASSES[type(out)]  # same layout: one more method
    _SLICES[id(out)] = (variable, key)
    weakref.finalize(out, _SLICES.pop, id(out), None)
    return out
