"""What `Model.compile` resolves (the loss, the metrics and the optimizer, by name or as
objects) and the compiled steps `fit`, `evaluate` and `predict` run.

Every step is one `em.function`. A train step returns cross-replica *sums*: the sum of the
per-example losses, the number of examples and each metric's sum; the loss it
differentiates is `sum(per-example losses) / (global number of examples)`, so the gradients
summed over the replicas are those of the global batch's mean loss.
"""

from __future__ import annotations

from ember.frontend import ops
from ember.frontend.autodiff import GradientTape
from ember.frontend.math_ops import cast
from ember.frontend.misc_composites import add_n
from ember.frontend.training import losses as losses_lib
from ember.frontend.training import optimizers as optimizers_lib
from ember.frontend.training.metrics import (binary_accuracy, categorical_accuracy,
                                             sparse_categorical_accuracy)
from ember.frontend.training.optimizer_base import Optimizer
from ember.runtime.decorator import function
from ember.runtime.keras.containers import STATEFUL, as_list, is_stateful

_LOSSES = {
    "sparse_categorical_crossentropy": losses_lib.sparse_categorical_crossentropy,
    "categorical_crossentropy": losses_lib.categorical_crossentropy,
    "binary_crossentropy": losses_lib.binary_crossentropy,
    "mean_squared_error": losses_lib.mean_squared_error,
    "mse": losses_lib.mean_squared_error,
    "mean_absolute_error": losses_lib.mean_absolute_error,
    "mae": losses_lib.mean_absolute_error,
    "huber": losses_lib.huber,
}
_OPTIMIZERS = {"sgd": optimizers_lib.SGD, "adam": optimizers_lib.Adam,
               "adamw": optimizers_lib.AdamW, "rmsprop": optimizers_lib.RMSprop,
               "adagrad": optimizers_lib.Adagrad}


def resolve_loss(loss):
    """(per-example loss function, its kind) of a name, a Loss object or a callable."""
    if isinstance(loss, str):
        if loss not in _LOSSES:
            raise ValueError(f"Model.compile: unknown loss {loss!r}; use one of "
                             f"{sorted(_LOSSES)}, an em.losses.Loss or a callable "
                             "(y_true, y_pred) -> per-example values")
        return _LOSSES[loss], _LOSSES[loss].__name__
    if isinstance(loss, losses_lib.Loss):
        return (lambda y_true, y_pred: loss.fn(y_true, y_pred, **loss.kwargs)), loss.fn.__name__
    if callable(loss):
        return loss, getattr(loss, "__name__", "loss")
    raise TypeError(f"Model.compile: loss must be a name, an em.losses.Loss or a callable, "
                    f"got {loss!r}")


def resolve_optimizer(optimizer):
    if isinstance(optimizer, str):
        if optimizer.lower() not in _OPTIMIZERS:
            raise ValueError(f"Model.compile: unknown optimizer {optimizer!r}; use one of "
                             f"{sorted(_OPTIMIZERS)} or an em.optimizers.Optimizer")
        return _OPTIMIZERS[optimizer.lower()]()
    if isinstance(optimizer, Optimizer):
        return optimizer
    raise TypeError(f"Model.compile: optimizer must be a name or an em.optimizers.Optimizer, "
                    f"got {optimizer!r}")


# -- metrics (each: per-example values, averaged over the examples) -------------------------

_METRICS = {"sparse_categorical_accuracy": sparse_categorical_accuracy,
            "categorical_accuracy": categorical_accuracy, "binary_accuracy": binary_accuracy,
            "mse": losses_lib.mean_squared_error,
            "mean_squared_error": losses_lib.mean_squared_error,
            "mae": losses_lib.mean_absolute_error,
            "mean_absolute_error": losses_lib.mean_absolute_error}


def _accuracy_for(loss_kind: str):
    """Keras's choice for 'accuracy': by the loss, else by the shapes in the step."""
    if loss_kind == "sparse_categorical_crossentropy":
        return sparse_categorical_accuracy
    if loss_kind == "categorical_crossentropy":
        return categorical_accuracy
    if loss_kind == "binary_crossentropy":
        return binary_accuracy

    def accuracy(y_true, y_pred):
        if y_pred.shape.as_list() and y_pred.shape.as_list()[-1] == 1:
            return binary_accuracy(y_true, y_pred)
        if y_true.shape.rank == y_pred.shape.rank and \
                y_true.shape.as_list()[-1] == y_pred.shape.as_list()[-1]:
            return categorical_accuracy(y_true, y_pred)
        return sparse_categorical_accuracy(y_true, y_pred)
    return accuracy


def resolve_metrics(metrics, loss_kind: str) -> list:
    """[(name, per-example function)] of compile's `metrics` (the names and callables; the
    em.keras.metrics objects are kept as they are by containers.metric_objects)."""
    out = []
    for metric in as_list(metrics):
        if is_stateful(metric):
            continue
        if metric in ("accuracy", "acc"):
            out.append((metric, _accuracy_for(loss_kind)))
        elif isinstance(metric, str):
            if metric not in _METRICS:
                raise ValueError(f"Model.compile: unknown metric {metric!r}; use 'accuracy' "
                                 f"or one of {sorted(_METRICS) + sorted(STATEFUL)}, an "
                                 "em.keras.metrics object, or a callable (y_true, y_pred) "
                                 "-> per-example values")
            out.append((metric, _METRICS[metric]))
        elif callable(metric):
            out.append((getattr(metric, "__name__", f"metric_{len(out)}"), metric))
        else:
            raise TypeError(f"Model.compile: metrics must be names, callables or "
                            f"em.keras.metrics objects, got {metric!r}")
    return out


# -- the steps ----------------------------------------------------------------------------

def _sums(loss_fn, metrics, y, y_pred, total_of, extra=(), replicas: int = 1):
    """(loss of the step's replica for the gradient, [summed outputs]). `extra` (the
    model's `losses`) joins the loss once over the replicas, and each example's value in
    the logged sum, as Keras's "loss" metric: the batch mean plus the extra losses."""
    per_example = loss_fn(y, y_pred)
    loss_sum = ops.reduce_sum(per_example)
    count = cast(ops.size(per_example), loss_sum.dtype)
    total = total_of(count)
    # max(total, 1): a replica's empty batch of a last partial batch
    loss = ops.divide(loss_sum, ops.maximum(total, 1.0))
    logged = loss_sum
    if extra:
        added = add_n([cast(v, loss_sum.dtype) for v in extra])
        loss = ops.add(loss, ops.divide(added, float(replicas)))
        logged = ops.add(loss_sum, ops.multiply(added, count))
    values = [total_of(logged), total]
    for _, metric in metrics:
        values.append(total_of(ops.reduce_sum(cast(metric(y, y_pred), "float32"))))
    return loss, values


def train_step(model, loss_fn, metrics, optimizer, execution):
    """The compiled train step of (x, y): forward, gradients, apply, summed outputs."""

    def step(x, y):
        with GradientTape() as tape:
            y_pred = model(x, training=True)
            loss, values = _sums(loss_fn, metrics, y, y_pred, execution.sum, model.losses,
                                 execution.num_replicas)
        variables = list(model.trainable_variables)
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        return tuple(values)
    return function(step, reduce_retracing=True)


def test_step(model, loss_fn, metrics, execution):
    def step(x, y):
        y_pred = model(x, training=False)
        _, values = _sums(loss_fn, metrics, y, y_pred, execution.sum, model.losses,
                          execution.num_replicas)
        return tuple(values)
    return function(step, reduce_retracing=True)


def predict_step(model):
    return function(lambda x: model(x, training=False), reduce_retracing=True)
