"""ParameterServerStrategy's pieces as TF's: ClusterSpec and resolvers, partitioners,
ShardedVariable, variable placement, asynchronous updates from the workers, RemoteValue and
the coordinator's error propagation."""

import threading

import numpy as np
import pytest

import ember as em

PS = em.distribute.experimental
P = PS.partitioners


def _cluster(num_workers=2, num_ps=2, partitioner=None):
    resolver = PS.create_in_process_cluster(num_workers, num_ps)
    strategy = PS.ParameterServerStrategy(resolver, variable_partitioner=partitioner)
    return strategy, PS.coordinator.ClusterCoordinator(strategy)


# -- cluster descriptions ------------------------------------------------------------------

def test_cluster_spec_and_simple_resolver_describe_jobs():
    spec = em.train.ClusterSpec({"worker": ["w0:1", "w1:1"], "ps": {0: "p0:1"},
                                 "chief": ["c:1"]})
    assert spec.jobs == ["chief", "ps", "worker"]
    assert (spec.num_tasks("worker"), spec.task_indices("ps")) == (2, [0])
    assert spec.as_dict() == {"worker": ["w0:1", "w1:1"], "ps": ["p0:1"], "chief": ["c:1"]}
    assert em.train.ClusterSpec(spec) == spec
    resolver = em.distribute.cluster_resolver.SimpleClusterResolver(spec, rpc_layer="grpc")
    assert resolver.cluster_spec() is spec
    assert resolver.master("worker", 1) == "grpc://w1:1"
    with pytest.raises(ValueError, match="No such job in cluster: 'evaluator'"):
        spec.num_tasks("evaluator")
    with pytest.raises(TypeError, match="must be a dict from job name"):
        em.train.ClusterSpec(["w0:1"])
    with pytest.raises(TypeError, match="must be an em.train.ClusterSpec"):
        em.distribute.cluster_resolver.SimpleClusterResolver({"worker": ["w0:1"]})


def test_strategy_needs_an_in_process_cluster_with_workers_and_ps():
    remote = em.distribute.cluster_resolver.SimpleClusterResolver(
        em.train.ClusterSpec({"worker": ["host:2222"], "ps": ["host:2223"]}))
    with pytest.raises(ValueError, match="'host:2223' is not a task of an in-process cluster"):
        PS.ParameterServerStrategy(remote)
    no_ps = em.distribute.cluster_resolver.SimpleClusterResolver(
        em.train.ClusterSpec({"worker": ["host:2222"]}))
    with pytest.raises(ValueError, match="no 'ps' task|no ps job"):
        PS.ParameterServerStrategy(no_ps)
    with pytest.raises(ValueError, match="num_ps must be an integer >= 1"):
        PS.create_in_process_cluster(2, 0)
    with pytest.raises(TypeError, match="variable_partitioner must be None or a partitioner"):
        PS.ParameterServerStrategy(PS.create_in_process_cluster(1, 1), variable_partitioner=3)


# -- partitioners and sharded variables -----------------------------------------------------

@pytest.mark.parametrize("partitioner, shape, dtype, shards", [
    (P.FixedShardsPartitioner(2), [10, 4], "float32", [2, 1]),
    (P.FixedShardsPartitioner(5), [3], "float32", [3]),  # at most one shard per row
    (P.MinSizePartitioner(min_shard_bytes=64, max_shards=4), [16, 2], "float32", [2, 1]),
    (P.MinSizePartitioner(min_shard_bytes=64, max_shards=4), [100, 2], "float32", [4, 1]),
    (P.MinSizePartitioner(min_shard_bytes=1 << 20, max_shards=4), [16, 2], "float32", [1, 1]),
    (P.MaxSizePartitioner(max_shard_bytes=32), [10, 2], "float32", [3, 1]),
    (P.MaxSizePartitioner(max_shard_bytes=32, max_shards=2), [10, 2], "float32", [2, 1]),
    (P.MaxSizePartitioner(max_shard_bytes=4), [3, 4], "float64", [3, 1]),  # a row a shard
    (P.FixedShardsPartitioner(2), [], "float32", []),
])
def test_partitioners_follow_tf_rules(partitioner, shape, dtype, shards):
    assert partitioner(shape, dtype) == shards


def test_partitioner_arguments_are_checked():
    with pytest.raises(ValueError, match="num_shards must be an integer >= 1, got 0"):
        P.FixedShardsPartitioner(0)
    with pytest.raises(ValueError, match="axis 0 only"):
        P.FixedShardsPartitioner(2)([4, 4], "float32", axis=1)


def test_variables_are_placed_round_robin_and_large_ones_sharded():
    strategy, _ = _cluster(num_ps=2, partitioner=P.MinSizePartitioner(24, max_shards=3))
    with strategy.scope():
        small = em.Variable(np.ones((4,), np.float32), name="small")  # 16 bytes: 1 shard
        table = em.Variable(np.arange(20, dtype=np.float32).reshape(10, 2), name="table")
        scalar = em.Variable(1.0)
    plain = em.Variable(1.0)  # outside the scope: an ordinary variable
    assert plain.device == "/job:localhost/replica:0/task:0/device:CPU:0"  # not on a ps
    assert small.device == strategy.parameter_devices[0]
    assert isinstance(table, em.distribute.ShardedVariable)
    assert [v.name for v in table.variables] == ["table/part_0:0", "table/part_1:0",
                                                 "table/part_2:0"]
    assert [v.shape.as_list() for v in table.variables] == [[4, 2], [3, 2], [3, 2]]
    assert [v.device for v in table.variables] == [strategy.parameter_devices[i]
                                                   for i in (1, 0, 1)]
    assert scalar.device == strategy.parameter_devices[0]
    assert table.shape.as_list() == [10, 2] and table.dtype is em.float32


def test_sharded_variable_reads_concatenate_and_assign_splits():
    strategy, _ = _cluster(num_ps=2, partitioner=P.FixedShardsPartitioner(2))
    value = np.arange(10, dtype=np.float32).reshape(5, 2)
    with strategy.scope():
        v = em.Variable(value, name="v")
    np.testing.assert_array_equal(v.numpy(), value)
    np.testing.assert_array_equal(np.asarray(v[1:3]), value[1:3])
    np.testing.assert_array_equal((v * 2.0).numpy(), value * 2)
    np.testing.assert_array_equal(em.gather(v, [4, 0]).numpy(), value[[4, 0]])
    v.assign(value + 1)
    np.testing.assert_array_equal(v.variables[1].numpy(), value[3:] + 1)
    v.assign_sub(np.ones_like(value))
    np.testing.assert_array_equal(v.numpy(), value)

    @em.function
    def double_and_sum():  # each shard captured: reads and writes inside em.function
        v.assign_add(v.read_value())
        return em.reduce_sum(v)

    assert float(double_and_sum()) == pytest.approx(2 * value.sum())
    np.testing.assert_array_equal(v.numpy(), 2 * value)
    with em.GradientTape() as tape:
        loss = em.reduce_sum(em.gather(v, [0, 4, 4]))
    grads = tape.gradient(loss, v.variables)
    np.testing.assert_array_equal(grads[0].numpy(), [[1, 1], [0, 0], [0, 0]])
    np.testing.assert_array_equal(grads[1].numpy(), [[0, 0], [2, 2]])
    with pytest.raises(ValueError, match=r"has shape \(5, 2\), the value \(4, 2\)"):
        v.assign(np.zeros((4, 2), np.float32))


def test_sharded_variable_compares_elementwise_and_is_keyed_by_ref():
    strategy, _ = _cluster(num_ps=2, partitioner=P.FixedShardsPartitioner(2))
    value = np.arange(6, dtype=np.float32).reshape(3, 2)
    with strategy.scope():
        v = em.Variable(value, name="v")
    np.testing.assert_array_equal((v == value).numpy(), np.ones((3, 2), bool))
    np.testing.assert_array_equal((v != 1.0).numpy(), value != 1.0)
    assert (v == None) is False and (v != object()) is True  # noqa: E711 - as a Tensor's
    with pytest.raises(TypeError, match=r"Variable is unhashable.*variable\.ref\(\)"):
        hash(v)
    assert {v.ref(): 1}[v.ref()] == 1 and v.ref().deref() is v
    compare = em.function(lambda: v == value[::-1])
    np.testing.assert_array_equal(compare().numpy(), value == value[::-1])


# -- running on the workers ------------------------------------------------------------------

def test_updates_from_concurrent_workers_all_land_on_the_ps():
    strategy, coordinator = _cluster(num_workers=2, num_ps=1,
                                     partitioner=P.FixedShardsPartitioner(2))
    with strategy.scope():
        count = em.Variable(np.int64(0))
        table = em.Variable(np.zeros((4, 3), np.float32))

    @em.function
    def step(row):
        count.assign_add(np.int64(1))
        table.assign_add(em.one_hot(row, 4)[:, None] * em.ones((4, 3)))
        return count.read_value()

    results = [coordinator.schedule(step, args=(i % 4,)) for i in range(60)]
    coordinator.join()
    assert coordinator.done()
    assert count.numpy() == 60  # no update lost, each under its variable's lock
    np.testing.assert_array_equal(table.numpy(), np.full((4, 3), 15.0))
    seen = sorted(int(r.fetch()) for r in results)  # each step saw its own increment
    assert seen[0] >= 1 and seen[-1] <= 60


def test_workers_run_at_the_same_time_on_their_own_copies():
    strategy, coordinator = _cluster(num_workers=2, num_ps=1)
    with strategy.scope():
        v = em.Variable(10.0)
    both = threading.Barrier(2, timeout=20)

    def step():  # eager: both workers read 10, add, and meet before returning
        v.assign_add(1.0)
        seen = float(v.numpy())
        both.wait()
        return seen, em.distribute.get_strategy() is strategy

    results = coordinator.fetch([coordinator.schedule(step) for _ in range(2)])
    assert results == [(11.0, True), (11.0, True)]  # each its own copy, the strategy current
    assert float(v.numpy()) == 12.0  # both updates applied as deltas


def test_optimizer_slots_made_by_a_scheduled_function_live_on_the_ps():
    strategy, coordinator = _cluster(num_workers=2, num_ps=2)
    with strategy.scope():
        v = em.Variable(10.0)
        optimizer = em.optimizers.RMSprop(0.1)

    @em.function
    def step():
        return optimizer.minimize(lambda: v * v / 2.0, [v])

    coordinator.schedule(step)
    coordinator.join()
    assert float(v.numpy()) == pytest.approx(9.683772)  # Keras's RMSprop example, one step
    velocity = optimizer.get_slot(v, "velocity")
    assert velocity.device in strategy.parameter_devices
    assert float(velocity.numpy()) == pytest.approx(10.0)  # (1 - rho) * grad**2
    for _ in range(3):
        coordinator.schedule(step)
    coordinator.join()
    assert optimizer.iterations.numpy() == 4 and float(v.numpy()) < 9.6


def test_errors_of_scheduled_functions_raise_in_join_and_cancel_the_rest():
    strategy, coordinator = _cluster(num_workers=1, num_ps=1)
    with strategy.scope():
        v = em.Variable(0.0)
    release = threading.Event()

    def blocked():
        release.wait(20)
        v.assign_add(1.0)

    @em.function
    def bad(i):
        v.assign_add(100.0)
        return em.gather(em.constant([1.0, 2.0]), i)  # index 5: the kernel rejects it

    first = coordinator.schedule(blocked)
    failing = coordinator.schedule(bad, args=(em.constant(5),))
    cancelled = coordinator.schedule(blocked)
    release.set()
    with pytest.raises(em.errors.InvalidArgumentError) as raised:
        coordinator.join()
    assert "scheduled on worker 0" in "".join(getattr(raised.value, "__notes__", []))
    assert first.fetch() is None
    with pytest.raises(em.errors.InvalidArgumentError):
        failing.fetch()
    with pytest.raises(em.distribute.experimental.coordinator.CancelledError):
        cancelled.get()
    assert float(v.numpy()) == 1.0  # the failed function updated nothing
    again = coordinator.schedule(lambda: v.read_value() + 1.0)  # the error was reported once
    coordinator.join()
    assert float(again.fetch()) == 2.0


def test_schedule_raises_an_earlier_error_once():
    strategy, coordinator = _cluster(num_workers=1, num_ps=1)

    def fails():
        raise ValueError("bad batch")

    release = threading.Event()
    failed = coordinator.schedule(lambda: release.wait(20) and fails())
    queued = coordinator.schedule(lambda: None)
    release.set()
    with pytest.raises(ValueError, match="bad batch"):
        failed.get()
    with pytest.raises(ValueError, match="bad batch"):
        coordinator.schedule(lambda: None)
    with pytest.raises(em.errors.CancelledError):  # queued when the error came: not run
        queued.fetch()
    coordinator.join()  # reported once already
    assert coordinator.done()
    inner = coordinator.schedule(coordinator.join)  # would wait for itself
    with pytest.raises(RuntimeError, match="join: called inside a scheduled function"):
        inner.fetch()
    with pytest.raises(RuntimeError, match="join: called inside a scheduled function"):
        coordinator.join()  # the error is reported once more, by join
    with pytest.raises(TypeError, match="fn must be callable"):
        coordinator.schedule(3)


def test_strategy_run_reduce_and_coordinator_singleton():
    strategy, coordinator = _cluster(num_workers=2, num_ps=1)
    assert PS.coordinator.ClusterCoordinator(strategy) is coordinator
    assert strategy.num_replicas_in_sync == 1
    x = em.constant([[1.0, 2.0], [3.0, 4.0]])
    assert float(strategy.reduce("SUM", x, axis=None)[1, 1]) == 4.0
    np.testing.assert_allclose(strategy.reduce("MEAN", x, axis=0).numpy(), [2.0, 3.0])

    @em.function
    def step(x):
        per_replica = strategy.run(lambda t: t * 2.0, args=(x,))
        return strategy.reduce(em.distribute.ReduceOp.SUM, per_replica, axis=0)

    value = coordinator.schedule(step, args=(x,))
    np.testing.assert_allclose(coordinator.fetch(value), [8.0, 12.0])
    with pytest.raises(ValueError, match="only em.distribute.experimental.ParameterServer"):
        PS.coordinator.ClusterCoordinator(em.distribute.MirroredStrategy(["cpu:0"]))
    with pytest.raises(TypeError, match="dataset_fn must return an em.data.Dataset"):
        coordinator.create_per_worker_dataset(lambda: [1, 2])
    per_worker = iter(coordinator.create_per_worker_dataset(em.data.Dataset.range(3)))
    three = PS.coordinator.PerWorkerValues([1, 2, 3])
    with pytest.raises(ValueError, match="PerWorkerValues of 3 values for a cluster of 2"):
        coordinator.schedule(lambda x: x, args=([three],))
    with pytest.raises(TypeError, match="pass it to coordinator.schedule"):
        next(per_worker)


@pytest.mark.parametrize("name", ["cluster", "coordinator", "partitioners", "ps_strategy",
                                  "sharded"])
def test_docstring_examples(name):
    import doctest
    import importlib
    module = importlib.import_module(f"ember.runtime.distribute.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                             extraglobs={"em": em})
    assert result.failed == 0 and result.attempted > 0


def test_threads_stop_when_the_strategy_is_collected():
    import gc

    def train_and_drop():
        strategy, coordinator = _cluster(num_workers=2, num_ps=2)
        with strategy.scope():
            v = em.Variable(1.0)
        coordinator.schedule(lambda: v.assign_add(1.0))
        coordinator.join()
        assert float(v.numpy()) == 2.0
        return ([s._thread for s in strategy._ps_servers] + coordinator._cluster.threads)

    threads = train_and_drop()
    assert len(threads) == 4 and all(t.is_alive() for t in threads)
    gc.collect()
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
