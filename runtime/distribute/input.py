"""Distributed input as tf.distribute: `strategy.experimental_distribute_dataset` splits each
global batch into per-replica batches, `strategy.distribute_datasets_from_function` hands the
replicas consecutive elements of the datasets an input function builds (`InputContext`).

The pipeline of `experimental_distribute_dataset`, as TF's input_lib (the guide's tables):
  1. em.data's `rebatch_for_replicas`: each global batch of n elements becomes
     `num_replicas_in_sync` pieces of ceil(n / N) elements, filled in order; the pieces left
     without elements are empty batches, of shape (0, ...) (range(8).batch(4) on 3 replicas:
     [0,1], [2,3], []);
  2. the strategy's `_auto_shard(dataset, num_workers, worker_index)`: the identity on one
     worker; a multi-worker strategy applies em.data's `auto_shard(dataset, num_workers,
     worker_index, num_replicas_in_sync)` there (FILE sharding sees through the rebatch,
     DATA sharding keeps every num_workers-th piece: the guide's worker tables);
  3. a prefetch of the worker's replica count (`num_replicas_in_sync` on one worker);
  4. each step takes the next piece for each local replica. A replica whose input has ended
     gets an empty batch while another still has data (`_sync_has_data` asks the other
     workers); when none has, the iterator ends (em.errors.OutOfRangeError / StopIteration).
One replica takes the dataset as it is (no rebatching, no prefetch, batched or not: TF's).
"""

from __future__ import annotations

import numpy as np

from ember.frontend.tensor import constant
from ember.runtime.data import Dataset, Optional, OutOfRangeError
from ember.runtime.data import structure
from ember.runtime.data.autoshard import rebatch_for_replicas
from ember.runtime.distribute import gpu_replicas
from ember.runtime.distribute.values import PerReplica, PerReplicaSpec


class InputContext:
    """tf.distribute.InputContext: what the input function of
    `distribute_datasets_from_function` is told about the input pipelines and replicas.

    Example:
      >>> import ember as em
      >>> em.distribute.InputContext(num_replicas_in_sync=2).get_per_replica_batch_size(16)
      8
    """

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0,
                 num_replicas_in_sync: int = 1):
        for what, value, low in (("num_input_pipelines", num_input_pipelines, 1),
                                 ("input_pipeline_id", input_pipeline_id, 0),
                                 ("num_replicas_in_sync", num_replicas_in_sync, 1)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                    or value < low:
                raise ValueError(f"InputContext: {what} must be an integer >= {low}, got "
                                 f"{value!r}")
        if input_pipeline_id >= num_input_pipelines:
            raise ValueError(f"InputContext: input_pipeline_id {input_pipeline_id} is out of "
                             f"range for {num_input_pipelines} input pipeline(s)")
        self._num_input_pipelines = int(num_input_pipelines)
        self._input_pipeline_id = int(input_pipeline_id)
        self._num_replicas_in_sync = int(num_replicas_in_sync)

    @property
    def num_input_pipelines(self) -> int:
        return self._num_input_pipelines

    @property
    def input_pipeline_id(self) -> int:
        return self._input_pipeline_id

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """`global_batch_size` / `num_replicas_in_sync` (ValueError unless it divides)."""
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError(f"The `global_batch_size` {global_batch_size!r} is not divisible "
                             f"by `num_replicas_in_sync` {self._num_replicas_in_sync!r} ")
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self) -> str:
        return (f"tf.distribute.InputContext(input pipeline id {self.input_pipeline_id}, "
                f"total: {self.num_input_pipelines})")

    __repr__ = __str__


def _check_batched(spec, n: int) -> None:
    """TF's error for a dataset whose elements cannot be split between n replicas."""
    for i, component in enumerate(structure.flatten(spec)):
        if component.shape.rank == 0:
            raise ValueError(
                "Call the `batch` method on the input Dataset in order to be able to split "
                f"your input across {n} replicas.\n Please see the tf.distribute.Strategy "
                f"guide. (experimental_distribute_dataset: component {i} of an element is "
                f"a scalar, {component}: batch the dataset with the global batch size first)")


def _empty_like(spec, pieces: list):
    """An empty batch (first dimension 0) of the structure `spec`, its other dimensions
    those of a replica's piece of the same step (unknown ones 0 if there is none)."""
    model = next((p for p in pieces if p is not None), None)
    if model is not None:
        return structure.map_structure(lambda t: constant(
            np.zeros((0,) + tuple(t.shape)[1:], t.dtype.np_dtype), dtype=t.dtype), model)

    def empty(s):
        dims = [0] + [d or 0 for d in (s.shape.dims or [None])[1:]]
        return constant(np.zeros(dims, dtype=s.dtype.np_dtype), dtype=s.dtype)
    return structure.map_structure(empty, spec)


class DistributedDataset:
    """tf.distribute.DistributedDataset: iterate it (`for x in ...`, `iter`) for one
    element per step, a PerReplica value for each component (plain tensors on one replica).
    It is not an em.data.Dataset: it cannot be transformed further."""

    def __init__(self, strategy, make_pieces, piece_spec, local_replicas: int):
        self._strategy = strategy
        self._make_pieces = make_pieces  # () -> an iterator of per-replica pieces
        self._piece_spec = piece_spec
        self._local = local_replicas

    @property
    def element_spec(self):
        """The spec of an element: per component a TensorSpec (one replica) or a
        PerReplicaSpec of the replicas' TensorSpecs."""
        if self._local == 1:
            return self._piece_spec
        return structure.map_structure(lambda s: PerReplicaSpec(*[s] * self._local),
                                       self._piece_spec)

    def __iter__(self):
        from ember.frontend.tracing import current_graph
        if current_graph() is not None:  # iter() inside em.function: pulls when it runs
            from ember.runtime.distribute.staged import iterator_over
            return iterator_over(self)
        return DistributedIterator(self)

    # passed to or captured by an em.function (staged.py)
    def __tracing_type__(self, context):
        from ember.runtime.distribute.staged import trace_type
        return trace_type(self, "dataset")

    def __ember_components__(self):
        from ember.runtime.data.host_bridge import handle_of
        return [handle_of(self)]

    def __ember_rebuild__(self, parts):
        from ember.runtime.distribute.staged import rebuild
        return rebuild(self, "dataset", parts)

    def __ember_staged_iter__(self):
        from ember.runtime.distribute.staged import iterator_over
        return iterator_over(self)

    def __repr__(self) -> str:
        return f"<em.distribute.DistributedDataset element_spec={self.element_spec}>"


class DistributedIterator:
    """tf.distribute.DistributedIterator: `next(it)`, `get_next()` (OutOfRangeError at the
    end), `get_next_as_optional()` and `element_spec`."""

    def __init__(self, dataset: DistributedDataset):
        self._dataset = dataset
        self._pieces = dataset._make_pieces()
        self._done = False

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        return self

    # passed to or captured by an em.function (staged.py)
    def __tracing_type__(self, context):
        from ember.runtime.distribute.staged import trace_type
        return trace_type(self, "iterator")

    def __ember_components__(self):
        from ember.runtime.data.host_bridge import handle_of
        return [handle_of(self)]

    def __ember_rebuild__(self, parts):
        from ember.runtime.distribute.staged import rebuild
        return rebuild(self, "iterator", parts)

    def __ember_staged_iter__(self):
        from ember.runtime.distribute.staged import captured_iterator
        return captured_iterator(self)

    def __next__(self):
        from ember.runtime.distribute.strategy import replica_index
        if replica_index() is not None:
            raise ValueError("next(iterator) should be called from outside of replica_fn. e.g. "
                             "strategy.run(replica_fn, args=(next(iterator),))")
        pieces, has_data = [], False
        for _ in range(self._dataset._local):
            piece = None if self._done else next(self._pieces, None)
            self._done = self._done or piece is None
            has_data = has_data or piece is not None
            pieces.append(piece)
        if not self._dataset._strategy._sync_has_data(has_data):
            raise StopIteration
        empty = _empty_like(self._dataset._piece_spec, pieces) if None in pieces else None
        pieces = [empty if p is None else p for p in pieces]
        pieces = gpu_replicas.place_pieces(self._dataset._strategy, pieces)  # GPU replicas
        if len(pieces) == 1:
            return pieces[0]
        return _per_replica(pieces)

    def get_next(self):
        """The next element; em.errors.OutOfRangeError after the last one."""
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError() from None

    def get_next_as_optional(self):
        """The next element as an em.data.Optional (without a value after the last one)."""
        try:
            return Optional(next(self), self._dataset)
        except StopIteration:
            return Optional(None, self._dataset, empty=True)

    def __repr__(self) -> str:
        return f"<em.distribute.DistributedIterator element_spec={self.element_spec}>"


def _per_replica(pieces: list):
    """The pieces of the replicas as one element: each component a PerReplica."""
    leaves = [structure.flatten(p) for p in pieces]
    return structure.pack_as(pieces[0], [PerReplica(column) for column in zip(*leaves)])


def _check_dataset(dataset, where: str) -> None:
    if not isinstance(dataset, Dataset):
        raise TypeError(f"{where}: expected an em.data.Dataset, got {type(dataset).__name__} "
                        f"{dataset!r}")


def distribute_dataset(strategy, dataset, options=None) -> DistributedDataset:
    """`strategy.experimental_distribute_dataset` (see the module for the pipeline)."""
    del options  # tf.distribute.InputOptions: prefetching places nothing on devices here
    where = "experimental_distribute_dataset"
    _check_dataset(dataset, where)
    num_workers, worker_index = _workers(strategy)
    total = strategy.num_replicas_in_sync
    local = total // num_workers
    if total > 1:  # as TF: one replica takes the dataset as it is (batched or not)
        _check_batched(dataset.element_spec, total)
        dataset = rebatch_for_replicas(dataset, total)
    sharded = strategy._auto_shard(dataset, num_workers, worker_index)
    _check_dataset(sharded, f"{where}: the auto-shard hook")
    spec = sharded.element_spec
    pipeline = sharded.prefetch(local) if total > 1 else sharded
    return DistributedDataset(strategy, lambda: iter(pipeline), spec, local)


def _workers(strategy) -> tuple:
    num_workers, worker_index = strategy._input_workers()
    if strategy.num_replicas_in_sync % num_workers:
        raise ValueError("tf.distribute expects every worker to have the same number of "
                         "replicas. However, encountered `num_replicas_in_sync` "
                         f"({strategy.num_replicas_in_sync}) that cannot be divided by "
                         f"`num_workers` ({num_workers})")
    return num_workers, worker_index


def distribute_datasets_from_function(strategy, dataset_fn, options=None):
    """`strategy.distribute_datasets_from_function`: `dataset_fn(InputContext)` once for
    this worker's input pipeline; its elements go to the local replicas in turn."""
    del options
    where = "distribute_datasets_from_function"
    if not callable(dataset_fn):
        raise TypeError(f"{where}: dataset_fn must be callable (InputContext -> "
                        f"em.data.Dataset), got {dataset_fn!r}")
    num_workers, worker_index = _workers(strategy)
    total = strategy.num_replicas_in_sync
    dataset = dataset_fn(InputContext(num_workers, worker_index, total))
    if not isinstance(dataset, Dataset):
        raise TypeError(f"{where}: dataset_fn must return an em.data.Dataset, it returned "
                        f"{type(dataset).__name__} {dataset!r}")
    return DistributedDataset(strategy, lambda: iter(dataset),
                              dataset.element_spec, total // num_workers)
