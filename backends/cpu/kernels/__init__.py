"""Ember's own matrix kernels: a GEMM library generated through MLIR for the target CPU.

`@ember_sgemm` / `@ember_dgemm` (the ILP64 CBLAS signature that `ember-linalg-to-blas`
calls) are defined by this library: packing, an AVX-512/AVX2/NEON register-tiled
micro-kernel and threads (gemm_ir.py, driver_ir.py, library.py). It needs only libc and
libpthread, so an AOT library links `library_object(cpu, features)`; the JIT loads the
host's copy once per process (`bind_jit`) and may still send a given shape to numpy's
OpenBLAS where that was measured faster (choice.py).
"""

from __future__ import annotations

import ctypes
import threading

from ember.backends.cpu.kernels.driver_ir import ENTRY, THREADS_SYMBOL
from ember.backends.cpu.kernels.library import fingerprint, isa_params, llvm_ir

__all__ = ["ENTRY", "THREADS_SYMBOL", "bind_jit", "fingerprint", "isa_params",
           "library_object", "llvm_ir", "load"]


def library_object(cpu: str, features: str) -> bytes:
    """The library compiled for `cpu` with LLVM `features`, as a position-independent ELF
    object defining `ember_sgemm`, `ember_dgemm` and `ember_gemm_threads` (an int: the
    threads a call may use, 0 for the CPUs online); kept in the disk cache."""
    from ember.backends.cpu.backend import CpuBackend, CpuOptions
    from ember.backends.cpu.cache import cache_key, disk_cache
    from ember.backends.cpu.jit import object_code
    backend = CpuBackend(CpuOptions(cpu=cpu, features=features))
    key = cache_key("gemm-library", backend.options.cpu, backend.options.features)
    disk = disk_cache()
    entry = disk.load(key)
    if entry is not None and entry[1].get("library") == "gemm":
        return entry[0]
    obj = object_code(backend, llvm_ir(backend.options.features, backend.options.cpu))
    disk.store(key, obj, {"library": "gemm"})
    return obj


_lock = threading.Lock()
_engines: dict = {}  # (cpu, features) -> execution engine, kept for the process's life
_bound: list = []  # the (cpu, features) whose entries JIT-compiled code resolves


def load(cpu: str, features: str) -> dict[str, int]:
    """Loads the library for (`cpu`, `features`) into this process once (it must run here);
    returns the addresses of its entries and of `ember_gemm_threads` by symbol."""
    import llvmlite.binding as llvm
    with _lock:
        engine = _engines.get((cpu, features))
        if engine is None:
            from ember.backends.cpu.backend import CpuBackend, CpuOptions
            obj = library_object(cpu, features)
            machine = CpuBackend(CpuOptions(cpu=cpu, features=features)).target_machine(
                reloc="pic")
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
            engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            engine.finalize_object()
            _engines[(cpu, features)] = engine
    addresses = {symbol: engine.get_function_address(symbol) for symbol in ENTRY.values()}
    addresses[THREADS_SYMBOL] = engine.get_global_value_address(THREADS_SYMBOL)
    return addresses


def bind_jit(cpu: str, features: str, threads: int) -> dict[str, int]:
    """Makes the host library's entries resolvable by JIT-compiled code (one library per
    process: the first one bound) and sets the threads a call may use; returns the
    addresses by symbol."""
    import llvmlite.binding as llvm
    addresses = load(cpu, features)
    with _lock:
        if not _bound:
            for symbol in ENTRY.values():
                llvm.add_symbol(symbol, addresses[symbol])
            _bound.append((cpu, features))
        elif _bound[0] != (cpu, features):
            addresses = load(*_bound[0])
    ctypes.c_int32.from_address(addresses[THREADS_SYMBOL]).value = max(0, int(threads))
    return addresses
