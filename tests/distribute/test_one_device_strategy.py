"""em.distribute.OneDeviceStrategy against tf.distribute.OneDeviceStrategy's documentation:
one replica on one device; `run` returns plain values; variables made under the scope are
ordinary variables placed on the device; datasets pass through unsplit; `reduce` with an
axis reduces within the one replica; Keras's fit under it trains as without a strategy."""

import numpy as np
import pytest

import ember as em

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


@pytest.fixture
def strategy():
    return em.distribute.OneDeviceStrategy("/cpu:0")


def test_tf_docstring_example(strategy):
    with strategy.scope():
        v = em.Variable(1.0)
    assert v.device == CPU0
    result = 0
    for i in range(10):
        result += strategy.run(lambda x: x * 2, args=(i,))
    assert result == 90


@pytest.mark.parametrize("name", ["/cpu:0", "cpu:0", "CPU:0", "/device:CPU:0", CPU0])
def test_device_spellings_and_the_strategy_api(name):
    s = em.distribute.OneDeviceStrategy(name)
    assert s.num_replicas_in_sync == 1
    assert s.extended.worker_devices == (CPU0,) and s.extended.parameter_devices == (CPU0,)
    assert s.extended.should_checkpoint and s.extended.should_init
    assert s.cluster_resolver is None
    assert repr(s) == f"OneDeviceStrategy(device='{CPU0}')"


def test_scope_makes_it_current_and_variables_ordinary(strategy):
    assert not em.distribute.has_strategy()
    with strategy.scope():
        assert em.distribute.get_strategy() is strategy
        assert em.distribute.in_cross_replica_context()
        v = em.Variable([1.0, 2.0])
    assert type(v) is em.Variable  # not a MirroredVariable: TF places a plain variable
    assert strategy.experimental_local_results(v) == (v,)
    assert em.distribute.get_strategy() is not strategy


def test_run_gives_a_replica_context_of_one_and_plain_results(strategy):
    def step(x):
        ctx = em.distribute.get_replica_context()
        assert em.distribute.get_strategy() is strategy
        assert not em.distribute.in_cross_replica_context()
        return {"sum": ctx.all_reduce(em.distribute.ReduceOp.SUM, x),
                "id": ctx.replica_id_in_sync_group, "n": ctx.num_replicas_in_sync}

    out = strategy.run(step, args=(em.constant([1.0, 2.0]),))
    assert not isinstance(out["sum"], em.distribute.PerReplica)
    np.testing.assert_allclose(out["sum"].numpy(), [1.0, 2.0])
    assert int(out["id"]) == 0 and out["n"] == 1
    assert em.distribute.get_replica_context().strategy is not strategy  # left the replica


def test_run_on_the_calling_thread_a_tape_outside_sees_it(strategy):
    w = em.Variable([1.0, 2.0])
    with em.GradientTape() as tape:
        y = strategy.run(lambda: em.reduce_sum(w * 3.0))
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), [3.0, 3.0])


@pytest.mark.parametrize("op,axis,want", [("SUM", None, [1.0, 2.0]), ("SUM", 0, 3.0),
                                          ("MEAN", None, [1.0, 2.0]), ("MEAN", 0, 1.5)])
def test_reduce_as_tf_documents(strategy, op, axis, want):
    result = strategy.run(lambda: em.constant([1.0, 2.0]))
    reduced = strategy.reduce(op, result, axis=axis)
    np.testing.assert_allclose(reduced.numpy(), want)
    reduced = strategy.reduce(getattr(em.distribute.ReduceOp, op), result, axis=axis)
    np.testing.assert_allclose(reduced.numpy(), want)


def test_distributed_datasets_pass_batches_through(strategy):
    dataset = em.data.Dataset.range(10).batch(2)
    got = [x.numpy().tolist() for x in strategy.experimental_distribute_dataset(dataset)]
    assert got == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    contexts = []

    def dataset_fn(ctx):
        contexts.append(ctx)
        return em.data.Dataset.range(6).batch(ctx.get_per_replica_batch_size(4))

    got = [x.numpy().tolist() for x in strategy.distribute_datasets_from_function(dataset_fn)]
    assert got == [[0, 1, 2, 3], [4, 5]]
    (ctx,) = contexts
    assert (ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync) == \
        (1, 0, 1)


def test_values_from_function(strategy):
    value = strategy.experimental_distribute_values_from_function(
        lambda ctx: em.constant(float(ctx.replica_id_in_sync_group + ctx.num_replicas_in_sync)))
    assert float(strategy.run(lambda x: x * 2.0, args=(value,))) == 2.0


def _train_step(strategy, w, optimizer):
    def step(x):
        with em.GradientTape() as tape:
            loss = em.reduce_sum(w * x)
        optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        return loss
    return step


@pytest.mark.parametrize("compiled", [False, True])
def test_training_step_eager_and_inside_em_function(strategy, compiled):
    with strategy.scope():
        w = em.Variable([1.0, 2.0])
        optimizer = em.optimizers.SGD(0.5)
    step = _train_step(strategy, w, optimizer)
    dataset = strategy.experimental_distribute_dataset(
        em.data.Dataset.from_tensor_slices(np.ones((4, 2), np.float32)).batch(2))

    def run(x):
        return strategy.run(step, args=(x,))
    run = em.function(run) if compiled else run
    losses = [float(em.reduce_sum(run(x))) for x in dataset]
    # d(sum(w * x))/dw = sum over the batch of x = [2, 2]: w -= 0.5 * 2 per step, as TF
    np.testing.assert_allclose(w.numpy(), [-1.0, 0.0])
    assert losses == [6.0, 2.0]


def test_keras_fit_under_the_scope_trains_as_without_a_strategy(strategy):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)

    def make():
        model = em.keras.Sequential([em.keras.layers.Dense(1)])
        model.compile(optimizer=em.optimizers.SGD(0.1), loss="mse")
        model.build((None, 3))
        return model

    plain = make()
    with strategy.scope():
        placed = make()
    placed.set_weights(plain.get_weights())
    assert all(type(v) is em.Variable for v in placed.trainable_variables)
    data = em.data.Dataset.from_tensor_slices((x, y)).batch(8)
    want = plain.fit(data, epochs=3, verbose=0).history["loss"]
    got = placed.fit(data, epochs=3, verbose=0).history["loss"]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(placed.predict(x, verbose=0), plain.predict(x, verbose=0),
                               rtol=1e-5)


@pytest.mark.parametrize("device,error,match", [
    (["cpu:0"], TypeError, r"takes one device name.*use em.distribute.MirroredStrategy"),
    (None, TypeError, r"takes one device name, such as '/cpu:0'"),
    ("tpu:0", ValueError, r"OneDeviceStrategy: em.device: 'tpu:0' is not a device name"),
    ("cpu:99", ValueError, r"OneDeviceStrategy: there is no CPU:99.*"
                           r"set_logical_device_configuration"),
])
def test_misuse_says_what_and_how_to_fix(device, error, match):
    with pytest.raises(error, match=match):
        em.distribute.OneDeviceStrategy(device)


def test_run_misuse(strategy):
    with pytest.raises(TypeError, match="OneDeviceStrategy.run: fn must be callable"):
        strategy.run(3)
    with pytest.raises(RuntimeError, match="called inside a replica"):
        strategy.run(lambda: strategy.run(lambda: 1))
    other = em.distribute.OneDeviceStrategy("cpu:0")
    with strategy.scope(), pytest.raises(ValueError, match="Mixing different"):
        with other.scope():
            pass


def test_docstring_examples():
    import doctest

    from ember.runtime.distribute import one_device
    result = doctest.testmod(one_device, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
