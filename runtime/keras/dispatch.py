"""How `Model.fit` / `evaluate` / `predict` run on a distribution strategy.

`execution_for(strategy)` is the one place that looks at the strategy: it returns an
`Execution`, which knows how to

- `distribute(dataset)` / `distribute_creator(creator)`: turn the input (an em.data.Dataset
  of global batches, or a `DatasetCreator`) into an iterable of step inputs;
- `sum(tensor)`: inside the traced step, the sum of a value over the replicas (the step
  divides the loss by the global number of examples, so the summed gradients are the
  gradients of the global mean: N replicas train exactly as 1 on the same global batch);
- `run(step, inputs)`: call the compiled step on one step input and return its outputs as
  numpy values (the cross-replica sums, identical on every replica);
- `distribute_predict(dataset)` / `gather(step, inputs)`: predict's inputs and the outputs
  of one of them as one array, in order (with several workers each predicts all of it);
- `scope()`: the context under which the model's and the optimizer's variables are made.

A new strategy plugs in with one more `Execution` subclass and one more branch in
`execution_for`. ParameterServerStrategy's (ps_execution.py) is `coordinated`: Model.fit and
evaluate hand it their whole loop, which schedules the steps on the workers.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ember.runtime.distribute.input import InputContext
from ember.runtime.keras.fit import to_logs
from ember.runtime.distribute.strategy import (MirroredStrategy, _DefaultStrategy,
                                               get_replica_context)


class Execution:
    """Single-replica execution: the step runs on the calling thread."""

    num_replicas = 1
    coordinated = False  # True: Model.fit / evaluate schedule steps (ParameterServerExecution)

    def __init__(self, strategy=None):
        self.strategy = strategy

    def scope(self):
        return contextlib.nullcontext()

    def distribute(self, dataset):
        return dataset

    def distribute_creator(self, creator):
        return creator(InputContext())

    def sum(self, tensor):
        return tensor

    def run(self, step, inputs) -> list:
        return [t._numpy_array() for t in _as_list(step(*inputs))]

    def run_logs(self, step, element, where: str) -> dict:
        """A Keras step (`model.train_step`) on one element: the logs of its dict."""
        return to_logs(step(element), where)

    def distribute_predict(self, dataset):
        """predict's input: the step inputs whose outputs `gather` returns in order."""
        return dataset

    def gather(self, step, inputs) -> np.ndarray:
        """predict: the step's output for the whole step input, as one array."""
        return step(inputs)._numpy_array()


class MirroredExecution(Execution):
    """MirroredStrategy (one or several workers): the global batches split between the
    replicas, the step run by `strategy.run` on every replica, the gradients all-reduced by
    `optimizer.apply_gradients` inside the compiled step."""

    def __init__(self, strategy):
        super().__init__(strategy)
        self.num_replicas = strategy.num_replicas_in_sync

    def scope(self):
        return self.strategy.scope()

    def distribute(self, dataset):
        return self.strategy.experimental_distribute_dataset(dataset)

    def distribute_creator(self, creator):
        return self.strategy.distribute_datasets_from_function(creator)

    def sum(self, tensor):
        return get_replica_context().all_reduce("SUM", tensor)

    def run(self, step, inputs) -> list:
        outputs = self.strategy.run(step, args=tuple(inputs))
        return [self.strategy.experimental_local_results(t)[0]._numpy_array()
                for t in _as_list(outputs)]

    def run_logs(self, step, element, where: str) -> dict:
        outputs = self.strategy.run(step, args=(element,))
        if isinstance(outputs, dict):  # every replica's values agree: the first one's
            outputs = {k: self.strategy.experimental_local_results(v)[0]
                       for k, v in outputs.items()}
        return to_logs(outputs, where)

    def distribute_predict(self, dataset):
        if self.strategy._input_workers()[0] > 1:  # each worker predicts everything itself
            return dataset                            # (with its copy of the weights)
        return self.distribute(dataset)

    def gather(self, step, inputs) -> np.ndarray:
        if self.strategy._input_workers()[0] > 1:
            return super().gather(step, inputs)
        outputs = self.strategy.run(step, args=(inputs,))
        parts = [t._numpy_array() for t in self.strategy.experimental_local_results(
            outputs)]
        return np.concatenate(parts, axis=0)


def execution_for(strategy) -> Execution:
    """The Execution of `strategy` (None or the default strategy: single-replica)."""
    if strategy is None or isinstance(strategy, _DefaultStrategy):
        return Execution()
    if isinstance(strategy, MirroredStrategy):  # MultiWorkerMirroredStrategy subclasses it
        return MirroredExecution(strategy)
    if getattr(strategy, "_should_use_with_coordinator", False):  # ParameterServerStrategy
        from ember.runtime.keras.ps_execution import ParameterServerExecution
        return ParameterServerExecution(strategy)
    raise TypeError(f"Model.fit: the strategy {strategy!r} is not supported (use "
                    "em.distribute.MirroredStrategy or MultiWorkerMirroredStrategy)")


def _as_list(outputs) -> list:
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
