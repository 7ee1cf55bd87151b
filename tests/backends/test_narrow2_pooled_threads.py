"""How many threads a product gets (split_ir's plan): with the pool's kept workers on (the
JIT's library), one per MIN_MACS_PER_POOLED_THREAD of work, so case D's 10-wide layer
(256x1024x10, 2.6M multiply-adds) runs on two; without them (an AOT library, a thread
started per call) one per MIN_MACS_PER_THREAD, and the same product on the caller alone.
Whatever the split, the results are the same bits (dot_ir sums in an order set by the
shape alone) and match float64 numpy, also when calls follow each other faster than the
workers answer (pool_ir: the caller runs a share no worker claimed, and a job alone when a
worker has yet to answer the last one).
"""

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ember.backends.cpu import kernels
from ember.backends.cpu.kernels import split_ir

CHILD = textwrap.dedent("""
    import ctypes, os, sys
    import numpy as np
    from ember.backends.cpu import kernels
    from ember.backends.cpu.backend import CpuBackend
    o = CpuBackend().options
    addresses = kernels.load(o.cpu, o.features, ("f32",))
    threads = ctypes.c_int32.from_address(addresses[kernels.THREADS_SYMBOL])
    scalar = ctypes.c_float
    fn = ctypes.CFUNCTYPE(None, *[ctypes.c_int32] * 3, *[ctypes.c_int64] * 3, scalar,
                          ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                          scalar, ctypes.c_void_p, ctypes.c_int64)(addresses["ember_sgemm"])
    rng = np.random.default_rng(0)

    def product(m, k, n, tb=False):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
        c = np.empty((m, n), np.float32)
        fn(101, 111, 112 if tb else 111, m, n, k, 1.0, a.ctypes.data, k, b.ctypes.data,
           k if tb else n, 0.0, c.ctypes.data, n)
        want = a.astype(np.float64) @ (b.T if tb else b).astype(np.float64)
        return c, bool(np.allclose(c, want, rtol=1e-4, atol=1e-4 * np.abs(want).max()))

    def tasks():
        return len(os.listdir("/proc/self/task"))
    threads.value = 2
    start = tasks()
    alone, ok = product(256, 1024, 10)  # pool off: the caller alone (or threads joined)
    print("pool off right", ok, tasks() == start)
    kernels.keep_threads(addresses)
    rng = np.random.default_rng(0)
    small, ok = product(256, 400, 10)  # 1M multiply-adds: still the caller alone
    print("small product alone", ok, tasks() == start)
    rng = np.random.default_rng(0)
    split, ok = product(256, 1024, 10)  # 2.6M: two threads, one a kept worker
    print("narrow product split", ok, tasks() == start + 1)
    print("same bits", np.array_equal(split, alone))
    for m, k, n, tb in ((255, 1031, 9, False), (257, 1024, 10, True), (1024, 300, 7, False)):
        threads.value = 1
        state = rng.bit_generator.state
        one, ok1 = product(m, k, n, tb)
        threads.value = 2
        rng.bit_generator.state = state
        two, ok2 = product(m, k, n, tb)
        print(m, k, n, tb, ok1 and ok2, np.array_equal(one, two))
    # back to back on more threads than CPUs: workers late to answer a job (the next one
    # then runs on the caller alone) or to claim a share (the caller runs it)
    threads.value = 5
    print("back to back", all(product(256 + i % 7, 2000, 10 + i % 3)[1] for i in range(60)))
""")


def test_narrow_products_split_over_kept_workers_with_the_same_bits():
    assert split_ir.MIN_MACS_PER_POOLED_THREAD < 256 * 1024 * 10 // 2 \
        <= split_ir.MIN_MACS_PER_THREAD
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                         timeout=300, env=os.environ)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines() == [
        "pool off right True True", "small product alone True True",
        "narrow product split True True", "same bits True",
        "255 1031 9 False True True", "257 1024 10 True True True",
        "1024 300 7 False True True", "back to back True"], out.stdout


@pytest.mark.parametrize("element", ["f32", "f64"])
@pytest.mark.parametrize("m, n, k", [(203, 10, 2048), (77, 9, 4100), (13, 5, 70001),
                                     (256, 15, 1024)])
def test_narrow_products_over_several_panels_of_rows_match_the_reference(element, m, n, k):
    """dot_ir sweeps A in panels of rows (DOT_PANEL_BYTES, at least DR rows): several
    panels, a last one shorter and not a whole number of DR rows, a k so long that a panel
    is DR rows; one thread and two (the same bits)."""
    from gemm_entries import HOST, entry
    fn, addresses = entry((HOST.cpu, HOST.features), element)
    threads = ctypes.c_int32.from_address(addresses[kernels.THREADS_SYMBOL])
    dtype = np.float32 if element == "f32" else np.float64
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    got = []
    for count in (1, 2):
        threads.value = count
        c = np.full((m, n), 7, dtype)
        fn(101, 111, 111, m, n, k, 1.0, a.ctypes.data, k, b.ctypes.data, n, 0.5, c.ctypes.data,
           n)
        got.append(c)
    want = a.astype(np.float64) @ b.astype(np.float64) + 3.5
    scale = np.abs(want).max()
    np.testing.assert_allclose(got[0], want, rtol=0, atol=(1e-5 if element == "f32" else 1e-12)
                               * scale)
    assert np.array_equal(got[0], got[1])
