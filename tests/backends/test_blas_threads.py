"""Large GEMMs in blocks on Ember's threads (backends/cpu/blas_threads.py): the split, each
block's arguments for every transpose and leading dimension, the pool against numpy, the
fallbacks (busy pool, no thread-local control), which products the pass sends there, and
compiled products through the callbacks, also from several threads at once."""

import ctypes
import threading
import time

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import blas_library, blas_threads
from ember.backends.cpu.backend import CpuBackend, CpuOptions, bufferized_pipeline
from ember.backends.cpu.compiler import specialize
from ember.dialects.ember.types import parse_type
from ember.passes.transforms import linalg_to_blas

needs_blas = pytest.mark.skipif(blas_library._find() is None,
                                reason="no ILP64 OpenBLAS found next to numpy")


@pytest.fixture
def blas_on(monkeypatch):
    monkeypatch.delenv(blas_library.DISABLE_ENV, raising=False)


def test_blocks_cover_the_longer_side_in_aligned_pieces():
    axis, spans = blas_threads.blocks(1000, 300, 4)
    assert axis == "rows" and spans == [(0, 256), (256, 512), (512, 768), (768, 1000)]
    axis, spans = blas_threads.blocks(256, 1024, 4)
    assert axis == "cols" and spans == [(0, 256), (256, 512), (512, 768), (768, 1024)]
    assert blas_threads.blocks(100, 10, 8) == ("rows", [(0, 64), (64, 100)])
    assert blas_threads.blocks(5, 3, 4) == ("rows", [(0, 5)])
    assert blas_threads.blocks(700, 5, 1) == ("rows", [(0, 700)])


def _library_gemm(dtype):
    lib = blas_library._find()
    element = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    address = lib.addresses[0 if dtype == np.float32 else 1]
    return blas_threads.gemm_type(element)(address), lib


def _operands(rng, m, n, k, ta, tb, dtype):
    """A and B as stored (transposed when ta/tb), inside wider arrays (ld > columns), C
    inside a wider array too."""
    def stored(rows, cols):
        wide = rng.standard_normal((rows, cols + 3)).astype(dtype)
        return wide, wide[:, :cols]
    a_wide, a = stored(*((k, m) if ta else (m, k)))
    b_wide, b = stored(*((n, k) if tb else (k, n)))
    c_wide, c = stored(m, n)
    return (a_wide, a), (b_wide, b), (c_wide, c)


def _args(a_wide, b_wide, c_wide, m, n, k, ta, tb, alpha, beta):
    trans = {False: 111, True: 112}
    return (101, trans[ta], trans[tb], m, n, k, alpha, a_wide.ctypes.data, a_wide.shape[1],
            b_wide.ctypes.data, b_wide.shape[1], beta, c_wide.ctypes.data, c_wide.shape[1])


@needs_blas
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("m,n,k", [(300, 70, 90), (70, 300, 90), (129, 129, 5)])
@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (-0.5, 1.0)])
def test_blocks_compute_the_whole_product(dtype, ta, tb, m, n, k, alpha, beta, monkeypatch):
    monkeypatch.setattr(blas_threads, "SPLIT_MACS", 0)  # always split
    gemm, lib = _library_gemm(dtype)
    pool = blas_threads.GemmPool(3, lib.local_threads or (lambda n: 0))
    rng = np.random.default_rng(m * n + k + ta + 2 * tb)
    (a_wide, a), (b_wide, b), (c_wide, c) = _operands(rng, m, n, k, ta, tb, dtype)
    before = c_wide.copy()
    want = alpha * ((a.T if ta else a).astype(np.float64) @ (b.T if tb else b)) + beta * c
    pool.call(gemm, np.dtype(dtype).itemsize, _args(a_wide, b_wide, c_wide, m, n, k, ta, tb,
                                                    alpha, beta))
    rtol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(c, want, rtol=rtol, atol=rtol * k)
    np.testing.assert_array_equal(c_wide[:, n:], before[:, n:])  # nothing outside C


@needs_blas
def test_busy_pool_no_thread_control_and_column_major_call_the_library_whole(monkeypatch):
    gemm, lib = _library_gemm(np.float32)
    rng = np.random.default_rng(1)
    for pool in (blas_threads.GemmPool(2, None), blas_threads.GemmPool(1, lib.local_threads)):
        assert not pool.splits
    busy = blas_threads.GemmPool(2, lib.local_threads or (lambda n: 0))
    for pool, hold in ((blas_threads.GemmPool(2, None), False), (busy, True)):
        (a_wide, a), (b_wide, b), (c_wide, c) = _operands(rng, 200, 150, 100, False, True,
                                                          np.float32)
        if hold:
            pool._lock.acquire()
        try:
            pool.call(gemm, 4, _args(a_wide, b_wide, c_wide, 200, 150, 100, False, True,
                                     1.0, 0.0))
        finally:
            if hold:
                pool._lock.release()
        np.testing.assert_allclose(c, a.astype(np.float64) @ b.T, rtol=1e-4, atol=1e-3)
    # column-major: never split (block_args computes row-major blocks). Each buffer below
    # is stored row-major, so it holds the transpose of its column-major matrix.
    monkeypatch.setattr(blas_threads, "SPLIT_MACS", 0)
    m, n, k = 150, 200, 100
    a_buf = rng.standard_normal((k, m + 3)).astype(np.float32)  # A: m x k, lda = m + 3
    b_buf = rng.standard_normal((n, k + 2)).astype(np.float32)  # B: k x n, ldb = k + 2
    c_buf = np.zeros((n, m + 1), np.float32)                     # C: m x n, ldc = m + 1
    busy.call(gemm, 4, (102, 111, 111, m, n, k, 1.0, a_buf.ctypes.data, m + 3,
                        b_buf.ctypes.data, k + 2, 0.0, c_buf.ctypes.data, m + 1))
    want = b_buf[:, :k].astype(np.float64) @ a_buf[:, :m]  # (A B)^T = B^T A^T
    np.testing.assert_allclose(c_buf[:, :m], want, rtol=1e-4, atol=1e-3)


def _bufferized(shape_a, shape_b, backend):
    ta, tb = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (shape_a, shape_b))
    tc = f"tensor<{shape_a[0]}x{shape_b[1]}xf32>"
    text = (f"func.func @f(%a: {ta}, %b: {tb}) -> {tc} {{\n"
            f'  %0 = "ember.matmul"(%a, %b) {{transpose_a = false, transpose_b = false}} : '
            f"({ta}, {tb}) -> {tc}\n  return %0 : {tc}\n}}\n")
    module = specialize(text, "f", [parse_type(ta), parse_type(tb)])
    return str(backend.lower(module, "bufferized"))


@needs_blas
def test_products_that_openblas_would_thread_call_the_gemm_in_blocks(blas_on):
    threads = CpuBackend(CpuOptions(threads=2))
    assert "call @ember_sgemm_blocks(" in _bufferized((64, 64), (64, 64), threads)  # 2**18
    small = _bufferized((64, 64), (64, 63), threads)
    assert "call @ember_sgemm(" in small and "_blocks" not in small
    one = _bufferized((256, 256), (256, 256), CpuBackend(CpuOptions(threads=1)))
    assert "call @ember_sgemm(" in one and "_blocks" not in one
    assert f"block-macs={linalg_to_blas.BLOCK_MACS}" in bufferized_pipeline(True, 2)
    assert "block-macs=0" in bufferized_pipeline(True, 1)


@needs_blas
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_compiled_products_in_blocks_match_numpy_from_several_threads(dtype, blas_on):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((300, 500)).astype(dtype)
    b = rng.standard_normal((400, 500)).astype(dtype)
    want = a.astype(np.float64) @ b.T.astype(np.float64)

    @em.function
    def f(a, b):
        return em.matmul(a, b, transpose_b=True) * 2.0
    results, errors = [], []

    def work():
        try:
            for _ in range(3):
                results.append(f(a, b).numpy())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 9
    rtol = 1e-4 if dtype == "float32" else 1e-12
    for got in results:
        np.testing.assert_allclose(got, 2 * want, rtol=rtol, atol=rtol * 500)


def test_the_pool_backs_off_to_whole_products_while_splitting_does_not_pay():
    pool = blas_threads.GemmPool(2, lambda n: 0)
    # 2 of 4 blocks in 1 s (2 s whole), all done 0.2 s later: 1.2 s < 0.9 * 2 s, it paid
    pool._watch(start=10.0, ran=11.0, done=11.2, mine=2, blocks=4)
    assert pool.whole_until == 0.0 and pool.backoff == blas_threads.BACKOFF_S
    # the caller ran all 4 (the worker never came) and still waited: it did not pay
    pool._watch(start=10.0, ran=11.0, done=11.1, mine=4, blocks=4)
    assert pool.whole_until == 11.1 + blas_threads.BACKOFF_S
    assert pool.backoff == 2 * blas_threads.BACKOFF_S
    # 1 of 4 in 1 s (4 s whole) but done after 3.7 s > 0.9 * 4 s: the worker lagged
    pool._watch(start=10.0, ran=11.0, done=13.7, mine=1, blocks=4)
    assert pool.backoff == 4 * blas_threads.BACKOFF_S
    for _ in range(20):
        pool._watch(start=10.0, ran=11.0, done=12.0, mine=2, blocks=2)
    assert pool.backoff == blas_threads.MAX_BACKOFF_S
    pool._watch(start=20.0, ran=21.0, done=21.0, mine=1, blocks=2)  # paid: back to the start
    assert pool.backoff == blas_threads.BACKOFF_S


@needs_blas
def test_while_backing_off_products_run_whole_on_the_caller(monkeypatch):
    monkeypatch.setattr(blas_threads, "SPLIT_MACS", 0)
    gemm, lib = _library_gemm(np.float64)
    local_calls = []

    def local(n):
        local_calls.append(n)
        return 0
    pool = blas_threads.GemmPool(2, local)
    pool.whole_until = time.monotonic() + 60
    rng = np.random.default_rng(4)
    (a_wide, a), (b_wide, b), (c_wide, c) = _operands(rng, 130, 90, 40, True, False,
                                                      np.float64)
    pool.call(gemm, 8, _args(a_wide, b_wide, c_wide, 130, 90, 40, True, False, 1.0, 0.0))
    assert not pool._queues  # no worker started: one block, on this thread
    assert local_calls == [1, 0]  # on one OpenBLAS thread, then this thread's setting back
    np.testing.assert_allclose(c, a.T @ b, rtol=1e-12, atol=1e-10)
