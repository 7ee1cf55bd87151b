"""A caching allocator of device memory, one per device (as PyTorch's and JAX's).

`cuMemAlloc*` and `cuMemFree` are slow (a free synchronises the device), so freed blocks
are kept in free lists by size class and handed out again: requests round up to a size
class (multiples of 512 bytes up to 1 MiB, then of 2 MiB), and a free block of exactly
that class is reused. `empty_cache()` returns every free block to the driver; a failed
allocation empties the cache and tries once more before giving up.

Blocks are only reused in stream order: Ember queues all its work on the device's one
stream, so a block freed by code on that stream can be handed to later work on it at
once. Freeing from the host (a tensor that dies) waits for the stream first (`sync`),
since kernels queued before may still use the block.

A block whose last array dies is handed back by a finalizer (`free_deferred`), and the
garbage collector runs finalizers wherever Python allocates, also inside this allocator
while its thread holds the lock (a `cuMemAllocManaged` that allocates a Python object): a
finalizer that waited for the lock would deadlock. So finalizers append the block to a
pending list (a deque: its append and popleft are atomic, no lock) and free the pending
blocks only if they get the lock without waiting; every call that takes the lock first
drains that list: it claims the pending blocks, waits for the stream (the host freed
them) and puts them on their free lists.
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import threading
from typing import Callable

from ember.dialects.ember.errors import EmberError

SMALL, SMALL_STEP, LARGE_STEP = 1 << 20, 512, 2 << 20


def size_class(nbytes: int) -> int:
    """The size a request of `nbytes` is served with (at least one step)."""
    step = SMALL_STEP if nbytes <= SMALL else LARGE_STEP
    return max(step, -(-nbytes // step) * step)


@dataclasses.dataclass
class Stats:
    """What the allocator holds: `allocated` bytes in use, `cached` bytes in free lists,
    `driver_allocs`/`driver_frees` calls into the driver, `reused` requests served from
    the cache, `peak` the most bytes in use at once."""
    allocated: int = 0
    cached: int = 0
    driver_allocs: int = 0
    driver_frees: int = 0
    reused: int = 0
    peak: int = 0


class AllocationError(EmberError, MemoryError):
    """The GPU has no memory for the request, even after the caching allocator returned its
    free blocks to the driver."""


class CachingAllocator:
    """Size-class free lists over `allocate(size) -> pointer` and `release(pointer)` (the
    driver's), `sync()` waiting for the stream the blocks are used on."""

    def __init__(self, allocate: Callable[[int], int], release: Callable[[int], None],
                 sync: Callable[[], None] = lambda: None):
        self._allocate = allocate
        self._release = release
        self._sync = sync
        self._free: dict[int, list[int]] = {}  # size class -> free blocks
        self._sizes: dict[int, int] = {}  # block in use -> its size class
        self._starts: list[int] = []  # sorted start of every block the driver gave
        self._extent: dict[int, int] = {}  # block start -> size class (in use or free)
        self._lock = threading.Lock()  # never taken by a finalizer (free_deferred)
        self._pending: collections.deque[int] = collections.deque()  # freed by finalizers
        self._stats = Stats()

    @property
    def stats(self) -> Stats:
        """The allocator's counts (blocks freed by finalizers counted as freed)."""
        self._drain()
        return self._stats

    def malloc(self, nbytes: int) -> int:
        """A block of at least `nbytes` (never 0: a 0-byte request gets the smallest
        class, so every buffer has its own address)."""
        size = size_class(nbytes)
        self._drain()
        with self._lock:
            blocks = self._free.get(size)
            if blocks:
                pointer = blocks.pop()
                self._stats.cached -= size
                self._stats.reused += 1
            else:
                pointer = self._fresh(size)
            self._sizes[pointer] = size
            self._stats.allocated += size
            self._stats.peak = max(self._stats.peak, self._stats.allocated)
            return pointer

    def _fresh(self, size: int) -> int:
        try:
            pointer = self._allocate(size)
        except Exception:
            claimed = self._claim()  # blocks that died meanwhile may make the room
            if claimed:
                self._sync()
                self._put_back_all(claimed)
            self._empty_locked()
            try:
                pointer = self._allocate(size)
            except Exception as e:
                raise AllocationError(f"the GPU has no {size} bytes free ({e}); "
                                      f"{self._stats.allocated} bytes are in use by Ember") \
                    from None
        self._stats.driver_allocs += 1
        bisect.insort(self._starts, pointer)
        self._extent[pointer] = size
        return pointer

    def free(self, pointer: int, from_host: bool = False) -> None:
        """Returns a block to its free list (`from_host`: after the stream's queued work,
        which may still use it). ValueError for a pointer this allocator did not give."""
        self._drain()
        if from_host:
            self._sync()
        with self._lock:
            self._put_back(pointer)

    def free_deferred(self, pointer: int) -> None:
        """`free(pointer, from_host=True)` for finalizers (`__del__`, weakref callbacks):
        takes no lock and calls no driver (the finalizer may run inside this allocator or
        the driver on the same thread). Frees it at once if the lock is free (not held by
        this thread either: the lock is not re-entrant), else the next call that takes the
        lock does."""
        self._pending.append(pointer)
        if self._lock.acquire(blocking=False):
            try:
                claimed = self._claim()
                if claimed:
                    self._sync()  # a finalizer run inside it finds the lock taken
                    self._put_back_all(claimed)
            finally:
                self._lock.release()

    def _claim(self) -> list[int]:
        claimed = []
        while True:  # popleft, not a copy and clear: a finalizer may append meanwhile
            try:
                claimed.append(self._pending.popleft())
            except IndexError:
                return claimed

    def _drain(self) -> None:
        """Frees the blocks finalizers handed back, after the stream's queued work (call
        without the lock: a finalizer the drain itself triggers only appends)."""
        claimed = self._claim()
        if claimed:
            self._sync()
            with self._lock:
                self._put_back_all(claimed)

    def _put_back_all(self, claimed: list[int]) -> None:
        for pointer in claimed:  # a finalizer's bad pointer is dropped (__del__ ignored it)
            if pointer in self._sizes:
                self._put_back(pointer)

    def _put_back(self, pointer: int) -> None:
        size = self._sizes.pop(pointer, None)
        if size is None:
            raise ValueError(f"free of {pointer:#x}: not a block in use from this "
                             "allocator (freed twice, or allocated elsewhere)")
        self._free.setdefault(size, []).append(pointer)
        self._stats.allocated -= size
        self._stats.cached += size

    def owns(self, pointer: int) -> bool:
        """Whether `pointer` lies inside a block this allocator holds (in use or free)."""
        self._drain()
        with self._lock:
            i = bisect.bisect_right(self._starts, pointer) - 1
            return i >= 0 and pointer < self._starts[i] + self._extent[self._starts[i]]

    def empty_cache(self) -> None:
        """Returns every free block to the driver (blocks in use stay)."""
        self._drain()
        self._sync()
        with self._lock:
            self._empty_locked()

    def _empty_locked(self) -> None:
        for size, blocks in self._free.items():
            for pointer in blocks:
                self._release(pointer)
                self._stats.driver_frees += 1
                self._stats.cached -= size
                del self._extent[pointer]
                self._starts.pop(bisect.bisect_left(self._starts, pointer))
        self._free.clear()
