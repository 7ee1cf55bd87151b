"""MirroredVariables (em.Variable under a MirroredStrategy's scope) and training with them:
the optimizer sums the replicas' gradients and keeps every copy identical, so 2 replicas
train as 1 replica on the same global batches. The 2-replica cases run in a subprocess
(logical CPUs are fixed once per process); the 1-replica ones here."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember as em

PREAMBLE = """
import numpy as np
import ember as em
cpu = em.config.list_physical_devices("CPU")[0]
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * 2)
strategy = em.distribute.MirroredStrategy()
local = lambda v: [np.asarray(x.numpy()).tolist() for x in
                   strategy.experimental_local_results(v)]
"""


def _run(code: str) -> list:
    done = subprocess.run([sys.executable, "-c", PREAMBLE + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_copies_per_replica_reads_and_writes():
    out = _run("""
        with strategy.scope():
            v = em.Variable([1.0, 2.0], name="v")
        print(type(v).__name__, local(v), v.numpy().tolist())

        @em.function
        def read_twice():
            return v.read_value() * 2.0

        def replica_writes():
            ctx = em.distribute.get_replica_context()
            rid = em.cast(ctx.replica_id_in_sync_group, em.float32)
            v.assign_add(em.ones([2]) * rid)  # its own copy
            return read_twice(), v.read_value()

        doubled, read = strategy.run(replica_writes)
        print(local(v), local(doubled), local(read))
        v.assign([5.0, 5.0])  # cross-replica: every copy
        print(local(v), local(strategy.run(read_twice)))

        def creates():
            return em.Variable(3.0)  # created once, in a merge_call

        made = strategy.run(creates)
        print(type(made).__name__, local(made))
        try:
            em.function(lambda: v.assign([0.0, 0.0]))()
        except ValueError as err:
            print(str(err)[:60])
        with strategy.scope():
            optimizer = em.optimizers.SGD(0.1)
        for _ in range(3):  # the merge function's error, from every replica, never a hang
            try:
                strategy.run(lambda: optimizer.apply_gradients([(em.ones([3]), v)]))
            except ValueError as err:
                print(err, err.__notes__[0][:25])
        """)
    assert out == [
        "MirroredVariable [[1.0, 2.0], [1.0, 2.0]] [1.0, 2.0]",
        "[[1.0, 2.0], [2.0, 3.0]] [[2.0, 4.0], [4.0, 6.0]] [[1.0, 2.0], [2.0, 3.0]]",
        "[[5.0, 5.0], [5.0, 5.0]] [[10.0, 10.0], [10.0, 10.0]]",
        "MirroredVariable [3.0, 3.0]",
        "v:0 is a MirroredVariable: an em.function called outside str"] + [
        "SGD.apply_gradients: the gradient of v:0 has shape (3,), but the variable has shape "
        "(2,) (raised in replica 0 of 2"] * 3


def test_two_replicas_train_as_one_on_the_same_global_batches():
    out = _run("""
        x = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32)
        y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
        GLOBAL_BATCH = 8

        def train(strategy, optimizer_class):
            with strategy.scope():
                em.random.set_seed(1)
                model = em.layers.Dense(1)
                model.build([None, 3])
                optimizer = optimizer_class(0.05)

            @em.function
            def gradients(features, labels):
                with em.GradientTape() as tape:
                    error = model(features) - labels
                    loss = em.reduce_sum(error * error) / GLOBAL_BATCH
                return loss, tape.gradient(loss, model.trainable_variables)

            def step(inputs):
                loss, grads = gradients(*inputs)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            dataset = em.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
            losses = []
            for _ in range(3):
                for inputs in strategy.experimental_distribute_dataset(dataset):
                    per_replica = strategy.run(step, args=(inputs,))
                    losses.append(float(strategy.reduce("SUM", per_replica, axis=None)))
            copies = [strategy.experimental_local_results(v) for v in model.variables]
            same = all(np.array_equal(c[0].numpy(), c[-1].numpy()) for c in copies)
            return losses, [c[0].numpy() for c in copies], optimizer, same

        one = em.distribute.MirroredStrategy(["cpu:0"])
        for optimizer_class in (em.optimizers.SGD, em.optimizers.Adam):
            losses2, weights2, opt2, same = train(strategy, optimizer_class)
            losses1, weights1, opt1, _ = train(one, optimizer_class)
            print(optimizer_class.__name__, same, np.allclose(losses1, losses2, atol=1e-5),
                  all(np.allclose(a, b, atol=1e-5) for a, b in zip(weights1, weights2)),
                  sum(losses2[-4:]) < sum(losses2[:4]), local(opt2.iterations))
        print(type(opt2.variables[-1]).__name__)
        """)
    assert out == ["SGD True True True True [12, 12]", "Adam True True True True [12, 12]",
                   "MirroredVariable"]


def test_a_compiled_replica_step_all_reduces_and_agrees_with_eager():
    out = _run("""
        x = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32)
        y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)

        def train(compiled, optimizer_class):
            with strategy.scope():
                em.random.set_seed(1)
                model = em.layers.Dense(1)
                model.build([None, 3])
                optimizer = optimizer_class(0.05)
                optimizer.build(model.trainable_variables)  # slots before the trace

            def step(features, labels):
                with em.GradientTape() as tape:
                    error = model(features) - labels
                    loss = em.reduce_sum(error * error) / 8
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return em.distribute.get_replica_context().all_reduce("SUM", loss)

            step = em.function(step) if compiled else step
            dataset = em.data.Dataset.from_tensor_slices((x, y)).batch(8)
            losses = []
            for _ in range(3):
                for inputs in strategy.experimental_distribute_dataset(dataset):
                    losses += local(strategy.run(step, args=inputs))
            return losses, [local(v) for v in model.variables], local(optimizer.iterations)

        for optimizer_class in (em.optimizers.SGD, em.optimizers.Adam):
            eager, compiled = train(False, optimizer_class), train(True, optimizer_class)
            print(np.allclose(eager[0], compiled[0], atol=1e-6),
                  all(np.allclose(a, b, atol=1e-6) for a, b in zip(eager[1], compiled[1])),
                  all(c[0] == c[1] for c in compiled[1]), compiled[2])

        with strategy.scope():
            v = em.Variable(1.0)
            adam = em.optimizers.Adam(0.1)
        sgd = em.optimizers.SGD(0.1)
        for optimizer in (sgd, adam):
            try:
                strategy.run(em.function(
                    lambda: optimizer.apply_gradients([(em.constant(1.0), v)])))
            except ValueError as err:
                print(err)
        """)
    assert out[:2] == ["True True True [12, 12]", "True True True [12, 12]"]
    assert "every variable it updates must be mirrored, but ['iteration:0'] are not: " \
        "create the model's variables and the optimizer under strategy.scope()" in out[2]
    assert "the optimizer cannot create its slots ['momentum', 'velocity'] for ['Variable:0']" \
        ": call optimizer.build(variables) under strategy.scope() first" in out[3]


def test_mirrored_variables_compare_elementwise_and_are_keyed_by_ref():
    """As tf.distribute's: `==` and `!=` compare the value of the copy being read (each
    replica's in strategy.run), elementwise; hashing one is a TypeError, `ref()` keys it."""
    out = _run("""
        with strategy.scope():
            v = em.Variable([1.0, 2.0], name="v")
        print((v == [1.0, 5.0]).numpy().tolist(), (v != v).numpy().tolist(), v == None)
        try:
            hash(v)
        except TypeError as e:
            print(str(e).split(":")[0])
        print({v.ref(): "v"}[v.ref()], v.ref().deref() is v)

        def step():
            ctx = em.distribute.get_replica_context()
            return v == em.cast(ctx.replica_id_in_sync_group, em.float32) + 1.0
        print(local(strategy.run(step)))
        print(local(strategy.run(em.function(step))))
        print(em.function(lambda: v != 2.0)().numpy().tolist())
    """)
    assert out == ["[True, False] [False, False] False", "Variable is unhashable",
                   "v True", "[[True, False], [False, True]]",
                   "[[True, False], [False, True]]", "[True, False]"]


def test_one_replica_strategy_variables_and_merge_call():
    strategy = em.distribute.MirroredStrategy(["cpu:0"])
    with strategy.scope():
        v = em.Variable(2.0)
        optimizer = em.optimizers.SGD(0.5)
    assert isinstance(v, em.distribute.MirroredVariable) and isinstance(v, em.Variable)
    assert len(strategy.experimental_local_results(v)) == 1
    plain = em.Variable(1.0)
    assert not isinstance(plain, em.distribute.MirroredVariable)

    def step():
        optimizer.apply_gradients([(em.constant(1.0), v)])
        merged = em.distribute.get_replica_context().merge_call(
            lambda s, x: (s is strategy, em.distribute.get_replica_context(), x), args=(4,))
        return merged

    is_strategy, context, x = strategy.run(step)
    assert (is_strategy, context, x) == (True, None, 4)
    assert float(v.numpy()) == pytest.approx(1.5)
    np.testing.assert_array_equal(optimizer.iterations.numpy(), 1)
