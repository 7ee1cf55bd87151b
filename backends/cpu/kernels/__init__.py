"""Ember's own matrix kernels: a GEMM library generated through MLIR for the target CPU.

`@ember_sgemm` / `@ember_dgemm` (the ILP64 CBLAS signature that `ember-linalg-to-blas`
calls) are defined by this library: packing, an AVX-512/AVX2/NEON register-tiled
micro-kernel and threads (gemm_ir.py, driver_ir.py, library.py). It needs only libc and
libpthread, so an AOT library links `library_object(cpu, features)`; the JIT loads the
host's copy once per process (`bind_jit`) and may still send a given shape to numpy's
OpenBLAS where that was measured faster (choice.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import threading

# The names the library defines come from options.py, and its IR generators (library.py)
# are imported where it is built: loading the library from the disk cache imports neither.
from ember.backends.cpu.options import ENTRY, GEMM_ELEMENTS as ELEMENTS
from ember.backends.cpu.options import GEMM_KEEP_SYMBOL as KEEP_SYMBOL
from ember.backends.cpu.options import GEMM_THREADS_SYMBOL as THREADS_SYMBOL


def __getattr__(name: str):
    if name in ("fingerprint", "isa_params", "llvm_ir"):
        from ember.backends.cpu.kernels import library
        return getattr(library, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["ELEMENTS", "ENTRY", "KEEP_SYMBOL", "THREADS_SYMBOL", "bind_jit", "fingerprint",
           "isa_params", "keep_threads", "library_key", "library_object", "llvm_ir", "load",
           "resolving"]


def library_object(cpu: str, features: str, elements: tuple[str, ...] = ELEMENTS,
                   fast: bool = False) -> bytes:
    """The library compiled for `cpu` with LLVM `features`, as a position-independent ELF
    object defining `ember_sgemm` and `ember_dgemm` (those of `elements`) and
    `ember_gemm_threads` (an int: the threads a call may use, 0 for the CPUs online); kept
    in the disk cache. `fast`: compiled at the fast tier (backend.FAST_TIER: ~1.2 s of CPU
    here instead of ~4.4 s, its GEMMs ~3x slower), for fast-tier code on a cold cache."""
    from ember.backends.cpu.backend import FAST_TIER, CpuBackend, CpuOptions
    from ember.backends.cpu.cache import cache_key, disk_cache
    from ember.backends.cpu.jit import object_code
    from ember.backends.cpu.kernels.library import llvm_ir
    backend = CpuBackend(CpuOptions(cpu=cpu, features=features, **(FAST_TIER if fast else {})))
    key = library_key(cpu, features, elements, fast)
    disk = disk_cache()
    entry = disk.load(key)
    if entry is not None and entry[1].get("library") == "gemm":
        return entry[0]
    obj = object_code(backend, llvm_ir(backend.options.features, backend.options.cpu,
                                       tuple(elements)))
    # linked now, next to the object: the next process loads it without running the linker
    # (shared.load_library would link it on its first call: a warm start's ~20 ms)
    from ember.backends.cpu.linking import link
    disk.store(key, obj, {"library": "gemm"}, link(obj))
    return obj


def library_key(cpu: str, features: str, elements: tuple[str, ...] = ELEMENTS,
                fast: bool = False) -> str:
    """The disk-cache key of `library_object(cpu, features, elements, fast)`."""
    from ember.backends.cpu.cache import cache_key
    from ember.backends.cpu.options import FAST_TIER, CpuOptions  # not the compiler's
    options = CpuOptions(cpu=cpu, features=features, **(FAST_TIER if fast else {})).resolved()
    return cache_key("gemm-library", options.cpu, options.features, elements,
                     *(("fast",) if fast else ()))


def _at_hand(cpu: str, features: str, elements: tuple[str, ...]) -> bool:
    """Whether the full-tier library is loaded in this process or in the disk cache."""
    from ember.backends.cpu.cache import cache_key, disk_cache
    from ember.backends.cpu.options import CpuOptions
    if (cpu, features, elements, False) in _engines:
        return True
    options = CpuOptions(cpu=cpu, features=features).resolved()
    return disk_cache().load(cache_key("gemm-library", options.cpu, options.features,
                                       elements)) is not None


_lock = threading.Lock()
_engines: dict = {}  # (cpu, features, elements, fast) -> execution engine, for the process
_building: dict = {}  # the same key -> the lock held while that library is built
_bound: dict = {}  # element -> the (cpu, features) whose GEMM JIT-compiled code resolves
_immortal: list = []  # engines whose worker threads are kept (keep_threads)
_resolving = threading.Lock()  # held from adding the symbols to resolving them (finalize)


def load(cpu: str, features: str, elements: tuple[str, ...] = ELEMENTS,
         fast: bool = False) -> dict[str, int]:
    """Loads the library for (`cpu`, `features`) with the GEMMs of `elements` (at the fast
    tier if `fast`) into this process once (it must run here); returns the addresses of
    its entries and of its `ember_gemm_threads` by symbol."""
    key = (cpu, features, tuple(elements), fast)
    with _lock:  # one lock per library built: building one (seconds) blocks no other
        building = _building.setdefault(key, threading.Lock())
    with building:
        engine = _engines.get(key)
        if engine is None:  # a cached library, as a shared library: no LLVM (shared.py)
            from ember.backends.cpu.shared import load_library
            engine = load_library(library_key(*key))
            if engine is not None:
                _engines[key] = engine
        if engine is None:
            import llvmlite.binding as llvm
            from ember.backends.cpu.backend import CpuBackend, CpuOptions
            obj = library_object(cpu, features, key[2], fast)
            machine = CpuBackend(CpuOptions(cpu=cpu, features=features)).target_machine(
                reloc="pic")
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
            engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            engine.finalize_object()
            _engines[key] = engine
    addresses = {ENTRY[e]: engine.get_function_address(ENTRY[e]) for e in key[2]}
    addresses[THREADS_SYMBOL] = engine.get_global_value_address(THREADS_SYMBOL)
    addresses[KEEP_SYMBOL] = engine.get_global_value_address(KEEP_SYMBOL)
    return addresses


def keep_threads(addresses: dict[str, int]) -> None:
    """Makes the library of `addresses` (from `load`) keep its worker threads across calls
    (pool_ir.py). Its engine is then never freed, not even at interpreter exit: parked
    workers run its code."""
    at = addresses.get(KEEP_SYMBOL, 0)
    if not at:  # a library without the pool: threads per call
        return
    with _lock:
        for key, engine in _engines.items():
            if engine.get_global_value_address(KEEP_SYMBOL) == at and \
                    not any(kept is engine for kept in _immortal):
                _immortal.append(engine)
                ctypes.pythonapi.Py_IncRef(ctypes.py_object(engine))
    ctypes.c_int32.from_address(at).value = 1


def bind_jit(cpu: str, features: str, threads: int, element: str, fast: bool = False) -> int:
    """Loads the host library's GEMM of `element` for JIT-compiled code (one target per
    process: the first one bound) and sets the threads its calls may use; returns its
    address (code resolves it inside `resolving`). `fast` (fast-tier code): the library's
    fast tier unless its full tier is already at hand (loaded, or in the disk cache)."""
    with _lock:
        target = _bound.setdefault(element, (cpu, features))
    fast = fast and not _at_hand(*target, (element,))
    addresses = load(*target, (element,), fast)
    ctypes.c_int32.from_address(addresses[THREADS_SYMBOL]).value = max(0, int(threads))
    keep_threads(addresses)
    return addresses[ENTRY[element]]


@contextlib.contextmanager
def resolving(symbols: dict[str, int]):
    """Makes `symbols` (bind_jit's addresses by symbol) what JIT-compiled code loaded inside
    resolves them to: one thread at a time, so that fast-tier code given the fast library
    and full-tier code loading at once on another thread never get each other's."""
    import llvmlite.binding as llvm
    with _resolving:
        for symbol, address in symbols.items():
            llvm.add_symbol(symbol, address)
        yield
