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
from ember.backends.cpu.kernels.library import ELEMENTS, fingerprint, isa_params, llvm_ir

__all__ = ["ELEMENTS", "ENTRY", "THREADS_SYMBOL", "bind_jit", "fingerprint", "isa_params",
           "library_object", "llvm_ir", "load"]


def library_object(cpu: str, features: str, elements: tuple[str, ...] = ELEMENTS) -> bytes:
    """The library compiled for `cpu` with LLVM `features`, as a position-independent ELF
    object defining `ember_sgemm` and `ember_dgemm` (those of `elements`) and
    `ember_gemm_threads` (an int: the threads a call may use, 0 for the CPUs online); kept
    in the disk cache."""
    from ember.backends.cpu.backend import CpuBackend, CpuOptions
    from ember.backends.cpu.cache import cache_key, disk_cache
    from ember.backends.cpu.jit import object_code
    backend = CpuBackend(CpuOptions(cpu=cpu, features=features))
    key = cache_key("gemm-library", backend.options.cpu, backend.options.features, elements)
    disk = disk_cache()
    entry = disk.load(key)
    if entry is not None and entry[1].get("library") == "gemm":
        return entry[0]
    obj = object_code(backend, llvm_ir(backend.options.features, backend.options.cpu,
                                       tuple(elements)))
    disk.store(key, obj, {"library": "gemm"})
    return obj


_lock = threading.Lock()
_engines: dict = {}  # (cpu, features, elements) -> execution engine, kept for the process
_bound: dict = {}  # element -> the (cpu, features) whose GEMM JIT-compiled code resolves


def load(cpu: str, features: str, elements: tuple[str, ...] = ELEMENTS) -> dict[str, int]:
    """Loads the library for (`cpu`, `features`) with the GEMMs of `elements` into this
    process once (it must run here); returns the addresses of its entries and of its
    `ember_gemm_threads` by symbol."""
    import llvmlite.binding as llvm
    elements = tuple(elements)
    with _lock:
        engine = _engines.get((cpu, features, elements))
        if engine is None:
            from ember.backends.cpu.backend import CpuBackend, CpuOptions
            obj = library_object(cpu, features, elements)
            machine = CpuBackend(CpuOptions(cpu=cpu, features=features)).target_machine(
                reloc="pic")
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
            engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            engine.finalize_object()
            _engines[(cpu, features, elements)] = engine
    addresses = {ENTRY[e]: engine.get_function_address(ENTRY[e]) for e in elements}
    addresses[THREADS_SYMBOL] = engine.get_global_value_address(THREADS_SYMBOL)
    return addresses


def bind_jit(cpu: str, features: str, threads: int, element: str) -> int:
    """Makes the host library's GEMM of `element` resolvable by JIT-compiled code (one per
    process: the first one bound) and sets the threads its calls may use; returns its
    address."""
    import llvmlite.binding as llvm
    with _lock:
        target = _bound.setdefault(element, (cpu, features))
    addresses = load(*target, (element,))
    symbol = ENTRY[element]
    if target == (cpu, features):
        llvm.add_symbol(symbol, addresses[symbol])  # idempotent
    ctypes.c_int32.from_address(addresses[THREADS_SYMBOL]).value = max(0, int(threads))
    return addresses[symbol]
