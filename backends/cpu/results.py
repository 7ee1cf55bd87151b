"""Where a compiled call's results live (jit.Executable): arrays the runtime allocates for
results of static shape (`OutputBuffers`, large ones from the block cache), and arrays
over the buffers compiled code malloc'ed for results of dynamic shape (`owned_results`).
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Sequence

import numpy as np

from ember.backends.cpu import block_cache
from ember.dialects.ember.types import TensorType


class OutputBuffers:
    """Output arrays for one executable's calls; large ones from the block cache.

    A fresh large array costs a page fault per page on first write, which takes longer than
    a fused kernel's whole pass over it. So an output of `block_cache.MIN_BYTES` or more
    lives in a block of the caching allocator (block_cache.py): when the last array over it
    dies, the block goes back to the cache and a later call (of any executable) gets it
    again, already faulted in. A result the caller keeps stays its own; the next call gets
    another block, and once that result dies its block is reused in turn (`y = f(x)` in a
    loop alternates between two blocks).
    """

    def __init__(self, specs: Sequence[tuple]):
        self._specs = list(specs)
        self._big = any(math.prod(shape) * np.dtype(dtype).itemsize  # (np.prod: ~50 us)
                        >= block_cache.MIN_BYTES for shape, dtype in self._specs) \
            and block_cache.available()
        if not self._big and len(self._specs) == 1:  # the commonest call: bound once
            self.take = functools.partial(_one_empty, np.empty, *self._specs[0])

    def take(self) -> list[np.ndarray]:
        if not self._big:
            return [np.empty(shape, dtype) for shape, dtype in self._specs]
        return [block_cache.empty(shape, dtype) for shape, dtype in self._specs]


def _one_empty(empty, shape, dtype) -> list[np.ndarray]:
    return [empty(shape, dtype)]


class _NativeBuffer:
    """Memory compiled code allocated, freed when the last array over it goes (numpy makes
    an array's base the first non-array object: every view keeps this one). Compiled
    code's malloc goes through the block cache's table (block_cache.route), so `free` is
    `block_cache.free_function()`, which takes both the cache's blocks and libc's."""

    __slots__ = ("_allocated", "_free", "__array_interface__", "__weakref__")

    def __init__(self, allocated: int, aligned: int, nbytes: int, free):
        self._allocated = allocated
        self._free = free
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "version": 3,
                                    "data": (aligned if nbytes else 0, False)}

    def __del__(self):
        self._free(self._allocated)


_ADDRESS = 2 ** 64 - 1  # a descriptor's pointers, read as signed int64


def owned_results(descriptors: Sequence[tuple[int, TensorType]]) -> list[np.ndarray]:
    """The arrays described by memref descriptors compiled code malloc'ed (allocated
    pointer, aligned pointer, offset, sizes, strides, as MLIR lays them out), over their
    buffers without copying and owning them; the descriptors are freed at once.

    Results over one buffer (`y` and `reshape(y)`, both of dynamic shape, are one
    allocation) share one owner, which frees the buffer once, after the last array over
    it: an owner each freed it twice, and the first to go left the other reading freed
    memory."""
    free = block_cache.free_function()
    read = []
    for descriptor, t in descriptors:
        rank = len(t.shape)
        fields = (ctypes.c_int64 * (3 + 2 * rank)).from_address(descriptor)
        allocated, aligned, offset = fields[0] & _ADDRESS, fields[1] & _ADDRESS, fields[2]
        sizes, strides = tuple(fields[3:3 + rank]), tuple(fields[3 + rank:3 + 2 * rank])
        free(descriptor)
        dtype = np.dtype(t.dtype.np_dtype)
        end = 0 if 0 in sizes else (offset + sum((n - 1) * s for n, s in zip(sizes, strides))
                                    + 1) * dtype.itemsize
        read.append((allocated, aligned, offset, sizes, strides, dtype, end))
    spans: dict[int, tuple[int, int]] = {}  # allocated -> (lowest aligned, end address)
    for allocated, aligned, *_, end in read:
        low, high = spans.get(allocated, (aligned, aligned))
        spans[allocated] = (min(low, aligned), max(high, aligned + end))
    owners = {allocated: np.asarray(_NativeBuffer(allocated, low, high - low, free))
              for allocated, (low, high) in spans.items()}
    out = []
    for allocated, aligned, offset, sizes, strides, dtype, end in read:
        base = aligned - spans[allocated][0]
        out.append(np.ndarray(sizes, dtype, buffer=owners[allocated],
                              offset=base + offset * dtype.itemsize if end else 0,
                              strides=tuple(n * dtype.itemsize for n in strides)
                              if end else None))
    return out
