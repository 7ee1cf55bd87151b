"""The stacks a loop traced for its gradient keeps: per iteration, one value (a loop
variable at the start of the iteration, or a Variable the body reads and writes) that the
reverse loop pops (loops.py); TensorFlow keeps them in TensorLists."""

from __future__ import annotations

from ember.frontend.tensor import Tensor


def new_stack(ttype, what: str):
    """An empty stack for the values of `what` (of TensorType `ttype`), with room for one
    element to begin with: a tensor of rows for a value of static shape; for one with `?`
    dims, which may change from one iteration to the next (a shape invariant, a growing
    TensorArray), the elements flattened one after another, with each one's offset and
    shape."""
    from ember.dialects.ember import dtypes
    from ember.frontend import ops
    if ttype.shape is None:
        raise ValueError(f"the gradient of a while loop needs the rank of {what}; give it a "
                         f"known rank")
    if None not in ttype.shape:
        return ops.zeros([1] + list(ttype.shape), ttype.dtype)
    return (ops.zeros([1], ttype.dtype), ops.zeros([2], dtypes.int64),
            ops.zeros([1, len(ttype.shape)], dtypes.int64))


def stack_types(ttype) -> list:
    """The types of the tensors of a stack (`new_stack`) for values of `ttype`."""
    from ember.dialects.ember import dtypes
    from ember.dialects.ember.types import TensorType
    if ttype.shape is not None and None not in ttype.shape:
        return [TensorType(ttype.dtype, (None,) + tuple(ttype.shape))]
    return [TensorType(ttype.dtype, (None,)), TensorType(dtypes.int64, (None,)),
            TensorType(dtypes.int64, (None, len(ttype.shape)))]


def stack_labels(ttype, what: str) -> list[str]:
    """What to call each tensor of a stack for `what` in errors."""
    if ttype.shape is not None and None not in ttype.shape:
        return [f"the stack of {what} kept for the gradient"]
    return [f"the {part} of {what} kept for the gradient"
            for part in ("elements", "offsets", "shapes")]


def packed(stack_like, flat: list, start: int = 0):
    """The stack laid out as `stack_like` from the tensors `flat[start:]`."""
    if isinstance(stack_like, tuple):
        return tuple(flat[start:start + 3])
    return flat[start]


def cotangent(stack, ct):
    """The cotangent of `stack` laid out as the stack, from that of its first tensor (the
    values; a ragged stack's offsets and shapes have none), or None."""
    if ct is None:
        return None
    return (ct, stack[1], stack[2]) if isinstance(stack, tuple) else ct


def push(stack, n: Tensor, value: Tensor):
    """`stack` with `value` at row n, its capacity doubled first when it is full."""
    from ember.dialects.ember import dtypes
    from ember.frontend import ops
    from ember.frontend.scatter_ops import tensor_scatter_nd_update
    if not isinstance(stack, tuple):
        return tensor_scatter_nd_update(_room(stack, n + 1), ops.reshape(n, [1, 1]),
                                        ops.expand_dims(value, 0))
    elements, offsets, shapes = stack
    flat = ops.reshape(value, [-1])
    start = offsets[n]
    end = start + ops.size(flat, out_type=dtypes.int64)
    elements = tensor_scatter_nd_update(
        _room(elements, end), ops.reshape(ops.range(start, end), [-1, 1]), flat)
    offsets = tensor_scatter_nd_update(_room(offsets, n + 2), ops.reshape(n + 1, [1, 1]),
                                       ops.reshape(end, [1]))
    shapes = tensor_scatter_nd_update(_room(shapes, n + 1), ops.reshape(n, [1, 1]),
                                      ops.expand_dims(ops.shape(value, dtypes.int64), 0))
    return elements, offsets, shapes


def _room(buffer: Tensor, rows) -> Tensor:
    """`buffer` with at least `rows` rows: its capacity doubled (or raised to `rows`)."""
    from ember.dialects.ember import dtypes
    from ember.frontend import ops
    from ember.frontend.control_flow import smart_cond
    have = ops.cast(ops.shape(buffer)[0], rows.dtype)

    def grow():
        extra = ops.maximum(have, rows - have)
        pad = ops.zeros(ops.concat([ops.reshape(ops.cast(extra, dtypes.int32), [1]),
                                    ops.shape(buffer)[1:]], 0), buffer.dtype)
        return ops.concat([buffer, pad], 0)
    return smart_cond(rows > have, grow, lambda: buffer)


def popped(stack, i: Tensor, ttype) -> Tensor:
    """Element i of a stack (`new_stack`) for values of type `ttype`. An element of a
    ragged stack gets the dims `ttype` fixes back (its stored shape is a tensor, which
    would leave every dim `?`), so the body is traced again on the type it was traced on
    and the reverse loop's cotangents keep the loop variable's shape."""
    from ember.frontend import ops
    if not isinstance(stack, tuple):
        return ops.gather(stack, i)
    elements, offsets, shapes = stack
    dims = [shapes[i][k] if d is None else d for k, d in enumerate(ttype.shape)]
    return ops.reshape(elements[offsets[i]:offsets[i + 1]], dims)
