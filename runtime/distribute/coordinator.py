"""`ClusterCoordinator` (tf.distribute.experimental.coordinator.ClusterCoordinator): the
coordinator of parameter-server training schedules functions on the workers of a
`ParameterServerStrategy`'s in-process cluster.

- Each worker is a thread of this process, on its own logical CPU, taking the next scheduled
  function from one queue when it is free (compiled functions run with the GIL released, so
  workers compute at the same time). `schedule` returns a `RemoteValue` at once.
- A worker runs the function with the strategy current and its own copies of the PS
  variables it touches; when the function returns, its updates go to the parameter servers
  (ps_variables.py: asynchronous updates, under a lock per variable or shard).
- `create_per_worker_dataset(dataset_fn)` builds one input pipeline per worker; `iter()` of
  it gives a `PerWorkerValues` of iterators: passed to `schedule`, the worker running the
  function gets its own iterator (any PerWorkerValues argument is resolved so).
- Errors, as TF: a function that raises fails its RemoteValue; the functions still queued are
  cancelled (their RemoteValues raise `em.errors.CancelledError`); the next `join()`,
  `done()`, `schedule()` or `fetch()` of that RemoteValue raises the error (the coordinator
  then forgets it and schedules again).
"""

from __future__ import annotations

import queue
import threading
import weakref

from ember.dialects.ember.errors import EmberError
from ember.frontend.tensor import Tensor
from ember.runtime.devices import device
from ember.runtime.distribute import strategy as _strategy
from ember.runtime.distribute.ps_strategy import ParameterServerStrategy
from ember.runtime.distribute.ps_variables import WorkerBinding, bound, current_binding


class CancelledError(EmberError, RuntimeError):
    """A scheduled function did not run: an earlier one raised (tf.errors.CancelledError)."""


class RemoteValue:
    """The result of a scheduled function (tf.distribute.experimental.coordinator
    .RemoteValue): `fetch()` waits for it and gives numpy values, `get()` the tensors; both
    raise the function's error (or CancelledError when it did not run)."""

    def __init__(self):
        self._done = threading.Event()
        self._value = None
        self._error = None

    def _set(self, value=None, error=None) -> None:
        self._value, self._error = value, error
        self._done.set()

    def get(self):
        """The function's result (em.Tensors), once it has run."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def fetch(self):
        """The function's result with each tensor as a numpy value, once it has run."""
        return _fetched(self.get())

    def __repr__(self) -> str:
        state = "ready" if self._done.is_set() else "pending"
        return f"<em.distribute.experimental.coordinator.RemoteValue {state}>"


def _fetched(val):
    """`val` with RemoteValues fetched, PerWorkerValues as tuples and tensors as numpy."""
    if isinstance(val, RemoteValue):
        return val.fetch()
    if isinstance(val, PerWorkerValues):
        return tuple(_fetched(v) for v in val._values)
    if isinstance(val, dict):
        return {k: _fetched(v) for k, v in val.items()}
    if isinstance(val, (list, tuple)):
        items = [_fetched(v) for v in val]
        return type(val)(*items) if hasattr(val, "_fields") else type(val)(items)
    return val.numpy() if isinstance(val, Tensor) or hasattr(val, "_as_tensor") else val


class PerWorkerValues:
    """One value per worker (tf.distribute.experimental.coordinator.PerWorkerValues): as an
    argument of a scheduled function, the worker running it gets its own value."""

    def __init__(self, values):
        self._values = tuple(values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"PerWorkerValues({list(self._values)!r})"


class PerWorkerDataset(PerWorkerValues):
    """The per-worker datasets of `create_per_worker_dataset`: `iter()` gives a
    PerWorkerValues of one iterator per worker, to pass to `schedule`."""

    def __repr__(self) -> str:
        return f"<PerWorkerDataset of {len(self._values)} workers>"

    def __iter__(self) -> "PerWorkerIterator":
        return PerWorkerIterator(iter(v) for v in self._values)


class PerWorkerIterator(PerWorkerValues):
    """One iterator per worker (iter() of a PerWorkerDataset): pass it to `schedule`; the
    scheduled function calls `next()` on the iterator of the worker running it."""

    def __iter__(self):
        return self

    def __next__(self):
        raise TypeError("a per-worker iterator is read by scheduled functions: pass it to "
                        "coordinator.schedule(step_fn, args=(iterator,)) and call "
                        "next(iterator) inside step_fn")

    def __repr__(self) -> str:
        return f"<PerWorkerIterator of {len(self._values)} workers>"


class _Closure:
    def __init__(self, fn, args, kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.result = RemoteValue()
        self.number = 0


class _Cluster:
    """The workers' threads and queue, and the first error; no reference to the
    coordinator (whose finalizer stops the threads)."""

    def __init__(self, strategy: ParameterServerStrategy):
        self._strategy_ref = weakref.ref(strategy)  # the threads keep no strategy alive
        self.workers = strategy._num_workers
        self.queue: queue.Queue = queue.Queue()
        self.cond = threading.Condition()
        self.inflight = 0
        self.error = None
        self.scheduled = 0  # closures put so far (each takes the next number)
        self.cancel_upto = 0  # closures numbered up to this, not started yet, are cancelled
        self.threads = [threading.Thread(target=self._work, args=(i,), daemon=True,
                                         name=f"ember-ps-worker-{i}")
                        for i in range(self.workers)]
        for t in self.threads:
            t.start()

    def put(self, closure: _Closure) -> None:
        with self.cond:
            self._raise_if_error()
            self.inflight += 1
            self.scheduled += 1
            closure.number = self.scheduled
        self.queue.put(closure)

    def _raise_if_error(self) -> None:
        if self.error is not None:  # reported once; the coordinator then schedules again
            error, self.error = self.error, None
            raise error

    def wait(self) -> None:
        _not_in_a_worker("join")
        with self.cond:
            self.cond.wait_for(lambda: self.inflight == 0)
            self._raise_if_error()

    def done(self) -> bool:
        _not_in_a_worker("done")
        with self.cond:
            self._raise_if_error()
            return self.inflight == 0

    def stop(self) -> None:
        for _ in self.threads:
            self.queue.put(None)

    def _work(self, worker: int) -> None:
        while True:
            closure = self.queue.get()
            if closure is None:
                return
            with self.cond:
                cancelled = closure.number <= self.cancel_upto
            if cancelled:
                closure.result._set(error=CancelledError(
                    "this scheduled function was cancelled: an earlier one raised (join() "
                    "raises its error)"))
            else:
                self._run(worker, closure)
            closure = None  # while idle, keep no function (nor its strategy) alive
            with self.cond:
                self.inflight -= 1
                self.cond.notify_all()

    def _run(self, worker: int, closure: _Closure) -> None:
        strategy = self._strategy_ref()
        if strategy is None:
            closure.result._set(error=CancelledError("the ParameterServerStrategy of this "
                                                     "scheduled function no longer exists"))
            return
        binding = WorkerBinding(strategy, worker)
        scopes = _strategy._scopes()
        scopes.append(strategy)
        try:
            args = _resolve(closure.args, worker)
            kwargs = _resolve(closure.kwargs, worker)
            with device(strategy._worker_cpus[worker]), bound(binding):
                value = closure.fn(*args, **kwargs)
            binding.push()
        except BaseException as error:  # noqa: BLE001 - raised by join()/fetch()
            error.add_note(f"(raised in a function scheduled on worker {worker}, "
                           f"{strategy.worker_devices[worker]})")
            with self.cond:  # first: a caller woken by the RemoteValue sees the error
                if self.error is None:
                    self.error = error
                self.cancel_upto = self.scheduled  # those queued now will not run
            closure.result._set(error=error)
            return
        finally:
            scopes.pop()
        closure.result._set(value=value)


def _not_in_a_worker(what: str) -> None:
    if current_binding() is not None:  # it would wait for the function calling it
        raise RuntimeError(f"ClusterCoordinator.{what}: called inside a scheduled function; "
                           "call it on the coordinator (the code that schedules)")


def _check_per_worker(structure_, workers: int) -> None:
    if isinstance(structure_, PerWorkerValues):
        if len(structure_) != workers:
            raise ValueError(f"ClusterCoordinator.schedule: a {type(structure_).__name__} of "
                             f"{len(structure_)} values for a cluster of {workers} workers "
                             "(made by another coordinator?)")
    elif isinstance(structure_, dict):
        for v in structure_.values():
            _check_per_worker(v, workers)
    elif isinstance(structure_, (list, tuple)):
        for v in structure_:
            _check_per_worker(v, workers)


def _resolve(structure_, worker: int):
    """`structure_` with each PerWorkerValues replaced by worker `worker`'s value."""
    if isinstance(structure_, PerWorkerValues):
        return structure_._values[worker]
    if isinstance(structure_, dict):
        return {k: _resolve(v, worker) for k, v in structure_.items()}
    if isinstance(structure_, (list, tuple)):
        items = [_resolve(v, worker) for v in structure_]
        return type(structure_)(*items) if hasattr(structure_, "_fields") \
            else type(structure_)(items)
    return structure_


class ClusterCoordinator:
    """tf.distribute.experimental.coordinator.ClusterCoordinator (see the module); one per
    strategy (making it again returns the same coordinator).

    Example:
      >>> import ember as em
      >>> strategy = em.distribute.experimental.ParameterServerStrategy(
      ...     em.distribute.experimental.create_in_process_cluster(2, 1))
      >>> coordinator = em.distribute.experimental.coordinator.ClusterCoordinator(strategy)
      >>> with strategy.scope():
      ...     v = em.Variable(0.0)
      >>> @em.function
      ... def step():
      ...     v.assign_add(1.0)
      ...     return v.read_value()
      >>> results = [coordinator.schedule(step) for _ in range(4)]
      >>> coordinator.join()
      >>> float(v.numpy())
      4.0
    """

    def __new__(cls, strategy):
        existing = getattr(strategy, "_cluster_coordinator", None)
        if isinstance(existing, ClusterCoordinator):
            return existing
        return super().__new__(cls)

    def __init__(self, strategy):
        if getattr(self, "_cluster", None) is not None:
            return
        if not isinstance(strategy, ParameterServerStrategy):
            raise ValueError("ClusterCoordinator: only em.distribute.experimental."
                             "ParameterServerStrategy is supported, got "
                             f"{type(strategy).__name__} {strategy!r}")
        self._strategy = strategy
        self._cluster = _Cluster(strategy)
        strategy._cluster_coordinator = self
        weakref.finalize(self, self._cluster.stop)

    @property
    def strategy(self) -> ParameterServerStrategy:
        return self._strategy

    def schedule(self, fn, args=(), kwargs=None) -> RemoteValue:
        """Queues `fn(*args, **kwargs)` for the next free worker; returns its RemoteValue at
        once. PerWorkerValues arguments (per-worker iterators) give that worker's value.
        Raises the error of an earlier scheduled function that raised (once)."""
        if not callable(fn):
            raise TypeError(f"ClusterCoordinator.schedule: fn must be callable (an "
                            f"em.function), got {fn!r}")
        if not isinstance(args, (tuple, list)):
            raise TypeError("ClusterCoordinator.schedule: args must be a tuple of arguments, "
                            f"got {type(args).__name__} {args!r}")
        closure = _Closure(fn, tuple(args), dict(kwargs or {}))
        _check_per_worker((closure.args, closure.kwargs), self._strategy._num_workers)
        self._cluster.put(closure)
        return closure.result

    def join(self) -> None:
        """Waits until every scheduled function has run; raises the error of one that
        raised (the others queued after it were cancelled)."""
        self._cluster.wait()

    def done(self) -> bool:
        """Whether every scheduled function has run (raises an error one raised)."""
        return self._cluster.done()

    def fetch(self, val):
        """`val` with each RemoteValue's result (waiting for it) and each tensor as numpy
        values; a PerWorkerValues gives a tuple of its workers' values."""
        return _fetched(val)

    def create_per_worker_dataset(self, dataset_fn) -> PerWorkerDataset:
        """One dataset per worker from `dataset_fn()` (a function of no arguments, e.g. an
        em.function returning `strategy.distribute_datasets_from_function(...)`, or an
        em.data.Dataset / DistributedDataset itself); `iter()` of the result gives the
        per-worker iterators to pass to `schedule`."""
        from ember.runtime.data import Dataset
        from ember.runtime.distribute.input import DistributedDataset
        if isinstance(dataset_fn, (Dataset, DistributedDataset)):
            return PerWorkerDataset([dataset_fn] * self._strategy._num_workers)
        if not callable(dataset_fn):
            raise TypeError("create_per_worker_dataset: dataset_fn must be a function of no "
                            "arguments returning a dataset, or a dataset; got "
                            f"{dataset_fn!r}")
        python_fn = getattr(dataset_fn, "python_function", dataset_fn)
        datasets = []
        for worker in range(self._strategy._num_workers):
            with self._strategy.scope(), device(self._strategy._worker_cpus[worker]):
                made = python_fn()  # the input pipeline is host work: built eagerly
            if not isinstance(made, (Dataset, DistributedDataset)):
                raise TypeError("create_per_worker_dataset: dataset_fn must return an "
                                "em.data.Dataset or a DistributedDataset, it returned "
                                f"{type(made).__name__} {made!r}")
            datasets.append(made)
        return PerWorkerDataset(datasets)

    def __repr__(self) -> str:
        return f"<ClusterCoordinator of {self._strategy!r}>"
