"""`ParameterServerStrategy` (tf.distribute.experimental.ParameterServerStrategy) on an
in-process cluster: the variables created under `scope()` live on the parameter-server tasks
(ps_variables.py; round-robin, large ones sharded by the `variable_partitioner`; each task a
thread applying the workers' updates, ps_server.py), and a `ClusterCoordinator`
(coordinator.py) runs the training steps on the workers, each a thread of this process on
its own logical device.

Each worker is one replica (`num_replicas_in_sync` is 1, as TF's CPU workers): `run` calls
the function once, in a replica context; `reduce` reduces within that replica's value;
`distribute_datasets_from_function` calls the input function with
`InputContext(num_input_pipelines=1, input_pipeline_id=0)`: each worker builds its own whole
pipeline (ClusterCoordinator.create_per_worker_dataset calls it once per worker).

A training loop such as Keras's Model.fit drives it as TF's does: it tells the strategy by
`_should_use_with_coordinator` (True), takes `ClusterCoordinator(strategy)` (one per strategy,
also `strategy._cluster_coordinator`), builds the model and optimizer under `scope()`, makes
the input with `coordinator.create_per_worker_dataset(lambda:
strategy.distribute_datasets_from_function(dataset_fn))`, schedules its em.function step
`coordinator.schedule(train_function, args=(per_worker_iterator,))` per step and calls
`coordinator.join()` at the end of each epoch (the RemoteValues give the logs).
"""

from __future__ import annotations

import threading
import weakref

from ember.frontend import ops
from ember.frontend.math_ops import identity
from ember.frontend.tracing import SymbolicTensor, current_graph
from ember.runtime import logical_devices
from ember.runtime.devices import full_name
from ember.runtime.distribute import ps_variables  # noqa: F401 - the variable creator
from ember.runtime.distribute import strategy as _strategy
from ember.runtime.distribute.cluster import check_in_process
from ember.runtime.distribute.ps_server import ParameterServer, stop_all
from ember.runtime.distribute.values import (PerReplica, ReduceOp, ValueContext, as_array,
                                             combine, local_results, reduce_op_of)


class _WorkerReplicaContext(_strategy.ReplicaContext):
    """The replica context of `ParameterServerStrategy.run`: the worker's one replica, so
    `all_reduce` gives the value itself (reduced over one replica), traced or not."""

    def all_reduce(self, reduce_op, value):
        reduce_op_of(reduce_op, "ReplicaContext.all_reduce")
        if isinstance(value, SymbolicTensor) or current_graph() is not None:
            return identity(value)
        return combine(reduce_op, [as_array(value, "ReplicaContext.all_reduce")],
                       "ReplicaContext.all_reduce")


class ParameterServerStrategy:
    """tf.distribute.experimental.ParameterServerStrategy (see the module).

    Args:
      cluster_resolver: a resolver of an in-process cluster with "worker" and "ps" jobs
        (`em.distribute.experimental.create_in_process_cluster(num_workers, num_ps)`).
      variable_partitioner: None, or a partitioner (`em.distribute.experimental.partitioners
        .FixedShardsPartitioner(n)` ...): a callable `(shape, dtype) -> shards per dim`.

    Example:
      >>> import ember as em
      >>> resolver = em.distribute.experimental.create_in_process_cluster(2, 2)
      >>> strategy = em.distribute.experimental.ParameterServerStrategy(resolver)
      >>> with strategy.scope():
      ...     a, b = em.Variable(1.0), em.Variable(2.0)
      >>> a.device, b.device
      ('/job:ps/replica:0/task:0/device:CPU:0', '/job:ps/replica:0/task:1/device:CPU:0')
    """

    _places_variables_on_ps = True  # ps_variables' creator makes PSVariables under it
    _should_use_with_coordinator = True  # TF's flag: steps go through a ClusterCoordinator
    _first_replica = 0

    def __init__(self, cluster_resolver, variable_partitioner=None):
        where = "ParameterServerStrategy"
        spec_of = getattr(cluster_resolver, "cluster_spec", None)
        if not callable(spec_of):
            raise TypeError(f"{where}: cluster_resolver must be a cluster resolver (em."
                            "distribute.cluster_resolver.SimpleClusterResolver, or em."
                            "distribute.experimental.create_in_process_cluster(...)), got "
                            f"{cluster_resolver!r}")
        spec = spec_of()
        missing = [job for job in ("worker", "ps") if job not in spec.jobs]
        if missing:
            raise ValueError(f"{where}: the cluster has no {' and no '.join(missing)} job: a "
                             "parameter-server cluster needs at least one 'worker' and one "
                             f"'ps' task (its jobs: {spec.jobs})")
        check_in_process(spec, where)
        if variable_partitioner is not None and not callable(variable_partitioner):
            raise TypeError(f"{where}: variable_partitioner must be None or a partitioner "
                            "(e.g. em.distribute.experimental.partitioners."
                            f"FixedShardsPartitioner(2)), got {variable_partitioner!r}")
        self._cluster_resolver = cluster_resolver
        self._variable_partitioner = variable_partitioner
        self._num_workers = spec.num_tasks("worker")
        self._num_ps = spec.num_tasks("ps")
        self._next_ps = 0
        self._lock = threading.Lock()
        self._cluster_coordinator = None  # set by the ClusterCoordinator made for it
        self._ps_servers = [ParameterServer(task) for task in range(self._num_ps)]
        weakref.finalize(self, stop_all, list(self._ps_servers))
        cpus = logical_devices.cpu_count()
        self._worker_cpus = tuple(full_name("CPU", i % cpus) for i in range(self._num_workers))

    # -- the cluster --------------------------------------------------------------------------

    @property
    def cluster_resolver(self):
        return self._cluster_resolver

    @property
    def extended(self):
        """TF's `strategy.extended` (`parameter_devices`, `worker_devices`): this object."""
        return self

    @property
    def parameter_devices(self) -> tuple:
        return tuple(f"/job:ps/replica:0/task:{i}/device:CPU:0" for i in range(self._num_ps))

    @property
    def worker_devices(self) -> tuple:
        return tuple(f"/job:worker/replica:0/task:{i}/device:CPU:0"
                     for i in range(self._num_workers))

    @property
    def num_replicas_in_sync(self) -> int:
        return 1

    def _next_ps_task(self) -> int:
        with self._lock:
            task = self._next_ps
            self._next_ps = (task + 1) % self._num_ps
        return task

    def scope(self):
        """Makes this the current strategy: em.Variable(...) makes variables on the ps."""
        return _strategy.entered(self)

    # -- replicas -----------------------------------------------------------------------------

    def run(self, fn, args=(), kwargs=None):
        """`fn(*args, **kwargs)` as the worker's one replica (call it in a function
        `ClusterCoordinator.schedule` runs); PerReplica arguments give their one value."""
        if not callable(fn):
            raise TypeError(f"ParameterServerStrategy.run: fn must be callable, got {fn!r}")
        outer = getattr(_strategy._local, "replica", None)
        _strategy._local.replica = _WorkerReplicaContext(self, 0)
        try:
            return fn(*_strategy._select(args, 0, 1), **_strategy._select(kwargs or {}, 0, 1))
        finally:
            _strategy._local.replica = outer

    def reduce(self, reduce_op, value, axis=None):
        """`reduce_op` across the (one) replica of `value`: with `axis`, within it."""
        where = "ParameterServerStrategy.reduce"
        op = reduce_op_of(reduce_op, where)
        if isinstance(value, PerReplica):
            values = list(value.values)
            if len(values) != 1:
                raise ValueError(f"{where}: a PerReplica of {len(values)} values for one "
                                 "replica")
            value = values[0]
        if isinstance(value, SymbolicTensor) or current_graph() is not None:
            if axis is None:
                return identity(value)
            reduce = ops.reduce_sum if op is ReduceOp.SUM else ops.reduce_mean
            return reduce(value, axis=axis)
        return combine(op, [as_array(value, where)], where, axis)

    def experimental_local_results(self, value) -> tuple:
        return local_results(value, 1)

    def experimental_distribute_values_from_function(self, value_fn):
        return value_fn(ValueContext(0, 1))

    # -- input --------------------------------------------------------------------------------

    def experimental_distribute_dataset(self, dataset, options=None):
        """A DistributedDataset of `dataset` for one worker (its elements as they are)."""
        from ember.runtime.distribute.input import distribute_dataset
        return distribute_dataset(self, dataset, options)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """A DistributedDataset of `dataset_fn(InputContext(1, 0, 1))`: a worker's input
        (ClusterCoordinator.create_per_worker_dataset makes one per worker)."""
        from ember.runtime.distribute.input import distribute_datasets_from_function
        return distribute_datasets_from_function(self, dataset_fn, options)

    def _input_workers(self) -> tuple:
        return 1, 0  # each worker's pipeline is its own: no sharding between them (TF's)

    def _auto_shard(self, dataset, num_workers: int, worker_index: int):
        del num_workers, worker_index
        return dataset

    def _sync_has_data(self, local_has_data: bool) -> bool:
        return local_has_data

    def __repr__(self) -> str:
        return (f"ParameterServerStrategy(workers={self._num_workers}, ps={self._num_ps}, "
                f"variable_partitioner={self._variable_partitioner!r})")
