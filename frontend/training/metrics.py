"""`em.keras.metrics`: Keras's stateful metrics — `Metric` (the base class), `Sum`, `Mean`,
`MeanMetricWrapper`, the accuracies and `MeanSquaredError` / `MeanAbsoluteError`
(keras.metrics). The confusion-matrix metrics are in metrics_confusion.py.

A metric keeps its state in em.Variables made under `em.init_scope()`, so the same object
updates eagerly and inside an em.function (a compiled train step): `update_state` adds to
them, `result` reads them, `reset_state` zeroes them.

Under a MirroredStrategy, `update_state` in a replica adds the sum of every replica's update
(`replica_sum`, installed by ember.runtime.distribute.mirrored): the copies of a metric made
under the scope stay identical, so `result()` is the global value in every replica and in
the cross-replica context, as TF's SyncOnRead metric variables read (summed) in Keras.
"""

from __future__ import annotations

import re

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.math_ops import cast
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.tracing import init_scope
from ember.frontend.training import losses as losses_lib
from ember.frontend.training.losses import weights_like
from ember.frontend.variables import Variable

# ember.runtime.distribute.mirrored installs it: (list of tensors) -> their sums over the
# replicas when called in a replica of a multi-replica strategy, else the tensors unchanged
replica_sum = None


class Metric:
    """The base class of Keras's metrics: subclasses make their state with `add_weight` in
    `__init__` and define `update_state(...)` and `result()`.

    Example:
      >>> m = em.keras.metrics.Sum()
      >>> m.update_state([1.0, 2.0]); float(m.result())
      3.0
      >>> m.reset_state(); float(m.result())
      0.0
    """

    def __init__(self, name=None, dtype=None):
        self.name = name or _snake(type(self).__name__)
        self.dtype = dtypes.as_dtype(dtype or dtypes.float32)
        self._weights: list = []

    def add_weight(self, name: str, shape=(), initializer="zeros", dtype=None) -> Variable:
        """A non-trainable state Variable (zeros), made eagerly even inside a trace."""
        if initializer != "zeros":
            raise ValueError(f"{type(self).__name__}.add_weight: only 'zeros' initializes a "
                             f"metric's state, got {initializer!r}")
        dtype = dtypes.as_dtype(dtype or self.dtype)
        with init_scope():
            weight = Variable(ops.zeros(list(shape), dtype), trainable=False,
                              name=f"{self.name}/{name}")
        self._weights.append(weight)
        return weight

    @property
    def variables(self) -> list:
        return list(self._weights)

    weights = variables

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} subclasses Metric without defining "
                                  "update_state")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} subclasses Metric without defining "
                                  "result")

    def reset_state(self) -> None:
        for weight in self._weights:
            weight.assign(ops.zeros(weight.shape.as_list(), weight.dtype))

    reset_states = reset_state

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def _add(self, pairs) -> None:
        """assign_add each (variable, increment), summed over the replicas first."""
        increments = [cast(value, var.dtype) for var, value in pairs]
        if replica_sum is not None:
            increments = replica_sum(increments)
        for (var, _), value in zip(pairs, increments):
            var.assign_add(value)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name!r}>"


def _snake(name: str) -> str:
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


class Sum(Metric):
    """The running (weighted) sum of the values given (keras.metrics.Sum).

    Example:
      >>> m = em.keras.metrics.Sum()
      >>> m.update_state([1.0, 3.0], sample_weight=[1.0, 0.5]); float(m.result())
      2.5
    """

    def __init__(self, name="sum", dtype=None):
        super().__init__(name, dtype)
        self.total = self.add_weight("total")

    def update_state(self, values, sample_weight=None):
        values = cast(convert_to_tensor(values), self.dtype)
        weights = weights_like(values, sample_weight, self.dtype)
        self._add([(self.total, ops.reduce_sum(ops.multiply(values, weights)))])

    def result(self):
        return self.total.read_value()


class Mean(Metric):
    """The running (weighted) mean of the values given to `update_state`
    (keras.metrics.Mean).

    Example:
      >>> m = em.keras.metrics.Mean()
      >>> m.update_state([1.0, 2.0]); m.update_state(6.0)
      >>> float(m.result())
      3.0
    """

    def __init__(self, name="mean", dtype=None):
        super().__init__(name, dtype)
        self.total = self.add_weight("total")
        self.count = self.add_weight("count")

    def update_state(self, values, sample_weight=None):
        values = cast(convert_to_tensor(values), self.dtype)
        weights = weights_like(values, sample_weight, self.dtype)
        self._add([(self.total, ops.reduce_sum(ops.multiply(values, weights))),
                   (self.count, ops.reduce_sum(weights))])

    def result(self):
        return divide_no_nan(self.total.read_value(), self.count.read_value())


def divide_no_nan(x, y):
    """x / y, 0 where y is 0 (tf.math.divide_no_nan)."""
    safe = ops.where(ops.equal(y, 0.0), ops.ones_like(y), y)
    return ops.where(ops.equal(y, 0.0), ops.zeros_like(x), ops.divide(x, safe))


class MeanMetricWrapper(Mean):
    """The mean of `fn(y_true, y_pred, **kwargs)` over the values it returns (per example,
    or per element), weighted by `sample_weight` (keras.metrics.MeanMetricWrapper).

    Example:
      >>> m = em.keras.metrics.MeanMetricWrapper(em.losses.mean_absolute_error, "mae")
      >>> m.update_state([[1.0], [2.0]], [[2.0], [2.0]]); float(m.result())
      0.5
    """

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name or getattr(fn, "__name__", "mean_metric_wrapper"), dtype)
        self._fn, self._fn_kwargs = fn, kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        super().update_state(values, sample_weight)

    def get_config(self) -> dict:
        return {"name": self.name, **self._fn_kwargs}


# -- per-example functions (keras.metrics.*_accuracy) -----------------------------------

def accuracy(y_true, y_pred):
    """1.0 where `y_true == y_pred`, elementwise (keras.metrics.accuracy)."""
    y_pred = convert_to_tensor(y_pred)
    y_true, y_pred = losses_lib.same_rank(cast(convert_to_tensor(y_true), y_pred.dtype), y_pred)
    return cast(ops.equal(y_true, y_pred), "float32")


def _labels(y_true, y_pred):
    y_true = y_true if y_true.dtype.is_integer else cast(y_true, "int64")
    if y_true.shape.rank is not None and y_true.shape.rank == y_pred.shape.rank:
        y_true = ops.squeeze(y_true, [-1])
    return y_true


def sparse_categorical_accuracy(y_true, y_pred):
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    y_true = _labels(y_true, y_pred)
    return cast(ops.equal(ops.argmax(y_pred, -1), cast(y_true, "int64")), "float32")


def categorical_accuracy(y_true, y_pred):
    y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
    return cast(ops.equal(ops.argmax(y_pred, -1), ops.argmax(y_true, -1)), "float32")


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true, y_pred = losses_lib.same_rank(convert_to_tensor(y_true), convert_to_tensor(y_pred))
    hit = ops.equal(cast(ops.greater(y_pred, threshold), "float32"), cast(y_true, "float32"))
    return ops.reduce_mean(cast(hit, "float32"), axis=-1)


class Accuracy(MeanMetricWrapper):
    """How often predictions equal labels, elementwise (keras.metrics.Accuracy).

    Example:
      >>> m = em.keras.metrics.Accuracy()
      >>> m.update_state([[1], [2], [3], [4]], [[0], [2], [3], [4]]); float(m.result())
      0.75
    """

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name, dtype)


class BinaryAccuracy(MeanMetricWrapper):
    """How often `y_pred > threshold` matches the 0/1 labels (keras.metrics.BinaryAccuracy).

    Example:
      >>> m = em.keras.metrics.BinaryAccuracy()
      >>> m.update_state([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]]); float(m.result())
      0.75
    """

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name, dtype, threshold=float(threshold))


class CategoricalAccuracy(MeanMetricWrapper):
    """How often the argmax of `y_pred` is the one-hot label's
    (keras.metrics.CategoricalAccuracy)."""

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name, dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    """How often the argmax of `y_pred` is the integer label
    (keras.metrics.SparseCategoricalAccuracy).

    Example:
      >>> m = em.keras.metrics.SparseCategoricalAccuracy()
      >>> m.update_state([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0.0]])
      >>> float(m.result())
      0.5
    """

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name, dtype)


class MeanSquaredError(MeanMetricWrapper):
    """The mean of `mean_squared_error` per example (keras.metrics.MeanSquaredError)."""

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(losses_lib.mean_squared_error, name, dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    """The mean of `mean_absolute_error` per example (keras.metrics.MeanAbsoluteError)."""

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(losses_lib.mean_absolute_error, name, dtype)
