"""em.random inside MirroredStrategy replicas: the state of em.random's own generators (the
global one, an op seed's, a traced op's) is process-local, never mirrored, so the first
random op of a process inside a replica needs no meeting of the replicas, and replicas
drawing from one generator take turns and get different numbers; an em.random.Generator
made under the scope gives each replica a stream of its own, TensorFlow's numbers (its
random-numbers guide, "Interaction with distribution strategies"). The cases run in a
subprocess each (logical CPUs are fixed once per process) whose replicas give up waiting
for each other after 5 s instead of 60, so a regression fails fast with the timeout's
message instead of stalling the suite."""

import subprocess
import sys
import textwrap

PREAMBLE = """
import numpy as np
import ember as em
from ember.runtime.distribute import group, traced_run
group.BARRIER_TIMEOUT = traced_run.TURN_TIMEOUT = 5.0
cpu = em.config.list_physical_devices("CPU")[0]
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * {n})
strategy = em.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
local = lambda v: [np.asarray(x.numpy()) for x in strategy.experimental_local_results(v)]
differ = lambda v: not np.array_equal(*local(v))
close = lambda got, want: bool(np.allclose(got, want, rtol=1e-6, atol=1e-7))
"""


def _run(code: str, n: int = 2) -> list:
    source = PREAMBLE.format(n=n) + textwrap.dedent(code)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_first_random_op_of_the_process_in_a_compiled_replica_step():
    # the global generator made lazily while a replica traces (a Dense initializer runs
    # under em.init_scope) was a MirroredVariable made in a merge_call, which the other
    # replica, waiting for the trace, never joined: a 60 s hang
    out = _run("""
        with strategy.scope():
            model = em.keras.Sequential([em.keras.layers.Dense(3)])

        @em.function
        def step(x):
            return model(x), em.random.uniform([2])

        ys, us = strategy.run(step, args=(em.ones([2, 4]),))
        print([y.shape for y in local(ys)], differ(us))
        print(type(em.random.get_global_generator().state).__name__)
        """)
    assert out == ["[(2, 3), (2, 3)] True", "_ProcessState"]


def test_replicas_draw_different_numbers_from_em_randoms_generators():
    # made first under the scope (building a model), the global generator was mirrored:
    # every replica drew the same numbers (the same dropout mask) from its own copy
    out = _run("""
        with strategy.scope():
            em.keras.Sequential([em.keras.layers.Dense(3)]).build([None, 4])
        x = em.ones([64])
        print(differ(strategy.run(lambda: em.random.uniform([8]))),
              differ(strategy.run(lambda: em.nn.dropout(x, 0.5))),
              differ(strategy.run(lambda: em.nn.dropout(x, 0.5, seed=3))))
        f = em.function(lambda: em.nn.dropout(x, 0.5))
        g = em.function(lambda: strategy.run(lambda: em.nn.dropout(x, 0.5)))
        print(differ(strategy.run(f)), differ(g()))
        """)
    assert out == ["True True True", "True True"]


def test_replicas_take_turns_on_a_generator_made_outside_the_scope():
    # TF's guide: "all replicas' access to the generator will be serialized": together
    # the replicas draw the generator's next numbers, each a different one. Eagerly the
    # replicas read and advanced the state unlocked: large draws often gave both the same
    out = _run("""
        g = em.random.Generator.from_seed(1)
        want = em.random.Generator.from_seed(1)
        head = lambda a: np.asarray(a)[:4].tolist()
        for fn in (lambda: g.normal([100000]), em.function(lambda: g.normal([100000]))):
            for _ in range(10):
                got = sorted(head(a) for a in local(strategy.run(fn)))
                print(got == sorted(head(want.normal([100000])) for _ in range(2)), end=" ")
            print()
        """)
    assert out == ["True " * 10] * 2


def test_a_generator_made_outside_any_scope_is_shared_as_in_tfs_guide():
    out = _run("""
        g = em.random.Generator.from_seed(1)
        print(close(sorted(local(strategy.run(lambda: g.normal([])))),
                    [0.43842274, 1.6272374]))
        """)
    assert out == ["True"]


def test_a_generator_made_under_the_scope_gives_each_replica_its_stream():
    # the numbers TensorFlow's guide prints for these programs: each replica's key is
    # hashed with its replica id, eagerly, in an em.function the replicas call (the id
    # read at each call) and in strategy.run inside an em.function
    out = _run("""
        want = [[-0.87930447, 0.020661574], [-1.5822568, 0.77539235],
                [-0.5039703, 0.1251838]]
        with strategy.scope():
            g = em.random.Generator.from_seed(1)
        print([close(local(strategy.run(lambda: g.normal([]))), w) for w in want])
        with strategy.scope():
            g = em.random.Generator.from_seed(1)
        f = em.function(lambda: g.normal([]))
        print([close(local(strategy.run(f)), w) for w in want])
        with strategy.scope():
            g = em.random.Generator.from_seed(1)
        step = em.function(lambda: strategy.run(lambda: g.normal([])))
        print([close(local(step()), w) for w in want])

        with strategy.scope():  # the cross-replica context draws the key as it is
            g = em.random.Generator.from_seed(1)
            print(close(g.normal([]), 0.43842274), close(g.normal([]), 1.6272374),
                  [c.numpy().tolist() for c in strategy.experimental_local_results(g.state)])

        def f():  # made inside run: a MirroredVariable from replica 0's initial value
            g = em.random.Generator.from_seed(1)
            return em.stack([g.normal([]), g.normal([])])
        for _ in range(2):
            print(close(local(strategy.run(f)), [[-0.87930447, -1.5822568],
                                                 [0.02066157, 0.77539235]]))

        three = em.distribute.MirroredStrategy()
        with three.scope():
            g = em.random.Generator.from_seed(1)
        for _ in range(2):
            r = three.run(lambda: g.normal([]))
        print(close([v.numpy() for v in three.experimental_local_results(r)],
                    [-1.5822568, 0.77539235, 0.6851049]))
        """, n=3)
    assert out == ["[True, True, True]"] * 3 + [
        "True True [[513, 0, 0], [513, 0, 0]]", "True", "True", "True"]


def test_a_module_with_a_generator_in_an_em_function_as_in_tfs_guide():
    # the guide's MyModule: strategy.run of a compiled __call__, a state read compiled
    out = _run("""
        class MyModule(em.Module):
            def __init__(self):
                super().__init__()
                self.g = em.random.Generator.from_seed(0)

            @em.function
            def __call__(self):
                return self.g.normal([])

            @em.function
            def state(self):
                return self.g.state

        with strategy.scope():
            m = MyModule()
            for want in ([-1.4154755, -0.11388441], [-0.68758255, 0.8084062],
                         [-0.27342677, -0.53093255]):
                print(close(local(strategy.run(m)), want), m.state().numpy().tolist())
        """)
    assert out == ["True [256, 0, 0]", "True [512, 0, 0]", "True [768, 0, 0]"]


def test_a_generator_of_one_strategy_refuses_another_strategys_replicas():
    out = _run("""
        other = em.distribute.MirroredStrategy(["cpu:0"])
        with strategy.scope():
            g = em.random.Generator.from_seed(1)
        try:
            other.run(lambda: g.normal([]))
        except ValueError as err:
            print(err)
        """)
    assert out == [
        "em.random.Generator: this generator was made under MirroredStrategy(devices="
        "['/job:localhost/replica:0/task:0/device:CPU:0', '/job:localhost/replica:0/task:0/"
        "device:CPU:1']), and it draws in a replica of MirroredStrategy(devices=['/job:"
        "localhost/replica:0/task:0/device:CPU:0']); a generator made under a strategy's "
        "scope (or by an em.function its replicas traced) draws in that strategy's "
        "replicas only: make it under the scope of the strategy running it, or outside any "
        "scope (its replicas then share one stream)"]
