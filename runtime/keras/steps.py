"""Keras's customisation points of `Model.fit` / `evaluate` / `predict`: `train_step(data)`,
`test_step(data)` and `predict_step(data)` hold the built-in logic, so a subclass overrides
one and may call `super().train_step(data)`; and what a custom step uses: `compiled_loss`,
`compiled_metrics`, `compute_loss`, `compute_metrics`, `metrics` (reset at the start of each
epoch and of evaluate), `metrics_names`, `reset_metrics`, `losses`
(keras/engine/training.py, Keras 2 — the "Customizing what happens in fit()" guide).

`data` is one element of the input: `(x, y)`, `(x, y, sample_weight)` or `x`
(`unpack_x_y_sample_weight`). A step returns a dict of scalars: those become the logs of the
batch and, after the epoch's last batch, of the epoch (History, callbacks).
"""

from __future__ import annotations

from ember.frontend.autodiff import GradientTape
from ember.frontend.training.metrics import Metric
from ember.runtime.keras.containers import NO_LOSS


def unpack_x_y_sample_weight(data):
    """(x, y, sample_weight) of a step's `data` (keras.utils.unpack_x_y_sample_weight)."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                     f"`(x, y, sample_weight)`, found a tuple of {len(data)} elements")


class StepsAPI:
    """The step methods and what they use (a mixin of em.keras.Model and Sequential)."""

    # -- what compile made -----------------------------------------------------------------

    @property
    def compiled_loss(self):
        return self._need_compiled("compiled_loss").compiled_loss

    @property
    def compiled_metrics(self):
        return self._need_compiled("compiled_metrics").compiled_metrics

    @property
    def metrics(self) -> list:
        """The metrics fit and evaluate reset and log: compile's loss and metrics, then the
        em.keras.metrics objects held by the model's (and its layers') attributes
        (Keras tracks them). Override it to list a custom train_step's metrics."""
        out = []
        if self._compiled is not None:
            c = self._compiled
            out += c.compiled_loss.metrics + c.compiled_metrics.metrics
        for owner in (self, *self.submodules):
            for value in vars(owner).values():
                values = value if isinstance(value, (list, tuple)) else [value]
                out += [m for m in values if isinstance(m, Metric) and
                        all(m is not seen for seen in out)]
        return out

    @property
    def metrics_names(self) -> list:
        """The names of `metrics` ('loss' first once compiled with a loss)."""
        return [m.name for m in self.metrics]

    def reset_metrics(self) -> None:
        for metric in self.metrics:
            metric.reset_state()

    # -- the built-in steps ------------------------------------------------------------------

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        """The loss of a batch: compile's loss plus `self.losses` (Keras 2.12+)."""
        del x
        return self.compiled_loss(y, y_pred, sample_weight, regularization_losses=self.losses)

    def compute_metrics(self, x, y, y_pred, sample_weight):
        """Updates compile's metrics; returns `get_metrics_result()`."""
        del x
        self.compiled_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def get_metrics_result(self) -> dict:
        """{name: result} of every metric in `metrics`."""
        return {metric.name: metric.result() for metric in self.metrics}

    def train_step(self, data):
        """One training step on `data`: the forward pass, `compute_loss`, the gradients
        applied by the optimizer, `compute_metrics` (Keras's Model.train_step).

        Returns:
          {metric name: value}: the logs of the step.
        """
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
        if loss is None:
            raise ValueError(NO_LOSS)
        variables = list(self.trainable_variables)
        grads = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def test_step(self, data):
        """One evaluation step: the forward pass, the loss and the metrics updated
        (Keras's Model.test_step)."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        self.compute_loss(x, y, y_pred, sample_weight)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data):
        """The model's output for a batch (Keras's Model.predict_step)."""
        x, _, _ = unpack_x_y_sample_weight(data)
        return self(x, training=False)

    # -- which implementation runs ---------------------------------------------------------

    def _custom(self, kind: str) -> bool:
        """Whether `kind` ('train', 'test', 'predict') runs `self.<kind>_step` (Keras's
        path: overridden, run_eagerly, metric objects or sample weights) rather than the
        built-in summing step (compile.py), which computes the same logs."""
        method = getattr(type(self), f"{kind}_step")
        if method is not getattr(StepsAPI, f"{kind}_step") or self.run_eagerly:
            return True
        c = self._compiled
        return kind != "predict" and (c is None or c.stateful or c.loss_fn is None)
