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
"""

from __future__ import annotations

import bisect
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
        self._lock = threading.Lock()
        self.stats = Stats()

    def malloc(self, nbytes: int) -> int:
        """A block of at least `nbytes` (never 0: a 0-byte request gets the smallest
        class, so every buffer has its own address)."""
        size = size_class(nbytes)
        with self._lock:
            blocks = self._free.get(size)
            if blocks:
                pointer = blocks.pop()
                self.stats.cached -= size
                self.stats.reused += 1
            else:
                pointer = self._fresh(size)
            self._sizes[pointer] = size
            self.stats.allocated += size
            self.stats.peak = max(self.stats.peak, self.stats.allocated)
            return pointer

    def _fresh(self, size: int) -> int:
        try:
            pointer = self._allocate(size)
        except Exception:
            self._empty_locked()
            try:
                pointer = self._allocate(size)
            except Exception as e:
                raise AllocationError(f"the GPU has no {size} bytes free ({e}); "
                                      f"{self.stats.allocated} bytes are in use by Ember") \
                    from None
        self.stats.driver_allocs += 1
        bisect.insort(self._starts, pointer)
        self._extent[pointer] = size
        return pointer

    def free(self, pointer: int, from_host: bool = False) -> None:
        """Returns a block to its free list (`from_host`: after the stream's queued work,
        which may still use it). ValueError for a pointer this allocator did not give."""
        if from_host:
            self._sync()
        with self._lock:
            size = self._sizes.pop(pointer, None)
            if size is None:
                raise ValueError(f"free of {pointer:#x}: not a block in use from this "
                                 "allocator (freed twice, or allocated elsewhere)")
            self._free.setdefault(size, []).append(pointer)
            self.stats.allocated -= size
            self.stats.cached += size

    def owns(self, pointer: int) -> bool:
        """Whether `pointer` lies inside a block this allocator holds (in use or free)."""
        with self._lock:
            i = bisect.bisect_right(self._starts, pointer) - 1
            return i >= 0 and pointer < self._starts[i] + self._extent[self._starts[i]]

    def empty_cache(self) -> None:
        """Returns every free block to the driver (blocks in use stay)."""
        self._sync()
        with self._lock:
            self._empty_locked()

    def _empty_locked(self) -> None:
        for size, blocks in self._free.items():
            for pointer in blocks:
                self._release(pointer)
                self.stats.driver_frees += 1
                self.stats.cached -= size
                del self._extent[pointer]
                self._starts.pop(bisect.bisect_left(self._starts, pointer))
        self._free.clear()
