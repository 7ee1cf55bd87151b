"""Variables on parameter servers (`ParameterServerStrategy`), updated asynchronously by the
workers, as TF's parameter-server training.

Under `strategy.scope()` `em.Variable(...)` makes a `PSVariable`: an ordinary variable (the
"ps copy") placed on a parameter-server task, round-robin in creation order, with a lock; a
partitioner may split it into a `ShardedVariable` of such variables (sharded.py).

A function a worker runs (`ClusterCoordinator.schedule`) never writes the ps copy while it
computes. The first time the function touches a variable (a read, a write, or a compiled
call binding its handle) the worker copies the ps value under the variable's lock (a
"remote read", as TF's workers read the parameter servers); the function then reads and
writes the worker's copy, compiled code with the GIL released, workers in parallel. When the
function returns, each variable's update (the worker's copy minus the value it read) is added
to the ps copy under the lock, by the thread of the variable's parameter-server task
(ps_server.py): concurrent workers' updates all land (none overwrites another's), each
computed from the values its worker read — asynchronous training, as TF's
workers apply `assign_sub`s on the parameter servers. A function that raises updates nothing.

Elsewhere (the coordinator: eager code, or an em.function it calls) reads and writes go to
the ps copies directly, writes under the lock.
"""

from __future__ import annotations

import threading

import numpy as np

from ember.frontend import tracing
from ember.frontend import variables
from ember.frontend.trace_types import VariableTraceType
from ember.frontend.variables import Variable, VariableHandle
from ember.runtime.distribute import mirrored  # noqa: F401 - its creator hook comes first
from ember.runtime.distribute.strategy import get_strategy, has_strategy

_local = threading.local()  # .binding: the WorkerBinding of the function a worker runs
_state = threading.local()  # .plain: creating the ps copy itself


class WorkerBinding:
    """The worker-side copies of the PS variables one scheduled function touches."""

    def __init__(self, strategy, worker: int):
        self.strategy = strategy
        self.worker = worker
        self._copies: dict = {}  # id(PSVariable) -> (variable, worker's handle, value read)

    def handle(self, var: "PSVariable") -> VariableHandle:
        entry = self._copies.get(id(var))
        if entry is None:
            with var._lock:
                read = var._ps._handle.value  # never written in place: a snapshot
            entry = (var, VariableHandle(np.array(read, copy=True)), read)
            self._copies[id(var)] = entry
        return entry[1]

    def push(self) -> None:
        """Sends each variable's update to its parameter-server task (ps_server.py), all
        tasks at once, and waits until they have added them to the ps copies."""
        by_task: dict = {}
        for var, handle, read in self._copies.values():
            by_task.setdefault(var._task, []).append((var, read, handle.value))
        self._copies.clear()
        servers = self.strategy._ps_servers
        for request in [servers[task].send(updates) for task, updates in by_task.items()]:
            request.wait()


def current_binding():
    return getattr(_local, "binding", None)


class bound:  # noqa: N801 - a context manager, as `em.device`
    """Runs the body as worker `worker`'s function: its reads of `strategy`'s variables
    bind worker copies; `push()` (on success) sends the updates."""

    def __init__(self, binding: WorkerBinding):
        self._binding = binding

    def __enter__(self):
        self._outer = current_binding()
        _local.binding = self._binding
        return self._binding

    def __exit__(self, *exc):
        _local.binding = self._outer
        return False


class PSVariable(Variable):
    """A variable on a parameter-server task (see the module): `device` names the task."""

    def __init__(self, strategy, ps_copy: Variable, task: int):
        self.trainable = ps_copy.trainable
        self._name = ps_copy._name
        self._type = ps_copy._type
        self._initialized = None
        self._strategy = strategy
        self._ps = ps_copy
        self._task = task
        self._lock = threading.Lock()

    @property
    def device(self) -> str:
        return f"/job:ps/replica:0/task:{self._task}/device:CPU:0"

    @property
    def _handle(self) -> VariableHandle:
        binding = current_binding()
        if binding is not None and binding.strategy is self._strategy:
            return binding.handle(self)
        return self._ps._handle

    def _ember_trace_type(self):
        # one trace serves the coordinator and every worker: each call binds its copy
        return VariableTraceType(self._ps._handle.id, self.dtype, self._type.shape)

    def _write(self, spec, value):
        if current_binding() is None and tracing.current_graph() is None:
            with self._lock:  # the coordinator writes the ps copy itself
                return super()._write(spec, value)
        return super()._write(spec, value)

    def _apply_update(self, read: np.ndarray, written: np.ndarray) -> None:
        if written is read:
            return
        with self._lock:
            current = self._ps._handle.value
            if current.dtype.kind in "iufc":
                with np.errstate(all="ignore"):
                    delta = np.subtract(written, read, dtype=current.dtype)
                    if not delta.any():
                        return
                    self._ps._handle.value = np.add(current, delta, dtype=current.dtype)
            elif not np.array_equal(written, read):
                self._ps._handle.value = np.array(written, copy=True)

    def __repr__(self) -> str:
        text = super().__repr__()
        return text[:-1] + f" device={self.device}>"


def _plain(*args, **kwargs) -> Variable:
    """An ordinary em.Variable, the creator hooks not asked (nor for the variables its
    creation makes itself)."""
    _state.plain = True
    try:
        return type.__call__(Variable, *args, **kwargs)
    finally:
        _state.plain = False


def _create(args, kwargs):
    """variables.variable_creator: PS variables (maybe sharded) under a
    ParameterServerStrategy; the previous creator's answer otherwise."""
    if getattr(_state, "plain", False):
        return None
    strategy = get_strategy() if has_strategy() else None
    if not getattr(strategy, "_places_variables_on_ps", False):
        return _previous(args, kwargs) if _previous is not None else None
    full = _plain(*args, **kwargs)
    if full._handle.value is None:  # initialised by the trace creating it: stays local
        return full
    shards = _shard_count(strategy, full)
    if shards == 1:
        return PSVariable(strategy, full, strategy._next_ps_task())
    from ember.runtime.distribute.sharded import ShardedVariable
    pieces = np.array_split(full._handle.value, shards, axis=0)
    parts = [PSVariable(strategy, _plain(piece, trainable=full.trainable,
                                         name=f"{full._name}/part_{i}", dtype=full.dtype),
                        strategy._next_ps_task())
             for i, piece in enumerate(pieces)]
    return ShardedVariable(parts, name=full._name)


def _shard_count(strategy, full: Variable) -> int:
    partitioner = strategy._variable_partitioner
    dims = full.shape.as_list()
    if partitioner is None or not dims:
        return 1
    partitions = partitioner(full.shape, full.dtype)
    where = f"ParameterServerStrategy: the variable_partitioner's answer for {full.name}"
    if not isinstance(partitions, (list, tuple)) or len(partitions) != len(dims) or any(
            isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1
            for p in partitions):
        raise ValueError(f"{where} must be a list of {len(dims)} integers >= 1 (shards per "
                         f"dimension), got {partitions!r}")
    if any(p != 1 for p in partitions[1:]):
        raise ValueError(f"{where} is {list(partitions)}: only axis 0 can be partitioned")
    if partitions[0] > dims[0]:
        raise ValueError(f"{where} asks {partitions[0]} shards of {dims[0]} rows: at most one "
                         "shard per row")
    return int(partitions[0])


_previous = variables.variable_creator
variables.variable_creator = _create
