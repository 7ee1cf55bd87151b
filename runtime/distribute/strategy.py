"""`MirroredStrategy` (tf.distribute.MirroredStrategy) on logical CPUs or GPUs
(gpu_replicas.py): `run` calls the
function once per replica, each on its own thread (compiled functions release the GIL in
native code, so replicas compute at the same time), and `ReplicaContext.all_reduce` meets
the replicas at a barrier. A replica that raises aborts the barrier (the others do not hang)
and `run` re-raises its exception, noting the replica."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ember.dialects.ember.dtypes import int32
from ember.frontend.tensor import constant, convert_to_tensor
from ember.frontend.tracing import current_graph
from ember.runtime import logical_devices
from ember.runtime.devices import device, full_name, parse
from ember.runtime.distribute import gpu_replicas
from ember.runtime.distribute.group import _Group
from ember.runtime.distribute.values import (PerReplica, ReduceOp, ValueContext, as_array,
                                             combine, gather, local_results, regroup)

_local = threading.local()  # .scopes: entered strategies; .replica: the ReplicaContext


class ReplicaContext:
    """tf.distribute.ReplicaContext: the replica a `strategy.run` function runs as."""

    def __init__(self, strategy, replica_id: int, group=None):
        self.strategy = strategy
        self._id = replica_id
        self._group = group

    @property
    def replica_id_in_sync_group(self):
        """This replica's index (an int32 scalar). Traced by an em.function that the
        replicas of an eager `strategy.run` call, it is read at each call for the calling
        replica (one trace serves them all, as each binds its own copies of mirrored
        variables): a constant would give every replica the tracing one's id."""
        graph = current_graph()
        if graph is None or getattr(self._group, "traced", False):  # traced_run: per replica
            return constant(self._id)
        from ember.frontend.effects import emit_host_call

        def calling_replica():
            context = get_replica_context()
            if context is None:
                raise RuntimeError("replica_id_in_sync_group: the em.function reading it was "
                                   "called in the cross-replica context (inside "
                                   "strategy.scope(), outside strategy.run); call it in the "
                                   "function strategy.run runs")
            return (np.asarray(context._id, np.int32),)
        return emit_host_call(graph, calling_replica, [], [int32], "replica_id", [()])[0]

    @property
    def num_replicas_in_sync(self) -> int:
        return self.strategy.num_replicas_in_sync

    def all_reduce(self, reduce_op, value):
        """`reduce_op` of `value` over every replica, returned to each (a barrier: every
        replica must call it, the same number of times)."""
        from ember.runtime.distribute.collective import is_traced, traced_all_reduce
        if getattr(self._group, "traced", False):  # strategy.run inside an em.function
            return self._group.all_reduce(self._id - self.strategy._first_replica,
                                          reduce_op, [value])[0]
        if is_traced(value) or current_graph() is not None:  # inside an em.function: at
            # each call, for the replica calling (also a constant: a meeting while tracing
            # would wait for replicas that wait for this trace)
            return traced_all_reduce(reduce_op, [convert_to_tensor(value)])[0]
        return self._reduce_arrays(reduce_op, [as_array(value, "ReplicaContext.all_reduce")])[0]

    def _reduce_arrays(self, reduce_op, arrays: list) -> list:
        """`reduce_op` of each array over every replica (em.Tensors)."""
        where = "ReplicaContext.all_reduce"
        if self._group is None:  # the default strategy's context: one replica
            return [combine(reduce_op, [a], where) for a in arrays]
        if getattr(_local, "replica", None) is not self:
            raise RuntimeError(f"{where}: this replica context is used outside its "
                               "strategy.run; call all_reduce inside the function run")
        return self._group.all_reduce(self._id, reduce_op, arrays)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """tf.distribute's merge_call: every replica calls it (a barrier); then
        `merge_fn(strategy, *args, **kwargs)` runs once, in the cross-replica context, with
        the replicas' arguments regrouped (PerReplica where they differ), and each replica
        gets its result."""
        if self._group is None:  # one replica: run it here, across (the one) replica
            return _cross_replica(self.strategy, merge_fn, args, kwargs or {})
        if getattr(_local, "replica", None) is not self:
            raise RuntimeError("ReplicaContext.merge_call: this replica context is used "
                               "outside its strategy.run; call merge_call inside the function "
                               "run")
        return self._group.merge(self._id - self.strategy._first_replica, self.strategy,
                                 merge_fn, args, kwargs or {})


@contextlib.contextmanager
def entered(strategy):
    """`strategy.scope()`: `strategy` is the current one inside (ValueError if another is)."""
    scopes = _scopes()
    if scopes and scopes[-1] is not strategy:
        raise ValueError("Mixing different tf.distribute.Strategy objects: "
                         f"{scopes[-1]!r} is current; leave its scope() first")
    scopes.append(strategy)
    try:
        yield strategy
    finally:
        scopes.pop()


def _device_names(devices, where: str) -> list[str]:
    if devices is None:  # every GPU if there is one (as TF), else every logical CPU
        return gpu_replicas.default_devices() or \
            [d.name for d in logical_devices.list_logical_devices("CPU")]
    if isinstance(devices, str) or not devices:
        raise ValueError(f"{where}: devices must be a non-empty list of device names, got "
                         f"{devices!r}")
    names = []
    cpus = logical_devices.cpu_count()
    for name in devices:
        kind, index = parse(name)
        if kind == "CPU" and index >= cpus:
            raise ValueError(f"{where}: there is no CPU:{index}: this process has {cpus} "
                             "logical CPU(s); em.config.set_logical_device_configuration "
                             "adds more")
        names.append(full_name(kind, index))
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: devices {list(devices)} name a device twice")
    gpu_replicas.check_devices(names, where)  # GPU replicas: gpu_replicas.py
    return names


class MirroredStrategy:
    """tf.distribute.MirroredStrategy: one replica per device (default: every GPU, else every
    logical CPU).

    Example:
      >>> import ember as em
      >>> strategy = em.distribute.MirroredStrategy(["cpu:0"])
      >>> float(strategy.run(lambda x: x * 2.0, args=(em.constant(3.0),)))
      6.0
    """

    _first_replica = 0  # the global id of this process's first replica (several workers)

    def __init__(self, devices=None, cross_device_ops=None):
        del cross_device_ops  # one process: replicas reduce through host memory
        self._devices = tuple(_device_names(devices, "MirroredStrategy"))
        self._pool = ThreadPoolExecutor(max_workers=len(self._devices),
                                        thread_name_prefix="ember-replica")

    @property
    def num_replicas_in_sync(self) -> int:
        return len(self._devices)

    def scope(self):
        """Makes this the current strategy (`em.distribute.get_strategy()`)."""
        return entered(self)

    def run(self, fn, args=(), kwargs=None):
        """`fn(*args, **kwargs)` once per replica, each on its thread; PerReplica arguments
        give each replica its value. Returns the results regrouped (PerReplica values)."""
        if not callable(fn):
            raise TypeError(f"MirroredStrategy.run: fn must be callable, got {fn!r}")
        if getattr(_local, "replica", None) is not None:
            raise RuntimeError("MirroredStrategy.run: called inside a replica (in a function "
                               "strategy.run runs); call it from the cross-replica context")
        if current_graph() is not None:  # one trace calling fn once per replica
            from ember.runtime.distribute.traced_run import traced_run
            return traced_run(self, fn, args, kwargs)
        gpu_replicas.restore(self)  # GPU replicas: variable copies back on their GPUs
        n, kwargs = len(self._devices), dict(kwargs or {})  # this process's replicas
        group = self._new_group(n)

        def replica(i):
            _local.replica = ReplicaContext(self, self._first_replica + i, group)
            try:
                with device(self._devices[i]):
                    out = fn(*_select(args, i, n), **_select(kwargs, i, n))
                group.barrier.leave(self._first_replica + i)  # no collective waits for it
                return out
            except BaseException:
                if not group.failed_together:  # wake the replicas waiting for this one
                    group.barrier.abort()
                raise
            finally:
                _local.replica = None

        futures = [self._pool.submit(replica, i) for i in range(n)]
        errors = [(i, f.exception()) for i, f in enumerate(futures)]
        failed = [(i, e) for i, e in errors if e is not None]
        if failed:  # the first cause, not a replica woken by the aborted barrier
            i, error = next((f for f in failed if "another replica" not in str(f[1])),
                            failed[0])
            error.add_note(f"(raised in replica {i} of {n}, on {self._devices[i]})")
            raise error
        return regroup([f.result() for f in futures])

    _first_replica = 0  # the global id of this process's first replica (multi-worker)

    def _new_group(self, n: int):
        """The meeting place of the `n` replicas of one `run` (a hook for multi-worker)."""
        return _Group(n)

    def experimental_local_results(self, value) -> tuple:
        """The values of the replicas of `value` (a tuple; a plain value: itself, once);
        nested tuples, lists and dicts of them give a tuple of such structures."""
        return local_results(value, len(self._devices))

    def gather(self, value, axis: int = 0):
        """The replicas' values of `value` (a PerReplica) concatenated along `axis`, in the
        cross-replica context (tf.distribute.Strategy.gather)."""
        if getattr(_local, "replica", None) is not None:
            raise RuntimeError("Strategy.gather: call it in the cross-replica context (outside "
                               "the function strategy.run runs); inside use "
                               "ReplicaContext.all_gather")
        return gather(self.experimental_local_results(value), axis)

    def experimental_distribute_dataset(self, dataset, options=None):
        """A DistributedDataset of `dataset`'s global batches split between the replicas
        (each batch of n elements into pieces of ceil(n / replicas), in order; replicas left
        without elements get empty batches), prefetched by `num_replicas_in_sync`."""
        from ember.runtime.distribute.input import distribute_dataset
        return distribute_dataset(self, dataset, options)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """A DistributedDataset of `dataset_fn(em.distribute.InputContext)`: the replicas
        take its elements in turn (batch it with the per-replica batch size)."""
        from ember.runtime.distribute.input import distribute_datasets_from_function
        return distribute_datasets_from_function(self, dataset_fn, options)

    # Hooks of the distributed input for a strategy over several workers (processes).
    def _input_workers(self) -> tuple:
        """(number of workers, this worker's index): one worker in one process."""
        return 1, 0

    def _auto_shard(self, dataset, num_workers: int, worker_index: int):
        """This worker's share of the stream of per-replica batches: all of it here."""
        del num_workers, worker_index
        return dataset

    def _cross_worker_sum_arrays(self, arrays: list, where: str) -> list:
        """The element-wise sums of `arrays` (numpy) over every worker: the arrays on one
        worker. A strategy over several workers overrides it with its collective; inside
        an em.function it runs as a host call (traced_run.py)."""
        del where
        return arrays

    def _sync_has_data(self, local_has_data: bool) -> bool:
        """Whether any worker still has input this step (another worker's replicas then
        get empty batches): only this one here."""
        return local_has_data

    def reduce(self, reduce_op, value, axis=None):
        """`reduce_op` across the replicas of `value` (with `axis`: within each first)."""
        from ember.runtime.distribute.traced_run import is_traced_value, traced_reduce
        if is_traced_value(value):  # inside an em.function: ops of the trace
            return traced_reduce(self, reduce_op, value, axis)
        if isinstance(value, PerReplica):
            arrays = [as_array(v, "MirroredStrategy.reduce") for v in value.values]
        elif (reduce_op in (ReduceOp.MEAN, "MEAN") and axis is None) \
                or self.num_replicas_in_sync == 1:
            arrays = [as_array(value, "MirroredStrategy.reduce")]
        else:
            raise ValueError(f"A non-DistributedValues value {value!r} cannot be reduced "
                             f"with the given reduce op {reduce_op}: pass the PerReplica "
                             "that strategy.run returned")
        return combine(reduce_op, arrays, "MirroredStrategy.reduce", axis)

    def experimental_distribute_values_from_function(self, value_fn):
        """PerReplica of `value_fn(ValueContext(i, n))` for each replica i."""
        n = self.num_replicas_in_sync
        values = gpu_replicas.place_pieces(self, [value_fn(ValueContext(i, n))
                                                  for i in range(n)])  # GPU replicas
        return regroup(values) if n > 1 else values[0]

    def __repr__(self) -> str:
        return f"MirroredStrategy(devices={list(self._devices)})"


class _DefaultStrategy(MirroredStrategy):
    """The strategy outside any scope: one replica, run on the calling thread."""

    def __init__(self):
        self._devices = (full_name("CPU", 0),)

    def run(self, fn, args=(), kwargs=None):
        return fn(*args, **(kwargs or {}))

    def __repr__(self) -> str:
        return "<default strategy>"


_DEFAULT = _DefaultStrategy()


def _scopes() -> list:
    if not hasattr(_local, "scopes"):
        _local.scopes = []
    return _local.scopes


def _cross_replica(strategy, fn, args, kwargs):
    """`fn(strategy, *args, **kwargs)` in the cross-replica context of `strategy`."""
    replica = getattr(_local, "replica", None)
    _local.replica = None
    scopes = _scopes()
    scopes.append(strategy)
    try:
        return fn(strategy, *args, **kwargs)
    finally:
        scopes.pop()
        _local.replica = replica


def replica_index() -> int | None:
    """The index among this process's replicas of the replica running on this thread (None
    in a cross-replica context)."""
    replica = getattr(_local, "replica", None)
    if replica is None or replica._group is None:
        return None
    return replica._id - replica.strategy._first_replica


def _select(structure, i: int, n: int):
    """`structure` with each PerReplica replaced by its value for replica i."""
    if isinstance(structure, PerReplica):
        if len(structure) != n:
            raise ValueError(f"MirroredStrategy.run: a PerReplica of {len(structure)} values "
                             f"for {n} replicas")
        return structure.values[i]
    if isinstance(structure, dict):
        return {k: _select(v, i, n) for k, v in structure.items()}
    if isinstance(structure, (list, tuple)):
        items = [_select(v, i, n) for v in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") \
            else type(structure)(items)
    return structure


def get_replica_context() -> ReplicaContext | None:
    """The replica inside strategy.run; outside, the default strategy's replica context
    (None inside a strategy's scope: the cross-replica context, as TF)."""
    replica = getattr(_local, "replica", None)
    if replica is not None:
        return replica
    return None if _scopes() else ReplicaContext(_DEFAULT, 0)


def get_strategy():
    """The current strategy: of the replica running, of the scope entered, or the default."""
    replica = getattr(_local, "replica", None)
    if replica is not None:
        return replica.strategy
    return _scopes()[-1] if _scopes() else _DEFAULT


def has_strategy() -> bool:
    """Whether a strategy other than the default is current."""
    return get_strategy() is not _DEFAULT


def in_cross_replica_context() -> bool:
    """Whether this code runs in a strategy's scope outside `strategy.run` (TF's)."""
    return get_replica_context() is None


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None,
                         name=None):
    """The sum of the (weighted) per-example losses divided by the global batch size: the
    per-replica batch size times the replicas in sync of the current strategy unless given
    (tf.nn.compute_average_loss), so that summing the replicas' gradients averages them."""
    from ember.frontend import ops
    from ember.frontend.tensor import convert_to_tensor
    loss = convert_to_tensor(per_example_loss)
    if sample_weight is not None:
        loss = loss * ops.cast(convert_to_tensor(sample_weight), loss.dtype)
    if global_batch_size is None:
        if loss.shape.rank == 0:
            raise ValueError("em.nn.compute_average_loss: per_example_loss must have a batch "
                             "dim (rank >= 1), or give global_batch_size")
        replicas = get_strategy().num_replicas_in_sync
        global_batch_size = ops.shape(loss)[0] * replicas
    size = ops.cast(convert_to_tensor(global_batch_size), loss.dtype)
    return ops.reduce_sum(loss) / size
