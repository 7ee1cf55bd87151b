"""How compiled host calls find their Python callables (backends/cpu/host_calls.py): one
compiled object serving two functions with different callables, threads calling at once,
an object loaded from the disk cache by another process, and ownership of the buffers the
callbacks hand to compiled code (no leak over thousands of calls, no double free)."""

import collections
import itertools
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import ember as em
from ember.frontend import effects
from ember.frontend.tracing import FuncGraph


def make_logger(log):
    """The same traced function (same source, same host-call symbol names) for any `log`."""
    @em.function
    def f(x):
        em.py_function(lambda v: log.append(v.numpy().tolist()), [x], [])
        return x * 2
    return f


def traced_twice(monkeypatch, x):
    logs, functions = ([], []), []
    for log in logs:  # the counters of names restart: both traces are the very same module
        monkeypatch.setattr(effects, "_callback_ids", itertools.count(900_000))
        monkeypatch.setattr(FuncGraph, "_symbols", collections.Counter())
        f = make_logger(log)
        f(x)
        functions.append(f)
    return logs, functions


def test_one_compiled_object_calls_each_functions_own_callable(monkeypatch):
    x = em.constant([1.0, 2.0])
    (log_a, log_b), (f_a, f_b) = traced_twice(monkeypatch, x)
    exe_a = f_a.get_concrete_function(x)._executor
    exe_b = f_b.get_concrete_function(x)._executor
    key = exe_a.compiled_shapes[0]
    assert exe_a.compiled(key)._exe is exe_b.compiled(key)._exe  # one object, shared
    f_b(em.constant([3.0, 4.0]))
    f_a(em.constant([5.0, 6.0]))
    assert log_a == [[1.0, 2.0], [5.0, 6.0]]
    assert log_b == [[1.0, 2.0], [3.0, 4.0]]


def test_threads_calling_shared_code_each_reach_their_own_callable(monkeypatch):
    (log_a, log_b), (f_a, f_b) = traced_twice(monkeypatch, em.constant([0.0, 0.0]))
    del log_a[:], log_b[:]
    errors = []

    def work(f, k):
        try:
            for i in range(100):
                assert f(em.constant([float(k), float(i)])).numpy().tolist() == [2 * k, 2 * i]
        except BaseException as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=((f_a, f_b)[k % 2], k)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(v[0] for v in log_a) == [0.0] * 100 + [2.0] * 100
    assert sorted(v[0] for v in log_b) == [1.0] * 100 + [3.0] * 100


def test_compiled_code_called_without_its_callables_raises_and_does_not_crash():
    @em.function
    def f(x):
        em.py_function(lambda v: None, [x], [])
        return x + 1
    x = em.constant([1.0])
    f(x)
    executor = f.get_concrete_function(x)._executor
    bare = executor.compiled(executor.compiled_shapes[0])._exe  # not bound to a function
    with pytest.raises(em.errors.InvalidArgumentError, match="without the function's Python"):
        bare([np.ones(1, np.float32)])
    assert f(x).numpy().tolist() == [2.0]


SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import ember as em
    from ember.backends.cpu import compiler

    if sys.argv[1] == "load":  # this process must find the code in the disk cache
        def refuse(*args, **kwargs):
            raise AssertionError("compiled again instead of loading the disk cache")
        compiler._build = refuse
    seen = []

    @em.function
    def f(ds):
        total = em.constant(0.0)
        for x in ds:
            em.py_function(lambda v: seen.append(float(v.numpy().sum())), [x], [])
            total += em.reduce_sum(x)
        return total
    ds = em.data.Dataset.from_tensor_slices(np.arange(12, dtype=np.float32).reshape(6, 2))
    total = f(ds.batch(4))
    print(total.numpy(), seen, f.get_concrete_function(ds.batch(4))._executor.fallback_reason)
""")


@pytest.mark.slow  # two processes importing Ember and compiling: ~8 s
def test_another_process_loads_the_cached_object_and_binds_its_own_callables(tmp_path):
    script = tmp_path / "host_calls_cached.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "EMBER_CACHE_DIR": str(tmp_path / "cache")}
    outputs = []
    for mode in ("build", "load"):
        run = subprocess.run([sys.executable, str(script), mode], env=env, text=True,
                             capture_output=True, timeout=240)
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout.strip())
    assert outputs[0] == outputs[1] == "66.0 [28.0, 38.0] None"


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_ten_thousand_callback_results_are_freed_once():
    rows = np.ones((2000, 4096), np.float32)  # elements of 16 KiB: 32 MiB per call if leaked
    ds = em.data.Dataset.from_tensor_slices(rows)

    @em.function
    def total(ds):
        s = em.constant(0.0)
        for x in ds:
            s += x[0]
        return s
    assert total(ds).numpy() == 2000.0
    executor = total.get_concrete_function(ds)._executor
    assert executor.fallback_reason is None
    before = rss_bytes()
    for _ in range(5):  # 10,000 host calls handing over a buffer each
        assert total(ds).numpy() == 2000.0
    assert rss_bytes() - before < 24 << 20
