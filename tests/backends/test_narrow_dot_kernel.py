"""The GEMM library's kernels for narrow products: C = alpha op(A) op(B) + beta C with fewer
columns than a register tile.

A stored by rows (dot_ir.py): dot products along k; B stored by rows is copied transposed
(lanes x lanes blocks transposed in registers, the last rows of k one by one, rows of the
copy padded past a multiple of 4 KiB), and each block's sums across lanes are taken by one
tree of shuffles and adds. A stored transposed, at most 16 columns (dott_ir.py): a tile of
C^T kept in registers along all of k, A read in place, stored through in-register
transposes under masks. Checked against a float64 numpy reference, for every column chunk
(n up to NR - 1), k with and without a tail, m past a tile, operands with leading
dimensions wider than the matrix and at an offset (a thread's share); and bit for bit: the
same bits on every call and for any number of threads.
"""

import ctypes

import numpy as np
import pytest

from ember.backends.cpu import kernels

from gemm_entries import HOST, TARGETS, entry


def _entry(target, element):
    fn, addresses = entry(target, element)
    return (fn,
            ctypes.c_int32.from_address(addresses[kernels.THREADS_SYMBOL]))


def _product(fn, a, b, c, alpha=1.0, beta=0.0, ta=False, tb=False):
    """Row-major C = alpha op(A) op(B) + beta C on numpy views of the stored operands
    (leading dims from their strides)."""
    m, n = c.shape
    k = a.shape[0] if ta else a.shape[1]
    size = a.itemsize
    fn(101, 112 if ta else 111, 112 if tb else 111, m, n, k, alpha, a.ctypes.data,
       a.strides[0] // size, b.ctypes.data, b.strides[0] // size, beta, c.ctypes.data,
       c.strides[0] // size)


def _stored(rng, rows, cols, dtype):
    """A rows x cols view with a wider leading dim, at an offset into its buffer."""
    return rng.standard_normal((rows, cols + 3)).astype(dtype)[:, 1:cols + 1]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("element", ["f32", "f64"])
@pytest.mark.parametrize("ta, tb", [(False, False), (False, True), (True, False),
                                    (True, True)])
@pytest.mark.parametrize("m, n, k", [(256, 10, 1024), (1024, 10, 256), (37, 40, 70),
                                     (9, 17, 33), (6, 63, 16), (45, 16, 9), (5, 1, 100),
                                     (11, 7, 1)])
def test_narrow_products_match_the_reference(target, element, ta, tb, m, n, k):
    dtype = np.float32 if element == "f32" else np.float64
    fn, threads = _entry(target, element)
    threads.value = 1
    rng = np.random.default_rng(m * n + k)
    a = _stored(rng, *((k, m) if ta else (m, k)), dtype)
    b = _stored(rng, *((n, k) if tb else (k, n)), dtype)
    c_mem = rng.standard_normal((m, n + 1)).astype(dtype)
    c = c_mem[:, :n]
    before = c_mem.copy()
    _product(fn, a, b, c, 0.5, 0.75, ta, tb)
    a64 = (a.T if ta else a).astype(np.float64)
    b64 = (b.T if tb else b).astype(np.float64)
    want = 0.5 * a64 @ b64 + 0.75 * before[:, :n]
    bound = 0.5 * np.abs(a64) @ np.abs(b64) + 0.75 * np.abs(before[:, :n])
    rtol = 1e-5 if element == "f32" else 1e-13
    assert np.all(np.abs(c - want) <= 2 * rtol * bound)
    assert np.array_equal(c_mem[:, n:], before[:, n:]), "wrote past C's columns"


def test_narrow_products_with_beta_zero_never_read_c():
    """beta == 0: C's old values (NaN here) are not read, for A by rows and transposed."""
    fn, threads = _entry((HOST.cpu, HOST.features), "f32")
    threads.value = 1
    rng = np.random.default_rng(5)
    for ta in (False, True):
        a = _stored(rng, *((300, 45) if ta else (45, 300)), np.float32)
        b = _stored(rng, 300, 10, np.float32)
        c = np.full((45, 10), np.nan, np.float32)
        _product(fn, a, b, c, 2.0, 0.0, ta)
        want = 2.0 * (a.T if ta else a).astype(np.float64) @ b.astype(np.float64)
        assert np.allclose(c, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ta, tb", [(False, False), (False, True), (True, False)])
def test_narrow_products_are_the_same_bits_on_every_call_and_thread_count(ta, tb):
    """Each C[i, j] is summed in an order fixed by the shape alone (the lane tree of dot_ir
    and the order along k of dott_ir do not depend on which block or thread the row falls
    in)."""
    fn, threads = _entry((HOST.cpu, HOST.features), "f32")
    rng = np.random.default_rng(3)
    m, n, k = 1000, 10, 1000  # enough work for 3 threads
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    results = []
    try:
        for count in (1, 2, 3, 1):
            threads.value = count
            c = np.full((m, n), np.nan, np.float32)
            _product(fn, a, b, c, ta=ta, tb=tb)
            results.append(c)
    finally:
        threads.value = 0
    for c in results[1:]:
        assert np.array_equal(c.view(np.uint32), results[0].view(np.uint32))
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    assert np.allclose(results[0], want, rtol=1e-4, atol=1e-3)
