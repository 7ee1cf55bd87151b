"""`Model.fit` / `evaluate` / `predict` under `ParameterServerStrategy`, as TF's
parameter-server training with Keras:

- the model's and the optimizer's variables are made under `strategy.scope()`: on the
  parameter servers, large ones sharded by the strategy's `variable_partitioner` (a
  `ShardedVariable`; the layers read it whole, the optimizer updates its shards);
- the input must be a `DatasetCreator` (or a callable `dataset_fn(input_context)`) and
  `steps_per_epoch` is required: each worker builds its own pipeline
  (`coordinator.create_per_worker_dataset(lambda: strategy.distribute_datasets_from_function(
  creator))`), and one iterator per worker continues across the epochs;
- each step is `coordinator.schedule(train_function, args=(per_worker_iterator,))`, where
  `train_function` takes `next(iterator)` on the worker running it and calls the compiled
  step there (each worker is one replica: the step's cross-replica sum is the identity);
  `coordinator.join()` ends each epoch, whose logs are summed from the steps' RemoteValues;
- batch-level callbacks are a ValueError (TF's: batch logs would be RemoteValues not ready
  yet); epoch-level ones run as usual;
- `evaluate` (and `validation_data`) take a DatasetCreator and `steps`, scheduled the same
  way; `predict` runs on the coordinator (TF's), reading the variables from the parameter
  servers.
"""

from __future__ import annotations

import numpy as np

from ember.frontend.tensor import constant
from ember.runtime.data import Dataset, OutOfRangeError, structure
from ember.runtime.keras import compile as compile_lib
from ember.runtime.keras import fit as fit_lib
from ember.runtime.keras.callback_base import Callback, call_hooks, with_history
from ember.runtime.keras.dispatch import Execution

_BATCH_HOOKS = ("on_batch_begin", "on_batch_end", "on_train_batch_begin",
                "on_train_batch_end", "on_test_batch_begin", "on_test_batch_end",
                "on_predict_batch_begin", "on_predict_batch_end")


class ParameterServerExecution(Execution):
    """ParameterServerStrategy: the steps scheduled on the workers by the strategy's
    ClusterCoordinator (made on first use, as TF's fit makes it)."""

    coordinated = True

    def __init__(self, strategy):
        super().__init__(strategy)
        self._coordinator = None

    @property
    def coordinator(self):
        if self._coordinator is None:
            from ember.runtime.distribute.coordinator import ClusterCoordinator
            self._coordinator = ClusterCoordinator(self.strategy)
        return self._coordinator

    def scope(self):
        return self.strategy.scope()

    def distribute(self, dataset):
        raise ValueError(_need_creator("Model.fit", dataset, "steps_per_epoch"))

    def distribute_creator(self, creator):
        """The per-worker iterators of `creator` (pass them to `coordinator.schedule`)."""
        return iter(self.per_worker_dataset(creator))

    def per_worker_dataset(self, creator):
        strategy = self.strategy
        return self.coordinator.create_per_worker_dataset(
            lambda: strategy.distribute_datasets_from_function(creator,
                                                               creator.input_options))

    # predict: on the coordinator (TF swaps the strategy out for predict), the base
    # class's distribute_predict / gather; the variables are read from the ps.

    # -- fit ------------------------------------------------------------------------------

    def fit(self, model, x, y, batch_size, epochs, verbose, callbacks, validation_data,
            initial_epoch, steps_per_epoch, validation_steps):
        """Model.fit's loop (its arguments already checked by Model.fit)."""
        c = model._compiled
        creator = as_creator(x, y, batch_size, "Model.fit", "steps_per_epoch")
        if steps_per_epoch is None:
            raise ValueError("Model.fit: steps_per_epoch is required with "
                             "ParameterServerStrategy (each worker's dataset is usually "
                             "infinite: pass e.g. model.fit(dataset_creator, epochs=5, "
                             "steps_per_epoch=20))")
        validation = None
        if validation_data is not None:
            validation = as_creator(validation_data, None, None, "Model.fit: validation_data",
                                    "validation_steps")
            _need_steps(validation_steps, "Model.fit: validation_steps",
                        "model.fit(..., validation_data=creator, validation_steps=10)")
        callbacks, history = with_history(model, callbacks, epochs, steps_per_epoch,
                                                  verbose)
        check_callbacks(callbacks)
        names = [name for name, _ in c.metrics]
        dataset = self.per_worker_dataset(creator)
        spec = _pair_spec(dataset, "Model.fit")
        if c.train is None:
            _build(model, spec, training=True)
            c.train = compile_lib.train_step(model, c.loss_fn, c.metrics, c.optimizer, self)
        iterator = iter(dataset)
        train_function = self._function(c.train, "Model.fit", steps_per_epoch)
        val_dataset = None if validation is None else self.per_worker_dataset(validation)
        model.stop_training = False
        call_hooks(callbacks, "on_train_begin")
        for epoch in range(initial_epoch, epochs):
            call_hooks(callbacks, "on_epoch_begin", epoch)
            logs = self._steps(train_function, iterator, steps_per_epoch, names)
            if val_dataset is not None:
                val = self.evaluate_logs(model, val_dataset, validation_steps)
                logs.update({f"val_{k}": v for k, v in val.items()})
            if verbose not in (0, False):
                fit_lib.print_epoch(epoch, epochs, steps_per_epoch, logs)
            call_hooks(callbacks, "on_epoch_end", epoch, logs)
            if model.stop_training:
                break
        call_hooks(callbacks, "on_train_end")
        return history

    # -- evaluate -------------------------------------------------------------------------

    def evaluate(self, model, x, y, batch_size, verbose, steps, return_dict):
        """Model.evaluate: `steps` steps of `x` (a DatasetCreator) scheduled on the
        workers; the loss and metrics over all their batches."""
        creator = as_creator(x, y, batch_size, "Model.evaluate", "steps")
        _need_steps(steps, "Model.evaluate: steps", "model.evaluate(dataset_creator, steps=10)")
        logs = self.evaluate_logs(model, self.per_worker_dataset(creator), steps)
        if verbose not in (0, False):
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()), flush=True)
        if return_dict:
            return logs
        return logs["loss"] if len(logs) == 1 else list(logs.values())

    def evaluate_logs(self, model, dataset, steps: int) -> dict:
        c = model._compiled
        spec = _pair_spec(dataset, "Model.evaluate")
        if c.test is None:
            _build(model, spec, training=False)
            c.test = compile_lib.test_step(model, c.loss_fn, c.metrics, self)
        test_function = self._function(c.test, "Model.evaluate", steps)
        return self._steps(test_function, iter(dataset), steps, [n for n, _ in c.metrics])

    # -- the steps ------------------------------------------------------------------------

    def _steps(self, function, iterator, steps: int, names: list) -> dict:
        """Schedules `steps` calls of `function(iterator)`, waits for them all (join) and
        sums their outputs into logs."""
        coordinator = self.coordinator
        results = [coordinator.schedule(function, args=(iterator,)) for _ in range(steps)]
        coordinator.join()
        sums = sum(np.asarray(r.fetch(), np.float64) for r in results)
        return fit_lib.logs_of(names, sums)

    def _function(self, step, where: str, steps: int):
        """The scheduled function of a compiled step: next(iterator) on the worker, then
        the step as the worker's replica."""
        strategy = self.strategy

        def function(iterator):
            try:
                element = next(iterator)
            except StopIteration:
                raise OutOfRangeError(
                    f"{where}: a worker's input ran out of data (each worker reads its own "
                    f"pipeline and takes some of the {steps} steps): make the "
                    "DatasetCreator's dataset repeat (dataset.repeat()), or lower the steps"
                ) from None
            x, y = fit_lib.pairs(element, where)
            return strategy.run(step, args=(x, y))
        function.__name__ = f"{where.split('.')[-1]}_function"
        return function


def _pair_spec(dataset, where: str):
    """The element_spec of the per-worker datasets (all alike): a (features, labels) pair,
    checked here rather than by every worker."""
    spec = dataset._values[0].element_spec
    if not (isinstance(spec, (tuple, list)) and len(spec) == 2):
        raise ValueError(f"{where}: each element of the DatasetCreator's dataset must be a "
                         f"(features, labels) pair, its element_spec is {spec!r}")
    return spec


def _build(model, spec, training: bool) -> None:
    """Builds the model's weights (and the optimizer's slots) on the coordinator under the
    strategy's scope, from zeros of one batch of the features' spec."""
    model._ready(structure.map_structure(_example, spec[0]), training=training)


def _example(spec):
    """One batch of zeros (or empty strings) of a TensorSpec (unknown dims: 1)."""
    dims = [1 if d is None else d for d in spec.shape.as_list()]
    if spec.dtype.np_dtype.kind in "OSU":
        return constant(np.full(dims, b"", dtype=object))
    return constant(np.zeros(dims, dtype=spec.dtype.np_dtype), dtype=spec.dtype)


def _need_creator(where: str, x, steps: str) -> str:
    got = "an em.data.Dataset" if isinstance(x, Dataset) else type(x).__name__
    return (f"{where}: with ParameterServerStrategy, the input must be an "
            "em.keras.utils.experimental.DatasetCreator (or a callable dataset_fn("
            f"input_context) returning an em.data.Dataset), got {got}: each "
            "worker builds its own input pipeline from it. Wrap the pipeline, e.g. "
            "em.keras.utils.experimental.DatasetCreator(lambda input_context: dataset), "
            f"and give {steps}")


def as_creator(x, y, batch_size, where: str, steps: str) -> fit_lib.DatasetCreator:
    """x as a DatasetCreator (a callable is wrapped in one); anything else a ValueError."""
    if isinstance(x, fit_lib.DatasetCreator):
        creator = x
    elif callable(x) and not isinstance(x, Dataset):
        creator = fit_lib.DatasetCreator(x)
    else:
        raise ValueError(_need_creator(where, x, steps))
    for name, value in (("y", y), ("batch_size", batch_size)):
        if value is not None:
            raise ValueError(f"{where}: {name} must not be given with a DatasetCreator (its "
                             "dataset gives (features, labels) batches)")
    return creator


def _need_steps(steps, what: str, example: str) -> None:
    if steps is None:
        raise ValueError(f"{what} is required with ParameterServerStrategy and a "
                         f"DatasetCreator (its dataset is usually infinite), e.g. {example}")
    fit_lib.check_steps(steps, what)


def _implements_batch_hooks(cb) -> bool:
    if not isinstance(cb, Callback):
        return any(hasattr(cb, hook) for hook in _BATCH_HOOKS)
    return any(getattr(type(cb), hook, None) is not getattr(Callback, hook, None)
               for hook in _BATCH_HOOKS)


def check_callbacks(callbacks: list) -> None:
    """TF's rule: no batch-level callbacks with ParameterServerStrategy."""
    unsupported = [cb for cb in callbacks if _implements_batch_hooks(cb)]
    if unsupported:
        raise ValueError("Batch-level `Callback`s are not supported with "
                         "`ParameterServerStrategy` (the steps run asynchronously on the "
                         "workers; use on_epoch_begin / on_epoch_end). Found unsupported "
                         f"callbacks: {unsupported}")


def check_no_callbacks(callbacks, where: str) -> None:
    """evaluate / predict under ParameterServerStrategy take no callbacks."""
    if callbacks:
        raise ValueError(f"Model.{where}: callbacks are not supported with "
                         "ParameterServerStrategy (its steps run asynchronously on the "
                         "workers); give them to fit (epoch-level hooks)")
