"""`model.compiled_loss` and `model.compiled_metrics`: what `Model.compile` made of its
`loss` and `metrics`, in the form a custom `train_step` calls them (Keras 2's
LossesContainer and MetricsContainer, keras/engine/compile_utils.py).

- `compiled_loss(y_true, y_pred, sample_weight=None, regularization_losses=None)` returns
  the loss to differentiate and updates the "loss" Mean that `model.metrics` lists. The
  per-example losses (times `sample_weight`) are summed and divided by the number of
  examples of the *global* batch (summed over the replicas under a MirroredStrategy), so the
  gradients the replicas sum are those of the global batch's mean, as the built-in step's;
  `regularization_losses` are added once over the replicas.
- `compiled_metrics.update_state(y_true, y_pred, sample_weight=None)` updates each metric
  given to compile (names become Keras's metric objects, callables mean wrappers).
"""

from __future__ import annotations

from ember.frontend import ops
from ember.frontend.math_ops import cast
from ember.frontend.misc_composites import add_n
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.training import metrics as metrics_lib
from ember.frontend.training.metrics import Mean, MeanMetricWrapper, Metric
from ember.frontend.training.metrics_confusion import AUC, Precision, Recall

# names compile takes for metrics that are not means of per-example values
STATEFUL = {"AUC": AUC, "auc": AUC, "Precision": Precision, "precision": Precision,
            "Recall": Recall, "recall": Recall}

NO_LOSS = ("No loss found. You may have forgotten to provide a `loss` argument in the "
            "`compile()` method (model.compile(optimizer, loss=...)), or compute the loss "
            "yourself in a custom train_step")


class LossesContainer:
    """`model.compiled_loss` (see the module docstring)."""

    def __init__(self, loss_fn, num_replicas: int = 1):
        self._loss_fn = loss_fn
        self._num_replicas = num_replicas
        self._loss_metric = Mean(name="loss") if loss_fn is not None else None

    @property
    def metrics(self) -> list:
        return [] if self._loss_metric is None else [self._loss_metric]

    def __call__(self, y_true, y_pred, sample_weight=None, regularization_losses=None):
        if self._loss_fn is None:  # Keras: None (train_step raises), or the extra losses
            extra = [cast(convert_to_tensor(v), "float32") for v in regularization_losses or ()]
            return ops.divide(add_n(extra), float(self._num_replicas)) if extra else None
        if y_true is None:
            raise ValueError("Target data is missing. Your model was compiled with a loss, "
                             "and therefore expects target data (y) to be passed to fit(); "
                             "pass (x, y) batches or x and y")
        y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
        values = cast(self._loss_fn(y_true, y_pred), "float32")
        if sample_weight is not None:
            values = ops.multiply(values, metrics_lib.weights_like(values, sample_weight,
                                                                   "float32"))
        loss_sum = ops.reduce_sum(values)
        count = cast(ops.size(values), "float32")
        total = count if metrics_lib.replica_sum is None else \
            metrics_lib.replica_sum([count])[0]
        # max(.., 1): a replica's empty share of a last partial batch
        loss = ops.divide(loss_sum, ops.maximum(total, 1.0))
        mean = ops.divide(loss_sum, ops.maximum(count, 1.0))
        for extra in regularization_losses or ():
            extra = cast(convert_to_tensor(extra), "float32")
            loss = ops.add(loss, ops.divide(extra, float(self._num_replicas)))
            mean = ops.add(mean, extra)
        self._loss_metric.update_state(mean, sample_weight=count)
        return loss

    def reset_state(self) -> None:
        for metric in self.metrics:
            metric.reset_state()


class MetricsContainer:
    """`model.compiled_metrics`: `update_state(y_true, y_pred, sample_weight=None)`,
    `metrics`, `reset_state()`."""

    def __init__(self, metrics: list, mirrored: bool = False):
        self._metrics = list(metrics)
        if mirrored:  # several replicas
            check_mirrored(self._metrics)

    @property
    def metrics(self) -> list:
        return list(self._metrics)

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        if y_true is None:
            return  # Keras: no targets, no compiled metrics
        for metric in self._metrics:
            metric.update_state(y_true, y_pred, sample_weight=sample_weight)

    def reset_state(self) -> None:
        for metric in self._metrics:
            metric.reset_state()


def check_mirrored(metrics: list) -> None:
    """ValueError for a metric whose state is not mirrored (made outside the scope of the
    model's MirroredStrategy): every replica would add the summed updates to one copy."""
    from ember.runtime.distribute.mirrored import MirroredVariable
    plain = [m.name for m in metrics
             if any(not isinstance(v, MirroredVariable) for v in m.variables)]
    if plain:
        raise ValueError(f"Model.compile: the metrics {plain} were made outside the scope of "
                         "the model's strategy, so their variables are not mirrored: make "
                         "them inside `with strategy.scope():` (or pass their names, which "
                         "compile makes there)")


def is_stateful(metric) -> bool:
    """Whether the built-in summing step cannot compute `metric` (only Keras's metric
    objects can)."""
    return isinstance(metric, Metric) or isinstance(metric, str) and metric in STATEFUL


def as_list(metrics) -> list:
    """compile's `metrics` as a list (one name, callable or Metric given alone: [it])."""
    if metrics is None:
        return []
    if isinstance(metrics, (str, Metric)) or callable(metrics):
        return [metrics]
    return list(metrics)


def metric_objects(metrics, named: list) -> list:
    """The Metric objects of compile's `metrics`, in its order: the Metric objects given,
    the STATEFUL names' metrics, and each entry of `named` (compile.py's [(name, per-example
    function)] of the other names and the callables) as a mean wrapper."""
    out, functions = [], iter(named)
    for metric in as_list(metrics):
        if isinstance(metric, Metric):
            out.append(metric)
        elif isinstance(metric, str) and metric in STATEFUL:
            out.append(STATEFUL[metric]())
        else:
            name, fn = next(functions)
            out.append(MeanMetricWrapper(fn, name=name))
    return out
