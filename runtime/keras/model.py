"""`em.keras.Model` and `em.keras.Sequential`: layers with Keras's training API —
`compile(optimizer, loss, metrics)`, `fit`, `evaluate`, `predict`, `summary`,
`get_weights` / `set_weights`.

A model made under a strategy's `scope()` trains with that strategy: fit distributes the
data itself and runs the compiled step on every replica (dispatch.py). The model's and the
optimizer's variables are made under that scope (mirrored), before the step is traced.
"""

from __future__ import annotations

import inspect

import numpy as np

from ember.frontend.training import layers_core
from ember.frontend.training.layer_base import Layer, call_context
from ember.runtime.data import Dataset
from ember.runtime.distribute.strategy import get_strategy
from ember.runtime.keras import compile as compile_lib
from ember.runtime.keras import containers, ps_execution, runners
from ember.runtime.keras import fit as fit_lib
from ember.runtime.keras.callback_base import call_hooks, prepared, with_history
from ember.runtime.keras.dispatch import execution_for
from ember.runtime.keras.steps import StepsAPI
from ember.runtime.keras.unavailable import UnavailableModelAPI
from ember.runtime.keras.weights import WeightsAPI


class _Compiled:
    """What compile and fit keep (not walked for variables: the optimizer's are its own).

    `loss_fn` / `metrics` (per-example functions) and `train` / `test` / `predict` serve
    the built-in summing steps (compile.py); `compiled_loss` / `compiled_metrics` and
    `step_functions` ({kind: compiled model.<kind>_step}) serve Keras's path (runners.py).
    """

    def __init__(self, optimizer, loss_fn, metrics, execution, stateful: bool):
        self.optimizer, self.loss_fn, self.metrics = optimizer, loss_fn, metrics
        self.execution = execution
        self.stateful = stateful  # a metric only Keras's path computes
        self.train = self.test = self.predict = None
        self.step_functions = {}
        self.compiled_loss = self.compiled_metrics = None


class TrainingAPI(StepsAPI, WeightsAPI, UnavailableModelAPI):
    """compile / fit / evaluate / predict (the customisable steps are StepsAPI's, steps.py;
    get_weights / set_weights / summary WeightsAPI's, weights.py)."""

    _ignored_attributes = Layer._ignored_attributes | {"_strategy", "_compiled",
                                                       "_run_eagerly"}

    def _init_training(self):
        self._strategy = get_strategy()  # the scope the model is made under
        self._compiled = None
        self._run_eagerly = False
        self.stop_training = False

    @property
    def distribute_strategy(self):
        return self._strategy

    @property
    def run_eagerly(self) -> bool:
        """Whether fit / evaluate / predict call the steps as Python, not compiled."""
        return self._run_eagerly

    @run_eagerly.setter
    def run_eagerly(self, value) -> None:
        self._run_eagerly = bool(value)
        if self._compiled is not None:
            self._compiled.step_functions = {}

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, run_eagerly=None):
        """Configures training (keras.Model.compile).

        Args:
          optimizer: a name ('sgd', 'adam', 'rmsprop', ...) or an em.optimizers.Optimizer.
          loss: a name, an em.losses.Loss or a callable (y_true, y_pred) -> per-example
            values; None when a custom train_step computes its own loss.
          metrics: names ('accuracy', 'mae', 'AUC', ...), callables (per-example values)
            or em.keras.metrics objects.
          run_eagerly: call train_step / test_step / predict_step as Python, uncompiled.
        """
        execution = execution_for(self._strategy)
        loss_fn, kind = (None, "") if loss is None else compile_lib.resolve_loss(loss)
        named = compile_lib.resolve_metrics(metrics, kind)
        stateful = any(containers.is_stateful(m) for m in containers.as_list(metrics))
        with execution.scope():  # the optimizer's and the metrics' variables: mirrored
            optimizer = compile_lib.resolve_optimizer(optimizer)
            c = _Compiled(optimizer, loss_fn, named, execution, stateful)
            c.compiled_loss = containers.LossesContainer(loss_fn, execution.num_replicas)
            c.compiled_metrics = containers.MetricsContainer(
                containers.metric_objects(metrics, named), mirrored=execution.num_replicas > 1)
        self._compiled = c
        self.loss = loss
        if run_eagerly is not None:
            self.run_eagerly = run_eagerly

    @property
    def optimizer(self):
        return None if self._compiled is None else self._compiled.optimizer

    def _need_compiled(self, where: str) -> _Compiled:
        if self._compiled is None:
            raise RuntimeError(f"{type(self).__name__}.{where}: call model.compile(optimizer, "
                               "loss, metrics) first")
        return self._compiled

    # -- building before the step is traced --------------------------------------------------

    def _ready(self, x_spec_source, training: bool) -> None:
        """Builds the weights (and the optimizer's slots) eagerly under the strategy's scope,
        from one batch's features, so the traced steps only read them."""
        c = self._compiled
        with c.execution.scope():
            # (a model without call(), e.g. the guide's GAN, builds its parts in its step)
            if (not self.variables or not getattr(self, "built", True)) and \
                    type(self).call is not Layer.call:
                x = x_spec_source
                if c.execution.num_replicas > 1:  # the first replica's (PerReplica) values
                    x = fit_lib.first_replica(x)
                self(x, training=False)  # an eager pass over the first batch builds it
            if training:
                c.optimizer.build(list(self.trainable_variables))

    # -- the loops ---------------------------------------------------------------------------

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None,
            validation_steps=None, **kwargs):
        """Trains for `epochs` epochs and returns a `History` (Keras's Model.fit).

        Args:
          x, y: numpy arrays (or tensors) of features and labels, batched by `batch_size`
            (default 32) and shuffled each epoch when `shuffle`; or `x` an em.data.Dataset
            of (features, labels) or (features, labels, sample_weight) batches, or a
            `DatasetCreator` (then `steps_per_epoch` is required). Under a strategy the
            data is distributed here.
          epochs, initial_epoch: train epochs `initial_epoch` .. `epochs - 1`.
          steps_per_epoch: batches per epoch; one iterator then continues across epochs
            (default: one full pass over the data per epoch).
          validation_data: (x, y) or (x, y, sample_weight) arrays or a Dataset, evaluated
            after each epoch (`val_loss`, `val_<metric>`); `validation_steps` limits it.
          validation_split: with array inputs and no validation_data, the last fraction
            of the examples (before shuffling) is held out for validation instead.
          sample_weight: with array inputs, one weight per example: the loss (and the
            metrics) weight each example's value by it.
          class_weight: with array inputs, {class index: weight}: each example weighted by
            its label's class (times its sample_weight).
          callbacks: `em.keras.callbacks.Callback`s (`self.model.stop_training = True`
            ends training after the epoch).
          verbose: 0 is silent; otherwise one line of logs per epoch.

        Each batch runs `self.train_step(data)` (override it to customise training), or a
        built-in compiled step computing the same logs.

        Under ParameterServerStrategy, x must be a DatasetCreator (or a callable
        dataset_fn(input_context)) and steps_per_epoch is required; the steps are scheduled
        on the workers (ps_execution.py).
        """
        fit_lib.check_extra(kwargs, "Model.fit")
        c = self._need_compiled("fit")
        fit_lib.check_steps(steps_per_epoch, "Model.fit: steps_per_epoch")
        for what, value in (("epochs", epochs), ("initial_epoch", initial_epoch)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"Model.fit: {what} must be an integer >= 0, got {value!r}")
        if validation_split and validation_data is None:
            (x, y, *sw), validation_data = fit_lib.split_validation(
                x, y, validation_split, "Model.fit", sample_weight)
            sample_weight = sw[0] if sw else None
        if class_weight is not None:  # (after the split: not for the validation data)
            if isinstance(x, (Dataset, fit_lib.DatasetCreator)) or y is None:
                raise ValueError("Model.fit: class_weight needs array inputs x and y; with a "
                                 "dataset give (x, y, sample_weight) elements instead")
            weights = fit_lib.class_weights(y, class_weight, "Model.fit")
            sample_weight = weights if sample_weight is None else \
                weights * fit_lib.weights_of(sample_weight, len(weights), "Model.fit")
        if c.execution.coordinated:  # ParameterServerStrategy: scheduled steps (ps_execution.py)
            runners.check_summing(self, sample_weight, "ParameterServerStrategy")
            return c.execution.fit(self, x, y, batch_size, epochs, verbose, callbacks,
                                   validation_data, initial_epoch, steps_per_epoch,
                                   validation_steps)
        data = fit_lib.make_input(x, y, batch_size, None, "Model.fit",
                                  sample_weight=sample_weight)
        arrays = not isinstance(x, (Dataset, fit_lib.DatasetCreator))
        if isinstance(data, fit_lib.DatasetCreator) and steps_per_epoch is None:
            raise ValueError("Model.fit: steps_per_epoch is required with a DatasetCreator "
                             "(its dataset is usually infinite)")
        callbacks, history = with_history(self, callbacks, epochs, steps_per_epoch, verbose)
        runner = runners.runner(self, "train", sample_weight is not None or
                                runners.weighted(data))
        loud = verbose not in (0, False)
        self.stop_training = False
        call_hooks(callbacks, "on_train_begin")
        iterator = None
        order = fit_lib.shuffler() if arrays and shuffle else None
        for epoch in range(initial_epoch, epochs):
            if order is not None:
                data = fit_lib.make_input(x, y, batch_size, order, "Model.fit",
                                          sample_weight=sample_weight)
            call_hooks(callbacks, "on_epoch_begin", epoch)
            if iterator is None or steps_per_epoch is None:
                iterator = iter(self._distributed(data))
            runner.begin()
            steps = 0
            while steps_per_epoch is None or steps < steps_per_epoch:
                try:
                    element = next(iterator)
                except StopIteration:
                    if steps_per_epoch is not None:
                        print(f"Model.fit: the input ran out of data after {steps} steps of "
                              f"epoch {epoch + 1}; training stops (give a dataset of at "
                              f"least steps_per_epoch * epochs batches, e.g. with repeat())",
                              flush=True)
                        self.stop_training = True
                    break
                call_hooks(callbacks, "on_train_batch_begin", steps)
                runner.step(element)
                steps += 1
                call_hooks(callbacks, "on_train_batch_end", steps - 1, runner.logs())
            if not runner.ran:
                if steps_per_epoch is None and epoch == initial_epoch:
                    raise ValueError("Model.fit: the input is empty (no batch to train on)")
                break
            logs = runner.end()
            if validation_data is not None:
                val = self._evaluate_logs(validation_data, validation_steps, callbacks)
                logs.update({f"val_{k}": v for k, v in val.items()})
            if loud:
                fit_lib.print_epoch(epoch, epochs, steps, logs)
            call_hooks(callbacks, "on_epoch_end", epoch, logs)
            if self.stop_training:
                break
        call_hooks(callbacks, "on_train_end")
        return history

    def _distributed(self, data):
        execution = self._compiled.execution
        if isinstance(data, fit_lib.DatasetCreator):
            return execution.distribute_creator(data)
        return execution.distribute(data)

    def _evaluate_logs(self, data, steps, callbacks=()) -> dict:
        """evaluate's loop (and fit's validation), calling the test hooks of `callbacks`
        with Keras 2's logs: the running ones after each batch, the final ones at the end."""
        if isinstance(data, tuple) and len(data) in (2, 3) and \
                not isinstance(data[0], Dataset):
            data = fit_lib.make_input(data[0], data[1], None, None, "validation_data",
                                      sample_weight=data[2] if len(data) == 3 else None)
        else:
            data = fit_lib.make_input(data, None, None, None, "Model.evaluate")
        runner = runners.runner(self, "test", runners.weighted(data))
        call_hooks(callbacks, "on_test_begin")
        runner.begin()
        for n, element in enumerate(self._distributed(data)):
            if steps is not None and n >= steps:
                break
            call_hooks(callbacks, "on_test_batch_begin", n)
            runner.step(element)
            if callbacks:  # (reading the logs syncs the step: only when someone listens)
                call_hooks(callbacks, "on_test_batch_end", n, runner.logs())
        if not runner.ran:
            raise ValueError("Model.evaluate: the input is empty (no batch to evaluate)")
        logs = runner.end()
        call_hooks(callbacks, "on_test_end", logs)
        return logs

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, return_dict=False, **kwargs):
        """The loss and metrics over the data: a float, or a list in `metrics_names`'
        order (a dict with `return_dict`). Each batch runs `self.test_step(data)` (or a
        built-in compiled step computing the same logs); `sample_weight` weighs the
        examples of array inputs; `callbacks` get the test hooks (callback_base.py)."""
        fit_lib.check_extra(kwargs, "Model.evaluate")
        self._need_compiled("evaluate")
        fit_lib.check_steps(steps, "Model.evaluate: steps")
        callbacks = prepared(self, callbacks, {"epochs": 1, "steps": steps, "verbose": verbose})
        if self._compiled.execution.coordinated:
            ps_execution.check_no_callbacks(callbacks, "evaluate")
            runners.check_summing(self, sample_weight, "ParameterServerStrategy", "test")
            return self._compiled.execution.evaluate(self, x, y, batch_size, verbose, steps,
                                                     return_dict)
        if isinstance(x, fit_lib.DatasetCreator):
            raise TypeError("Model.evaluate: pass an em.data.Dataset or arrays (a "
                            "DatasetCreator is for fit)")
        data = fit_lib.make_input(x, y, batch_size, None, "Model.evaluate",
                                  sample_weight=sample_weight)
        logs = self._evaluate_logs(data, steps, callbacks)
        if verbose not in (0, False):
            print(fit_lib.format_logs(logs), flush=True)
        if return_dict:
            return logs
        values = [logs[k] for k in self.metrics_names if k in logs] + \
            [v for k, v in logs.items() if k not in self.metrics_names]
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None,
                **kwargs):
        """The model's outputs for `x` (an array, or a Dataset of feature batches or of
        (features, labels) pairs), concatenated in order into one numpy array. Each batch
        runs `self.predict_step(data)` when overridden (or with run_eagerly), else a
        built-in compiled forward pass; `callbacks` get the predict hooks."""
        fit_lib.check_extra(kwargs, "Model.predict")
        c = self._compiled  # predict needs no compile (its step is kept once compiled)
        execution = c.execution if c is not None else execution_for(self._strategy)
        fit_lib.check_steps(steps, "Model.predict: steps")
        if isinstance(x, fit_lib.DatasetCreator):
            raise TypeError("Model.predict: pass an em.data.Dataset or an array")
        data = fit_lib.make_input(x, None, batch_size, None, "Model.predict", labelled=False)
        callbacks = prepared(self, callbacks, {"epochs": 1, "steps": steps, "verbose": verbose})
        if execution.coordinated:
            ps_execution.check_no_callbacks(callbacks, "predict")
        call_hooks(callbacks, "on_predict_begin")
        custom = self._custom("predict")
        step = None if c is None else (c.step_functions.get("predict") if custom
                                       else c.predict)
        parts = []
        for n, element in enumerate(execution.distribute_predict(data)):
            if steps is not None and n >= steps:
                break
            features = element[0] if isinstance(element, (tuple, list)) else element
            if step is None:
                if c is not None:
                    self._ready(features, training=False)
                elif execution.coordinated and not self.variables:
                    with execution.scope():  # the weights on the parameter servers, not
                        self(features, training=False)  # made (local) by the step's trace
                step = runners.predict_function(self) if custom else \
                    compile_lib.predict_step(self)
                if c is not None and custom:
                    c.step_functions["predict"] = step
                elif c is not None:
                    c.predict = step
            call_hooks(callbacks, "on_predict_batch_begin", n)
            parts.append(execution.gather(step, element if custom else features))
            call_hooks(callbacks, "on_predict_batch_end", n, {"outputs": parts[-1]})
        if not parts:
            raise ValueError("Model.predict: the input is empty")
        call_hooks(callbacks, "on_predict_end")
        return np.concatenate(parts, axis=0)


class Model(TrainingAPI, Layer):
    """keras.Model by subclassing: define the layers in `__init__` and the forward pass in
    `call(inputs, training=None)`.

    Example:
      >>> class Net(em.keras.Model):
      ...     def __init__(self):
      ...         super().__init__()
      ...         self.dense = em.keras.layers.Dense(2)
      ...     def call(self, x, training=None):
      ...         return self.dense(x)
      >>> Net()(em.ones([3, 4])).shape
      TensorShape([3, 2])
    """

    def __init__(self, *args, name=None, trainable=True, **kwargs):
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise TypeError("em.keras.Model(inputs, outputs) (the functional API) is not "
                            "available: subclass em.keras.Model and define call(), or use "
                            "em.keras.Sequential")
        super().__init__(trainable=trainable, name=name, **kwargs)
        self._init_training()

    def __call__(self, inputs, training=None):
        inputs = fit_lib.to_tensors(inputs, self.name)
        with call_context(self):
            if "training" in inspect.signature(self.call).parameters:
                out = self.call(inputs, training=training)
            else:
                out = self.call(inputs)
        self.built = True
        return out


class Sequential(TrainingAPI, layers_core.Sequential):
    """keras.Sequential with the training API (compile / fit / evaluate / predict).

    Example:
      >>> model = em.keras.Sequential([em.keras.layers.Dense(2)])
      >>> model.compile(optimizer="sgd", loss="mse")
      >>> model.fit(np.ones([4, 3]), np.zeros([4, 2]), verbose=0).epoch
      [0]
    """

    def __init__(self, layers=None, name=None, trainable=True):
        super().__init__(layers, name=name, trainable=trainable)
        self._init_training()

    def __call__(self, inputs, training=None):
        out, self.built = super().__call__(inputs, training=training), True
        return out
