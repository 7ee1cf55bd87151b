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
from ember.frontend.training.layers_core import Layer
from ember.runtime.data import Dataset
from ember.runtime.distribute.strategy import get_strategy
from ember.runtime.keras import compile as compile_lib
from ember.runtime.keras import fit as fit_lib
from ember.runtime.keras import weights as weights_lib
from ember.runtime.keras.dispatch import execution_for


class _Compiled:
    """What compile and fit keep (not walked for variables: the optimizer's are its own)."""

    def __init__(self, optimizer, loss_fn, metrics, execution):
        self.optimizer, self.loss_fn, self.metrics = optimizer, loss_fn, metrics
        self.execution = execution
        self.train = self.test = self.predict = None


class TrainingAPI:
    """compile / fit / evaluate / predict / summary / get_weights / set_weights."""

    _ignored_attributes = Layer._ignored_attributes | {"_strategy", "_compiled"}

    def _init_training(self):
        self._strategy = get_strategy()  # the scope the model is made under
        self._compiled = None
        self.stop_training = False

    @property
    def distribute_strategy(self):
        return self._strategy

    def compile(self, optimizer="rmsprop", loss=None, metrics=None):
        if loss is None:
            raise ValueError(f"{type(self).__name__}.compile: a loss is required (a name such "
                             "as 'sparse_categorical_crossentropy', an em.losses.Loss or a "
                             "callable)")
        execution = execution_for(self._strategy)
        loss_fn, kind = compile_lib.resolve_loss(loss)
        with execution.scope():
            optimizer = compile_lib.resolve_optimizer(optimizer)
        self._compiled = _Compiled(optimizer, loss_fn, compile_lib.resolve_metrics(metrics, kind),
                                   execution)

    @property
    def optimizer(self):
        return None if self._compiled is None else self._compiled.optimizer

    @property
    def metrics_names(self) -> list:
        return ["loss"] + [name for name, _ in self._need_compiled("metrics_names").metrics]

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
            if not self.variables or not getattr(self, "built", True):
                x = x_spec_source
                if c.execution.num_replicas > 1:  # the first replica's (PerReplica) values
                    x = fit_lib.first_replica(x)
                self(x, training=False)  # an eager pass over the first batch builds it
            if training:
                c.optimizer.build(list(self.trainable_variables))

    # -- the loops ---------------------------------------------------------------------------

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None):
        """Trains for `epochs` epochs and returns a `History` (Keras's Model.fit).

        Args:
          x, y: numpy arrays (or tensors) of features and labels, batched by `batch_size`
            (default 32) and shuffled each epoch when `shuffle`; or `x` an em.data.Dataset
            of (features, labels) batches, or a `DatasetCreator` (then `steps_per_epoch`
            is required). Under a strategy the data is distributed here.
          epochs, initial_epoch: train epochs `initial_epoch` .. `epochs - 1`.
          steps_per_epoch: batches per epoch; one iterator then continues across epochs
            (default: one full pass over the data per epoch).
          validation_data: (x, y) arrays or a Dataset, evaluated after each epoch
            (`val_loss`, `val_<metric>`); `validation_steps` limits it.
          validation_split: with array inputs and no validation_data, the last fraction
            of the examples (before shuffling) is held out for validation instead.
          callbacks: `em.keras.callbacks.Callback`s (`self.model.stop_training = True`
            ends training after the epoch).
          verbose: 0 is silent; otherwise one line of logs per epoch.

        Under ParameterServerStrategy, x must be a DatasetCreator (or a callable
        dataset_fn(input_context)) and steps_per_epoch is required; the steps are scheduled
        on the workers (ps_execution.py).
        """
        c = self._need_compiled("fit")
        fit_lib.check_steps(steps_per_epoch, "Model.fit: steps_per_epoch")
        for what, value in (("epochs", epochs), ("initial_epoch", initial_epoch)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"Model.fit: {what} must be an integer >= 0, got {value!r}")
        if validation_split and validation_data is None:
            (x, y), validation_data = fit_lib.split_validation(x, y, validation_split,
                                                               "Model.fit")
        if c.execution.coordinated:  # ParameterServerStrategy: scheduled steps (ps_execution.py)
            return c.execution.fit(self, x, y, batch_size, epochs, verbose, callbacks,
                                   validation_data, initial_epoch, steps_per_epoch,
                                   validation_steps)
        data = fit_lib.make_input(x, y, batch_size, None, "Model.fit")
        arrays = not isinstance(x, (Dataset, fit_lib.DatasetCreator))
        if isinstance(data, fit_lib.DatasetCreator) and steps_per_epoch is None:
            raise ValueError("Model.fit: steps_per_epoch is required with a DatasetCreator "
                             "(its dataset is usually infinite)")
        callbacks, history = fit_lib.with_history(self, callbacks, epochs, steps_per_epoch,
                                                  verbose)
        names = [name for name, _ in c.metrics]
        loud = verbose not in (0, False)
        self.stop_training = False
        _call(callbacks, "on_train_begin")
        iterator = None
        order = fit_lib.shuffler() if arrays and shuffle else None
        for epoch in range(initial_epoch, epochs):
            if order is not None:
                data = fit_lib.make_input(x, y, batch_size, order, "Model.fit")
            _call(callbacks, "on_epoch_begin", epoch)
            if iterator is None or steps_per_epoch is None:
                iterator = iter(self._distributed(data))
            sums, steps = None, 0
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
                _call(callbacks, "on_train_batch_begin", steps)
                out = self._train_on(fit_lib.pairs(element, "Model.fit"))
                sums = out if sums is None else sums + out
                steps += 1
                _call(callbacks, "on_train_batch_end", steps - 1,
                      fit_lib.logs_of(names, sums))
            if sums is None:
                if steps_per_epoch is None and epoch == initial_epoch:
                    raise ValueError("Model.fit: the input is empty (no batch to train on)")
                break
            logs = fit_lib.logs_of(names, sums)
            if validation_data is not None:
                val = self._evaluate_logs(validation_data, validation_steps)
                logs.update({f"val_{k}": v for k, v in val.items()})
            if loud:
                fit_lib.print_epoch(epoch, epochs, steps, logs)
            _call(callbacks, "on_epoch_end", epoch, logs)
            if self.stop_training:
                break
        _call(callbacks, "on_train_end")
        return history

    def _distributed(self, data):
        execution = self._compiled.execution
        if isinstance(data, fit_lib.DatasetCreator):
            return execution.distribute_creator(data)
        return execution.distribute(data)

    def _train_on(self, xy) -> np.ndarray:
        c = self._compiled
        if c.train is None:
            self._ready(xy[0], training=True)
            c.train = compile_lib.train_step(self, c.loss_fn, c.metrics, c.optimizer,
                                             c.execution)
        return np.asarray(c.execution.run(c.train, xy), np.float64)

    def _evaluate_logs(self, data, steps) -> dict:
        c = self._compiled
        if isinstance(data, tuple) and len(data) == 2 and not isinstance(data[0], Dataset):
            data = fit_lib.make_input(data[0], data[1], None, None, "validation_data")
        else:
            data = fit_lib.make_input(data, None, None, None, "Model.evaluate")
        sums, n = None, 0
        for element in self._distributed(data):
            if steps is not None and n >= steps:
                break
            xy = fit_lib.pairs(element, "Model.evaluate")
            if c.test is None:
                self._ready(xy[0], training=False)
                c.test = compile_lib.test_step(self, c.loss_fn, c.metrics, c.execution)
            out = np.asarray(c.execution.run(c.test, xy), np.float64)
            sums = out if sums is None else sums + out
            n += 1
        if sums is None:
            raise ValueError("Model.evaluate: the input is empty (no batch to evaluate)")
        return fit_lib.logs_of([name for name, _ in c.metrics], sums)

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", steps=None,
                 return_dict=False):
        """The mean loss (and metrics) over the data: a float, or [loss, metrics...]."""
        self._need_compiled("evaluate")
        fit_lib.check_steps(steps, "Model.evaluate: steps")
        if self._compiled.execution.coordinated:  # ParameterServerStrategy (ps_execution.py)
            return self._compiled.execution.evaluate(self, x, y, batch_size, verbose, steps,
                                                     return_dict)
        if isinstance(x, fit_lib.DatasetCreator):
            raise TypeError("Model.evaluate: pass an em.data.Dataset or arrays (a "
                            "DatasetCreator is for fit)")
        data = fit_lib.make_input(x, y, batch_size, None, "Model.evaluate")
        logs = self._evaluate_logs(data, steps)
        if verbose not in (0, False):
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()), flush=True)
        if return_dict:
            return logs
        return logs["loss"] if len(logs) == 1 else list(logs.values())

    def predict(self, x, batch_size=None, verbose="auto", steps=None):
        """The model's outputs for `x` (an array, or a Dataset of feature batches or of
        (features, labels) pairs), concatenated in order into one numpy array."""
        c = self._compiled  # predict needs no compile (its step is kept once compiled)
        execution = c.execution if c is not None else execution_for(self._strategy)
        fit_lib.check_steps(steps, "Model.predict: steps")
        if isinstance(x, fit_lib.DatasetCreator):
            raise TypeError("Model.predict: pass an em.data.Dataset or an array")
        data = fit_lib.make_input(x, None, batch_size, None, "Model.predict", labelled=False)
        step = c.predict if c is not None else None
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
                step = compile_lib.predict_step(self)
                if c is not None:
                    c.predict = step
            parts.append(execution.gather(step, features))
        if not parts:
            raise ValueError("Model.predict: the input is empty")
        del verbose
        return np.concatenate(parts, axis=0)

    # -- weights and summary -----------------------------------------------------------------

    def get_weights(self) -> list:
        """One numpy array per weight (a ShardedVariable's shards concatenated)."""
        return weights_lib.get_weights(self)

    def set_weights(self, weights) -> None:
        """Assigns `weights`, in get_weights's order and shapes."""
        weights_lib.set_weights(self, weights)

    def summary(self, print_fn=print) -> None:
        """Prints each layer with its number of parameters, and the totals (Keras's
        ValueError when the model is not built yet: its weights do not exist)."""
        if not self.built and not self.variables:
            raise ValueError(f"Model '{self.name}': this model has not yet been built. Build "
                             "the model first by calling `build()` or by calling the model "
                             "on a batch of data.")
        layers = getattr(self, "layers", None)
        if layers is None:
            layers = [m for m in vars(self).values() if isinstance(m, Layer)]
        rows = [(f"{getattr(l, 'name', '?')} ({type(l).__name__})",
                 sum(int(np.prod(v.shape)) for v in getattr(l, "variables", ())))
                for l in layers]
        width = max([len(r[0]) for r in rows] + [20]) + 2
        line = "_" * (width + 12)
        out = [f'Model: "{self.name}"', line, f"{'Layer (type)':<{width}}{'Param #':>12}",
               "=" * (width + 12)]
        out += [f"{name:<{width}}{count:>12,}" for name, count in rows]
        trainable = sum(int(np.prod(v.shape)) for v in self.trainable_variables)
        total = sum(int(np.prod(v.shape)) for v in self.variables)
        out += ["=" * (width + 12), f"Total params: {total:,}",
                f"Trainable params: {trainable:,}",
                f"Non-trainable params: {total - trainable:,}", line]
        for text in out:
            print_fn(text)


def _call(callbacks, hook: str, *args) -> None:
    for cb in callbacks:
        method = getattr(cb, hook, None)
        if method is not None:
            method(*args)


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
        out = super().__call__(inputs, training=training)
        self.built = True
        return out
