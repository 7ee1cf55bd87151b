"""Large elementwise functions split by rows across threads; large outputs recycled."""

import threading

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import parallel
from ember.backends.cpu.backend import CpuBackend, CpuOptions
from ember.backends.cpu.compiler import compile_function
from ember.backends.cpu.jit import Executable
from ember.backends.cpu.parallel import SplitExecutable, plan
from ember.dialects.ember.types import TensorType

TWO = CpuBackend(CpuOptions(threads=2))
ONE = CpuBackend(CpuOptions(threads=1))
BIG = parallel.MIN_ELEMENTS_PER_THREAD * 2


def _compile(fn, *arrays, backend=TWO):
    concrete = em.function(fn).get_concrete_function(*[em.constant(a) for a in arrays])
    types = [TensorType(em.as_dtype(a.dtype), a.shape) for a in arrays]
    return compile_function(concrete._executor._text, concrete._executor._symbol, types,
                            backend)


def test_plan_splits_into_equal_blocks_with_a_smaller_last():
    assert plan(10, BIG, 2) == [(0, 5), (5, 5)]
    assert plan(1025, BIG, 2) == [(0, 513), (513, 512)]
    assert plan(3, BIG, 4) == [(0, 1), (1, 1), (2, 1)]
    assert plan(1000, 10, 2) == [(0, 1000)]  # too small to be worth a thread


@pytest.mark.parametrize("rows", [BIG, BIG + 1])
def test_split_function_matches_numpy(rows):
    x = np.random.default_rng(0).uniform(-3, 3, rows).astype(np.float32)
    x[:4] = [np.nan, np.inf, -np.inf, 0.0]
    exe = _compile(lambda x: ((x * 2 + 1) * x - 3) / (x + 4) + em.sin(x), x)
    assert isinstance(exe, SplitExecutable)
    (got,) = exe([x])
    with np.errstate(invalid="ignore"):
        want = ((x * 2 + 1) * x - 3) / (x + 4) + np.sin(x)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_rows_of_a_matrix_split_with_an_argument_broadcast_along_them():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1001, 300)).astype(np.float32)
    b = rng.standard_normal(300).astype(np.float32)
    row = rng.standard_normal((1, 300)).astype(np.float32)
    exe = _compile(lambda x, b, r: (em.tanh(x) + b) * r, x, b, row)
    assert isinstance(exe, SplitExecutable)
    (got,) = exe([x, b, row])
    np.testing.assert_allclose(got, (np.tanh(x) + b) * row, rtol=1e-5, atol=1e-6)


def test_results_of_other_dtypes_and_several_results():
    x = np.arange(BIG, dtype=np.int32) - BIG // 2
    exe = _compile(lambda x: (em.cast(x, em.float64) * 0.5, x > 3, x * x), x)
    assert isinstance(exe, SplitExecutable)
    half, big, square = exe([x])
    np.testing.assert_array_equal(half, x.astype(np.float64) * 0.5)
    np.testing.assert_array_equal(big, x > 3)
    np.testing.assert_array_equal(square, x * x)


@pytest.mark.parametrize("case", ["reduction", "small", "one thread", "matmul"])
def test_functions_that_are_not_split(case):
    x = np.ones(BIG, np.float32)
    if case == "reduction":
        exe = _compile(lambda x: x - em.reduce_sum(x), x)
    elif case == "small":
        exe = _compile(lambda x: x + 1, np.ones(1000, np.float32))
    elif case == "one thread":
        exe = _compile(lambda x: x + 1, x, backend=ONE)
    else:
        m = np.ones((1024, 256), np.float32)
        exe = _compile(lambda m: em.matmul(m, em.transpose(m)) + 1, m)
    assert isinstance(exe, Executable)


def test_split_executable_checks_its_arguments():
    x = np.ones(BIG, np.float32)
    exe = _compile(lambda x: x + 1, x)
    with pytest.raises(ValueError, match="argument 0 must be float32"):
        exe([np.ones(BIG, np.float64)])
    with pytest.raises(ValueError, match="expected 1 arrays"):
        exe([x, x])


def test_num_threads_from_the_environment(monkeypatch):
    monkeypatch.setenv("EMBER_NUM_THREADS", "3")
    assert parallel.default_threads() == 3
    assert CpuOptions().resolved().threads == 3
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("EMBER_NUM_THREADS", bad)
        with pytest.raises(ValueError, match="EMBER_NUM_THREADS must be a positive integer"):
            parallel.default_threads()
    monkeypatch.delenv("EMBER_NUM_THREADS")
    assert parallel.default_threads() >= 1


def test_em_function_splits_and_concurrent_callers_get_their_own_outputs():
    x = np.random.default_rng(2).standard_normal(BIG).astype(np.float32)
    f = em.function(lambda x, k: x * k)
    results = {}

    def worker(k):
        for _ in range(20):
            out = f(em.constant(x), em.constant(np.float32(k)))
        results[k] = out.numpy()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, got in results.items():
        np.testing.assert_array_equal(got, x * np.float32(k))


def test_large_outputs_are_recycled_only_when_nothing_refers_to_them():
    f = em.function(lambda x: x * 2.0)
    x = em.constant(np.ones(1 << 19, np.float32))
    a, b = f(x), f(x)
    assert a._value.ctypes.data != b._value.ctypes.data  # `a` is alive: not reused
    address = b._value.ctypes.data
    del b
    c = f(x)
    assert c._value.ctypes.data == address  # dropped: its buffer serves the next call
    view = c.numpy()
    address = c._value.ctypes.data
    del c
    d = f(x)
    assert d._value.ctypes.data != address  # a numpy view keeps it alive
    assert view[0] == 2.0 and d.numpy()[0] == 2.0
    memory = memoryview(d._value)
    address = d._value.ctypes.data
    del d
    assert f(x)._value.ctypes.data != address and memory[0] == 2.0


def test_a_forked_child_runs_split_functions_with_its_own_threads():
    import os
    f = em.function(lambda x: x * 3.0)
    x = em.constant(np.ones(BIG, np.float32))
    assert float(f(x).numpy()[0]) == 3.0  # the parent's pool is running
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: would wait forever on the parent's (absent) threads
        try:
            ok = float(f(x).numpy()[-1]) == 3.0
        finally:
            os.write(write, b"1" if ok else b"0")
            os._exit(0)
    os.close(write)
    import select
    import signal
    ready, _, _ = select.select([read], [], [], 60)
    answer = os.read(read, 1) if ready else b""
    if not ready:
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(read)
    assert answer == b"1", "the forked child's call did not finish"


def test_a_constant_with_all_the_rows_is_not_split():
    rows = np.arange(BIG, dtype=np.float32)
    exe = _compile(lambda s: em.constant(rows) * s, np.float32(2.0))
    assert isinstance(exe, Executable)
    (got,) = exe([np.asarray(np.float32(2.0))])
    np.testing.assert_array_equal(got, rows * 2)


def test_a_bias_as_long_as_the_rows_is_broadcast_not_split():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((512, 512)).astype(np.float32)  # rows == columns
    b = rng.standard_normal(512).astype(np.float32)  # dim 0 == rows, but it is a row
    exe = _compile(lambda x, b: em.tanh(x) + b, x, b)
    assert isinstance(exe, SplitExecutable)
    (got,) = exe([x, b])
    np.testing.assert_allclose(got, np.tanh(x) + b, rtol=1e-5, atol=1e-6)
