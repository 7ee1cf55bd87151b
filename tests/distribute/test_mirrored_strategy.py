"""em.distribute.MirroredStrategy and em.config's logical devices (tf.distribute's in-process
behaviour). The device configuration is per process and fixed once used, so the tests that
split the CPU run in a subprocess each (`_run`); the rest use the one CPU of this process."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember as em

PREAMBLE = """
import threading
import numpy as np
import ember as em
cpu = em.config.list_physical_devices("CPU")[0]
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * {n})
"""


def _run(code: str, n: int = 2) -> str:
    """Runs `code` in a fresh interpreter whose CPU is split into `n` logical CPUs; its
    stdout (it fails the test if the code raises)."""
    source = PREAMBLE.format(n=n) + textwrap.dedent(code)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_logical_devices_split_the_cpu_and_are_fixed_once_used():
    out = _run("""
        assert em.config.get_logical_device_configuration(cpu) == \\
            [em.config.LogicalDeviceConfiguration()] * 3
        devices = em.config.list_logical_devices("CPU")
        print(devices[2])
        print(len(devices), em.config.list_logical_devices("GPU"))
        with em.device("cpu:2"):
            pass
        try:
            em.device("cpu:3").__enter__()
        except ValueError as err:
            print(err)
        try:
            em.config.set_logical_device_configuration(cpu, None)
        except RuntimeError as err:
            print(err)
        """, n=3)
    assert out.splitlines() == [
        "LogicalDevice(name='/job:localhost/replica:0/task:0/device:CPU:2', device_type='CPU')",
        "3 []",
        "em.device: there is no CPU:3: this process sees 3 CPU device(s), CPU:0..CPU:2 "
        "(em.config.set_logical_device_configuration adds more)",
        "Virtual devices cannot be modified after being initialized"]


def test_a_strategy_fixes_the_configuration():
    out = _run("""
        strategy = em.distribute.MirroredStrategy()
        try:
            em.config.set_logical_device_configuration(
                cpu, [em.config.LogicalDeviceConfiguration()] * 4)
        except RuntimeError as err:
            print(err, strategy.num_replicas_in_sync)
        """)
    assert out.strip() == "Virtual devices cannot be modified after being initialized 2"


def test_bad_configurations_are_refused():
    cpu = em.config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match="non-empty list of em.config.LogicalDevice"):
        em.config.set_logical_device_configuration(cpu, [])
    with pytest.raises(TypeError, match="must be a PhysicalDevice"):
        em.config.set_logical_device_configuration("cpu:0", None)
    with pytest.raises(ValueError, match="not a physical device"):
        em.config.get_logical_device_configuration(em.config.PhysicalDevice(
            "/physical_device:GPU:7", "GPU"))


def test_run_reduce_and_all_reduce_on_three_replicas():
    out = _run("""
        strategy = em.distribute.MirroredStrategy()
        R = em.distribute.ReduceOp

        @em.function
        def double(x):
            return x * 2.0

        def step(x, scale):
            ctx = em.distribute.get_replica_context()
            assert em.distribute.get_strategy() is strategy
            rid = ctx.replica_id_in_sync_group
            y = double(x) * scale
            return y, rid, ctx.all_reduce(R.SUM, y), ctx.all_reduce(R.MEAN, y)

        values = strategy.experimental_distribute_values_from_function(
            lambda c: em.constant([float(c.replica_id_in_sync_group), 1.0]))
        y, rid, total, mean = strategy.run(step, args=(values,), kwargs={"scale": 10.0})
        local = strategy.experimental_local_results
        print([v.numpy().tolist() for v in local(y)])
        print([int(r) for r in local(rid)], strategy.num_replicas_in_sync)
        print([v.numpy().tolist() for v in local(total)], [v.numpy().tolist() for v in local(mean)])
        print(strategy.reduce(R.SUM, y, axis=None).numpy().tolist(),
              float(strategy.reduce(R.SUM, y, axis=0)),
              float(strategy.reduce(R.MEAN, y, axis=0)),
              strategy.reduce("MEAN", y, axis=None).numpy().tolist())
        try:
            strategy.reduce(R.SUM, em.constant(1.0))
        except ValueError as err:
            print(type(err).__name__, "cannot be reduced with the given reduce op "
                  "ReduceOp.SUM: pass the PerReplica" in str(err))
        """, n=3)
    assert out.splitlines() == [
        "[[0.0, 20.0], [20.0, 20.0], [40.0, 20.0]]",
        "[0, 1, 2] 3",
        "[[60.0, 60.0], [60.0, 60.0], [60.0, 60.0]] [[20.0, 20.0], [20.0, 20.0], [20.0, 20.0]]",
        "[60.0, 60.0] 120.0 20.0 [20.0, 20.0]",
        "ValueError True"]


def test_replicas_run_concurrently_and_errors_name_the_replica():
    out = _run("""
        strategy = em.distribute.MirroredStrategy()
        meet = threading.Barrier(2, timeout=20)

        def wait(x):
            meet.wait()  # both replicas must be inside at once, or this times out
            return x

        @em.function
        def step(x):
            return em.py_function(wait, [x * 2.0], em.float32)

        result = strategy.run(step, args=(em.distribute.PerReplica(
            [em.constant(1.0), em.constant(2.0)]),))
        print([float(v) for v in strategy.experimental_local_results(result)])

        def failing():
            ctx = em.distribute.get_replica_context()
            if int(ctx.replica_id_in_sync_group) == 1:
                raise KeyError("replica one fails")
            return ctx.all_reduce("SUM", 1.0)  # must not hang: replica 1 never comes

        try:
            strategy.run(failing)
        except KeyError as err:
            print(repr(err), err.__notes__)
        with strategy.scope():
            print(em.distribute.get_replica_context())  # the cross-replica context
        kept = strategy.run(em.distribute.get_replica_context)
        try:
            strategy.experimental_local_results(kept)[0].all_reduce("SUM", 1.0)
        except RuntimeError as err:
            print(err)
        print(strategy.run(lambda: 7))  # the same object from every replica: itself
        """)
    assert out.splitlines() == [
        "[2.0, 4.0]",
        "KeyError('replica one fails') ['(raised in replica 1 of 2, on "
        "/job:localhost/replica:0/task:0/device:CPU:1)']",
        "None",
        "ReplicaContext.all_reduce: this replica context is used outside its strategy.run; "
        "call all_reduce inside the function run",
        "7"]


def test_single_replica_strategy_and_default_context():
    strategy = em.distribute.MirroredStrategy(["cpu:0"])
    assert strategy.num_replicas_in_sync == 1
    value = strategy.experimental_distribute_values_from_function(lambda ctx: ctx)
    assert value == em.distribute.experimental.ValueContext(0, 1)
    assert not em.distribute.has_strategy()
    context = em.distribute.get_replica_context()
    assert int(context.replica_id_in_sync_group) == 0 and context.num_replicas_in_sync == 1
    with strategy.scope():
        assert em.distribute.has_strategy() and em.distribute.get_strategy() is strategy
        assert em.distribute.get_replica_context() is None  # cross-replica, as TF
        with pytest.raises(ValueError, match="Mixing different"):
            with em.distribute.MirroredStrategy(["cpu:0"]).scope():
                pass
        result = strategy.run(lambda x: x + 1.0, args=(em.constant([1.0, 2.0]),))
    np.testing.assert_allclose(result.numpy(), [2.0, 3.0])
    assert float(strategy.reduce(em.distribute.ReduceOp.SUM, result, axis=0)) == 5.0


@pytest.mark.parametrize("devices, message", [
    (["cpu:0", "gpu:0"], "mix CPUs and GPUs"), (["cpu:4"], "there is no CPU:4"),
    (["cpu:0", "/cpu:0"], "name a device twice"), ("cpu:0", "non-empty list"),
    (["tpu:0"], "is not a device name")])
def test_bad_devices_are_refused(devices, message):
    with pytest.raises(ValueError, match=message):
        em.distribute.MirroredStrategy(devices)


def test_bad_reductions_are_refused():
    strategy = em.distribute.MirroredStrategy(["cpu:0"])
    values = em.distribute.PerReplica([em.constant([1.0])])
    with pytest.raises(ValueError, match="ReduceOp.SUM or .MEAN"):
        strategy.reduce("MAX", values)
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        strategy.reduce("SUM", values, axis=3)
    with pytest.raises(TypeError, match="fn must be callable"):
        strategy.run(3)
    with pytest.raises(RuntimeError, match="called inside a replica") as caught:
        strategy.run(lambda: strategy.run(lambda: 1))  # would wait for its own thread
    assert caught.value.__notes__ == [
        "(raised in replica 0 of 1, on /job:localhost/replica:0/task:0/device:CPU:0)"]


def test_a_replica_step_that_all_reduces_is_compiled_not_interpreted():
    # the all-reduce inside the em.function is a host call of known shapes: it compiles, so
    # the whole training step runs as native code (an unknown-rank result kept the step on
    # the interpreter, quietly, at a fraction of the speed)
    out = _run("""
        strategy = em.distribute.MirroredStrategy()
        with strategy.scope():
            w = em.Variable(np.ones((3, 2), np.float32))
            opt = em.optimizers.SGD(0.5)

        @em.function
        def step(x):
            with em.GradientTape() as tape:
                loss = em.reduce_sum(em.matmul(x, w) ** 2)
            grads = tape.gradient(loss, [w])
            total = em.distribute.get_replica_context().all_reduce("SUM", loss)
            opt.apply_gradients(zip(grads, [w]))
            return total

        values = strategy.experimental_distribute_values_from_function(
            lambda c: em.constant([[1.0, 2.0, float(c.replica_id_in_sync_group)]]))
        for _ in range(2):
            totals = strategy.run(step, args=(values,))
        print([float(t) for t in strategy.experimental_local_results(totals)])
        print([c.numpy().tolist() for c in strategy.experimental_local_results(w)])
        concrete = step.get_concrete_function(values.values[0])
        print(concrete._executor.fallback_reason, bool(concrete._executor.compiled_shapes))
        """)
    # the same two steps in numpy: each replica's loss sum((x w)^2) and gradient
    # 2 x^T (x w), summed over the replicas; the totals are the losses before each update
    w = np.ones((3, 2))
    xs = [np.array([[1.0, 2.0, 0.0]]), np.array([[1.0, 2.0, 1.0]])]
    for _ in range(2):
        total = sum(float(np.sum((x @ w) ** 2)) for x in xs)
        w = w - 0.5 * sum(2 * x.T @ (x @ w) for x in xs)
    lines = out.splitlines()
    assert lines[0] == f"[{total}, {total}]"
    np.testing.assert_array_equal(np.array(eval(lines[1])), [w, w])
    assert lines[2] == "None True"
