"""em.pad with paddings given as a tensor (tf.pad's `paddings` may be computed in the
function): CONSTANT concatenates fills before and after each dim, REFLECT and SYMMETRIC
gather each dim's rows at their mirrored positions, so the sizes may be known only when the
code runs. The checks `ember.pad` makes of its paddings are asserts here: a bad tensor of
paddings raises the same AssertionFailedError eagerly and compiled.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember.base import OpError
from ember.dialects.ember.types import TensorType
from ember.frontend.tensor import Tensor, convert_to_tensor

def static_paddings_ok(x: Tensor, known: np.ndarray, mode: str) -> bool:
    """Whether ember.pad takes the paddings `known` (a tensor's value, known while tracing)
    for `x`, by the op's own checks (then it pads with them, as with a Python list)."""
    from ember.dialects.ember.indexing import PadOp
    rank = x.shape.rank
    if rank is None or known.shape != (rank, 2):
        return False
    try:
        PadOp.infer(TensorType(x.dtype, tuple(x.shape.as_list())), TensorType(x.dtype, ()),
                    paddings=[int(p) for p in known.reshape(-1)], mode=mode)
    except OpError:
        return False
    return True


def pad(x: Tensor, paddings: Tensor, mode: str, value: Tensor) -> Tensor:
    """`x` padded by the [rank, 2] integer tensor `paddings` (before, after per dim)."""
    from ember.frontend import ops
    from ember.frontend.array_composites import _int32  # (it imports the ops)
    from ember.frontend.effects import assert_true  # (effects imports the ops)
    rank = x.shape.rank
    if rank is None:
        raise ValueError("em.pad: paddings given as a tensor need an input of known rank")
    if not paddings.dtype.is_integer or paddings.shape.rank not in (None, 2) or \
            paddings.shape.rank == 2 and paddings.shape[1] not in (None, 2) or \
            paddings.shape.rank == 2 and paddings.shape[0] not in (None, rank):
        raise ValueError(f"em.pad: paddings must be an integer tensor of shape [{rank}, 2] "
                         f"(before, after per dim), got {paddings.dtype.name} "
                         f"{paddings.shape}")
    if paddings.shape.rank is None or None in paddings.shape.as_list():
        assert_true(ops.reduce_all(ops.equal(ops.shape(paddings), [rank, 2])),
                    f"em.pad: paddings must have shape [{rank}, 2] (before, after per dim)")
    paddings = _int32(paddings, "pad: paddings")  # (int64 checked to fit)
    assert_true(ops.reduce_all(paddings >= 0), "em.pad: paddings must be >= 0")
    for axis in range(rank):
        before, after = paddings[axis, 0], paddings[axis, 1]
        sizes = ops.shape(x)
        n = sizes[axis]
        if mode == "CONSTANT":
            def fill(count):
                return ops.fill(ops.concat([sizes[:axis], ops.reshape(count, [1]),
                                            sizes[axis + 1:]], 0), value)
            x = ops.concat([fill(before), x, fill(after)], axis)
            continue
        limit = n - 1 if mode == "REFLECT" else n
        assert_true(ops.maximum(before, after) <= limit,
                    f"em.pad: {mode} padding of dim {axis} exceeds its size"
                    + (" - 1" if mode == "REFLECT" else ""))
        j = ops.range(before + n + after) - before
        if mode == "REFLECT":  # ... 2 1 [0 1 2 ... n-1] n-2 n-3 ...
            j = (n - 1) - ops.abs((n - 1) - ops.abs(j))
        else:  # SYMMETRIC: ... 1 0 [0 1 ... n-1] n-1 n-2 ...
            j = ops.where(j < 0, -1 - j, j)
            j = ops.where(j >= n, 2 * n - 1 - j, j)
        x = ops.gather(x, j, axis=axis)
    return x


def from_tensor(x: Tensor, paddings, mode: str, value: Tensor):
    """em.pad by this module where `paddings` is a tensor, or lists holding tensors, whose
    value is unknown while tracing or fails the op's checks (so that the error is the
    asserts', as where it is unknown); None where the op pads (Python values, or good ones
    known now)."""
    from ember.frontend.shape_args import trace_time_value
    leaves = _tensors_in(paddings)
    if not leaves or mode not in ("CONSTANT", "REFLECT", "SYMMETRIC") or \
            value.ndim != 0 or value.dtype != x.dtype:
        return None
    paddings = _packed(paddings, leaves[0].dtype)
    known = trace_time_value(paddings)
    if known is not None and static_paddings_ok(x, known, mode):
        return None
    return pad(x, paddings, mode, value)


def _tensors_in(value) -> list:
    """The tensors in `value` (a tensor, or lists and tuples holding some)."""
    from ember.frontend.indexing import is_tensor
    if is_tensor(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors_in(v)]
    return []


def _packed(value, dtype) -> Tensor:
    """`value` as one tensor: nested lists of tensors and ints stacked (as tf.pad's
    paddings are), the ints as `dtype`, the first tensor's."""
    from ember.frontend import ops
    if isinstance(value, (list, tuple)) and value:
        return ops.stack([_packed(v, dtype) for v in value])
    return convert_to_tensor(value, dtype=None if _tensors_in(value) else dtype)
