"""Cluster descriptions as tf.train.ClusterSpec and tf.distribute.cluster_resolver's
`SimpleClusterResolver`, and Ember's in-process cluster (TF's tutorial helper
`multi_worker_test_base.create_in_process_cluster`).

Ember runs parameter-server clusters inside one process: `create_in_process_cluster` names
`num_workers` worker tasks and `num_ps` parameter-server tasks with addresses of the form
`inprocess://cluster<N>/<job>:<task>` and registers them; `ParameterServerStrategy` starts
a thread per parameter server (ps_server.py) and `ClusterCoordinator` one per worker. A ClusterSpec naming other addresses (remote `host:port` servers) is valid as
a description, but a strategy refuses it: Ember has no RPC layer.
"""

from __future__ import annotations

import itertools
import threading

_clusters = itertools.count(1)
_in_process: set = set()  # the addresses create_in_process_cluster made
_lock = threading.Lock()
IN_PROCESS_SCHEME = "inprocess://"


class ClusterSpec:
    """tf.train.ClusterSpec: the jobs of a cluster and the addresses of their tasks.

    Args:
      cluster: a dict from job name to a list of task addresses (task i at position i) or to
        a dict {task index: address}; or another ClusterSpec.

    Example:
      >>> import ember as em
      >>> spec = em.train.ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]})
      >>> spec.jobs, spec.num_tasks("worker"), spec.task_address("ps", 0)
      (['ps', 'worker'], 2, 'p0:2222')
    """

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        if not isinstance(cluster, dict):
            raise TypeError("ClusterSpec: cluster must be a dict from job name to a list (or "
                            "dict {task index: address}) of task addresses, e.g. {'worker': "
                            f"['localhost:2222']}}; got {type(cluster).__name__} {cluster!r}")
        self._jobs: dict = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str) or not job:
                raise TypeError(f"ClusterSpec: a job name must be a non-empty string, got "
                                f"{job!r}")
            if isinstance(tasks, (list, tuple)):
                tasks = dict(enumerate(tasks))
            if not isinstance(tasks, dict):
                raise TypeError(f"ClusterSpec: the tasks of job {job!r} must be a list of "
                                f"addresses or a dict {{task index: address}}, got {tasks!r}")
            for index, address in tasks.items():
                if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                    raise TypeError(f"ClusterSpec: job {job!r}: task index {index!r} must be "
                                    "an integer >= 0")
                if not isinstance(address, str) or not address:
                    raise TypeError(f"ClusterSpec: job {job!r} task {index}: the address must "
                                    f"be a non-empty string, got {address!r}")
            self._jobs[job] = dict(sorted(tasks.items()))

    @property
    def jobs(self) -> list:
        """The job names, sorted."""
        return sorted(self._jobs)

    def _tasks(self, job_name: str) -> dict:
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r} (the jobs are "
                             f"{self.jobs})")
        return self._jobs[job_name]

    def num_tasks(self, job_name: str) -> int:
        return len(self._tasks(job_name))

    def task_indices(self, job_name: str) -> list:
        return list(self._tasks(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._tasks(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r} (it has "
                             f"{list(tasks)})")
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list:
        """The addresses of the job's tasks, by index (None for an index not given)."""
        tasks = self._tasks(job_name)
        return [tasks.get(i) for i in range(max(tasks) + 1)] if tasks else []

    def as_dict(self) -> dict:
        """{job: [addresses]} (or {job: {index: address}} where indices are sparse)."""
        out = {}
        for job, tasks in self._jobs.items():
            dense = list(tasks) == list(range(len(tasks)))
            out[job] = list(tasks.values()) if dense else dict(tasks)
        return out

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other) -> bool:
        return isinstance(other, ClusterSpec) and self.as_dict() == other.as_dict()

    __hash__ = None

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"


class SimpleClusterResolver:
    """tf.distribute.cluster_resolver.SimpleClusterResolver: a cluster given directly.

    Example:
      >>> import ember as em
      >>> spec = em.train.ClusterSpec({"worker": ["w0:1"], "ps": ["p0:1"]})
      >>> em.distribute.cluster_resolver.SimpleClusterResolver(spec).cluster_spec() == spec
      True
    """

    def __init__(self, cluster_spec, master: str = "", task_type=None, task_id=None,
                 environment: str = "", num_accelerators=None, rpc_layer=None):
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError("SimpleClusterResolver: cluster_spec must be an em.train."
                            f"ClusterSpec, got {type(cluster_spec).__name__} "
                            f"{cluster_spec!r}")
        self._cluster_spec = cluster_spec
        self._master = master
        self.task_type = task_type
        self.task_id = task_id
        self.environment = environment
        self._num_accelerators = dict(num_accelerators or {})
        self.rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        if task_type is not None and task_id is not None:
            address = self._cluster_spec.task_address(task_type, task_id)
            layer = rpc_layer or self.rpc_layer
            return f"{layer}://{address}" if layer else address
        return self._master

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        del task_type, task_id, config_proto
        return dict(self._num_accelerators)

    def __repr__(self) -> str:
        return f"SimpleClusterResolver({self._cluster_spec!r})"


def create_in_process_cluster(num_workers: int, num_ps: int, has_chief: bool = False,
                              rpc_layer: str = "inprocess") -> SimpleClusterResolver:
    """A cluster of `num_workers` workers and `num_ps` parameter servers run as threads of
    this process (TF's tutorial `create_in_process_cluster`), for
    `em.distribute.experimental.ParameterServerStrategy`. This process is the coordinator
    (the "chief" job, listed when `has_chief`).

    Example:
      >>> import ember as em
      >>> resolver = em.distribute.experimental.create_in_process_cluster(2, 1)
      >>> resolver.cluster_spec().num_tasks("worker"), resolver.cluster_spec().jobs
      (2, ['ps', 'worker'])
    """
    for what, value, low in (("num_workers", num_workers, 1), ("num_ps", num_ps, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"create_in_process_cluster: {what} must be an integer >= {low}, "
                             f"got {value!r}")
    name = f"{IN_PROCESS_SCHEME}cluster{next(_clusters)}"
    jobs = {"worker": [f"{name}/worker:{i}" for i in range(num_workers)],
            "ps": [f"{name}/ps:{i}" for i in range(num_ps)]}
    if has_chief:
        jobs["chief"] = [f"{name}/chief:0"]
    with _lock:
        _in_process.update(a for tasks in jobs.values() for a in tasks)
    return SimpleClusterResolver(ClusterSpec(jobs), rpc_layer=rpc_layer)


def check_in_process(spec: ClusterSpec, where: str) -> None:
    """ValueError unless every address of `spec` is a task of an in-process cluster."""
    with _lock:
        foreign = [spec.task_address(job, i) for job in spec.jobs
                   for i in spec.task_indices(job)
                   if spec.task_address(job, i) not in _in_process]
    if foreign:
        raise ValueError(f"{where}: {foreign[0]!r} is not a task of an in-process cluster: "
                         "Ember runs parameter-server clusters inside this process only (it "
                         "has no RPC servers); make the cluster with em.distribute.experimental"
                         ".create_in_process_cluster(num_workers, num_ps)")
