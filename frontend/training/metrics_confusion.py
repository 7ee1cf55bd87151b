"""Keras's confusion-matrix metrics: `Precision`, `Recall` and `AUC` (keras.metrics).

Each keeps counts of true/false positives/negatives per threshold in em.Variables: a
prediction is positive where `y_pred > threshold`, a label where it is true (non-zero).
Every element of `y_pred` counts once, weighted by `sample_weight` (broadcast to it).
"""

from __future__ import annotations

from ember.frontend import ops
from ember.frontend.math_ops import cast
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.training.losses import same_rank
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
    y_true, y_pred = same_rank(convert_to_tensor(y_true), cast(convert_to_tensor(y_pred),
                                                                "float32"))
    truth = cast(ops.not_equal(y_true, ops.zeros_like(y_true)), "float32")
    truth = ops.multiply(truth, ops.ones_like(y_pred))  # labels broadcast to the predictions
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
    """The area under the ROC curve (`curve="ROC"`: recall over the false positive rate)
    or the precision-recall curve (`curve="PR"`), summed over `num_thresholds` thresholds
    evenly spaced in [0, 1] (keras.metrics.AUC). `summation_method`: "interpolation"
    (trapezoids; for PR, Davis & Goadrich's interpolation of precision, as Keras),
    "minoring" or "majoring" (each step's lower or higher end).

    Example:
      >>> m = em.keras.metrics.AUC(num_thresholds=3)
      >>> m.update_state([0, 0, 1, 1], [0.0, 0.5, 0.3, 0.9]); round(float(m.result()), 4)
      0.75
    """

    _counts = ("tp", "fp", "tn", "fn")

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name="auc", dtype=None, thresholds=None):
        curve, summation_method = str(curve).upper(), str(summation_method).lower()
        if curve not in ("ROC", "PR") or \
                summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f"AUC: curve must be 'ROC' or 'PR' and summation_method "
                             f"'interpolation', 'minoring' or 'majoring'; got curve={curve!r}, "
                             f"summation_method={summation_method!r}")
        self.curve, self.summation_method = curve, summation_method
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
        n = self.num_thresholds
        if self.curve == "PR" and self.summation_method == "interpolation":
            return _interpolated_pr_auc(tp, fp, fn, n)
        recall = divide_no_nan(tp, ops.add(tp, fn))
        if self.curve == "ROC":
            x, y = divide_no_nan(fp, ops.add(fp, tn)), recall
        else:
            x, y = recall, divide_no_nan(tp, ops.add(tp, fp))
        if self.summation_method == "interpolation":
            heights = ops.multiply(ops.add(y[:n - 1], y[1:]), 0.5)
        else:
            heights = (ops.minimum if self.summation_method == "minoring" else ops.maximum)(
                y[:n - 1], y[1:])
        return ops.reduce_sum(ops.multiply(ops.subtract(x[:n - 1], x[1:]), heights))


def _interpolated_pr_auc(tp, fp, fn, n: int):
    """The PR curve's area with precision interpolated between thresholds as Davis &
    Goadrich (2006) show it must be (linear in the true positives, not in precision):
    Keras's interpolate_pr_auc."""
    dtp = ops.subtract(tp[:n - 1], tp[1:])
    p = ops.add(tp, fp)
    dp = ops.subtract(p[:n - 1], p[1:])
    slope = divide_no_nan(dtp, ops.maximum(dp, 0.0))
    intercept = ops.subtract(tp[1:], ops.multiply(slope, p[1:]))
    both = ops.logical_and(ops.greater(p[:n - 1], 0.0), ops.greater(p[1:], 0.0))
    ratio = ops.where(both, divide_no_nan(p[:n - 1], ops.maximum(p[1:], 0.0)),
                      ops.ones_like(p[1:]))
    step = ops.multiply(slope, ops.add(dtp, ops.multiply(intercept, ops.log(ratio))))
    return ops.reduce_sum(divide_no_nan(step, ops.maximum(ops.add(tp[1:], fn[1:]), 0.0)))
