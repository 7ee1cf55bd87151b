"""em.random inside MirroredStrategy replicas: the state of em.random's own generators (the
global one, an op seed's, a traced op's) is process-local, never mirrored, so the first
random op of a process inside a replica needs no meeting of the replicas, and replicas
drawing from one generator take turns and get different numbers. The cases run in a
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
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * 2)
strategy = em.distribute.MirroredStrategy()
local = lambda v: [np.asarray(x.numpy()) for x in strategy.experimental_local_results(v)]
differ = lambda v: not np.array_equal(*local(v))
"""


def _run(code: str) -> list:
    done = subprocess.run([sys.executable, "-c", PREAMBLE + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120)
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
