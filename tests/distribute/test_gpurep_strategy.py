"""em.distribute.MirroredStrategy over GPUs, run on two emulated GPUs
(backends/cuda/emulated_device.py: Ember's CUDA runtime over host memory, the cuda-emulated
backend's code for each call): replicas compute with `backend="cuda"` functions on their own
GPU, the input is copied to each replica's GPU, mirrored variables keep a copy per GPU, the
all-reduce goes through the host, and two GPU replicas train as one CPU replica. The last
test runs on the machine's real GPUs (`@pytest.mark.gpu`: skipped without one)."""

import numpy as np
import pytest

import ember as em
from ember.backends.cuda import driver, emulated_device, runtime
from ember.backends.cuda.emulated_device import emulate_gpus

GPU = "/job:localhost/replica:0/task:0/device:GPU:{}"


@pytest.fixture
def two_gpus():
    """Two emulated GPUs, compiled code only (an interpreter fallback is an error)."""
    previous, fallback = emulate_gpus(2), em.config.get_fallback()
    em.config.set_fallback("error")
    yield
    em.config.set_fallback(fallback)
    emulate_gpus(previous)


def _local(strategy, value):
    return strategy.experimental_local_results(value)


def test_default_strategy_takes_every_gpu(two_gpus):
    assert [d.name for d in em.config.list_physical_devices("GPU")] == [
        "/physical_device:GPU:0", "/physical_device:GPU:1"]
    strategy = em.distribute.MirroredStrategy()
    assert strategy.num_replicas_in_sync == 2
    assert list(strategy._devices) == [GPU.format(0), GPU.format(1)]
    named = em.distribute.MirroredStrategy(["/gpu:1"])
    assert named.num_replicas_in_sync == 1 and named._devices == (GPU.format(1),)


def test_run_computes_on_each_replica_gpu_and_all_reduces_through_the_host(two_gpus,
                                                                         monkeypatch):
    calls = []  # (device, input devices) of each call of emulated GPU code
    call = emulated_device.EmulatedExecutable.__call__
    monkeypatch.setattr(emulated_device.EmulatedExecutable, "__call__", lambda self, arrays: (
        calls.append((self.device.name, [getattr(runtime.buffer_of(a), "ember_device", None)
                                         for a in arrays])), call(self, arrays))[1])
    strategy = em.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    double = em.function(lambda x: x * 2.0 + 1.0, backend="cuda")
    seen = []

    def step(x):
        y = double(x)
        seen.append((em.distribute.get_replica_context().replica_id_in_sync_group.numpy(),
                     x.device, y.device))
        return y, em.distribute.get_replica_context().all_reduce("SUM", y)

    inputs = strategy.experimental_distribute_values_from_function(
        lambda ctx: em.constant([1.0, 2.0]) * (ctx.replica_id_in_sync_group + 1))
    ys, sums = strategy.run(step, args=(inputs,))
    # each replica's value was placed on its GPU: the compiled code reads it there
    assert sorted(calls) == [(GPU.format(0), [GPU.format(0)]), (GPU.format(1), [GPU.format(1)])]
    assert sorted(seen) == [(0, GPU.format(0), GPU.format(0)), (1, GPU.format(1), GPU.format(1))]
    host_inputs = strategy.run(lambda x: double(x), args=(em.constant([1.0, 2.0]),))
    assert [t.device for t in _local(strategy, host_inputs)] == [GPU.format(0), GPU.format(1)]
    assert sorted(calls[2:]) == [(GPU.format(0), [None]), (GPU.format(1), [None])]  # copied in
    for i, (y, total) in enumerate(zip(_local(strategy, ys), _local(strategy, sums))):
        assert y.device == total.device == GPU.format(i)
        host = y.numpy()
        assert runtime.buffer_of(host) is None  # .numpy() copied it to the host
        np.testing.assert_array_equal(host, np.array([1.0, 2.0], np.float32) * 2 * (i + 1) + 1)
        np.testing.assert_array_equal(total.numpy(), [8.0, 14.0])
        assert total.shape == [2]
    reduced = strategy.reduce("MEAN", ys, axis=None)  # cross-replica: to the host, as TF
    assert reduced.device.endswith("CPU:0")
    np.testing.assert_array_equal(reduced.numpy(), [4.0, 7.0])
    # a scalar all-reduced stays a scalar on each GPU
    scalars = strategy.run(lambda: em.distribute.get_replica_context().all_reduce(
        "SUM", em.constant(1.5)))
    assert [(s.shape, s.device, float(s.numpy())) for s in _local(strategy, scalars)] == [
        ([], GPU.format(0), 3.0), ([], GPU.format(1), 3.0)]


def test_distributed_input_is_copied_to_each_replica_gpu(two_gpus):
    strategy = em.distribute.MirroredStrategy()
    dataset = em.data.Dataset.range(10).batch(4)  # the last global batch is partial
    batches = []
    for element in strategy.experimental_distribute_dataset(dataset):
        parts = _local(strategy, element)
        assert [p.device for p in parts] == [GPU.format(0), GPU.format(1)]
        batches.append([p.numpy().tolist() for p in parts])
    assert batches == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8], [9]]]

    def dataset_fn(context):
        return em.data.Dataset.range(6).batch(context.get_per_replica_batch_size(4))
    element = next(iter(strategy.distribute_datasets_from_function(dataset_fn)))
    assert [(p.device, p.numpy().tolist()) for p in _local(strategy, element)] == [
        (GPU.format(0), [0, 1]), (GPU.format(1), [2, 3])]
    # short input: the replica left without data gets an empty batch on its GPU
    short = strategy.experimental_distribute_dataset(
        em.data.Dataset.from_tensor_slices(np.ones((1, 3), np.float32)).batch(4))
    parts = _local(strategy, next(iter(short)))
    assert [(p.device, p.shape.as_list()) for p in parts] == [(GPU.format(0), [1, 3]),
                                                              (GPU.format(1), [0, 3])]


def test_mirrored_variables_keep_a_copy_on_each_gpu(two_gpus):
    strategy = em.distribute.MirroredStrategy()
    with strategy.scope():
        v = em.Variable([1.0, 2.0])

    def devices():
        return [copy.read_value().device for copy in v.values]
    assert devices() == [GPU.format(0), GPU.format(1)]
    v.assign_add([1.0, 1.0])  # cross-replica: every copy, each staying on its GPU
    assert devices() == [GPU.format(0), GPU.format(1)]
    assert [c.numpy().tolist() for c in v.values] == [[2.0, 3.0]] * 2
    add = em.function(lambda delta: v.assign_add(delta).read_value(), backend="cuda")
    results = strategy.run(add, args=(em.constant([10.0, 20.0]),))
    assert [r.device for r in _local(strategy, results)] == [GPU.format(0), GPU.format(1)]
    assert devices() == [GPU.format(0), GPU.format(1)]  # compiled writes stayed on the GPU
    assert [c.numpy().tolist() for c in v.values] == [[12.0, 23.0]] * 2
    strategy.run(lambda: v.assign([0.5, 0.5]))  # each replica its own copy, eagerly
    assert devices() == [GPU.format(0), GPU.format(1)]
    assert [c.numpy().tolist() for c in v.values] == [[0.5, 0.5]] * 2


def _train(strategy, optimizer_class, backend):
    x = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    with strategy.scope():
        em.random.set_seed(1)
        model = em.layers.Dense(1)
        model.build([None, 3])
        optimizer = optimizer_class(0.05)

    @em.function(backend=backend)
    def gradients(features, labels):
        with em.GradientTape() as tape:
            error = model(features) - labels
            loss = em.reduce_sum(error * error) / 8  # the global batch size
        return loss, tape.gradient(loss, model.trainable_variables)

    placed = set()

    def step(inputs):
        loss, grads = gradients(*inputs)
        placed.update([loss.device] + [g.device for g in grads])
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    dataset = em.data.Dataset.from_tensor_slices((x, y)).batch(8)
    losses = []
    for _ in range(2):
        for inputs in strategy.experimental_distribute_dataset(dataset):
            losses.append(float(strategy.reduce("SUM", strategy.run(step, args=(inputs,)),
                                                axis=None)))
    copies = [_local(strategy, v) for v in model.variables]
    return losses, copies, placed


@pytest.mark.parametrize("optimizer_class", [em.optimizers.SGD, em.optimizers.Adam])
def test_two_gpus_train_as_one_cpu_replica(two_gpus, optimizer_class):
    losses2, copies2, placed = _train(em.distribute.MirroredStrategy(), optimizer_class,
                                      "cuda")
    losses1, copies1, _ = _train(em.distribute.MirroredStrategy(["cpu:0"]), optimizer_class,
                                 "cpu")
    assert placed == {GPU.format(0), GPU.format(1)}  # each replica computed on its GPU
    np.testing.assert_allclose(losses2, losses1, rtol=1e-5, atol=1e-6)
    for two, one in zip(copies2, copies1):
        assert [c.read_value().device for c in two] == [GPU.format(0), GPU.format(1)]
        np.testing.assert_array_equal(two[0].numpy(), two[1].numpy())  # kept identical
        np.testing.assert_allclose(two[0].numpy(), one[0].numpy(), rtol=1e-5, atol=1e-6)
    assert losses2[-1] != losses2[0]


def test_missing_gpus_and_mixed_devices_are_refused(two_gpus, monkeypatch):
    with pytest.raises(em.errors.GpuUnavailableError,
                       match=r"there is no GPU:3: this process has 2 GPU\(s\): GPU:0 "
                             r"\(Emulated GPU 0\), GPU:1 \(Emulated GPU 1\)"):
        em.distribute.MirroredStrategy(["GPU:0", "GPU:3"])
    with pytest.raises(ValueError, match="mix CPUs and GPUs; Ember compiles each em.function "
                                         "for one backend"):
        em.distribute.MirroredStrategy(["CPU:0", "GPU:1"])
    with pytest.raises(ValueError, match="name a device twice"):
        em.distribute.MirroredStrategy(["GPU:1", "/device:GPU:1"])
    emulate_gpus(0)  # no GPU at all (and no driver): says why
    monkeypatch.setattr(driver, "load_bindings", lambda: (_ for _ in ()).throw(
        driver.GpuUnavailableError("the CUDA backend needs NVIDIA's cuda-bindings")))
    driver.probe.cache_clear()
    try:
        with pytest.raises(em.errors.GpuUnavailableError,
                           match=r"devices \['/job:localhost/replica:0/task:0/device:GPU:0'\] "
                                 "name GPUs, but the CUDA backend needs"):
            em.distribute.MirroredStrategy(["gpu:0"])
        assert em.distribute.MirroredStrategy().num_replicas_in_sync == 1  # the CPU
    finally:
        monkeypatch.undo()
        driver.probe.cache_clear()


def test_a_traced_run_leaves_copies_that_the_next_run_puts_back(two_gpus):
    strategy = em.distribute.MirroredStrategy()
    with strategy.scope():
        v = em.Variable([1.0, 2.0])

    @em.function  # strategy.run inside: one CPU function for both replicas
    def traced(x):
        def replica(x):
            v.assign_add(x)
            return em.distribute.get_replica_context().all_reduce("SUM", x * 2.0)
        return strategy.reduce("SUM", strategy.run(replica, args=(x,)), axis=None)

    np.testing.assert_array_equal(traced(em.constant([1.0, 1.0])).numpy(), [8.0, 8.0])
    assert [c.numpy().tolist() for c in v.values] == [[2.0, 3.0]] * 2
    assert {c.read_value().device for c in v.values} == {
        "/job:localhost/replica:0/task:0/device:CPU:0"}  # where the CPU function ran
    devices = strategy.run(lambda: v.read_value().device)
    assert _local(strategy, devices) == (GPU.format(0), GPU.format(1))
    assert [c.numpy().tolist() for c in v.values] == [[2.0, 3.0]] * 2


def test_gather_and_errors_on_gpu_replicas(two_gpus):
    strategy = em.distribute.MirroredStrategy()
    values = strategy.experimental_distribute_values_from_function(
        lambda ctx: em.constant([[float(ctx.replica_id_in_sync_group)]] * 2))
    assert [v.device for v in _local(strategy, values)] == [GPU.format(0), GPU.format(1)]
    gathered = strategy.gather(values, axis=0)  # device to host, concatenated there
    assert gathered.device.endswith("CPU:0")
    assert gathered.numpy().tolist() == [[0.0], [0.0], [1.0], [1.0]]

    def failing(x):
        if em.distribute.get_replica_context().replica_id_in_sync_group.numpy() == 1:
            raise ValueError("replica one fails")
        return em.distribute.get_replica_context().all_reduce("SUM", x)
    with pytest.raises(ValueError, match="replica one fails") as info:
        strategy.run(failing, args=(values,))
    assert "(raised in replica 1 of 2, on /job:localhost/replica:0/task:0/device:GPU:1)" in \
        info.value.__notes__


@pytest.mark.gpu
def test_real_gpus_train_as_one_cpu_replica():
    strategy = em.distribute.MirroredStrategy()  # every GPU of the machine
    losses2, copies2, placed = _train(strategy, em.optimizers.SGD, "cuda")
    losses1, copies1, _ = _train(em.distribute.MirroredStrategy(["cpu:0"]),
                                 em.optimizers.SGD, "cpu")
    assert placed == set(strategy._devices)
    np.testing.assert_allclose(losses2, losses1, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(copies2[0][-1].numpy(), copies1[0][0].numpy(), rtol=1e-4,
                               atol=1e-5)
