"""A failing call of compiled code frees the buffers it had allocated (call_buffers.py).

Compiled code fails by unwinding to its entry (native.py), past the frames that would free
its intermediates; before the fix every failing call leaked them (a dynamic-size
`em.where` feeding a failing assert: ~2.7 MB per call). Each case here counts what is live
in the allocator (the block cache's blocks, libc's bytes in use) after a few failing
calls and again after many more. The calls run in a subprocess: a buffer freed twice
aborts the process."""

import json
import subprocess
import sys

import pytest

_CASES = r"""
import ctypes, gc, json, sys
import numpy as np
import ember as em
from ember.backends.cpu import block_cache, parallel

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

_mallinfo2 = ctypes.CDLL(None).mallinfo2
_mallinfo2.restype = Mallinfo2

def live():
    gc.collect()  # (a caught error's traceback keeps the failed call's outputs in a cycle)
    info = _mallinfo2()  # every arena: worker threads' too
    return block_cache.live_blocks(), info.uordblks + info.hblkhd

N = 1 << 18  # float32: 1 MiB, intermediates from the block cache
M = np.random.default_rng(0).random((512, 512)).astype(np.float32)  # 1 MiB products
BIG = parallel.MIN_ELEMENTS_PER_THREAD * 4

@em.function
def where_then_assert(x):
    idx = em.where(x > 0.25)  # dynamic size: ~6 MiB of int64 indices
    em.debugging.assert_less(em.cast(em.size(idx), em.float32), 0.0, message="too many")
    return idx

@em.function
def product_then_gather(m, i):
    p = em.matmul(m, m) + 1.0
    return em.gather(p, i) * 2.0  # an index out of range fails after the product

@em.function
def loop_then_assert(m):
    def body(k, a):
        a = em.matmul(a, m) * 0.5  # a fresh buffer each iteration
        em.debugging.assert_less(k, 3, message="third iteration")
        return k + 1, a
    return em.while_loop(lambda k, a: k < 10, body, (em.constant(0), m))[1]

@em.function
def small_then_assert(x):
    y = em.sort(x * 3.0)  # 200 KB: libc's, not the block cache's
    em.debugging.assert_all_finite(y, "not finite")
    return y

@em.function
def split_divide(x, y):
    return (x // y) * (x % y) + x

CASES = {
    "where_assert": (where_then_assert, [np.random.default_rng(1).random(N, np.float32)]),
    "gather_index": (product_then_gather, [M, np.array([1, 700], np.int32)]),
    "while_body": (loop_then_assert, [M]),
    "small_assert": (small_then_assert, [np.full(50000, np.nan, np.float32)]),
    "split_threads": (split_divide, [np.arange(BIG, dtype=np.int32),
                                     np.where(np.arange(BIG) == BIG - 1, 0, 7)
                                     .astype(np.int32)]),
}

def fail(fn, args, calls):
    for _ in range(calls):
        try:
            fn(*args)
        except (em.errors.InvalidArgumentError, em.errors.AssertionFailedError):
            continue
        raise SystemExit("the call did not fail")

name, calls = sys.argv[1], int(sys.argv[2])
fn, args = CASES[name]
args = [em.constant(a) for a in args]
fail(fn, args, 5)  # compiled, and the allocators' caches warm
before = live()
fail(fn, args, calls)
print(json.dumps({"before": before, "after": live()}))
"""


def _run(name: str, calls: int) -> dict:
    run = subprocess.run([sys.executable, "-c", _CASES, name, str(calls)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


# case -> (calls, bytes each failing call leaked before the fix, about): the block cache
# tracks 64 blocks, so cases with big buffers make fewer calls. A row-split function's
# blocks allocate nothing (its ops are fused), but each runs on its own thread and fails
# there: what is tracked on the worker threads must not be freed twice or kept.
LEAKS = {"where_assert": (40, 6 << 20), "gather_index": (40, 1 << 20),
         "while_body": (40, 2 << 20), "small_assert": (200, 200000),
         "split_threads": (200, 1 << 16)}


@pytest.mark.parametrize("name", LEAKS)
def test_failing_calls_leave_nothing_allocated(name):
    calls, leak = LEAKS[name]
    counts = _run(name, calls)
    (blocks0, bytes0), (blocks1, bytes1) = counts["before"], counts["after"]
    assert blocks1 == blocks0, counts
    # (libc's bytes in use move a little: compiling leaves work to threads for a while)
    assert bytes1 - bytes0 < calls * leak // 4, counts


_KEPT = r"""
import gc, sys, threading
import numpy as np
import ember as em
from ember.backends.cpu import block_cache

@em.function
def positives(x, limit):
    idx = em.where(x > 0.5)  # dynamic size: the caller owns the buffer of a success
    em.debugging.assert_less(em.cast(em.size(idx), em.float32), limit, message="too many")
    return idx, x * 2.0

rng = np.random.default_rng(2)
xs = [rng.random(1 << 18, np.float32) for _ in range(8)]
expect = [np.argwhere(x > 0.5) for x in xs]
many, few = em.constant(1e9), em.constant(1.0)

def check(k, calls):
    x = em.constant(xs[k])
    kept = [positives(x, many) for _ in range(3)]
    for j in range(calls):  # failures allocate (and free) buffers of the same sizes
        try:
            positives(em.constant(xs[(k + j + 1) % len(xs)]), few)
            raise SystemExit("the call did not fail")
        except em.errors.AssertionFailedError:
            pass
    for idx, doubled in kept:
        assert np.array_equal(idx.numpy(), expect[k]), k
        assert np.array_equal(doubled.numpy(), xs[k] * 2.0), k

check(0, 1)  # compiled; the allocators warm
gc.collect()
before = block_cache.live_blocks()
check(1, 20)
errors = []
def worker(k):
    try:
        for _ in range(5):
            check(k, 4)
    except BaseException as e:  # noqa: BLE001
        errors.append(repr(e))
threads = [threading.Thread(target=worker, args=(k,)) for k in range(2, 6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
gc.collect()
print(errors, before, block_cache.live_blocks())
"""


def test_results_of_successful_calls_outlive_later_failures():
    run = subprocess.run([sys.executable, "-c", _KEPT], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    errors, before, after = run.stdout.splitlines()[-1].rsplit(" ", 2)
    assert errors == "[]"
    assert after == before  # each result's buffer freed once, when its arrays went
