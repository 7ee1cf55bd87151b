"""`MultiWorkerMirroredStrategy` (tf.distribute.MultiWorkerMirroredStrategy) over MPI: one
worker per process, launched by `mpiexec` (or `python -m ember.distribute.launch -n N`), each
running `MirroredStrategy`'s replicas on its logical devices (one by default).

The cluster comes from MPI (worker = MPI rank, `cluster_resolver.task_id`); the replicas of
all workers are in sync (`num_replicas_in_sync` is the global count; replica ids are global,
worker by worker). `ReplicaContext.all_reduce` and `reduce` are two-level: the replicas of a
process meet at a barrier and sum their values in host memory, then the process does one MPI
`Allreduce` of that sum (`collective_mpi`, under the watchdog); MEAN divides by the global
replica count (or element count with `axis`). Variables created under the scope, in `run`
or by a trace there start from worker 0's initial value, broadcast to every worker;
`gather` all-gathers every worker's replicas.
"""

from __future__ import annotations

import dataclasses
import enum
import threading

import numpy as np

from ember.frontend.tensor import convert_to_tensor
from ember.runtime.data.autoshard import auto_shard
from ember.runtime.distribute import collective_mpi, watchdog
from ember.runtime.distribute.strategy import MirroredStrategy, _Group
from ember.runtime.distribute.values import PerReplica, ReduceOp, ValueContext, as_array, \
    combine, regroup


class CommunicationImplementation(enum.Enum):
    """tf.distribute.experimental.CommunicationImplementation: here always MPI's Allreduce
    (AUTO: MPICH picks the algorithm by size)."""
    AUTO = "AUTO"


@dataclasses.dataclass(frozen=True, kw_only=True)
class CommunicationOptions:
    """tf.distribute.experimental.CommunicationOptions: `timeout_seconds` bounds how long a
    worker waits for a dead, frozen or mismatched peer (the watchdog; default 60 s, and the
    EMBER_DISTRIBUTE_TIMEOUT environment variable wins)."""
    timeout_seconds: float | None = None
    implementation: CommunicationImplementation = CommunicationImplementation.AUTO

    def __post_init__(self):
        t = self.timeout_seconds
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))
                              or not 0 < t < float("inf")):
            raise ValueError("CommunicationOptions: timeout_seconds must be a positive number "
                             f"of seconds or None (60 s), got {t!r}")
        if self.implementation not in (CommunicationImplementation.AUTO, "AUTO"):
            raise ValueError("CommunicationOptions: Ember's workers all-reduce over MPI; "
                             "implementation must be CommunicationImplementation.AUTO, got "
                             f"{self.implementation!r}")


class MPIClusterResolver:
    """The cluster as MPI sees it (TF's cluster_resolver facts): every process a worker."""
    task_type = "worker"
    rpc_layer = "mpi"

    def __init__(self, task_id: int, num_workers: int):
        self.task_id, self.num_workers = task_id, num_workers

    def __repr__(self) -> str:
        return f"MPIClusterResolver(task_id={self.task_id}, num_workers={self.num_workers})"


class MultiWorkerExtended:
    """`strategy.extended`: which worker does what (worker 0 is the chief)."""

    def __init__(self, strategy: "MultiWorkerMirroredStrategy"):
        self._strategy = strategy

    @property
    def should_checkpoint(self) -> bool:
        """Whether this worker saves checkpoints: only the chief (worker 0)."""
        return self._strategy.cluster_resolver.task_id == 0

    should_save_summary = should_checkpoint

    @property
    def should_init(self) -> bool:
        return True

    @property
    def worker_devices(self) -> tuple:
        """This worker's replica devices, named with its task."""
        task = self._strategy.cluster_resolver.task_id
        return tuple(name.replace("/job:localhost/", "/job:worker/").replace(
            "/task:0/", f"/task:{task}/") for name in self._strategy._devices)


def _reduce_op(op, where: str) -> ReduceOp:
    try:
        return op if isinstance(op, ReduceOp) else ReduceOp(op.upper())
    except (ValueError, AttributeError):
        raise ValueError(f"{where}: reduce_op must be em.distribute.ReduceOp.SUM or .MEAN, "
                         f"got {op!r}") from None


class MultiWorkerMirroredStrategy(MirroredStrategy):
    """tf.distribute.MultiWorkerMirroredStrategy over MPI: start the workers with
    `python -m ember.distribute.launch -n 2 train.py` (or `mpiexec -n 2 python train.py`).

    Args:
      cluster_resolver: None: the workers are the MPI processes.
      communication_options: `em.distribute.experimental.CommunicationOptions`
        (`timeout_seconds`: the watchdog's timeout).

    Raises:
      ImportError: MPI is not installed (`pip install 'ember[mpi]'`).
      em.errors.UnavailableError: from a collective, when a peer is dead, frozen or waits in
        another collective for longer than the timeout.
    """

    def __init__(self, cluster_resolver=None, communication_options=None):
        where = "MultiWorkerMirroredStrategy"
        if cluster_resolver is not None:
            raise ValueError(f"{where}: Ember's workers are the MPI processes (start them "
                             "with mpiexec or python -m ember.distribute.launch); pass "
                             f"cluster_resolver=None, not {cluster_resolver!r}")
        options = communication_options or CommunicationOptions()
        if not isinstance(options, CommunicationOptions):
            raise TypeError(f"{where}: communication_options must be an em.distribute."
                            f"experimental.CommunicationOptions, got {options!r}")
        super().__init__()  # this process's logical CPUs: one replica each
        self.communication_options = options
        timeout = watchdog.timeout_seconds(options.timeout_seconds)
        self._collective = collective_mpi.world(timeout)
        rank, size = self._collective.rank, self._collective.size
        self.cluster_resolver = MPIClusterResolver(rank, size)
        self.extended = MultiWorkerExtended(self)
        counts = np.zeros(size, np.int64)
        counts[rank] = len(self._devices)
        counts = self._collective.all_reduce_sum(counts, f"{where} (counting replicas)")
        self._first_replica = int(counts[:rank].sum())
        self._total_replicas = int(counts.sum())

    @property
    def num_replicas_in_sync(self) -> int:
        return self._total_replicas

    def _new_group(self, n: int):
        return _WorkerGroup(n, self)

    def _all_reduce(self, op, arrays: list, where: str, axis=None):
        """`op` over `arrays` (this worker's replicas') and every other worker's: a numpy
        array (or, with `axis`, first within each along it)."""
        op = _reduce_op(op, where)
        if len(arrays) == 1 and axis is None:
            local = arrays[0]
        else:
            local = combine(ReduceOp.SUM, arrays, where, axis)._numpy_array()
        total = self._collective.all_reduce_sum(local, where)
        if op is ReduceOp.SUM:
            return total
        count = self._total_replicas
        if axis is not None:
            mine = np.array([sum(a.shape[axis] for a in arrays)], np.int64)
            count = int(self._collective.all_reduce_sum(mine, f"{where} (counting)")[0])
        mean = total / count if total.dtype.kind in "fc" else total // count
        return np.asarray(mean, dtype=total.dtype)

    def reduce(self, reduce_op, value, axis=None):
        """`reduce_op` across every worker's replicas of `value` (with `axis`: within each
        first). A plain value on a one-replica worker is that worker's replica value."""
        from ember.runtime.distribute.traced_run import is_traced_value
        if is_traced_value(value):  # inside an em.function: ops, then _cross_worker_sum_arrays
            return super().reduce(reduce_op, value, axis)
        where = "MultiWorkerMirroredStrategy.reduce"
        if isinstance(value, PerReplica):
            arrays = [as_array(v, where) for v in value.values]
        elif len(self._devices) == 1:
            arrays = [as_array(value, where)]
        else:
            return super().reduce(reduce_op, value, axis)
        return convert_to_tensor(self._all_reduce(reduce_op, arrays, where, axis))

    def _cross_worker_sum_arrays(self, arrays: list, where: str) -> list:
        """Inside an em.function (traced_run.py, a host call): each array (this worker's
        replicas' sum) summed over every worker, one collective each."""
        return [self._collective.all_reduce_sum(np.asarray(a), where) for a in arrays]

    def experimental_distribute_values_from_function(self, value_fn):
        """PerReplica of `value_fn(ValueContext(i, n))` for this worker's replicas i (global
        ids; n is the global replica count)."""
        n = self._total_replicas
        values = [value_fn(ValueContext(self._first_replica + i, n))
                  for i in range(len(self._devices))]
        return regroup(values) if len(values) > 1 else values[0]

    def gather(self, value, axis: int = 0):
        """Every worker's replicas' values of `value` concatenated along `axis`, in global
        replica order (an all-gather: their sizes along `axis` may differ)."""
        where = "MultiWorkerMirroredStrategy.gather"
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"{where}: axis must be an int, got {axis!r}")
        axis = int(axis)
        local = super().gather(value, axis)._numpy_array()  # this worker's replicas, checked
        axis = axis + local.ndim if axis < 0 else axis
        return convert_to_tensor(self._collective.all_gather(local, axis, where))

    def _broadcast_initial_value(self, array, name: str):
        """Worker 0's initial value of the variable `name` (created under the scope or in
        `run`), as TF's chief broadcasts it: every worker starts with the same weights."""
        where = f"MultiWorkerMirroredStrategy (the initial value of variable {name!r})"
        if array is None:  # computed by the em.function creating it, on each worker
            if self.cluster_resolver.num_workers == 1:
                return None
            raise ValueError(f"{where}: it is computed inside the em.function creating it, "
                             "so the workers cannot start from worker 0's value: create the "
                             "variable under strategy.scope() (e.g. model.build(shape)), or "
                             "compute its initial value eagerly (a numpy value, or inside "
                             "em.init_scope())")
        return self._collective.broadcast(array, where, f"variable {name!r}")

    # The distributed input's hooks (MirroredStrategy's are for one worker).
    def _input_workers(self) -> tuple:
        """(number of workers, this worker's index)."""
        return self.cluster_resolver.num_workers, self.cluster_resolver.task_id

    def _auto_shard(self, dataset, num_workers: int, worker_index: int):
        """This worker's share of the stream of per-replica batches, by the dataset's
        `auto_shard_policy` (em.data's auto-sharding: AUTO, FILE, DATA, OFF, HINT)."""
        return auto_shard(dataset, num_workers, worker_index, self.num_replicas_in_sync)

    def _sync_has_data(self, local_has_data: bool) -> bool:
        """Whether any worker still has input this step (a collective: every worker asks)."""
        mine = np.array([1 if local_has_data else 0], np.int64)
        where = "MultiWorkerMirroredStrategy (do the workers still have input?)"
        return bool(self._collective.all_reduce_sum(mine, where)[0])

    def __repr__(self) -> str:
        resolver = self.cluster_resolver
        return (f"MultiWorkerMirroredStrategy(worker {resolver.task_id} of "
                f"{resolver.num_workers}, devices={list(self.extended.worker_devices)})")


class _WorkerGroup(_Group):
    """The replicas of one `run` on this worker: they meet, replica 0 of the worker reduces
    their sum with the other workers, and all read its result."""

    def __init__(self, n: int, strategy: MultiWorkerMirroredStrategy):
        super().__init__(n)
        self.strategy = strategy
        self.result = None

    def all_reduce(self, replica: int, op, arrays):
        """Each of `arrays` (a list; or one array) reduced over every replica of every
        worker: a list of em.Tensors (or one)."""
        where = f"ReplicaContext.all_reduce (replica {replica})"
        one = not isinstance(arrays, list)
        local = replica - self.strategy._first_replica
        self.check_can_meet(where)
        self.slots[local] = [arrays] if one else arrays
        self._wait(where)
        if local == 0:
            try:
                counts = {len(s) for s in self.slots}
                if len(counts) > 1:
                    raise ValueError(f"{where}: the replicas all-reduce different numbers of "
                                     f"values ({[len(s) for s in self.slots]})")
                self.result = [self.strategy._all_reduce(op, [s[k] for s in self.slots], where)
                               for k in range(len(self.slots[0]))]
            except BaseException:
                self.barrier.abort()  # the others raise "another replica ..."; run reports this
                raise
        self._wait(where, threading.TIMEOUT_MAX)  # the watchdog bounds the workers' wait
        result = [convert_to_tensor(r) for r in self.result]  # no copy: never written to
        self._wait(where)  # every replica has read the result before the slots are reused
        return result[0] if one else result

    def _wait(self, where: str, timeout=None) -> None:
        if timeout is None:
            return super()._wait(where)
        try:
            self.barrier.wait(timeout)
        except threading.BrokenBarrierError:
            super()._wait(where)  # the barrier is broken: raises the usual explanation
