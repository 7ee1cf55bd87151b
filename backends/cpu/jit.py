"""JIT: LLVM IR -> machine code in this process (llvmlite MCJIT), and the flat call path.

The lowered function takes every memref expanded into scalars (MLIR's default calling
convention): `allocated, aligned, offset, sizes..., strides...` per argument, inputs first
and then one output buffer per result (`buffer-results-to-out-params`). `Executable` keeps
the ctypes function and fills that list from numpy arrays: the only per-call Python work is
reading each array's data pointer and allocating the outputs.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Sequence

import llvmlite.binding as llvm
import numpy as np

from ember.backends.cpu.backend import CpuBackend
from ember.dialects.ember.types import TensorType

_engines_lock = threading.Lock()
_engines: list = []  # execution engines live as long as the process (their code is in use)


class JitError(RuntimeError):
    """Machine-code generation failed (a bug in a lowering; the message says where)."""


def jit_compile(backend: CpuBackend, llvm_ir: str):
    """Compiles LLVM IR for the host and returns the execution engine holding the code."""
    machine = backend.target_machine()
    try:
        module = backend.optimize_llvm(llvm_ir, machine)
    except RuntimeError as e:
        raise JitError(f"LLVM rejected the generated IR: {e}") from None
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    with _engines_lock:
        _engines.append(engine)
    return engine


def _memref_ctypes(rank: int) -> list:
    return [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64] + [ctypes.c_int64] * (2 * rank)


class Executable:
    """A compiled function for fixed (static) input and output tensor types."""

    def __init__(self, engine, symbol: str, arg_types: Sequence[TensorType],
                 result_types: Sequence[TensorType]):
        for t in list(arg_types) + list(result_types):
            if not t.is_static:
                raise JitError(f"compiled functions need static shapes, got {t}")
        self.arg_types = list(arg_types)
        self.result_types = list(result_types)
        self._engine = engine
        address = engine.get_function_address(symbol)
        if not address:
            raise JitError(f"symbol @{symbol} not found in the compiled module")
        signature = []
        for t in self.arg_types + self.result_types:
            signature += _memref_ctypes(len(t.shape))
        self._fn = ctypes.CFUNCTYPE(None, *signature)(address)
        self._out_specs = [(t.shape, t.dtype.np_dtype) for t in self.result_types]
        self._in_specs = [(t.shape, t.dtype.np_dtype) for t in self.arg_types]

    def __call__(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(arrays) != len(self._in_specs):
            raise ValueError(f"expected {len(self._in_specs)} arrays, got {len(arrays)}")
        flat: list = []
        keep = []
        for i, (a, (shape, dtype)) in enumerate(zip(arrays, self._in_specs)):
            if a.shape != shape or a.dtype != dtype:
                raise ValueError(f"argument {i} must be {dtype} {shape}, got {a.dtype} "
                                 f"{a.shape}")
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
                keep.append(a)
            _append(flat, a)
        outs = [np.empty(shape, dtype) for shape, dtype in self._out_specs]
        for o in outs:
            _append(flat, o)
        self._fn(*flat)
        return outs


def _append(flat: list, a: np.ndarray) -> None:
    pointer = a.ctypes.data
    flat += [pointer, pointer, 0]
    flat += a.shape
    item = a.itemsize or 1
    flat += [s // item for s in a.strides] if a.size else [1] * a.ndim
