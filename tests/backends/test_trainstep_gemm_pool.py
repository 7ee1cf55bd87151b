"""The GEMM library's kept worker threads (kernels/pool_ir.py) and its tiled packing of
lane-major panels (kernels/transpose_ir.py), called through the CBLAS entries.

Differential against float64 numpy: products with the pool on, with more threads than
CPUs (the pool grows), from several Python threads at once (one holds the pool, the others
start threads of their own), in a forked child (which has no workers), and with B stored
transposed (every full panel copied as VL x VL tiles, depths that leave a remainder).
"""

import concurrent.futures
import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ember.backends.cpu import kernels

import gemm_entries
from gemm_entries import HOST, SSE
from gemm_entries import entry as _library

TARGETS = gemm_entries.TARGETS + SSE


def _check(fn, dtype, m, n, k, ta, tb, pad, rng, beta=0.5):
    """One row-major call with leading dims `pad` wider than the matrices; C compared with
    the float64 product within the GEMM error bound."""
    a_mem = rng.standard_normal(((k, m + pad) if ta else (m, k + pad))).astype(dtype)
    b_mem = rng.standard_normal(((n, k + pad) if tb else (k, n + pad))).astype(dtype)
    c_mem = rng.standard_normal((m, n + pad)).astype(dtype)
    a = a_mem[:, :m] if ta else a_mem[:, :k]
    b = b_mem[:, :k] if tb else b_mem[:, :n]
    opa = (a.T if ta else a).astype(np.float64)
    opb = (b.T if tb else b).astype(np.float64)
    before = c_mem.astype(np.float64)
    fn(101, 112 if ta else 111, 112 if tb else 111, m, n, k, 1.5, a_mem.ctypes.data,
       a_mem.shape[1], b_mem.ctypes.data, b_mem.shape[1], beta, c_mem.ctypes.data,
       c_mem.shape[1])
    want = 1.5 * opa @ opb + beta * before[:, :n]
    bound = 1.5 * np.abs(opa) @ np.abs(opb) + abs(beta) * np.abs(before[:, :n])
    rtol = 1e-5 if dtype == np.float32 else 1e-13
    assert np.all(np.abs(c_mem[:, :n] - want) <= 2 * rtol * bound + 1e-30), (m, n, k, ta, tb)
    assert np.array_equal(c_mem[:, n:], before[:, n:].astype(dtype)), "wrote the padding"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f32", "f64"])
def test_transposed_b_panels_match_the_reference(target, element):
    """B stored transposed: full panels go through the tiled transpose, depths with and
    without a remainder past the last whole tile, edge panels, one and two threads."""
    fn, addresses = _library(target, element)
    dtype = np.float32 if element == "f32" else np.float64
    rng = np.random.default_rng(11)
    for threads, (m, n, k) in enumerate(((7, 64, 16), (13, 130, 37), (50, 200, 300),
                                          (6, 64, 1), (96, 1030, 259))):
        ctypes.c_int32.from_address(addresses[kernels.THREADS_SYMBOL]).value = 1 + threads % 2
        for ta in (False, True):
            _check(fn, dtype, m, n, k, ta, True, 1 + threads % 3, rng)


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_kept_workers_give_the_reference_results(threads):
    """With the pool on, products split over `threads` (5: more workers than CPUs, started
    as needed), both transposes, one after another on the same workers."""
    fn, addresses = _library((HOST.cpu, HOST.features), "f32")
    kernels.keep_threads(addresses)
    ctypes.c_int32.from_address(addresses[kernels.THREADS_SYMBOL]).value = threads
    rng = np.random.default_rng(threads)
    for m, n, k in ((300, 200, 100), (64, 2000, 40), (2000, 64, 40), (157, 531, 300)):
        for ta in (False, True):
            for tb in (False, True):
                _check(fn, np.float32, m, n, k, ta, tb, 1, rng, beta=0.0 if tb else 0.5)


def test_callers_on_many_threads_share_one_pool_safely():
    """Six Python threads call at once: one holds the pool per call, the others start
    threads of their own; every result is right."""
    fn, addresses = _library((HOST.cpu, HOST.features), "f32")
    kernels.keep_threads(addresses)
    ctypes.c_int32.from_address(addresses[kernels.THREADS_SYMBOL]).value = 2

    def run(seed):
        rng = np.random.default_rng(seed)
        for _ in range(3):
            _check(fn, np.float32, 200 + seed, 180, 150 + 3 * seed, bool(seed % 2), False, 0,
                   rng)
        return True
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        assert all(pool.map(run, range(8)))


CHILD = textwrap.dedent("""
    import ctypes, os, sys
    import numpy as np
    from ember.backends.cpu import kernels
    from ember.backends.cpu.backend import CpuBackend
    o = CpuBackend().options
    addresses = kernels.load(o.cpu, o.features, ("f32",))
    keep = ctypes.c_int32.from_address(addresses[kernels.KEEP_SYMBOL])
    print("off until asked", keep.value == 0)
    kernels.keep_threads(addresses)
    ctypes.c_int32.from_address(addresses[kernels.THREADS_SYMBOL]).value = 2
    scalar = ctypes.c_float
    fn = ctypes.CFUNCTYPE(None, *[ctypes.c_int32] * 3, *[ctypes.c_int64] * 3, scalar,
                          ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                          scalar, ctypes.c_void_p, ctypes.c_int64)(addresses["ember_sgemm"])
    a = np.random.default_rng(0).standard_normal((300, 200)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((200, 400)).astype(np.float32)
    want = a.astype(np.float64) @ b

    def product():
        c = np.empty((300, 400), np.float32)
        fn(101, 111, 111, 300, 400, 200, 1.0, a.ctypes.data, 200, b.ctypes.data, 400, 0.0,
           c.ctypes.data, 400)
        return bool(np.allclose(c, want, rtol=1e-4, atol=1e-3))

    def tasks():
        return set(os.listdir("/proc/self/task"))
    before = tasks()
    ok = product()
    kept = tasks()
    ok = ok and all(product() for _ in range(20))
    print("right", ok)
    print("a worker kept", len(kept - before) >= 1)
    print("no thread started per call", tasks() == kept)
    pid = os.fork()
    if pid == 0:  # the child has no workers: the pool starts new ones
        os._exit(0 if product() and product() else 3)
    _, status = os.waitpid(pid, 0)
    print("child right", os.waitstatus_to_exitcode(status) == 0)
""")


def test_workers_stay_across_calls_and_a_forked_child_starts_its_own():
    """In a fresh process: the pool is off until asked (an AOT library's default), the
    first call starts a worker that every later call reuses (no thread started per call),
    and a child forked after that runs products on workers of its own."""
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                         timeout=300, env=os.environ)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines == ["off until asked True", "right True", "a worker kept True",
                     "no thread started per call True", "child right True"], out.stdout
