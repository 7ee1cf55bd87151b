"""Big buffers without page faults: a caching allocator for compiled code and its outputs.

A fresh large buffer costs a page fault per 4 KiB page on first write (glibc maps every
allocation over its mmap threshold afresh and unmaps it on free); on a VM a fault costs
microseconds, so a fused pass over 40 MB spent more time faulting its output in than
computing it. This allocator keeps big blocks instead:

* `ember_pool_malloc(size)`: below `MIN_BYTES`, libc's malloc. Otherwise the size rounds up
  to a multiple of 2 MiB and a cached block of that size (up to a quarter more) is handed
  out again; if none, a new block is mapped 2 MiB-aligned with `madvise(MADV_HUGEPAGE)`
  (transparent huge pages where the kernel allows them: 512x fewer faults).
* `ember_pool_free(p)`: a block it handed out goes back to the cache; anything else (not
  2 MiB-aligned, or not in its table) is libc's and goes to libc's free.
* The cache is bounded (`EMBER_BLOCK_CACHE_MB`, default min(1 GiB, RAM/8)): a freed block
  that would exceed it evicts other cached blocks first, else is unmapped. When mapping
  fails (memory pressure) every cached block is unmapped and the mapping retried; at exit
  the cache is emptied. `release()` empties it on request.

The allocator is native code (LLVM IR in block_cache_ir.py, loaded once per process) so
that compiled code calls it without the GIL, from any thread; a spin lock guards its
table of `SLOTS` blocks (a full table falls back to libc). Compiled functions reach it
through `TABLE`: `route` makes their malloc and free calls through its two pointers (the
JIT's code only; AOT libraries keep libc's, backends/cpu/aot), which are libc's until the
allocator is loaded, and its from then on. It is loaded by the first big array `empty`
makes, and with the first code that calls malloc through the table (`for_code`) where
that is cheap: the disk cache keeps it as a shared library too (shared.py), which a warm
start loads with a `dlopen` (~0.3 ms) where compiling it needs LLVM (~70 ms to import).
Python gets outputs from it through `empty` (results.OutputBuffers): the array's base owns the
block and gives it back when the last view of it dies, so a result the caller keeps stays
valid and the next call gets another block.

Linux only (mmap flags, huge pages); elsewhere `available()` is False and nothing routes here.
"""

from __future__ import annotations

import _ctypes
import atexit
import ctypes
import functools
import os
import re
import sys
import threading

import numpy as np

from ember.backends.cpu.block_cache_ir import (FREE, GLOBALS, HUGE, MALLOC, MIN_BYTES, SLOTS,
                                               ir_text)

TABLE = "ember_jit_allocator"  # [malloc, free] of compiled functions (`route`)
# the pointer to TABLE that compiled code reads: a symbol MCJIT resolves (`bind_mcjit`) and
# a shared library defines itself, filled when it is loaded (shared.load_code), so code
# loaded either way calls the process's one table
SLOT = TABLE + ".slot"
JIT_MALLOC, JIT_FREE = "ember_jit_malloc", "ember_jit_free"  # their wrappers calling it

__all__ = ["HUGE", "MIN_BYTES", "TABLE", "available", "cached_bytes", "empty",
           "free_function", "live_blocks", "pool", "release", "route", "set_limit", "table",
           "table_address", "bind_mcjit", "uses", "JIT_MALLOC", "JIT_FREE", "SLOT"]


def available() -> bool:
    """Whether this host gets the allocator (Linux: its mmap flags and madvise)."""
    return sys.platform.startswith("linux")


def default_limit() -> int:
    """The cache's bound in bytes: `EMBER_BLOCK_CACHE_MB` if set (0: keep nothing), else
    min(1 GiB, physical memory / 8)."""
    value = os.environ.get("EMBER_BLOCK_CACHE_MB", "").strip()
    if value:
        try:
            mb = int(value)
        except ValueError:
            mb = -1
        if mb < 0:
            raise ValueError(f"EMBER_BLOCK_CACHE_MB must be a number of MiB >= 0, got "
                             f"{value!r}")
        return mb << 20
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        memory = 8 << 30
    return min(1 << 30, memory // 8)


_SYMBOLS = (MALLOC, FREE, "ember_pool_release")  # the allocator's functions


class _Pool:
    """The compiled allocator of this process: its code (kept for the life of the process:
    blocks and compiled code refer to its functions) and ctypes views."""

    def __init__(self, code):
        self.code = code
        self.addresses = {name: code.get_function_address(name) for name in _SYMBOLS}
        self.malloc = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t)(
            self.addresses[MALLOC])
        self.free = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(self.addresses[FREE])
        self.release = ctypes.CFUNCTYPE(None)(self.addresses["ember_pool_release"])
        at = {name: code.get_global_value_address(name) for name in GLOBALS}
        self._lock = ctypes.c_int32.from_address(at["ember_pool_lock"])
        self._cached = ctypes.c_int64.from_address(at["ember_pool_cached"])
        self._limit = ctypes.c_int64.from_address(at["ember_pool_limit"])
        self._slots = (ctypes.c_int64 * (3 * SLOTS)).from_address(at["ember_pool_slots"])
        self._limit.value = default_limit()

    def after_fork(self) -> None:
        self._lock.value = 0  # a thread of the parent may have held it


def _key() -> str:
    """The allocator's entry in the compile cache: generic code for the host's architecture
    (nothing here is worth its features), named without asking LLVM."""
    from ember.backends.cpu.cache import cache_key
    return cache_key("block-cache", ir_text(), sys.platform, os.uname().machine)


def _entry() -> tuple[bytes, dict] | None:
    """The allocator's entry in the disk cache (its object, and `meta["shared"]` its
    shared library where it linked), or None."""
    from ember.backends.cpu.cache import disk_cache
    entry = disk_cache().load(_key())
    return entry if entry is not None and entry[1].get("library") == "block-cache" else None


def _library(entry: tuple[bytes, dict] | None):
    """The shared library of `entry`, loaded for good (memory freed at interpreter exit
    calls into it), or None: no entry or no library in it, or it does not load here. One
    that loads without the allocator's symbols is discarded (a compile rebuilds it)."""
    from ember.backends.cpu.shared import SharedCode
    library = entry[1].get("shared") if entry is not None else None
    if not library:
        return None
    try:
        code = SharedCode(library, permanent=True)
    except OSError:
        return None
    if all(map(code.get_function_address, _SYMBOLS)) and \
            all(map(code.get_global_value_address, GLOBALS)):
        return code
    from ember.backends.cpu.cache import disk_cache
    disk_cache().discard(_key(), "the allocator's library lacks its symbols")
    return None


def _code():
    """The allocator's code: its shared library from the disk cache (a `dlopen`, ~0.3 ms,
    no LLVM); else its cached object through MCJIT; else compiled by LLVM (~15 ms), linked
    (where the cache can keep the library for the next process) and stored, and loaded as
    that library where it loads, else through MCJIT."""
    entry = _entry()
    code = _library(entry)
    if code is not None:
        return code
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_default_triple().create_target_machine(
        opt=1, reloc="pic", codemodel="small")
    if entry is not None:
        obj = entry[0]
    else:
        from ember.backends.cpu.cache import disk_cache
        from ember.backends.cpu.linking import link
        module = llvm.parse_assembly(ir_text())
        module.verify()
        obj = machine.emit_object(module)
        disk = disk_cache()
        library = link(obj) if _writable(disk.directory) else None
        disk.store(_key(), obj, {"library": "block-cache"}, library)
        code = _library((obj, {"shared": library}))
        if code is not None:
            return code
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return engine


def _writable(directory: str | None) -> bool:
    """Whether the disk cache can keep an entry in `directory` (or create it there)."""
    while directory and not os.path.isdir(directory):
        directory = os.path.dirname(directory)
    return bool(directory) and os.access(directory, os.W_OK)


_pool_lock = threading.Lock()
_pool: _Pool | None = None


def pool() -> _Pool:
    """The allocator, loaded on first use (`_code`); from then on compiled code's malloc
    and free are its (`table`)."""
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _install(_Pool(_code()))
    return _pool


def for_code() -> None:
    """Loads the allocator for code that calls malloc through `TABLE` (as it is loaded),
    where that is cheap: its library is in the disk cache, or LLVM is loaded already (a
    process that compiles). Its intermediates of `MIN_BYTES` or more then come from cached
    blocks, faulted in once (bench case D: ~700 page faults a call before). A warm start
    without the library keeps libc's until a big array is made (LLVM's import: ~70 ms)."""
    if _pool is not None or not available():
        return
    try:
        default_limit()
    except ValueError:  # said where a big array needs the allocator (`empty`)
        return
    if "llvmlite.binding" in sys.modules:
        pool()
        return
    with _pool_lock:
        if _pool is None:
            code = _library(_entry())
            if code is not None:
                _install(_Pool(code))


def _install(loaded: _Pool) -> None:
    """Makes `loaded` the allocator (under `_pool_lock`)."""
    global _pool
    functions = table()
    functions[1] = loaded.addresses[FREE]  # first: it also frees libc's blocks
    _pool = loaded  # free_function() is its before any block of it exists
    functions[0] = loaded.addresses[MALLOC]


_table = None
_table_lock = threading.Lock()


def table():
    """`TABLE`, the malloc and free that compiled functions call (`route`): libc's until
    the allocator is loaded, then its. One per process, reached through `SLOT`; a free of
    a libc block by the allocator goes to libc, so code may allocate before the switch and
    free after it."""
    global _table
    if _table is None:
        with _table_lock:
            if _table is None:
                _table = (ctypes.c_void_p * 2)(_libc("malloc"), _libc("free"))
    return _table


def _libc(name: str) -> int:
    """The address of libc's `name`, looked up in the process's global scope (the handle
    ctypes.pythonapi holds: a ctypes.CDLL(None) defines a class, ~0.05 ms of a warm start
    whose code allocates)."""
    return _ctypes.dlsym(ctypes.pythonapi._handle, name)


def table_address() -> int:
    """The address of `TABLE` (what a shared library's `SLOT` is set to)."""
    return ctypes.addressof(table())


_slot = None


def bind_mcjit() -> None:
    """Makes `SLOT` resolvable by MCJIT (a pointer to `TABLE`, process-wide, once)."""
    global _slot
    if _slot is None:
        address = table_address()  # first: table() takes the lock too
        with _table_lock:
            if _slot is None:
                import llvmlite.binding as llvm
                slot = ctypes.c_void_p(address)
                llvm.add_symbol(SLOT, ctypes.addressof(slot))
                _slot = slot


def loaded() -> bool:
    return _pool is not None


def free_function():
    """The free that releases memory compiled code allocated: the allocator's once it is
    loaded (it passes libc's blocks on to libc), else libc's."""
    return _pool.free if _pool is not None else _libc_free()


@functools.lru_cache(maxsize=1)
def _libc_free():
    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_libc("free"))


def release() -> None:
    """Unmaps every cached block (blocks in use stay)."""
    if _pool is not None:
        _pool.release()


def cached_bytes() -> int:
    """Bytes the cache holds (blocks not in use)."""
    return _pool._cached.value if _pool is not None else 0


def live_blocks() -> int:
    """Blocks handed out and not yet given back."""
    if _pool is None:
        return 0
    return sum(1 for i in range(SLOTS) if _pool._slots[3 * i + 2] == 1)


def set_limit(nbytes: int) -> int:
    """Sets the cache's bound (evicting nothing at once); returns the previous one."""
    p = pool()
    old, p._limit.value = p._limit.value, int(nbytes)
    return old


class _Block:
    """A block of the allocator, given back when the last array over it goes (numpy makes
    an array's base the first non-array object: every view keeps this one)."""

    __slots__ = ("_pointer", "_pool", "__array_interface__", "__weakref__")

    def __init__(self, pointer: int, nbytes: int, owner: _Pool):
        self._pointer = pointer
        self._pool = owner  # the code that frees it lives while the block does
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "version": 3,
                                    "data": (pointer, False)}

    def __del__(self):
        self._pool.free(self._pointer)


def empty(shape, dtype) -> np.ndarray:
    """An uninitialised C-contiguous array over a block of the allocator (`np.empty` where
    it is not available or the array is small)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < MIN_BYTES or not available():
        return np.empty(shape, dtype)
    p = pool()
    pointer = p.malloc(nbytes)
    if not pointer:
        raise MemoryError(f"Unable to allocate {nbytes} bytes for an array with shape "
                          f"{tuple(shape)} and data type {dtype}")
    raw = np.asarray(_Block(pointer, nbytes, p))
    return np.ndarray(shape, dtype, buffer=raw)


_DECLARATION = re.compile(r"^declare [^\n]*@(malloc|free)\([^\n]*\n", re.MULTILINE)
_CALL = re.compile(r"@(malloc|free)\(")
_WRAPPERS = f"""
@"{SLOT}" = external global ptr

define internal ptr @{JIT_MALLOC}(i64 %size) {{
  %t = load ptr, ptr @"{SLOT}"
  %f = load ptr, ptr %t
  %p = call ptr %f(i64 %size)
  ret ptr %p
}}

define internal void @{JIT_FREE}(ptr %p) {{
  %t = load ptr, ptr @"{SLOT}"
  %at = getelementptr [2 x ptr], ptr %t, i64 0, i64 1
  %f = load ptr, ptr %at
  call void %f(ptr %p)
  ret void
}}
"""


def route(llvm_ir: str) -> str:
    """A compiled function's LLVM IR with its malloc and free called through `TABLE` (by
    two small wrappers appended to it); unchanged where it calls neither or the allocator
    is not available."""
    if not available() or not _CALL.search(llvm_ir):
        return llvm_ir
    text = _DECLARATION.sub("", llvm_ir)
    text = _CALL.sub(lambda m: f"@{JIT_MALLOC if m.group(1) == 'malloc' else JIT_FREE}(", text)
    return text + _WRAPPERS


def uses(code: bytes | str) -> bool:
    """Whether compiled code calls through `TABLE` (so loading it needs `table()`)."""
    return (TABLE.encode() if isinstance(code, bytes) else TABLE) in code


def _after_fork() -> None:
    global _pool_lock, _table_lock  # a thread of the parent may have held them
    _pool_lock, _table_lock = threading.Lock(), threading.Lock()
    if _pool is not None:
        _pool.after_fork()


os.register_at_fork(after_in_child=_after_fork)
atexit.register(release)
