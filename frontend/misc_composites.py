"""Functions TensorFlow users reach for that are compositions of other ops, as in
TensorFlow's Python layer: `add_n`, `clip_by_global_norm`, `unique_with_counts`,
`sequence_mask`, `linalg.matrix_transpose` / `linalg.adjoint` and
`math.cumulative_logsumexp`."""

from __future__ import annotations

import collections
import functools
import numbers

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.effects import assert_same_shape
from ember.frontend.segment_ops import unsorted_segment_sum
from ember.frontend.slicing import slice as slice_op
from ember.frontend.sort_ops import unique
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.while_loop import while_loop


def add_n(inputs, name=None):
    """The elementwise sum of the tensors in `inputs`, all of one shape and dtype (tf.add_n:
    no broadcasting).

    Example:
      >>> import ember as em
      >>> em.add_n([em.constant([1, 2]), em.constant([10, 20]), em.constant([100, 200])])
      <ember.Tensor: shape=(2,), dtype=int32, numpy=array([111, 222], dtype=int32)>
    """
    del name
    if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError(f"em.add_n: inputs must be a non-empty list of tensors of one shape "
                         f"and dtype, got {inputs!r}")
    tensors = [convert_to_tensor(t) for t in inputs]
    first = tensors[0]
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not first.dtype:
            raise TypeError(f"em.add_n: inputs[{i}] has dtype {t.dtype.name}, inputs[0] "
                            f"{first.dtype.name}; all inputs must have one dtype")
        if not first.shape.is_compatible_with(t.shape):
            raise ValueError(f"em.add_n: inputs[{i}] has shape {t.shape}, inputs[0] "
                             f"{first.shape}; all inputs must have one shape (add_n does "
                             f"not broadcast)")
        assert_same_shape(t, first, f"em.add_n: inputs[{i}] and inputs[0] differ in shape; "
                                    f"all inputs must have one shape (add_n does not "
                                    f"broadcast)")
    return functools.reduce(ops.add, tensors)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scales the tensors of `t_list` by clip_norm / max(global_norm, clip_norm), where
    global_norm = sqrt(sum of every tensor's squared L2 norm) (tf.clip_by_global_norm).

    Returns `(list_clipped, global_norm)`; `use_norm` replaces the computed global norm.
    `None` entries stay None. As TensorFlow, an infinite global norm makes every clipped
    entry NaN. The norm has the dtype of the first tensor.

    Example:
      >>> import ember as em
      >>> clipped, norm = em.clip_by_global_norm([em.constant([3.0]), em.constant([4.0])], 1.0)
      >>> [c.numpy().tolist() for c in clipped], float(norm)
      ([[0.6000000238418579], [0.800000011920929]], 5.0)
    """
    del name
    tensors, present = _float_list(t_list, "em.clip_by_global_norm", use_norm is None)
    dtype = present[0].dtype if present else convert_to_tensor(use_norm).dtype
    if use_norm is None:
        use_norm = _global_norm(present, dtype)
    else:
        use_norm = ops.cast(convert_to_tensor(use_norm), dtype)
    clip_norm = ops.cast(convert_to_tensor(clip_norm), dtype)
    one = ops.ones_like(clip_norm)
    scale = clip_norm * ops.minimum(one / use_norm, one / clip_norm)
    scale = scale + (use_norm - use_norm)  # NaN when the global norm is infinite
    clipped = [None if t is None else t * ops.cast(scale, t.dtype) for t in tensors]
    return clipped, use_norm


def global_norm(t_list, name=None):
    """sqrt(sum of every tensor's squared L2 norm) over the tensors of `t_list`, `None`
    entries ignored (tf.linalg.global_norm): a scalar of the first tensor's dtype.

    Example:
      >>> import ember as em
      >>> float(em.linalg.global_norm([em.constant([3.0]), None, em.constant([[4.0]])]))
      5.0
    """
    del name
    _, present = _float_list(t_list, "em.linalg.global_norm", True)
    return _global_norm(present, present[0].dtype)


def _float_list(t_list, where: str, needs_one: bool):
    """`t_list` as tensors (None kept) and those that are not None, or the error naming
    `where` for a t_list that is not a list or tuple of floating-point tensors."""
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError(f"{where}: t_list must be a list or tuple of tensors, "
                        f"got {type(t_list).__name__}")
    tensors = [None if t is None else convert_to_tensor(t) for t in t_list]
    present = [t for t in tensors if t is not None]
    if not present and needs_one:
        raise ValueError(f"{where}: t_list has no tensors (only None)")
    for t in present:
        if not t.dtype.is_floating:
            raise TypeError(f"{where}: t_list holds a {t.dtype.name} tensor; "
                            f"the norm needs floating-point tensors")
    return tensors, present


def _global_norm(tensors: list, dtype):
    squares = [ops.cast(ops.reduce_sum(ops.square(t)), dtype) for t in tensors]
    return ops.sqrt(functools.reduce(ops.add, squares))


UniqueWithCountsOutput = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
UniqueWithCountsOutput.__doc__ = ("What em.unique_with_counts returns (tf.unique_with_counts's "
                                  "namedtuple): y, idx, count.")


def unique_with_counts(x, out_idx=dtypes.int32, name=None):
    """em.unique's `(y, idx)` and `count`, how often each value of `y` occurs in the 1-D
    `x` (tf.unique_with_counts; `idx` and `count` have dtype `out_idx`). Order and NaN
    handling as em.unique (TensorFlow's: order of first occurrence, each NaN its own value).

    Example:
      >>> import ember as em
      >>> y, idx, count = em.unique_with_counts(em.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))
      >>> y.numpy().tolist(), idx.numpy().tolist(), count.numpy().tolist()
      ([1, 2, 4, 7, 8], [0, 0, 1, 2, 2, 2, 3, 4, 4], [2, 1, 3, 1, 2])
    """
    del name
    y, idx = unique(x, out_idx=out_idx)
    count = unsorted_segment_sum(ops.ones_like(idx), idx, ops.size(y, out_type=idx.dtype))
    return UniqueWithCountsOutput(y, idx, count)


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool_, name=None):
    """The mask of the first `lengths[i]` places of each row (tf.sequence_mask): shape
    `lengths.shape + [maxlen]`, `mask[i, ..., j] = j < lengths[i, ...]`, of `dtype`.

    `maxlen` (a Python int or a scalar tensor) defaults to the largest length, 0 when there
    are none; the last dim is then `?` in a traced function. Built as TensorFlow builds it:
    `em.range(maxlen)` compared with the lengths cast to maxlen's dtype, then cast.

    Example:
      >>> import ember as em
      >>> em.sequence_mask([1, 3, 2], 5).numpy().astype(int)
      array([[1, 0, 0, 0, 0],
             [1, 1, 1, 0, 0],
             [1, 1, 0, 0, 0]])
    """
    del name
    lengths = convert_to_tensor(lengths)
    if not (lengths.dtype.is_integer or lengths.dtype.is_floating):
        raise TypeError(f"em.sequence_mask: lengths must be integers, got dtype "
                        f"{lengths.dtype.name}")
    if maxlen is None:
        maxlen = ops.maximum(ops.reduce_max(lengths), convert_to_tensor(0, lengths.dtype))
    maxlen = convert_to_tensor(maxlen)
    if maxlen.shape.rank not in (0, None):
        raise ValueError(f"em.sequence_mask: maxlen must be a scalar, got shape "
                         f"{maxlen.shape}; pass the one length every row is padded to")
    places = ops.range(0, maxlen, 1, dtype=maxlen.dtype)
    mask = ops.less(places, ops.cast(ops.expand_dims(lengths, -1), maxlen.dtype))
    dtype = dtypes.bool_ if dtype is None else dtypes.as_dtype(dtype)
    return mask if dtype is dtypes.bool_ else ops.cast(mask, dtype)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """`a` with its last two dims swapped (tf.linalg.matrix_transpose); rank >= 2, known
    while tracing. `conjugate` also conjugates complex elements.

    Example:
      >>> import ember as em
      >>> em.linalg.matrix_transpose(em.ones([2, 3, 4])).shape
      TensorShape([2, 4, 3])
    """
    del name
    x = convert_to_tensor(a)
    rank = x.shape.rank
    if rank is None:
        raise ValueError(f"em.linalg.matrix_transpose needs a tensor of known rank, got {x!r}")
    if rank < 2:
        raise ValueError(f"em.linalg.matrix_transpose needs a tensor of rank >= 2 (matrices), "
                         f"got shape {x.shape}")
    return ops.transpose(x, list(range(rank - 2)) + [rank - 1, rank - 2], conjugate=conjugate)


def adjoint(matrix, name=None):
    """The conjugate transpose of the last two dims of `matrix` (tf.linalg.adjoint); the
    transpose, for real dtypes.

    Example:
      >>> import ember as em
      >>> em.linalg.adjoint(em.constant([[1, 2, 3], [4, 5, 6]])).numpy().tolist()
      [[1, 4], [2, 5], [3, 6]]
    """
    del name
    return matrix_transpose(matrix, conjugate=True)


def _log_add_exp(a, b):
    """log(exp(a) + exp(b)) without overflow: max + log1p(exp(min - max)); an infinite
    max is the result, a NaN operand gives NaN."""
    top, low = ops.maximum(a, b), ops.minimum(a, b)
    gap = ops.where(ops.equal(low, top), ops.zeros_like(top), low - top)
    out = top + ops.log1p(ops.exp(gap))
    return ops.where(ops.is_finite(top), out, ops.where(ops.is_nan(low), low, top))


def _minus_inf(dtype):
    return convert_to_tensor(float("-inf"), dtype=dtype)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along `axis` (tf.math.cumulative_logsumexp), `exclusive` and
    `reverse` as em.cumsum (an exclusive first entry is -inf). Needs the rank known.

    Stable as TensorFlow's log-add-exp scan (no overflow, no underflow of entries far below
    the maximum): a prefix scan by doubling, ceil(log2(n)) rounds of log-add-exp with the
    values shifted by 1, 2, 4, ... along `axis` (an `em.while_loop` compiled, so `?` dims
    work too). float16/bfloat16 are computed in float32.

    Example:
      >>> import ember as em
      >>> em.math.cumulative_logsumexp(em.constant([0.0, 0.0, 0.0, 0.0])).numpy()
      array([0.       , 0.6931472, 1.0986123, 1.3862944], dtype=float32)
    """
    del name
    t = convert_to_tensor(x)
    what = "em.math.cumulative_logsumexp"
    if not t.dtype.is_floating:
        raise TypeError(f"{what} needs a floating-point tensor, got {t.dtype.name}; cast it "
                        f"first (em.cast(x, em.float32))")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{what}: axis must be an int, got {axis!r}")
    rank = t.shape.rank
    if rank is None:
        raise ValueError(f"{what} needs a tensor of known rank, got {t!r}")
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"{what}: axis {axis} is out of range for rank {rank}")
    if rank == 0:
        return _minus_inf(t.dtype) if exclusive else t
    axis = int(axis) % rank
    perm = list(range(rank))
    perm[0], perm[axis] = axis, 0  # scan along dim 0, then put the dims back
    y = ops.transpose(t, perm)
    if t.dtype.np_dtype.itemsize < 4:
        y = ops.cast(y, dtypes.float32)
    if reverse:
        y = y[::-1]
    n = ops.shape(y)[0]

    size = [n if y.shape[0] is None else y.shape[0]] + [-1] * (rank - 1)

    def shifted(v, k):
        """v moved k places along dim 0, -inf in the k places left free (a slice of -inf
        rows then v: the loop variable keeps its static dims)."""
        full = ops.concat([ops.fill(ops.shape(v), _minus_inf(v.dtype)), v], 0)
        return slice_op(full, [ops.maximum(n - k, 0)] + [0] * (rank - 1), size)

    y = while_loop(lambda k, v: k < n, lambda k, v: (k * 2, _log_add_exp(v, shifted(v, k))),
                   (convert_to_tensor(1, dtype=n.dtype), y))[1]
    if exclusive:
        y = shifted(y, convert_to_tensor(1, dtype=n.dtype))
    if reverse:
        y = y[::-1]
    return ops.transpose(ops.cast(y, t.dtype), perm)
