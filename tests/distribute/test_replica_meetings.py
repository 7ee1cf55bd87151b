"""Meetings of MirroredStrategy replicas (all_reduce, merge_call: a barrier) that could
never complete fail at once, naming the cause and the fix, and the lazy creations that
used to need one work without it. The replicas of an eager `strategy.run` of an em.function
share one trace, made by the first replica while the others wait for it, and a compiled
call holds the locks of the variables it writes: a meeting reached while tracing, or
inside a call holding a variable that every replica's call writes, waited for replicas
that waited for it, until the 60 s timeout. Each case runs in a subprocess (logical CPUs
are fixed once per process) whose replicas give up after 5 s: a regression fails on the
timeout's message instead of stalling the suite."""

import subprocess
import sys
import textwrap

PREAMBLE = """
import numpy as np
import ember as em
from ember.runtime.distribute import group, traced_run
group.BARRIER_TIMEOUT = traced_run.TURN_TIMEOUT = 5.0
cpu = em.config.list_physical_devices("CPU")[0]
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * 2)
strategy = em.distribute.MirroredStrategy()
local = lambda v: [np.asarray(x.numpy()).tolist() for x in
                   strategy.experimental_local_results(v)]
ctx = em.distribute.get_replica_context


def fails(fn, *args):
    try:
        fn(*args)
    except (RuntimeError, ValueError) as err:
        print(type(err).__name__, str(err).split(" (raised in")[0])
"""


def _run(code: str) -> list:
    done = subprocess.run([sys.executable, "-c", PREAMBLE + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if "AutoGraph" not in line]


def test_an_unbuilt_keras_model_in_a_compiled_step_fails_at_once():
    # the Dense initializer, the process's first random op, made the global generator in
    # a merge_call while the replica traced: a 60 s hang; now the weights the trace makes
    # (ordinary variables) are refused by apply_gradients, with the fix
    out = _run("""
        x, y = em.ones([8, 3]), em.ones([8, 1])

        def make_step(optimizer):
            with strategy.scope():
                model = em.keras.Sequential([em.keras.layers.Dense(1)])
                opt = getattr(em.optimizers, optimizer)(0.1)

            def step(x, y):
                with em.GradientTape() as tape:
                    loss = em.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            return step

        for optimizer in ("SGD", "Adam"):
            fails(strategy.run, em.function(make_step(optimizer)), (x, y))
            step = make_step(optimizer)
            fails(em.function(lambda x, y: strategy.run(step, (x, y))), x, y)
        """)
    want = ("ValueError {}.apply_gradients: inside an em.function that strategy.run runs "
            "every variable it updates must be mirrored, but ['dense{}/kernel:0', "
            "'dense{}/bias:0'] are not: create the model's variables and the optimizer under "
            "strategy.scope(); they were made while the function was traced (a Keras model "
            "makes its weights on its first call, an optimizer its slots in build or its "
            "first apply_gradients), and a trace makes ordinary variables: build them under "
            "strategy.scope() before the step (model.build(input_shape) or one call on a "
            "batch; optimizer.build(model.trainable_variables))")
    assert out == [want.format("SGD", "", ""), want.format("SGD", "_1", "_1"),
                   want.format("Adam", "_2", "_2"), want.format("Adam", "_3", "_3")]


def test_a_model_built_under_init_scope_in_a_compiled_step_trains():
    # Sequential.build makes the weights under em.init_scope: the tracing replica mirrors
    # them alone (a merge_call would wait for the replica waiting for the trace); an
    # optimizer built in the trace makes ordinary slots, refused at once
    out = _run("""
        with strategy.scope():
            model = em.keras.Sequential([em.keras.layers.Dense(1)])
            opt = em.optimizers.Adam(0.1)

        @em.function
        def step(x, y):
            model.build([None, 3])
            opt.build(model.trainable_variables)
            with em.GradientTape() as tape:
                loss = em.reduce_mean((model(x) - y) ** 2)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        fails(strategy.run, step, (em.ones([8, 3]), em.ones([8, 1])))
        with strategy.scope():  # the model is built, its weights mirrored; build the slots
            opt = em.optimizers.Adam(0.1)
            opt.build(model.trainable_variables)
        for _ in range(3):
            losses = strategy.run(step, args=(em.ones([8, 3]), em.ones([8, 1])))
        a, b = local(losses)
        copies = [local(v) for v in list(model.variables) + opt.variables]
        print(a == b, [type(v).__name__ for v in model.variables],
              all(c[0] == c[1] for c in copies))
        """)
    assert out[1:] == ["True ['MirroredVariable', 'MirroredVariable'] True"]
    assert out[0].startswith(
        "ValueError Adam.apply_gradients: inside an em.function that strategy.run runs "
        "every variable it updates must be mirrored, but ['dense/kernel/momentum:0', "
        "'dense/kernel/velocity:0', 'dense/bias/momentum:0', 'dense/bias/velocity:0'] are "
        "not: create the model's variables and the optimizer under strategy.scope(); they "
        "were made while the function was traced")


def test_a_compiled_step_that_draws_random_numbers_and_all_reduces():
    # the random op's state was one variable of the trace, shared by the replicas: the
    # first replica's call held its lock while it waited in the all-reduce for the second,
    # which waited for the lock. Each replica now has its own state (its own numbers)
    out = _run("""
        @em.function
        def step(x):
            mask = em.nn.dropout(x, 0.5)
            return mask, ctx().all_reduce("SUM", mask)

        runs = []
        for _ in range(2):
            em.random.set_seed(5)  # restarts every replica's state (all their copies)
            for _ in range(2):
                masks, sums = strategy.run(step, args=(em.ones([32]),))
                a, b = local(masks)
                print(a != b, local(sums)[0] == (np.add(a, b)).tolist())
                runs.append((a, b))
        print(runs[:2] == runs[2:], runs[0] != runs[1])

        x = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
        with strategy.scope():
            model = em.keras.Sequential([em.keras.layers.Dense(8, activation="relu"),
                                         em.keras.layers.Dropout(0.5),
                                         em.keras.layers.Dense(2)])
            model.compile(optimizer=em.optimizers.Adam(0.01),
                          loss=em.losses.SparseCategoricalCrossentropy(from_logits=True))
        history = model.fit(x, (x[:, 0] > 0).astype(np.int64), batch_size=16, epochs=2,
                            verbose=0)
        print(len(history.history["loss"]), type(model.variables[0]).__name__)
        """)
    assert out == ["True True"] * 4 + ["True True", "2 MirroredVariable"]


def test_variables_made_under_init_scope_while_a_replica_traces():
    # a metric made in the step (its variables under em.init_scope) was mirrored in a
    # merge_call the other replica, waiting for the trace, never joined; the tracing
    # replica now mirrors it alone, and each replica's call updates its own copy
    out = _run("""
        made = []

        @em.function
        def step(x):
            metric = em.keras.metrics.Mean()
            metric.update_state(em.reduce_sum(x))
            with em.init_scope():
                v = em.Variable(2.0)
            made.append(type(v).__name__)
            return metric.result() * v, ctx().all_reduce("SUM", metric.result())

        for _ in range(2):
            results, sums = strategy.run(step, args=(em.ones([3]),))
        print(local(results), local(sums), made[0])
        both = em.function(lambda x: strategy.run(step.python_function, args=(x,)))
        results, sums = both(em.ones([3]))
        print(local(results), local(sums), made[-1])
        """)
    assert out == ["[6.0, 6.0] [6.0, 6.0] MirroredVariable"] * 2


def test_all_reduce_of_a_python_number_in_a_compiled_step():
    # it met the other replicas while the trace was made (they waited for the trace): it
    # now all-reduces when the compiled code runs, as a tensor's all_reduce does
    out = _run("""
        step = em.function(lambda: ctx().all_reduce("SUM", 1.0))
        for _ in range(2):
            print(local(strategy.run(step)))
        """)
    assert out == ["[2.0, 2.0]"] * 2


def test_meetings_that_cannot_complete_fail_at_once():
    out = _run("""
        @em.function
        def merges(x):
            return ctx().merge_call(lambda strategy, v: 1.0, args=(x,))
        fails(strategy.run, merges, (em.ones([2]),))

        g = em.random.Generator.from_seed(1)  # outside the scope: one stream, shared
        steps = em.Variable(0, name="steps")

        @em.function
        def shared(x):
            steps.assign_add(1)
            return ctx().all_reduce("SUM", g.normal([2]) + x)
        fails(strategy.run, shared, (em.ones([2]),))

        def under_init_scope():
            with em.init_scope():
                ctx().merge_call(lambda strategy: None)
        fails(em.function(lambda: strategy.run(under_init_scope)))
        """)
    assert out == [
        "RuntimeError ReplicaContext.merge_call (replica 0): reached while this replica "
        "traces em.function 'merges', which every replica of strategy.run calls: the others "
        "wait for this trace (one trace serves them all), so they cannot meet here. Make "
        "the variables before strategy.run, under strategy.scope() (build the model: "
        "model.build(input_shape) or one call on a batch; the optimizer's slots: "
        "optimizer.build(variables); metrics), call merge_call outside the em.function, or "
        "trace the replicas together: call strategy.run inside the em.function "
        "(@em.function def step(...): return strategy.run(fn, ...))",
        "RuntimeError ReplicaContext.all_reduce (replica 0): em.function 'shared' meets the "
        "other replicas here while it holds the locks of ['steps:0', 'rng_state:0'], which "
        "every replica's call writes: a compiled call holds the locks of the variables it "
        "writes until it returns (calls on several threads never update the same old "
        "value), and the other replicas' calls wait for them, so they cannot come. Give "
        "each replica its own: make them under strategy.scope() (a MirroredVariable has a "
        "copy per replica; an em.random.Generator made there a stream per replica), or "
        "write them outside the function that all-reduces",
        "ValueError ReplicaContext.merge_call (replica 0): called under em.init_scope() "
        "while strategy.run is traced inside an em.function: the replicas meet in ops of "
        "the trace, which init_scope leaves; call it outside the init_scope"]
