"""A compiled function that writes a variable, called from several threads: compiled code
releases the GIL, so its read, run and write hold the variable's lock (runtime/executor.py),
as TensorFlow's AssignAddVariableOp does; no update is lost (a new user counted 53 of 401)."""

import concurrent.futures

import numpy as np
import pytest

import ember as em


@pytest.mark.parametrize("tier0", ["on", "off"])
def test_no_update_is_lost_across_threads(monkeypatch, tier0):
    monkeypatch.setenv("EMBER_TIER0", tier0)
    v, c = em.Variable(0.0), em.Variable(0)
    big = np.ones(1_000_000, np.float32)

    @em.function
    def step(x):
        return v.assign_add(em.reduce_sum(x) * 0.0 + 1.0)  # long enough to overlap

    inc = em.function(lambda: c.assign_add(1))

    def work(_):
        for _ in range(20):
            step(big)
            inc()
            c.assign_add(1)  # eager writes take the same lock
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(4)))
    assert float(v.numpy()) == 80.0 and int(c.numpy()) == 160


def test_a_function_that_only_reads_variables_runs_without_their_locks():
    w = em.Variable(np.full(3, 2.0, np.float32))
    read = em.function(lambda x: x * w)
    with w.handle.lock:  # held elsewhere: a reader does not wait for it
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            out = pool.submit(read, np.ones(3, np.float32)).result(timeout=60)
    assert out.numpy().tolist() == [2.0] * 3


def test_a_variable_only_read_is_not_stored_back_over_a_write_made_meanwhile(monkeypatch):
    """The code returns every captured variable's value; one it only read must not replace
    a value written while it ran (here by a host callback, on another thread a trainer)."""
    monkeypatch.setenv("EMBER_TIER0", "off")
    w = em.Variable(np.full(3, 2.0, np.float32))

    def train():
        w.assign(np.full(3, 5.0, np.float32))

    @em.function
    def read(x):
        em.py_function(train, [], [])
        return x * w

    out = read(np.ones(3, np.float32))
    assert w.numpy().tolist() == [5.0] * 3
    assert out.numpy().tolist() in ([2.0] * 3, [5.0] * 3)
