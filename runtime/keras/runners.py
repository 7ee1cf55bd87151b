"""What runs each batch of `Model.fit` / `evaluate`, and the logs it leaves.

- `SummingRunner`: the built-in compiled step (compile.py), which returns cross-replica sums
  of the loss and of each per-example metric; the logs are their means so far. It runs when
  the model keeps Keras's built-in steps, a loss and only per-example metrics.
- `StepRunner`: Keras's path: `model.train_step(data)` (or `test_step`), compiled in an
  em.function unless `model.run_eagerly` (as Keras makes its train_function), on every
  replica under a strategy; `model.metrics` are reset when an epoch (or evaluate) begins,
  and the logs are the dict the last step returned (Keras 2).

Both compute the same logs for the built-in steps (means weighted by the examples), and
after an epoch (or evaluate) `model.metrics` hold the same state with either.
"""

from __future__ import annotations

import numpy as np

from ember.runtime.decorator import function
from ember.runtime.keras import compile as compile_lib
from ember.runtime.keras import fit as fit_lib
from ember.runtime.keras.steps import unpack_x_y_sample_weight


class SummingRunner:
    """The built-in summing step (see the module docstring)."""

    def __init__(self, model, kind: str):
        self.model, self.kind = model, kind
        self.sums = None

    def begin(self) -> None:
        self.sums = None

    def step(self, element) -> None:
        model, c = self.model, self.model._compiled
        xy = fit_lib.pairs(element, "Model.fit" if self.kind == "train" else "Model.evaluate")
        if getattr(c, self.kind) is None:
            model._ready(xy[0], training=self.kind == "train")
            if self.kind == "train":
                c.train = compile_lib.train_step(model, c.loss_fn, c.metrics, c.optimizer,
                                                 c.execution)
            else:
                c.test = compile_lib.test_step(model, c.loss_fn, c.metrics, c.execution)
        out = np.asarray(c.execution.run(getattr(c, self.kind), xy), np.float64)
        self.sums = out if self.sums is None else self.sums + out

    @property
    def ran(self) -> bool:
        return self.sums is not None

    def logs(self) -> dict:
        return fit_lib.logs_of([name for name, _ in self.model._compiled.metrics], self.sums)

    def end(self) -> dict:
        """The logs of the epoch (or evaluate). Gives `model.metrics` (the compiled loss
        and metrics, which this step does not update) the state the sums stand for, as
        Keras's hold after an epoch: (total, count) of each mean."""
        c = self.model._compiled
        loss_sum, count, *metric_sums = (float(v) for v in self.sums)
        means = c.compiled_loss.metrics + c.compiled_metrics.metrics
        for metric, total in zip(means, [loss_sum] + metric_sums):
            metric.total.assign(total)
            metric.count.assign(count)
        return self.logs()


class StepRunner:
    """Keras's path: the model's own `<kind>_step` (see the module docstring)."""

    def __init__(self, model, kind: str):
        self.model, self.kind = model, kind
        self.last, self._names = None, []

    def begin(self) -> None:
        self.model.reset_metrics()
        self.last = None
        self._names = self.model.metrics_names  # (walks the model: once, not per step)

    def step(self, element) -> None:
        c = self.model._compiled
        fn = c.step_functions.get(self.kind)
        if fn is None:
            fn = self._make(element)
            c.step_functions[self.kind] = fn
        logs = c.execution.run_logs(fn, element, f"{self.kind}_step")
        # a compiled step's dict comes back with sorted keys: the metrics' order first
        names = [n for n in self._names if n in logs]
        self.last = {**{n: logs[n] for n in names}, **logs}

    def _make(self, element):
        model = self.model
        x, _, _ = unpack_x_y_sample_weight(element)
        model._ready(x, training=self.kind == "train")
        method = getattr(model, f"{self.kind}_step")
        return method if model.run_eagerly else function(method, reduce_retracing=True)

    @property
    def ran(self) -> bool:
        return self.last is not None

    def end(self) -> dict:
        """The logs of the epoch (or evaluate): the last step's (the metrics hold their
        state already)."""
        return self.logs()

    def logs(self) -> dict:
        return dict(self.last)


def runner(model, kind: str, weighted: bool = False):
    """The runner of `kind` ('train' or 'test') for `model`; `weighted`: the input carries
    sample weights (only Keras's path takes them)."""
    if weighted or model._custom(kind):
        return StepRunner(model, kind)
    return SummingRunner(model, kind)


def predict_function(model):
    """The model's `predict_step`, compiled unless `model.run_eagerly`."""
    method = model.predict_step
    return method if model.run_eagerly else function(method, reduce_retracing=True)


def weighted(data) -> bool:
    """Whether a dataset's elements carry sample weights: (x, y, sample_weight)."""
    spec = getattr(data, "element_spec", None)
    return isinstance(spec, tuple) and len(spec) == 3


def check_summing(model, sample_weight, where: str, kind: str = "train") -> None:
    """Only the built-in summing steps run where Keras's path does not (yet)."""
    if sample_weight is not None or model._custom(kind):
        raise NotImplementedError(
            f"Model.{'fit' if kind == 'train' else 'evaluate'} under {where} runs the "
            f"built-in steps only: a custom {kind}_step, "
            "run_eagerly, sample weights, a compile without a loss and em.keras.metrics "
            "objects are not supported there; use MirroredStrategy or no strategy for those")
