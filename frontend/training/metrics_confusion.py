"""Keras's confusion-matrix metrics: `Precision`, `Recall` and `AUC` (keras.metrics).

Each keeps counts of true/false positives/negatives per threshold in em.Variables: a
prediction is positive where `y_pred > threshold`, a label where it is true (non-zero).
Every element of `y_pred` counts once, weighted by `sample_weight` (broadcast to it).
"""

from __future__ import annotations

from ember.frontend import ops
from ember.frontend.math_ops import cast
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.training.metrics import Metric, divide_no_nan, weights_like

_EPSILON = 1e-7


def _thresholds(thresholds, where: str) -> tuple[list, bool]:
    """(thresholds as a list of floats, whether one was given as a number)."""
    if thresholds is None:
        return [0.5], True
    single = isinstance(thresholds, (int, float)) and not isinstance(thresholds, bool)
    values = [float(thresholds)] if single else [float(t) for t in thresholds]
    if not values or any(not 0.0 <= t <= 1.0 for t in values):
        raise ValueError(f"{where}: thresholds must be in [0, 1], got {thresholds!r}")
    return values, single


def confusion_counts(y_true, y_pred, thresholds: list, sample_weight, which: tuple) -> dict:
    """{name: [len(thresholds)] weighted counts} for the names in `which` among 'tp', 'fp',
    'tn', 'fn'."""
    y_pred = cast(convert_to_tensor(y_pred), "float32")
    y_true = convert_to_tensor(y_true)
    truth = cast(ops.not_equal(y_true, ops.zeros_like(y_true)), "float32")
    truth = ops.multiply(truth, ops.ones_like(y_pred))  # e.g. [batch] labels, [batch, 1]
    weights = weights_like(y_pred, sample_weight, "float32")
    pred = ops.reshape(y_pred, [-1, 1])
    truth, weights = ops.reshape(truth, [-1, 1]), ops.reshape(weights, [-1, 1])
    limits = convert_to_tensor([thresholds], dtype="float32")  # [1, T]
    positive = cast(ops.greater(pred, limits), "float32")  # [N, T]
    negative = ops.subtract(1.0, positive)
    false = ops.subtract(1.0, truth)
    parts = {"tp": (truth, positive), "fp": (false, positive), "tn": (false, negative),
             "fn": (truth, negative)}
    return {name: ops.reduce_sum(ops.multiply(ops.multiply(parts[name][0], parts[name][1]),
                                              weights), axis=0)
            for name in which}


class _Confusion(Metric):
    _counts: tuple = ()

    def __init__(self, thresholds, name, dtype):
        super().__init__(name, dtype)
        self.thresholds, self._single = _thresholds(thresholds, type(self).__name__)
        n = len(self.thresholds)
        for count in self._counts:
            setattr(self, _NAMES[count], self.add_weight(_NAMES[count], [n]))

    def update_state(self, y_true, y_pred, sample_weight=None):
        counts = confusion_counts(y_true, y_pred, self.thresholds, sample_weight,
                                  self._counts)
        self._add([(getattr(self, _NAMES[c]), counts[c]) for c in self._counts])

    def _one(self, values):
        return values[0] if self._single else values


_NAMES = {"tp": "true_positives", "fp": "false_positives", "tn": "true_negatives",
          "fn": "false_negatives"}


class Precision(_Confusion):
    """true positives / predicted positives (keras.metrics.Precision); a list of
    `thresholds` gives one value per threshold.

    Example:
      >>> m = em.keras.metrics.Precision()
      >>> m.update_state([0, 1, 1, 1], [1.0, 0.0, 1.0, 1.0]); round(float(m.result()), 4)
      0.6667
    """

    _counts = ("tp", "fp")

    def __init__(self, thresholds=None, name="precision", dtype=None):
        super().__init__(thresholds, name, dtype)

    def result(self):
        tp = self.true_positives.read_value()
        return self._one(divide_no_nan(tp, ops.add(tp, self.false_positives.read_value())))


class Recall(_Confusion):
    """true positives / actual positives (keras.metrics.Recall).

    Example:
      >>> m = em.keras.metrics.Recall()
      >>> m.update_state([0, 1, 1, 1], [1.0, 0.0, 1.0, 1.0]); round(float(m.result()), 4)
      0.6667
    """

    _counts = ("tp", "fn")

    def __init__(self, thresholds=None, name="recall", dtype=None):
        super().__init__(thresholds, name, dtype)

    def result(self):
        tp = self.true_positives.read_value()
        return self._one(divide_no_nan(tp, ops.add(tp, self.false_negatives.read_value())))


class AUC(_Confusion):
    """The area under the ROC curve, a trapezoidal sum over `num_thresholds` thresholds
    evenly spaced in [0, 1] (keras.metrics.AUC with curve="ROC", the default
    summation_method="interpolation").

    Example:
      >>> m = em.keras.metrics.AUC(num_thresholds=3)
      >>> m.update_state([0, 0, 1, 1], [0.0, 0.5, 0.3, 0.9]); round(float(m.result()), 4)
      0.75
    """

    _counts = ("tp", "fp", "tn", "fn")

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name="auc", dtype=None, thresholds=None):
        if curve != "ROC" or summation_method != "interpolation":
            raise NotImplementedError(
                f"AUC: only curve='ROC' with summation_method='interpolation' is available, "
                f"got curve={curve!r}, summation_method={summation_method!r}")
        if thresholds is None:
            if not isinstance(num_thresholds, int) or num_thresholds <= 1:
                raise ValueError(f"AUC: num_thresholds must be an integer > 1, got "
                                 f"{num_thresholds!r}")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        else:
            inner = sorted(float(t) for t in thresholds)
        self.num_thresholds = len(inner) + 2
        super().__init__([0.0] + inner + [1.0], name, dtype)
        # Keras's end points, outside [0, 1]: every prediction above the first, none above
        # the last
        self.thresholds = [-_EPSILON] + inner + [1.0 + _EPSILON]

    def result(self):
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        tn, fn = self.true_negatives.read_value(), self.false_negatives.read_value()
        recall = divide_no_nan(tp, ops.add(tp, fn))
        fp_rate = divide_no_nan(fp, ops.add(fp, tn))
        n = self.num_thresholds
        heights = ops.multiply(ops.add(recall[:n - 1], recall[1:]), 0.5)
        return ops.reduce_sum(ops.multiply(ops.subtract(fp_rate[:n - 1], fp_rate[1:]),
                                           heights))
