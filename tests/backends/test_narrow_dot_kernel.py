"""The GEMM library's kernel for narrow products (dot_ir.py): C = alpha A B + beta C with fewer
columns than a register tile and A stored by rows, run as dot products along k.

B stored by rows is copied transposed (lanes x lanes blocks transposed in registers, the
last rows of k one by one, rows of the copy padded past a multiple of 4 KiB), and each
block's sums across lanes are taken by one tree of shuffles and adds. Checked against a
float64 numpy reference, for every column chunk of the copy (n up to NR - 1), k with and
without a tail, B with a leading dimension wider than n and at a column offset (a thread's
share); and bit for bit: the same bits on every call and for any number of threads.
"""

import ctypes

import numpy as np
import pytest

from ember.backends.cpu import kernels
from ember.backends.cpu.backend import CpuBackend

HOST = CpuBackend().options
TARGETS = [pytest.param((HOST.cpu, HOST.features), id="host")]
if "+avx2" in HOST.features.split(",") and "+fma" in HOST.features.split(","):
    TARGETS.append(pytest.param(("x86-64-v3", ""), id="avx2"))


def _entry(target, element):
    addresses = kernels.load(*target)
    scalar = ctypes.c_float if element == "f32" else ctypes.c_double
    proto = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                             ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, scalar,
                             ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                             scalar, ctypes.c_void_p, ctypes.c_int64)
    return (proto(addresses[kernels.ENTRY[element]]),
            ctypes.c_int32.from_address(addresses[kernels.THREADS_SYMBOL]))


def _product(fn, a, b, c, alpha=1.0, beta=0.0, tb=False):
    """Row-major C = alpha A op(B) + beta C on numpy views (leading dims from their strides)."""
    m, k = a.shape
    n = c.shape[1]
    size = a.itemsize
    fn(101, 111, 112 if tb else 111, m, n, k, alpha, a.ctypes.data, a.strides[0] // size,
       b.ctypes.data, b.strides[0] // size, beta, c.ctypes.data, c.strides[0] // size)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f32", "f64"])
@pytest.mark.parametrize("m, n, k", [(256, 10, 1024), (37, 40, 70), (9, 17, 33), (6, 63, 16),
                                     (5, 1, 100), (11, 7, 1)])
def test_narrow_products_match_the_reference(target, element, m, n, k):
    dtype = np.float32 if element == "f32" else np.float64
    fn, threads = _entry(target, element)
    threads.value = 1
    rng = np.random.default_rng(m * n + k)
    a = rng.standard_normal((m, k + 3)).astype(dtype)[:, 1:k + 1]  # lda > k, offset
    b_mem = rng.standard_normal((k, n + 5)).astype(dtype)
    b = b_mem[:, 2:n + 2]  # ldb > n and a column offset, as a thread's share reads it
    c_mem = rng.standard_normal((m, n + 1)).astype(dtype)
    c = c_mem[:, :n]
    before = c_mem.copy()
    _product(fn, a, b, c, 0.5, 0.75)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = 0.5 * a64 @ b64 + 0.75 * before[:, :n]
    bound = 0.5 * np.abs(a64) @ np.abs(b64) + 0.75 * np.abs(before[:, :n])
    rtol = 1e-5 if element == "f32" else 1e-13
    assert np.all(np.abs(c - want) <= 2 * rtol * bound)
    assert np.array_equal(c_mem[:, n:], before[:, n:]), "wrote past C's columns"


@pytest.mark.parametrize("tb", [False, True])
def test_narrow_products_are_the_same_bits_on_every_call_and_thread_count(tb):
    """Each C[i, j] is summed in an order fixed by the shape alone (the lane tree does not
    depend on which block or thread the row falls in)."""
    fn, threads = _entry((HOST.cpu, HOST.features), "f32")
    rng = np.random.default_rng(3)
    m, n, k = 1000, 10, 1000  # enough work for 3 threads
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    results = []
    try:
        for count in (1, 2, 3, 1):
            threads.value = count
            c = np.full((m, n), np.nan, np.float32)
            _product(fn, a, b, c, tb=tb)
            results.append(c)
    finally:
        threads.value = 0
    for c in results[1:]:
        assert np.array_equal(c.view(np.uint32), results[0].view(np.uint32))
    want = a.astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    assert np.allclose(results[0], want, rtol=1e-4, atol=1e-4)
