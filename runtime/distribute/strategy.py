"""`MirroredStrategy` (tf.distribute.MirroredStrategy) on logical CPUs: `run` calls the
function once per replica, each on its own thread (compiled functions release the GIL in
native code, so replicas compute at the same time), and `ReplicaContext.all_reduce` meets
the replicas at a barrier. A replica that raises aborts the barrier (the others do not hang)
and `run` re-raises its exception, noting the replica."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

from ember.frontend.tensor import constant
from ember.runtime import logical_devices
from ember.runtime.devices import full_name, parse
from ember.runtime.distribute.values import (PerReplica, ReduceOp, ValueContext, as_array,
                                             combine, regroup)

BARRIER_TIMEOUT = 60.0  # seconds a replica waits in all_reduce for the others
_local = threading.local()  # .scopes: entered strategies; .replica: the ReplicaContext


class ReplicaContext:
    """tf.distribute.ReplicaContext: the replica a `strategy.run` function runs as."""

    def __init__(self, strategy, replica_id: int, group=None):
        self.strategy = strategy
        self._id = replica_id
        self._group = group

    @property
    def replica_id_in_sync_group(self):
        return constant(self._id)

    @property
    def num_replicas_in_sync(self) -> int:
        return self.strategy.num_replicas_in_sync

    def all_reduce(self, reduce_op, value):
        """`reduce_op` of `value` over every replica, returned to each (a barrier: every
        replica must call it, the same number of times)."""
        where = "ReplicaContext.all_reduce"
        if self._group is None:  # the default strategy's context: one replica
            return combine(reduce_op, [as_array(value, where)], where)
        if getattr(_local, "replica", None) is not self:
            raise RuntimeError(f"{where}: this replica context is used outside its "
                               "strategy.run; call all_reduce inside the function run")
        return self._group.all_reduce(self._id, reduce_op, as_array(value, where))


class _Group:
    """The replicas of one `run`: slots for all_reduce and the barrier they meet at."""

    def __init__(self, n: int):
        self.slots = [None] * n
        self.barrier = threading.Barrier(n, timeout=BARRIER_TIMEOUT)

    def all_reduce(self, replica: int, op, array):
        where = f"ReplicaContext.all_reduce (replica {replica})"
        self.slots[replica] = array
        self._wait(where)
        try:
            result = combine(op, list(self.slots), where)
        finally:
            self._wait(where)  # every replica has read the slots before they are reused
        return result

    def _wait(self, where: str) -> None:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            raise RuntimeError(f"{where}: another replica raised, returned or timed out "
                               f"({BARRIER_TIMEOUT:g} s) instead of calling all_reduce: every"
                               " replica must call it the same number of times") from None


def _device_names(devices, where: str) -> list[str]:
    if devices is None:
        return [d.name for d in logical_devices.list_logical_devices("CPU")]
    if isinstance(devices, str) or not devices:
        raise ValueError(f"{where}: devices must be a non-empty list of device names, got "
                         f"{devices!r}")
    names = []
    cpus = logical_devices.cpu_count()
    for name in devices:
        kind, index = parse(name)
        if kind == "GPU":
            raise ValueError(f"{where}: {name!r}: Ember's MirroredStrategy runs replicas on "
                             "logical CPUs only (split the CPU with em.config."
                             "set_logical_device_configuration)")
        if index >= cpus:
            raise ValueError(f"{where}: there is no CPU:{index}: this process has {cpus} "
                             "logical CPU(s); em.config.set_logical_device_configuration "
                             "adds more")
        names.append(full_name(kind, index))
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: devices {list(devices)} name a device twice")
    return names


class MirroredStrategy:
    """tf.distribute.MirroredStrategy: one replica per device (default: every logical CPU).

    Example:
      >>> import ember as em
      >>> strategy = em.distribute.MirroredStrategy(["cpu:0"])
      >>> float(strategy.run(lambda x: x * 2.0, args=(em.constant(3.0),)))
      6.0
    """

    def __init__(self, devices=None, cross_device_ops=None):
        del cross_device_ops  # one process: replicas reduce through host memory
        self._devices = tuple(_device_names(devices, "MirroredStrategy"))
        self._pool = ThreadPoolExecutor(max_workers=len(self._devices),
                                        thread_name_prefix="ember-replica")

    @property
    def num_replicas_in_sync(self) -> int:
        return len(self._devices)

    @contextlib.contextmanager
    def scope(self):
        """Makes this the current strategy (`em.distribute.get_strategy()`)."""
        scopes = _scopes()
        if scopes and scopes[-1] is not self:
            raise ValueError("Mixing different tf.distribute.Strategy objects: "
                             f"{scopes[-1]!r} is current; leave its scope() first")
        scopes.append(self)
        try:
            yield self
        finally:
            scopes.pop()

    def run(self, fn, args=(), kwargs=None):
        """`fn(*args, **kwargs)` once per replica, each on its thread; PerReplica arguments
        give each replica its value. Returns the results regrouped (PerReplica values)."""
        if not callable(fn):
            raise TypeError(f"MirroredStrategy.run: fn must be callable, got {fn!r}")
        if getattr(_local, "replica", None) is not None:
            raise RuntimeError("MirroredStrategy.run: called inside a replica (in a function "
                               "strategy.run runs); call it from the cross-replica context")
        n, kwargs = len(self._devices), dict(kwargs or {})  # this process's replicas
        group = self._new_group(n)

        def replica(i):
            _local.replica = ReplicaContext(self, self._first_replica + i, group)
            try:
                return fn(*_select(args, i, n), **_select(kwargs, i, n))
            except BaseException:
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
        """The values of the replicas of `value` (a tuple; a plain value: itself, once)."""
        return value.values if isinstance(value, PerReplica) else (value,)

    def reduce(self, reduce_op, value, axis=None):
        """`reduce_op` across the replicas of `value` (with `axis`: within each first)."""
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
        return regroup([value_fn(ValueContext(i, n)) for i in range(n)]) if n > 1 \
            else value_fn(ValueContext(0, 1))

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
