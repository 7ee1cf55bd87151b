"""`em.losses`: Keras's losses as functions (one value per example) and as classes (called
as `loss(y_true, y_pred, sample_weight=None)`, returning the mean over the batch, Keras's
"sum_over_batch_size" reduction), on the em.nn cross-entropies.

Probabilities (`from_logits=False`) are clipped to [1e-7, 1 - 1e-7] before the log, as
Keras's backend epsilon does, so a confident wrong prediction costs ~16, not infinity.
"""

from __future__ import annotations

from ember.frontend import nn_composites as nn
from ember.frontend import ops
from ember.frontend.math_composites import clip_by_value
from ember.frontend.math_ops import cast
from ember.frontend.tensor import convert_to_tensor

EPSILON = 1e-7  # Keras's backend.epsilon()


def _prediction(y_pred, where: str):
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        raise TypeError(f"{where}: y_pred must be floating-point, got dtype "
                        f"{y_pred.dtype.name}")
    return y_pred


def _log_probabilities(y_pred, axis: int):
    """log(clip(p / sum(p))) of predicted probabilities, as Keras's backend."""
    p = ops.divide(y_pred, ops.reduce_sum(y_pred, axis=axis, keepdims=True))
    return ops.log(clip_by_value(p, EPSILON, 1.0 - EPSILON))


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    """The cross-entropy of integer class ids `y_true` ([batch] or [batch, 1]) and
    predictions `y_pred` ([batch, classes], probabilities or logits), one value per example
    (keras.losses.sparse_categorical_crossentropy).

    Example:
      >>> em.losses.sparse_categorical_crossentropy(
      ...     [1, 0], [[0.1, 0.9], [0.5, 0.5]]).numpy().round(4)
      array([0.1054, 0.6931], dtype=float32)
    """
    where = "em.losses.sparse_categorical_crossentropy"
    y_pred = _prediction(y_pred, where)
    y_true = convert_to_tensor(y_true)
    if not y_true.dtype.is_integer:
        y_true = cast(y_true, "int64")
    if y_true.shape.rank is not None and y_true.shape.rank == y_pred.shape.rank and \
            y_true.shape.as_list()[-1] == 1:
        y_true = ops.squeeze(y_true, [-1])
    if axis not in (-1, (y_pred.shape.rank or 0) - 1):
        raise ValueError(f"{where}: only the last axis holds the classes (axis=-1), got "
                         f"axis={axis}")
    if from_logits:
        return nn.sparse_softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    depth = cast(ops.shape(y_pred)[-1], y_true.dtype)
    hot = cast(ops.equal(ops.expand_dims(y_true, -1), ops.range(depth)), y_pred.dtype)
    return ops.negative(ops.reduce_sum(ops.multiply(hot, _log_probabilities(y_pred, -1)),
                                       axis=-1))


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0,
                             axis=-1):
    """The cross-entropy of one-hot (or soft) labels and predictions, one value per example
    (keras.losses.categorical_crossentropy); `label_smoothing` mixes the labels with the
    uniform distribution.

    Example:
      >>> em.losses.categorical_crossentropy(
      ...     [[0.0, 1.0]], [[0.1, 0.9]]).numpy().round(4)
      array([0.1054], dtype=float32)
    """
    where = "em.losses.categorical_crossentropy"
    y_pred = _prediction(y_pred, where)
    y_true = _labels(y_true, y_pred)
    if not y_true.shape.is_compatible_with(y_pred.shape):
        raise ValueError(f"{where}: y_true and y_pred must have the same shape, got "
                         f"{y_true.shape} and {y_pred.shape}")
    if label_smoothing:
        classes = cast(ops.shape(y_pred)[axis], y_pred.dtype)
        y_true = ops.add(ops.multiply(y_true, 1.0 - label_smoothing),
                         ops.divide(float(label_smoothing), classes))
    if from_logits:
        return nn.softmax_cross_entropy_with_logits(y_true, y_pred, axis=axis)
    return ops.negative(ops.reduce_sum(
        ops.multiply(y_true, _log_probabilities(y_pred, axis)), axis=axis))


def _labels(y_true, y_pred):
    """`y_true` as a tensor of `y_pred`'s dtype: integer and bool labels (and weights) are
    cast, as Keras casts them (a regression fit on integer targets)."""
    y_true = convert_to_tensor(y_true)
    return y_true if y_true.dtype is y_pred.dtype else cast(y_true, y_pred.dtype)


def same_rank(y_true, y_pred):
    """`(y_true, y_pred)` with a trailing dim of 1 added or dropped where their ranks differ by
    one (Keras's squeeze_or_expand_to_same_rank): labels [batch] and predictions [batch, 1]
    are compared example by example, not broadcast to [batch, batch]."""
    t, p = y_true.shape.rank, y_pred.shape.rank
    if t is None or p is None or abs(t - p) != 1:
        return y_true, y_pred
    longer, shorter = (y_pred, y_true) if p > t else (y_true, y_pred)
    if longer.shape.as_list()[-1] != 1:
        return y_true, y_pred
    if shorter.shape.rank == 1:
        shorter = ops.expand_dims(shorter, -1)
    else:
        longer = ops.squeeze(longer, [-1])
    return (shorter, longer) if p > t else (longer, shorter)


def _regression(y_true, y_pred, where: str):
    """y_true and y_pred of a loss comparing them elementwise: y_pred floating, y_true cast
    to its dtype, both of the same rank (`same_rank`)."""
    y_pred = _prediction(y_pred, where)
    return same_rank(_labels(y_true, y_pred), y_pred)


def mean_squared_error(y_true, y_pred):
    """mean((y_true - y_pred) ** 2) over the last axis (keras.losses.mean_squared_error).

    Example:
      >>> em.losses.mean_squared_error([[0.0, 1.0]], [[1.0, 1.0]]).numpy()
      array([0.5], dtype=float32)
    """
    y_true, y_pred = _regression(y_true, y_pred, "em.losses.mean_squared_error")
    return ops.reduce_mean(ops.square(ops.subtract(y_true, y_pred)), axis=-1)


def mean_absolute_error(y_true, y_pred):
    """mean(|y_true - y_pred|) over the last axis (keras.losses.mean_absolute_error).

    Example:
      >>> em.losses.mean_absolute_error([[0.0, 1.0]], [[1.0, 3.0]]).numpy()
      array([1.5], dtype=float32)
    """
    y_true, y_pred = _regression(y_true, y_pred, "em.losses.mean_absolute_error")
    return ops.reduce_mean(ops.abs(ops.subtract(y_true, y_pred)), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    """The Huber loss over the last axis: 0.5 * e**2 where |e| <= delta, else
    delta * (|e| - 0.5 * delta), e = y_pred - y_true (keras.losses.huber).

    Example:
      >>> em.losses.huber([[0.0, 0.0]], [[0.5, 3.0]]).numpy()
      array([1.3125], dtype=float32)
    """
    y_true, y_pred = _regression(y_true, y_pred, "em.losses.huber")
    abs_error = ops.abs(ops.subtract(y_pred, y_true))
    quadratic = ops.minimum(abs_error, delta)
    linear = ops.subtract(abs_error, quadratic)
    return ops.reduce_mean(ops.add(ops.multiply(0.5, ops.square(quadratic)),
                                   ops.multiply(delta, linear)), axis=-1)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """The binary cross-entropy of labels in [0, 1] and predictions (probabilities or
    logits), averaged over the last axis: one value per example
    (keras.losses.binary_crossentropy).

    Example:
      >>> em.losses.binary_crossentropy([[0.0, 1.0]], [[0.4, 0.6]]).numpy().round(4)
      array([0.5108], dtype=float32)
    """
    y_true, y_pred = _regression(y_true, y_pred, "em.losses.binary_crossentropy")
    if label_smoothing:
        y_true = ops.add(ops.multiply(y_true, 1.0 - label_smoothing), 0.5 * label_smoothing)
    if from_logits:  # max(x, 0) - x * z + log(1 + exp(-|x|)), as TF's stable form
        values = ops.add(ops.subtract(ops.maximum(y_pred, 0.0), ops.multiply(y_pred, y_true)),
                         ops.log1p(ops.exp(ops.negative(ops.abs(y_pred)))))
    else:
        p = clip_by_value(y_pred, EPSILON, 1.0 - EPSILON)
        values = ops.negative(ops.add(
            ops.multiply(y_true, ops.log(p)),
            ops.multiply(ops.subtract(1.0, y_true), ops.log(ops.subtract(1.0, p)))))
    return ops.reduce_mean(values, axis=axis)


def weights_like(values, sample_weight, dtype):
    """`sample_weight` broadcast to `values`' shape (Keras's squeeze_or_expand_dimensions
    then broadcast_weights); ones when None."""
    if sample_weight is None:
        return ops.ones_like(cast(values, dtype))
    weight = cast(convert_to_tensor(sample_weight), dtype)
    rank, w_rank = values.shape.rank, weight.shape.rank
    if rank is not None and w_rank is not None:
        if w_rank == rank + 1 and weight.shape.as_list()[-1] == 1:
            weight = ops.squeeze(weight, [-1])
        while weight.shape.rank < rank:
            weight = ops.expand_dims(weight, -1)
    return ops.multiply(weight, ops.ones_like(cast(values, dtype)))


class Loss:
    """A loss object: `loss(y_true, y_pred, sample_weight=None)` is the mean of the
    per-example values (weighted by `sample_weight`, divided by the number of values, as
    Keras's "sum_over_batch_size"; "sum" and "none" are also accepted)."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, **kwargs):
        if reduction not in ("sum_over_batch_size", "sum", "none", None):
            raise ValueError(f"{type(self).__name__}: reduction must be "
                             f"'sum_over_batch_size', 'sum' or 'none', got {reduction!r}")
        self.fn, self.reduction, self.name, self.kwargs = fn, reduction, name, kwargs

    def __call__(self, y_true, y_pred, sample_weight=None):
        values = self.fn(y_true, y_pred, **self.kwargs)
        if sample_weight is not None:  # (int or bool weights: cast, as Keras)
            values = ops.multiply(values, weights_like(values, sample_weight, values.dtype))
        if self.reduction in ("none", None):
            return values
        total = ops.reduce_sum(values)
        if self.reduction == "sum":
            return total
        return ops.divide(total, cast(ops.size(values), values.dtype))

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction, **self.kwargs}


class SparseCategoricalCrossentropy(Loss):
    """The mean `sparse_categorical_crossentropy` (keras.losses.SparseCategoricalCrossentropy).

    Example:
      >>> loss = em.losses.SparseCategoricalCrossentropy(from_logits=True)
      >>> round(float(loss([0], [[2.0, 0.0]])), 4)
      0.1269
    """

    def __init__(self, from_logits=False, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, reduction, name,
                         from_logits=bool(from_logits))


class CategoricalCrossentropy(Loss):
    """The mean `categorical_crossentropy` (keras.losses.CategoricalCrossentropy).

    Example:
      >>> loss = em.losses.CategoricalCrossentropy()
      >>> round(float(loss([[0.0, 1.0]], [[0.1, 0.9]])), 4)
      0.1054
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy"):
        super().__init__(categorical_crossentropy, reduction, name,
                         from_logits=bool(from_logits), label_smoothing=float(label_smoothing),
                         axis=axis)


class MeanSquaredError(Loss):
    """The mean `mean_squared_error` (keras.losses.MeanSquaredError).

    Example:
      >>> float(em.losses.MeanSquaredError()([0.0, 1.0], [1.0, 1.0]))
      0.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error"):
        super().__init__(mean_squared_error, reduction, name)


class BinaryCrossentropy(Loss):
    """The mean `binary_crossentropy` (keras.losses.BinaryCrossentropy).

    Example:
      >>> loss = em.losses.BinaryCrossentropy()
      >>> round(float(loss([[0.0, 1.0]], [[0.4, 0.6]])), 4)
      0.5108
    """

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="binary_crossentropy"):
        super().__init__(binary_crossentropy, reduction, name, from_logits=bool(from_logits),
                         label_smoothing=float(label_smoothing), axis=axis)


class MeanAbsoluteError(Loss):
    """The mean `mean_absolute_error` (keras.losses.MeanAbsoluteError).

    Example:
      >>> float(em.losses.MeanAbsoluteError()([0.0, 1.0], [1.0, 3.0]))
      1.5
    """

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error"):
        super().__init__(mean_absolute_error, reduction, name)


class Huber(Loss):
    """The mean `huber` loss (keras.losses.Huber).

    Example:
      >>> float(em.losses.Huber(delta=1.0)([[0.0, 0.0]], [[0.5, 3.0]]))
      1.3125
    """

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss"):
        if not isinstance(delta, (int, float)) or isinstance(delta, bool) or delta <= 0:
            raise ValueError(f"Huber: delta must be a positive number, got {delta!r}")
        super().__init__(huber, reduction, name, delta=float(delta))


__all__ = ["BinaryCrossentropy", "CategoricalCrossentropy", "Loss", "MeanSquaredError",
           "SparseCategoricalCrossentropy", "categorical_crossentropy", "mean_squared_error",
           "sparse_categorical_crossentropy", "binary_crossentropy", "Huber", "MeanAbsoluteError",
           "huber", "mean_absolute_error"]
