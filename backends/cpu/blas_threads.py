"""Large GEMMs split into column or row blocks that Ember's own threads take in turn, each
block one single-threaded call of the BLAS.

Why: OpenBLAS splits a product statically across its threads and synchronises them many
times per call, spinning while it waits. On a machine whose cores are shared with other
processes (this one: 2 cores, other jobs), one descheduled thread stalls all of them: a
256x1024x1024 product then takes 2-10 times as long as on one thread (measured: the case E
training step at 135-145 ms on two OpenBLAS threads, 47 ms on one, 55 ms for jax.jit, whose
Eigen pool hands out small blocks). Blocks taken from a shared counter degrade gracefully
instead: a thread that runs late takes fewer blocks. The blocks are large (each packs its
share of the operands), so little is lost where the cores are free.

How: `@ember_sgemm_blocks` / `@ember_dgemm_blocks` (the CBLAS signature, as `@ember_sgemm`)
are bound to ctypes callbacks. A call of at least `SPLIT_MACS` multiply-adds splits C's
longer side into `BLOCKS_PER_THREAD` blocks per thread (multiples of `ALIGN`), wakes the
pool's workers, takes blocks itself until none is left and waits for the workers; a smaller
one is one block, on the calling thread. Every block is a call of the library's GEMM with
OpenBLAS's thread-local thread count (`openblas_set_num_threads_local`) set to 1: a product
OpenBLAS would thread (more than 2**18 multiply-adds) but too small to split is as exposed
to a stalled thread as a large one. Where the library has no such control, where the pool
has one thread, where the pool is busy (another thread's call), or for a column-major
call, the call goes to the library whole.

Where the cores are not there to take the blocks (other processes keep them busy, or the
process is limited to less CPU than it has threads), splitting costs more than it saves:
the caller waits for a worker that is not running, and each hand-off of the GIL between
them waits for a scheduler slice (the case E step at load average 6: 118-239 ms in blocks,
63-78 ms on one thread, 59-65 ms for jax.jit). So the pool watches each split call: the
caller's own blocks time a block, so it knows about how long the product would have taken
whole on its thread; when the split call took more than `PAYS` times that, it runs every
product whole on the calling thread (one OpenBLAS thread) for the next `BACKOFF_S`
seconds, then tries blocks again; each try that fails again doubles the wait, up to
`MAX_BACKOFF_S` (a try costs: one split product took ~50 ms at that load, whole ~10 ms),
and one that succeeds resets it.

`ember-linalg-to-blas` calls the `_blocks` symbols only for products of at least
`BLOCK_MACS` multiply-adds per call (see that pass), those OpenBLAS would thread; smaller
ones call the library directly, with no callback.
"""

from __future__ import annotations

import ctypes
import itertools
import queue
import threading
import time
from typing import Optional

ROW_MAJOR, NO_TRANS = 101, 111
BLOCKS_PER_THREAD = 2
SPLIT_MACS = 1 << 22  # smaller products: one block (a hand-off costs tens of microseconds)
ALIGN = 64  # block sizes are multiples of this many rows or columns
PAYS = 0.9  # a split call must take less than this times the product whole on one thread
BACKOFF_S = 0.25  # then products run whole on the caller for this long,
MAX_BACKOFF_S = 8.0  # doubled after each failed try, up to this

_I32, _I64, _PTR = ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p


def gemm_type(element):
    """The ctypes function type of the ILP64 CBLAS GEMM over `element` (c_float/c_double)."""
    return ctypes.CFUNCTYPE(None, _I32, _I32, _I32, _I64, _I64, _I64, element, _PTR, _I64,
                            _PTR, _I64, element, _PTR, _I64)


def blocks(m: int, n: int, count: int) -> tuple[str, list[tuple[int, int]]]:
    """Splits the m x n output into at most `count` blocks along its longer side, each a
    multiple of ALIGN but the last: ("rows" | "cols", [(start, stop), ...])."""
    axis, extent = ("rows", m) if m >= n else ("cols", n)
    size = max(ALIGN, -(-extent // count // ALIGN) * ALIGN)
    return axis, [(s, min(extent, s + size)) for s in range(0, extent, size)]


def block_args(args: tuple, axis: str, start: int, stop: int, item: int) -> tuple:
    """The GEMM arguments computing rows or columns [start, stop) of C (row-major)."""
    order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc = args
    if axis == "rows":  # rows of op(A): rows of A, or columns of A when transposed
        a = a + start * (lda if ta == NO_TRANS else 1) * item
        return (order, ta, tb, stop - start, n, k, alpha, a, lda, b, ldb, beta,
                c + start * ldc * item, ldc)
    b = b + start * (1 if tb == NO_TRANS else ldb) * item
    return (order, ta, tb, m, stop - start, k, alpha, a, lda, b, ldb, beta, c + start * item,
            ldc)


class _Job:
    """Blocks taken in turn from a shared counter; `finished` is set when every block has
    run, so the caller never waits for a worker that woke too late to take one."""
    __slots__ = ("gemm", "calls", "next", "left", "lock", "finished", "errors")

    def __init__(self, gemm, calls):
        self.gemm, self.calls, self.next, self.errors = gemm, calls, itertools.count(), []
        self.left, self.lock, self.finished = len(calls), threading.Lock(), threading.Event()

    def run(self) -> int:
        """Runs blocks until none is left; returns how many this thread ran."""
        ran = 0
        while (i := next(self.next)) < len(self.calls):
            ran += 1
            try:
                self.gemm(*self.calls[i])
            except BaseException as e:  # noqa: BLE001 - reported to the calling thread
                self.errors.append(e)
            with self.lock:
                self.left -= 1
                if not self.left:
                    self.finished.set()
        return ran


class GemmPool:
    """`threads - 1` worker threads (started on first use) and the calling thread."""

    def __init__(self, threads: int, set_local_threads):
        self.threads = threads
        self._local = set_local_threads  # openblas_set_num_threads_local, or None
        self._lock = threading.Lock()
        self._queues: list = []
        self.whole_until = 0.0  # time.monotonic() before which nothing is split
        self.backoff = BACKOFF_S

    @property
    def splits(self) -> bool:
        return self.threads > 1 and self._local is not None

    def _start(self) -> None:
        for _ in range(self.threads - 1):
            q: queue.SimpleQueue = queue.SimpleQueue()
            threading.Thread(target=self._work, args=(q,), daemon=True,
                             name="ember-gemm").start()
            self._queues.append(q)

    def _work(self, q) -> None:
        self._local(1)
        while True:
            q.get().run()

    def _watch(self, start: float, ran: float, done: float, mine: int, blocks: int) -> None:
        """After a split call that started at `start`, whose caller ran `mine` of its
        `blocks` blocks by `ran` and saw all done at `done`: back off to whole products
        unless the split paid (PAYS)."""
        whole = (ran - start) / max(mine, 1) * blocks  # the caller's estimate, on one thread
        if done - start > PAYS * whole:
            self.whole_until = done + self.backoff
            self.backoff = min(2 * self.backoff, MAX_BACKOFF_S)
        else:
            self.backoff = BACKOFF_S

    def call(self, gemm, item: int, args: tuple) -> None:
        """C = alpha op(A) op(B) + beta C by `gemm` (a ctypes CBLAS GEMM), in blocks."""
        if not self.splits or args[0] != ROW_MAJOR or not self._lock.acquire(blocking=False):
            gemm(*args)
            return
        try:
            split = args[3] * args[4] * args[5] >= SPLIT_MACS and \
                time.monotonic() >= self.whole_until
            if split and not self._queues:
                self._start()
            axis, spans = blocks(args[3], args[4], self.threads * BLOCKS_PER_THREAD
                                 if split else 1)
            job = _Job(gemm, [block_args(args, axis, s, e, item) for s, e in spans])
            workers = self._queues if split else []
            for q in workers:
                q.put(job)
            previous = self._local(1)
            start = time.monotonic()
            try:
                mine = job.run()
            finally:
                self._local(previous)
            ran = time.monotonic()
            job.finished.wait()
            if split:
                self._watch(start, ran, time.monotonic(), mine, len(spans))
        finally:
            self._lock.release()
        if job.errors:
            raise job.errors[0]


_pool: Optional[GemmPool] = None
_callbacks: list = []  # the bound callbacks, kept alive as long as code may call them


def callbacks(addresses: tuple[int, int], set_local_threads, threads: int) -> list[int]:
    """Addresses of C-callable (sgemm, dgemm) in blocks over the library GEMMs at
    `addresses`, on a pool of `threads` (process-wide: the first call's pool stays)."""
    global _pool
    if _pool is None:
        _pool = GemmPool(threads, set_local_threads)
    out = []
    for address, element, item in zip(addresses, (ctypes.c_float, ctypes.c_double), (4, 8)):
        ftype = gemm_type(element)
        gemm = ftype(address)

        def entry(*args, _gemm=gemm, _item=item):
            _pool.call(_gemm, _item, args)
        callback = ftype(entry)
        _callbacks.append(callback)
        out.append(ctypes.cast(callback, ctypes.c_void_p).value)
    return out
