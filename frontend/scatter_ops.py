"""Scatter and gather by index tuples, and data-dependent selection: tf.tensor_scatter_nd_*,
tf.scatter_nd, tf.gather_nd, tf.where with one argument and tf.boolean_mask.

The scatters run `ember.tensor_scatter`; `where(condition)` runs `ember.where_indices`.
gather_nd and boolean_mask are compositions, as in TensorFlow's Python layer: gather_nd
flattens each index tuple to a linear index into params reshaped to one gathered dim (each
component is checked against its dim first, eagerly and compiled: an out-of-range one is
an InvalidArgumentError, as on TensorFlow's CPU), then runs `ember.gather`; boolean_mask
gathers at the positions where_indices finds in the flattened mask.
"""

from __future__ import annotations

import builtins

from ember.dialects.ember import dtypes
from ember.dialects.ember import scatter as S
from ember.frontend import ops
from ember.frontend.dispatch import execute
from ember.frontend.effects import assert_true
from ember.frontend.tensor import convert_to_tensor

GATHER_ND_RANGE = ("em.gather_nd: an index is out of range: each indices[..., j] must lie in "
                   "[0, params.shape[batch_dims + j])")
_INDEX_DTYPES = (dtypes.int32, dtypes.int64)


def _indices(indices, what: str):
    idx = convert_to_tensor(indices, dtype_hint=dtypes.int32)
    if idx.dtype not in _INDEX_DTYPES:
        raise TypeError(f"em.{what}: indices must be int32 or int64, got {idx.dtype.name}")
    return idx


def _scatter(mode: str, name: str):
    def fn(tensor, indices, updates, name=None):
        del name
        t = convert_to_tensor(tensor)
        u = convert_to_tensor(updates, dtype_hint=t.dtype)
        return execute(S.TensorScatterOp, [t, _indices(indices, fn.__name__), u],
                       {"mode": mode})
    fn.__name__ = fn.__qualname__ = name
    verb = {"update": "replaced by", "add": "plus", "sub": "minus", "max": "the maximum with",
            "min": "the minimum with"}[mode]
    fn.__doc__ = (f"A copy of `tensor` whose slices at `indices` are {verb} `updates` (tf."
                  f"{name}).\n\n`indices` has shape [..., k]; `updates` has shape "
                  "indices.shape[:-1] + tensor.shape[k:]. Duplicate indices "
                  + ("apply in order: the last one wins (TensorFlow leaves the order "
                     "unspecified)." if mode == "update" else "accumulate.")
                  + " An index out of range is an InvalidArgumentError. Runs "
                  f"`ember.tensor_scatter` with mode {mode!r}.")
    return fn


tensor_scatter_nd_update = _scatter("update", "tensor_scatter_nd_update")
tensor_scatter_nd_add = _scatter("add", "tensor_scatter_nd_add")
tensor_scatter_nd_sub = _scatter("sub", "tensor_scatter_nd_sub")
tensor_scatter_nd_max = _scatter("max", "tensor_scatter_nd_max")
tensor_scatter_nd_min = _scatter("min", "tensor_scatter_nd_min")


def scatter_nd(indices, updates, shape, name=None):
    """`updates` added into zeros of `shape` at `indices` (tf.scatter_nd: duplicates add).

    Example:
      >>> import ember as em
      >>> em.scatter_nd([[1], [3], [1]], [1., 2., 3.], [5]).numpy()
      array([0., 4., 0., 2., 0.], dtype=float32)
    """
    del name
    u = convert_to_tensor(updates)
    return tensor_scatter_nd_add(ops.zeros(shape, u.dtype), indices, u)


def _known_rank(x, what: str) -> int:
    if x.ndim is None:
        raise ValueError(f"em.{what} needs a tensor of known rank, got {x!r}; give it a "
                         "shape in the input_signature")
    return x.ndim


def gather_nd(params, indices, batch_dims=0, name=None):
    """Slices of `params` at the index tuples in the last dim of `indices` (tf.gather_nd).

    `indices` has shape [B..., N..., k] with the `batch_dims` leading dims B equal to those
    of params; the result has shape indices.shape[:-1] + params.shape[batch_dims + k:].
    An index out of range is an InvalidArgumentError, as on TensorFlow's CPU (its GPU
    kernel returns zeros instead).

    Example:
      >>> import ember as em
      >>> em.gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]]).numpy()
      array([3, 2], dtype=int32)
    """
    del name
    p, idx = convert_to_tensor(params), _indices(indices, "gather_nd")
    prank, irank = _known_rank(p, "gather_nd"), _known_rank(idx, "gather_nd")
    b = int(batch_dims)
    k = idx.shape[-1] if irank else None
    if k is None:
        raise ValueError(f"em.gather_nd: the last dim of indices {idx!r} (the index depth) "
                         "must be known while tracing")
    if not 0 <= b < irank or b + k > prank:
        raise ValueError(f"em.gather_nd: batch_dims={b} and index depth {k} do not fit "
                         f"params of rank {prank} and indices of rank {irank} (need "
                         "0 <= batch_dims < rank(indices) and batch_dims + depth <= "
                         "rank(params))")
    for j in builtins.range(b):
        if None not in (p.shape[j], idx.shape[j]) and p.shape[j] != idx.shape[j]:
            raise ValueError(f"em.gather_nd: batch dim {j} of params {p!r} and indices "
                             f"{idx!r} differ")
    pshape, ishape = ops.shape(p, dtypes.int64), ops.shape(idx, dtypes.int64)
    if b and (None in p.shape[:b] or None in idx.shape[:b]):
        assert_true(ops.reduce_all(ops.equal(pshape[:b], ishape[:b])),
                    "em.gather_nd: the batch dims of params and indices differ")
    dims = pshape[b:b + k]
    index = ops.cast(idx, dtypes.int64)
    assert_true(ops.reduce_all(ops.logical_and(index >= 0, index < dims)), GATHER_ND_RANGE)
    strides = ops.stack([ops.reduce_prod(dims[j + 1:]) for j in builtins.range(k)]) if k \
        else ops.zeros([0], dtypes.int64)
    linear = ops.reduce_sum(index * strides, axis=-1)
    span = ops.reduce_prod(dims)
    if b:
        batch = ops.reduce_prod(pshape[:b])
        offsets = ops.reshape(ops.range(batch, dtype=dtypes.int64) * span,
                              ops.concat([ishape[:b], ops.ones([irank - 1 - b],
                                                               dtypes.int64)], 0))
        linear = linear + offsets
        span = span * batch
    flat = ops.reshape(p, ops.concat([ops.reshape(span, [1]), pshape[b + k:]], 0))
    return ops.gather(flat, linear, axis=0)


def where(condition, x=None, y=None, name=None):
    """tf.where: with x and y, `condition ? x : y` elementwise (broadcasting); with neither,
    the int64 coordinates [num_true, rank] of the true (non-zero) elements of `condition` in
    row-major order, whose first dim is known only when it runs (`?` while tracing).

    Example:
      >>> import ember as em
      >>> em.where([[True, False], [False, True]]).numpy().tolist()
      [[0, 0], [1, 1]]
    """
    if x is None and y is None:
        del name
        return execute(S.WhereIndicesOp, [convert_to_tensor(condition,
                                                            dtype_hint=dtypes.bool_)])
    if x is None or y is None:
        raise ValueError("em.where: x and y must both be given or both be None")
    return ops.where(condition, x, y, name)


def boolean_mask(tensor, mask, axis=None, name=None):
    """The slices of `tensor` where the bool `mask` is true (tf.boolean_mask).

    `mask` of rank m matches dims axis..axis+m-1 of `tensor` (axis 0 by default); those
    dims become one, of the number of trues (`?` while tracing).

    Example:
      >>> import ember as em
      >>> em.boolean_mask([1, 2, 3], [True, False, True]).numpy()
      array([1, 3], dtype=int32)
    """
    del name
    t, m = convert_to_tensor(tensor), convert_to_tensor(mask, dtype_hint=dtypes.bool_)
    if not m.dtype.is_bool:
        raise TypeError(f"em.boolean_mask: mask must be bool, got {m.dtype.name}")
    rank, mrank = _known_rank(t, "boolean_mask"), _known_rank(m, "boolean_mask")
    axis = 0 if axis is None else int(axis)
    if axis < 0:
        axis += rank
    if mrank == 0 or not 0 <= axis or axis + mrank > rank:
        raise ValueError(f"em.boolean_mask: mask of rank {mrank} does not fit dims {axis}.."
                         f"{axis + mrank - 1} of {t!r} (the mask needs rank >= 1)")
    for j, d in enumerate(m.shape):
        if None not in (d, t.shape[axis + j]) and d != t.shape[axis + j]:
            raise ValueError(f"em.boolean_mask: mask shape {m.shape} does not match dims "
                             f"{axis}..{axis + mrank - 1} of {t!r}")
    tshape = ops.shape(t, dtypes.int64)
    if None in m.shape or None in t.shape[axis:axis + mrank]:
        assert_true(ops.reduce_all(ops.equal(ops.shape(m, dtypes.int64),
                                             tshape[axis:axis + mrank])),
                    "em.boolean_mask: the mask's shape differs from the dims it masks")
    rest = convert_to_tensor([-1], dtype=dtypes.int64)
    flat = ops.reshape(t, ops.concat([tshape[:axis], rest, tshape[axis + mrank:]], 0))
    positions = ops.reshape(where(ops.reshape(m, [-1])), [-1])
    return ops.gather(flat, positions, axis=axis)
