"""Large elementwise functions on every core: the rows of the outputs split across threads.

A function whose every op is elementwise (ember ops with the ELEMENTWISE trait, constants,
no control flow or state) computes row `i` of each output from row `i` of the inputs that
have rows, and from the whole of the inputs broadcast along dim 0. For large inputs the
backend compiles it for a block of rows instead of the whole (`retype_rows`), and
`SplitExecutable` runs one block per thread on offset pointers: ctypes releases the GIL for
the native call, so the blocks run in parallel. Below `MIN_ELEMENTS_PER_THREAD` elements
per thread the pool's hand-off costs more than it saves and the function runs whole.

Threads: `EMBER_NUM_THREADS` if set, else the CPUs this process may run on (at most 16).
The count is a backend option (CpuOptions.threads), so it is part of the compile-cache key.
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from typing import Sequence

import numpy as np
from mlir import ir

from ember.backends.cpu.executable import OutputBuffers
from ember.backends.cpu.options import MAX_THREADS, default_threads  # noqa: F401
from ember.dialects.ember.array_pointer import data_pointer
from ember.dialects.ember.base import REGISTRY, Trait
from ember.passes.analysis.effects import computable

MIN_ELEMENTS_PER_THREAD = 1 << 17


def _shape(t: ir.Type):
    if not isinstance(t, ir.RankedTensorType):
        return None
    rt = t
    return [None if rt.is_dynamic_dim(i) else rt.get_dim_size(i) for i in range(rt.rank)]


def row_split_rows(fn: ir.Operation) -> int | None:
    """The number of rows of a function that can be split by rows, else None.

    Every op must be elementwise or a constant, every result must have the rows (rank R,
    dim 0 the same static size N > 1, the largest rank of any value), and every other
    value must either have them too or be broadcast along dim 0 (lower rank, or dim 0 of 1).
    """
    block = fn.regions[0].blocks[0]
    ops = list(block.operations)
    ret = ops[-1].operation
    if ret.name != "func.return" or not len(ret.operands):
        return None
    out = _shape(ret.operands[0].type)
    if not out or out[0] is None or out[0] < 2 or None in out:
        return None
    rank, rows = len(out), out[0]
    values = list(block.arguments)
    for op in ops[:-1]:
        op = op.operation
        if op.regions and len(op.regions):
            return None
        spec = REGISTRY.get(op.name)
        if spec is None or not (spec.has(Trait.ELEMENTWISE) or op.name == "ember.constant"):
            return None
        if not computable(spec):
            return None
        if op.name == "ember.constant":  # its value has all the rows: broadcast ones only
            s = _shape(op.results[0].type)
            if s is None or (len(s) == rank and s[0] == rows):
                return None
        values += list(op.results)
    for v in values:
        s = _shape(v.type)
        if s is None or None in s or len(s) > rank:
            return None
        if len(s) == rank and s[0] not in (1, rows):
            return None
    for v in ret.operands:
        s = _shape(v.type)
        if s is None or len(s) != rank or s[0] != rows:
            return None
    return rows


def has_rows(shape, rank: int, rows: int) -> bool:
    """Whether a value of `shape` is split by rows: the full rank, dim 0 the row count (a
    lower-rank value is broadcast along dim 0, even when its own dim 0 happens to equal
    the row count: a (1024,) bias added to 1024x1024 rows)."""
    return shape is not None and len(shape) == rank and shape[0] == rows


def retype_rows(fn: ir.Operation, rank: int, rows: int, block_rows: int) -> None:
    """Rewrites, in place, every value of `fn` that has the rows to have `block_rows`."""
    block = fn.regions[0].blocks[0]
    values = list(block.arguments)
    for op in block.operations:
        values += list(op.operation.results)
    for v in values:
        rt = v.type
        s = _shape(rt)
        if has_rows(s, rank, rows):
            v.set_type(ir.RankedTensorType.get([block_rows, *s[1:]], rt.element_type,
                                               rt.encoding))
    ret = list(block.operations)[-1].operation
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in ret.operands]))


def plan(rows: int, row_elements: int, threads: int) -> list[tuple[int, int]]:
    """(first row, row count) per block: at most `threads` blocks of equal size (the last
    may be smaller), each of at least MIN_ELEMENTS_PER_THREAD elements; one block means
    do not split."""
    blocks = min(threads, rows, max(1, rows * row_elements // MIN_ELEMENTS_PER_THREAD))
    if blocks <= 1:
        return [(0, rows)]
    size = -(-rows // blocks)
    return [(start, min(size, rows - start)) for start in range(0, rows, size)]


_pool_lock = threading.Lock()
_pool: concurrent.futures.ThreadPoolExecutor | None = None


def _forget_pool() -> None:
    """In a forked child the parent's worker threads do not exist: start a new pool."""
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


def _executor(threads: int) -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < threads - 1:
            _pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=max(1, threads - 1), thread_name_prefix="ember-cpu")
        return _pool


class SplitExecutable:
    """Runs block executables (one per row block, see `plan`) on threads; behaves as the
    executable of the whole function (same argument and result types)."""

    def __init__(self, blocks: Sequence[tuple[object, int]], arg_types, result_types,
                 split_args: Sequence[bool]):
        self.arg_types = list(arg_types)
        self.result_types = list(result_types)
        self.variables: list[int] = []
        self.keep_alive = [exe for exe, _ in blocks]
        self.fast_path = True
        self._blocks = list(blocks)
        self._split_args = list(split_args)
        # byte offset of one row, per input and per output
        self._arg_row_bytes = [_row_bytes(t) for t in self.arg_types]
        self._out_row_bytes = [_row_bytes(t) for t in self.result_types]
        self._out_specs = [(t.shape, t.dtype.np_dtype) for t in self.result_types]
        self._in_specs = [(t.shape, t.dtype.np_dtype) for t in self.arg_types]
        self._outputs = OutputBuffers(self._out_specs)

    def call_pointers(self, pointers: list[int]) -> list[np.ndarray]:
        outs = self._outputs.take()
        out_pointers = [data_pointer(o) for o in outs]
        jobs = []
        for exe, start in self._blocks:
            ins = [p + start * rb if split else p for p, rb, split in
                   zip(pointers, self._arg_row_bytes, self._split_args)]
            outs_p = [p + start * rb for p, rb in zip(out_pointers, self._out_row_bytes)]
            jobs.append((exe, ins + outs_p))
        pool = _executor(len(self._blocks))  # per call: a forked child gets a new one
        futures = [pool.submit(_run_block, exe, ps) for exe, ps in jobs[1:]]
        errors = [_run_block(*jobs[0])] + [f.result() for f in futures]
        for error in errors:  # every block has finished: raise the first block's error
            if error is not None:
                raise error
        return outs

    def __call__(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(arrays) != len(self._in_specs):
            raise ValueError(f"expected {len(self._in_specs)} arrays, got {len(arrays)}")
        keep = []
        for i, (a, (shape, dtype)) in enumerate(zip(arrays, self._in_specs)):
            a = np.asarray(a)  # (as jit.Executable.__call__)
            if a.shape != shape or a.dtype != dtype:
                raise ValueError(f"argument {i} must be {dtype} {shape}, got {a.dtype} "
                                 f"{a.shape}")
            keep.append(a if a.flags.c_contiguous else np.ascontiguousarray(a))
        return self.call_pointers([data_pointer(a) for a in keep])


def _run_block(exe, pointers: list[int]) -> Exception | None:
    """Runs one block; returns the error it raised (each thread unwinds its own native
    call, see native.py), so the caller raises one error after all blocks are done."""
    try:
        exe.run_entry(pointers)
    except Exception as e:  # noqa: BLE001 (re-raised by the caller)
        return e
    return None


def _row_bytes(t) -> int:
    return int(np.prod(t.shape[1:], dtype=np.int64)) * t.dtype.np_dtype.itemsize
