"""tf.math's and tf's functions that are compositions of other ops: polyval, divide_no_nan,
reciprocal, xlog1py, invert_permutation, in_top_k, confusion_matrix, unravel_index and the
fixed-width histograms. As in TensorFlow, what they validate (a permutation, labels in
range, an index inside the array) is an `ember.assert` op: eagerly it raises at once,
compiled it raises the same InvalidArgumentError when the code runs.
"""

from __future__ import annotations

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.effects import assert_true
from ember.frontend.segment_ops import unsorted_segment_sum
from ember.frontend.sort_ops import argsort
from ember.frontend.tensor import convert_to_tensor


def polyval(coeffs, x, name=None):
    """coeffs[0] * x**(n-1) + ... + coeffs[n-1] (Horner's scheme); zeros if `coeffs` is
    empty.

    Example:
      >>> import ember as em
      >>> em.math.polyval([1.0, 0.0, -2.0], em.constant([3.0])).numpy().tolist()
      [7.0]
    """
    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"em.math.polyval: coeffs must be a list of tensors, got "
                         f"{type(coeffs).__name__}")
    x = convert_to_tensor(x)
    if not coeffs:
        return ops.zeros_like(x)
    p = convert_to_tensor(coeffs[0], dtype=x.dtype)
    for c in coeffs[1:]:
        p = convert_to_tensor(c, dtype=x.dtype) + p * x
    return p + ops.zeros_like(x)  # x's shape where every coefficient is a scalar


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0 (even where x is NaN or infinite), as tf.math's."""
    from ember.frontend.math_ops import group
    x, y = group(x, y)
    zero = ops.zeros_like(x * y)
    safe = ops.where(ops.equal(y, zero), ops.ones_like(y), y)
    return ops.where(ops.equal(y, zero), zero, ops.truediv(x, safe))


def reciprocal(x, name=None):
    """1 / x elementwise."""
    x = convert_to_tensor(x)
    return ops.truediv(ops.ones_like(x), x)


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x is 0 (whatever y)."""
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    zero = ops.zeros_like(x * y)
    return ops.where(ops.equal(x, zero), zero, x * ops.log1p(y))


def _vector_of_ints(x, what: str):
    x = convert_to_tensor(x)
    if not x.dtype.is_integer:
        raise TypeError(f"{what} takes integer tensors, got {x.dtype.name}")
    if x.shape.rank is not None and x.shape.rank != 1:
        raise ValueError(f"{what} takes a vector (rank 1), got shape {x.shape}")
    return x


def invert_permutation(x, name=None):
    """y with y[x[i]] = i, for a permutation `x` of 0..n-1 (InvalidArgumentError otherwise).

    Example:
      >>> import ember as em
      >>> em.math.invert_permutation(em.constant([3, 4, 0, 2, 1])).numpy().tolist()
      [2, 4, 3, 0, 1]
    """
    x = _vector_of_ints(x, "em.math.invert_permutation")
    y = ops.cast(argsort(x), x.dtype)
    n = ops.cast(ops.size(x), x.dtype)
    assert_true(ops.reduce_all(ops.equal(ops.gather(x, y), ops.range(n, dtype=x.dtype))),
                "em.math.invert_permutation: x is not a permutation of 0..n-1 (each value "
                "in [0, n) exactly once)")
    return y


def in_top_k(targets, predictions, k, name=None):
    """Whether predictions[i, targets[i]] is among the `k` largest of row i: fewer than `k`
    entries of the row are larger (ties at the boundary count as in). False where the
    target is out of range or the row holds a NaN or an infinity, as TensorFlow's.

    Example:
      >>> import ember as em
      >>> p = em.constant([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]])
      >>> em.math.in_top_k(em.constant([2, 0]), p, 1).numpy().tolist()
      [False, True]
    """
    predictions = convert_to_tensor(predictions)
    targets = _vector_of_ints(targets, "em.math.in_top_k")
    if predictions.shape.rank is not None and predictions.shape.rank != 2:
        raise ValueError(f"em.math.in_top_k: predictions must be a matrix (batch, classes), "
                         f"got shape {predictions.shape}")
    if not predictions.dtype.is_floating:
        raise TypeError(f"em.math.in_top_k: predictions must be floating-point, got "
                        f"{predictions.dtype.name}")
    classes = ops.shape(predictions, out_type=targets.dtype)[1]
    in_range = ops.logical_and(targets >= 0, targets < classes)
    hit = ops.equal(ops.range(classes, dtype=targets.dtype)[None, :], targets[:, None])
    zero = ops.zeros_like(predictions)
    target = ops.reduce_sum(ops.where(hit, predictions, zero), axis=1)
    larger = ops.reduce_sum(ops.cast(predictions > target[:, None], dtypes.int32), axis=1)
    finite = ops.reduce_all(ops.is_finite(predictions), axis=1)
    k = convert_to_tensor(k, dtype=dtypes.int32)
    return ops.logical_and(ops.logical_and(in_range, finite), larger < k)


def confusion_matrix(labels, predictions, num_classes=None, weights=None,
                     dtype=dtypes.int32, name=None):
    """The (num_classes, num_classes) matrix counting (or summing `weights` of) each pair
    (labels[i], predictions[i]); `num_classes` defaults to the largest value + 1.
    InvalidArgumentError for a negative value or one >= num_classes.

    Example:
      >>> import ember as em
      >>> em.math.confusion_matrix([1, 2, 4], [2, 2, 4]).numpy().tolist()
      [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]
    """
    labels = _vector_of_ints(labels, "em.math.confusion_matrix")
    predictions = ops.cast(_vector_of_ints(predictions, "em.math.confusion_matrix"),
                           labels.dtype)
    dtype = dtypes.as_dtype(dtype)
    for values, what in ((labels, "labels"), (predictions, "predictions")):
        assert_true(ops.reduce_all(values >= 0),
                    f"em.math.confusion_matrix: {what} holds a negative value")
    if num_classes is None:
        zero = ops.zeros([1], labels.dtype)
        num_classes = ops.reduce_max(ops.concat([labels, predictions, zero - 1], 0)) + 1
    else:
        num_classes = convert_to_tensor(num_classes, dtype=labels.dtype)
        for values, what in ((labels, "labels"), (predictions, "predictions")):
            assert_true(ops.reduce_all(values < num_classes),
                        f"em.math.confusion_matrix: {what} holds a value >= num_classes")
    counts = ops.ones_like(labels, dtype=dtype) if weights is None else \
        ops.cast(convert_to_tensor(weights), dtype) + ops.zeros_like(labels, dtype=dtype)
    flat = unsorted_segment_sum(counts, labels * num_classes + predictions,
                                num_classes * num_classes)
    return ops.reshape(flat, ops.stack([num_classes, num_classes]))


def unravel_index(indices, dims, name=None):
    """The coordinates, in an array of shape `dims` (row-major), of the flat `indices`: a
    vector of len(dims) for a scalar index, (len(dims), n) for n indices. An index outside
    [0, prod(dims)) is an InvalidArgumentError.

    Example:
      >>> import ember as em
      >>> em.unravel_index(em.constant([1, 5, 4]), em.constant([3, 3])).numpy().tolist()
      [[0, 1, 1], [1, 2, 1]]
    """
    indices = convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        raise TypeError(f"em.unravel_index takes integer indices, got {indices.dtype.name}")
    if indices.shape.rank is not None and indices.shape.rank > 1:
        raise ValueError(f"em.unravel_index: indices must be a scalar or a vector, got shape "
                         f"{indices.shape}")
    dims = ops.cast(_vector_of_ints(dims, "em.unravel_index"), indices.dtype)
    from ember.frontend.scan_ops import cumprod
    strides = cumprod(dims, exclusive=True, reverse=True)
    total = ops.reduce_prod(dims)
    assert_true(ops.reduce_all(ops.logical_and(indices >= 0, indices < total)),
                "em.unravel_index: an index is out of bounds for an array of shape dims "
                "(each must be in [0, prod(dims)))")
    if indices.shape.rank == 0:
        return ops.floormod(ops.floordiv(indices, strides), dims)
    return ops.floormod(ops.floordiv(indices[None, :], strides[:, None]), dims[:, None])


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32,
                               name=None):
    """The bin of each of `values` among `nbins` equal bins over value_range = [lo, hi]:
    values below lo go to bin 0, values at or above hi to bin nbins - 1."""
    values = convert_to_tensor(values)
    if not values.dtype.is_floating and not values.dtype.is_integer:
        raise TypeError(f"em.histogram_fixed_width: values must be numbers, got "
                        f"{values.dtype.name}")
    value_range = convert_to_tensor(value_range, dtype=values.dtype)
    if value_range.shape.rank is not None and value_range.shape != (2,):
        raise ValueError(f"em.histogram_fixed_width: value_range must be [lo, hi] (shape "
                         f"(2,)), got shape {value_range.shape}")
    nbins = convert_to_tensor(nbins, dtype=dtypes.int32)
    assert_true(nbins > 0, "em.histogram_fixed_width: nbins must be > 0")
    ftype = values.dtype if values.dtype.is_floating else dtypes.float64
    lo, hi = ops.cast(value_range[0], ftype), ops.cast(value_range[1], ftype)
    scaled = (ops.cast(values, ftype) - lo) / (hi - lo)
    bins = ops.floor(scaled * ops.cast(nbins, ftype))
    bins = ops.minimum(ops.maximum(bins, ops.zeros_like(bins)),
                       ops.cast(nbins - 1, ftype))
    return ops.cast(bins, dtypes.as_dtype(dtype))


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """How many of `values` fall in each of `nbins` equal bins over value_range = [lo, hi]
    (values outside go to the first or last bin), as tf.histogram_fixed_width.

    Example:
      >>> import ember as em
      >>> v = em.constant([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0])
      >>> em.histogram_fixed_width(v, [0.0, 5.0], nbins=5).numpy().tolist()
      [2, 1, 1, 0, 2]
    """
    bins = histogram_fixed_width_bins(values, value_range, nbins, dtypes.int32)
    nbins = convert_to_tensor(nbins, dtype=dtypes.int32)
    ones = ops.ones_like(bins, dtype=dtypes.as_dtype(dtype))
    return unsorted_segment_sum(ops.reshape(ones, [-1]), ops.reshape(bins, [-1]), nbins)
