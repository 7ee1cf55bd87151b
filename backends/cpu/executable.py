"""The compiled code's call path: `Executable` calls a function of code loaded by the JIT
(jit.py: LLVM's MCJIT) or from a shared library (shared.py), filling its arguments from numpy
arrays: the only per-call Python work is reading each array's data pointer and allocating
the outputs. A call whose code is in the disk cache imports this module, not the JIT's.

Where a call's results live is here too: arrays the runtime allocates for results of static
shape (`OutputBuffers`, large ones from the block cache), and arrays over the buffers
compiled code malloc'ed for results of dynamic shape (`owned_results`). (One module: each
module a cache hit imports costs it ~0.1 ms.)
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Sequence

import numpy as np

from ember.backends.cpu import block_cache, native
from ember.dialects.ember.array_pointer import data_pointer
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.types import TensorType

ENTRY_PREFIX = "__ember_entry_"  # jit.entry_wrapper's functions: `__ember_entry_<symbol>`


class JitError(EmberError, RuntimeError):
    """Machine-code generation failed (a bug in a lowering; the message says where)."""


def _memref_ctypes(rank: int) -> list:
    return [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_int64] * (2 * rank)


class Executable:
    """A compiled function for fixed (static) input types. Results of static shape are
    written into arrays the caller allocates; results of dynamic shape (sizes known only
    when the call ends) come back as arrays over the buffers compiled code allocated
    (`owned_results`)."""

    def __init__(self, engine, symbol: str, arg_types: Sequence[TensorType],
                 result_types: Sequence[TensorType]):
        for t in arg_types:
            if not t.is_static:
                raise JitError(f"compiled functions need static argument shapes, got {t}")
        for t in result_types:
            if t.shape is None:
                raise JitError(f"compiled functions need ranked results, got {t}")
        self.arg_types = list(arg_types)
        self.result_types = list(result_types)
        self.variables: list[int] = []  # argument index of each trailing variable result
        self.keep_alive: list = []  # host callbacks the code calls
        self.errors: dict = {}  # status -> error site (native_ir.error_sites)
        self.symbol = symbol
        self._engine = engine
        address = engine.get_function_address(symbol)
        if not address:
            raise JitError(f"symbol @{symbol} not found in the compiled module")
        self._dynamic = [i for i, t in enumerate(self.result_types) if not t.is_static]
        self._address, self._fn = address, None  # `_fn`: by __call__, for code without entry
        self._out_specs = [(t.shape, t.dtype.np_dtype) for t in self.result_types
                           if t.is_static]
        self._in_specs = [(t.shape, t.dtype.np_dtype) for t in self.arg_types]
        entry = engine.get_function_address(ENTRY_PREFIX + symbol)
        self._entry = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)(entry) if entry \
            else None
        if self._entry is None and self._dynamic:
            raise JitError(f"@{symbol} returns results of dynamic shape but has no entry")
        self.fast_path = self._entry is not None  # call_pointers is available
        # the buffers' pointers, then the slots the entry writes a failure's values into
        self._first_value = len(self.arg_types) + len(self.result_types)
        self._pointers = ctypes.c_void_p * (self._first_value + native.MAX_VALUES)
        self._outputs = OutputBuffers(self._out_specs)

    def call_pointers(self, pointers: list[int]) -> list[np.ndarray]:
        """The fast path: inputs given as data pointers of C-contiguous arrays of exactly
        `arg_types` (the caller guarantees it); returns the freshly allocated outputs."""
        outs = self._outputs.take()
        if self._dynamic:
            return self._call_dynamic(pointers, outs)
        data = self._pointers(*pointers, *map(data_pointer, outs))
        status = self._entry(data)  # inlined run_entry: this is the hot path
        if status:
            self._raise(status, data)
        return outs

    def _call_dynamic(self, pointers: list[int], outs: list[np.ndarray]) -> list[np.ndarray]:
        """A call with results of dynamic shape: their slots come back holding descriptors
        (entry_wrapper), turned into arrays that own their buffers. On a failure no
        descriptor was written (the call unwound before returning): nothing to free."""
        static = iter(outs)
        slots = [0 if i in self._dynamic else data_pointer(next(static))
                 for i in range(len(self.result_types))]
        data = self._pointers(*pointers, *slots)
        status = self._entry(data)
        if status:
            self._raise(status, data)
        base = len(self.arg_types)
        owned = iter(owned_results([(data[base + i], t) for i, t in enumerate(self.result_types)
                                    if i in self._dynamic]))
        static = iter(outs)
        return [next(owned) if i in self._dynamic else next(static)
                for i in range(len(self.result_types))]

    def run_entry(self, pointers: list[int]) -> None:
        """Calls the entry on the buffers' data pointers (inputs, then outputs); raises
        the error compiled code reported, if any (native.py). Only for functions whose
        results all have static shapes."""
        data = self._pointers(*pointers)
        status = self._entry(data)
        if status:
            self._raise(status, data)

    def _raise(self, status: int, data) -> None:
        values = [ctypes.c_int64(data[self._first_value + k] or 0).value
                  for k in range(native.MAX_VALUES)]  # the entry's value slots
        native.raise_for_status(status, values, self.errors, self.symbol)

    def __call__(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(arrays) != len(self._in_specs):
            raise ValueError(f"expected {len(self._in_specs)} arrays, got {len(arrays)}")
        contiguous = []
        for i, (a, (shape, dtype)) in enumerate(zip(arrays, self._in_specs)):
            a = np.asarray(a)  # a numpy scalar (np.float32(1)) has no data address to pass
            if a.shape != shape or a.dtype != dtype:
                raise ValueError(f"argument {i} must be {dtype} {shape}, got {a.dtype} "
                                 f"{a.shape}")
            contiguous.append(a if a.flags.c_contiguous else np.ascontiguousarray(a))
        if self._entry is not None:
            return self.call_pointers([data_pointer(a) for a in contiguous])
        if self._fn is None:  # (its ctypes type costs a cache hit ~30 us: on first need)
            signature = []
            for t in self.arg_types + self.result_types:  # (all static without an entry)
                signature += _memref_ctypes(len(t.shape))
            self._fn = ctypes.CFUNCTYPE(None, *signature)(self._address)
        outs = self._outputs.take()
        flat: list = []  # code without an entry wrapper: MLIR's calling convention
        for a in [*contiguous, *outs]:
            _append(flat, a)
        self._fn(*flat)
        return outs


def _append(flat: list, a: np.ndarray) -> None:
    pointer = data_pointer(a)
    flat += [pointer, pointer, 0]
    flat += a.shape
    item = a.itemsize or 1
    flat += [s // item for s in a.strides] if a.size else [1] * a.ndim


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
