"""Compiled code as a shared library, loaded without LLVM: what a disk-cache hit runs.

An entry of the compile cache (cache.py) holds the relocatable object LLVM emitted and,
where this works, the same code linked into a shared library (`ld -shared`: no C compiler,
no start files, a few milliseconds). Loading that library is a `dlopen` through ctypes, so
a process whose first call finds its code on disk never imports llvmlite (~70 ms) nor
creates an MCJIT engine; only an object that does not link or load this way goes through
MCJIT (jit.load_object), as before.

What the library may need from the process: the symbols its object leaves undefined are
resolved by the dynamic loader in the process's global scope, so libc, libm and libpthread
(the error runtime's `_setjmp`/`longjmp`, `pthread_*specific`, `malloc`/`free`, math
functions). The symbols MCJIT gets from Ember at run time have a thunk each in the library
(x86-64): `sym: jmp *sym.slot(%rip)`, its pointer `sym.slot` filled by `load_code`
before anything runs, from `provided()` (Ember's GEMM kernels, through kernels.bind_jit as
MCJIT's code gets them; numpy's OpenBLAS, found through ctypes). The GEMM library itself
is a shared library in its cache entry too (`load_library`). Any other symbol (a
host callback, bound by llvmlite) makes the `dlopen` fail with an OSError: linking.link
then stores no library (it tries one in the compiling process), and a process where
loading fails anyway loads the object through MCJIT. (Linking is linking.py: a cache hit
imports this module alone.)
Symbols the library defines bind to its own definitions (`-Bsymbolic`): a function named
like a libc one (`exp`) calls itself, as in MCJIT. Each library is opened `RTLD_LOCAL`,
so its symbols are seen by no other library, and closed when the last object calling
into it goes (`SharedCode`). Where temporary files cannot be mapped executable (a
`noexec` /tmp), loading fails with OSError and MCJIT runs the object.
"""

from __future__ import annotations

import _ctypes
import ctypes
import functools
import itertools
import os
import sys
from typing import Callable, Optional

from ember.backends.cpu import host_target, native

LD_ENV = "EMBER_LD"  # the linker to use; "" turns shared libraries off


def linker() -> Optional[str]:
    """The linker's path (`$EMBER_LD`, else `ld` on PATH), or None: then code is loaded
    through MCJIT only."""
    if not sys.platform.startswith("linux"):
        return None
    name = os.environ.get(LD_ENV, "ld")
    if not name:
        return None
    import shutil  # (with bz2 and lzma: ~2 ms of a warm start, which never links)
    return shutil.which(name)


SLOT = ".slot"  # `<symbol>.slot`: the pointer the thunk of `<symbol>` jumps through


def _kernel(element: str, options) -> int:
    from ember.backends.cpu import kernels
    return kernels.bind_jit(options.cpu, options.features, options.threads, element,
                            fast=not options.vectorize)


def _openblas(element: str, options) -> int:
    from ember.backends.cpu import blas_library
    lib = blas_library.library()
    if lib is None:  # MCJIT's loader says so (jit.bind_gemm)
        raise OSError("no OpenBLAS library in this process")
    return dict(zip(("f32", "f64"), lib.addresses))[element]


def provided() -> dict[str, Callable]:
    """The symbols compiled code may call that Ember provides at run time, each with how
    its address is found for a backend's (resolved) options."""
    from ember.backends.cpu.options import ENTRY, OPENBLAS  # not the kernels' IR generators
    out = {symbol: functools.partial(_kernel, e) for e, symbol in ENTRY.items()}
    out.update({symbol: functools.partial(_openblas, e) for e, symbol in OPENBLAS.items()})
    return out


def pointers() -> dict[str, Callable]:
    """The pointers compiled code reads that Ember sets at run time (no thunk: the library
    defines each, `load_code` fills it), with how their values are found: the block
    cache's table of malloc and free (block_cache.SLOT)."""
    from ember.backends.cpu import block_cache
    return {block_cache.SLOT: lambda options: block_cache.table_address()}


_names = itertools.count()  # a path the process never dlopens twice
SHM = "/dev/shm"
_shm_refused = False  # a library that /dev/shm would not load loaded from /tmp


@functools.lru_cache(maxsize=1)
def _shm_usable() -> bool:
    """Whether /dev/shm is a folder this process may write and whose files may be mapped
    executable (its file system not mounted noexec, as containers often mount it)."""
    try:
        return os.access(SHM, os.W_OK | os.X_OK) and \
            not os.statvfs(SHM).f_flag & os.ST_NOEXEC
    except (OSError, AttributeError):  # (no such folder; ST_NOEXEC: Linux)
        return False


def _folders() -> list[str]:
    """Where a library's bytes are written to be loaded, in order: $TMPDIR if set; else
    /dev/shm where usable, then /tmp. /dev/shm is a tmpfs: creating and removing a file
    there costs ~0.08 ms less than on a disk's /tmp, once per library a warm start loads
    (bench case D loads three)."""
    tmpdir = os.environ.get("TMPDIR")
    if tmpdir:
        return [tmpdir]
    return [SHM, "/tmp"] if _shm_usable() and not _shm_refused else ["/tmp"]


def _new_file(prefix: str, suffix: str, folder: str) -> tuple[int, str]:
    """A new file of this process only (O_EXCL, mode 0600), open for writing: in `folder`,
    else where `tempfile` finds room (its module, and its first search of the temporary
    folders by writing a file, cost a warm start ~1.5 ms)."""
    for _ in range(16):
        path = os.path.join(folder, f"{prefix}{os.getpid()}-{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), path
        except FileExistsError:
            continue
        except OSError:
            break
    import tempfile
    return tempfile.mkstemp(prefix=prefix, suffix=suffix)


def _load_copy(library: bytes, folder: str, mode: int) -> int:
    """The handle of `library` written to a new file in `folder`, opened and unlinked."""
    fd, path = _new_file(f"ember-code-{next(_names)}-", ".so", folder)
    try:
        try:
            view = memoryview(library)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        return _ctypes.dlopen(path, mode)  # (a ctypes.CDLL: a class per library)
    finally:
        os.unlink(path)


class SharedCode:
    """A shared library loaded from its bytes (`library`, from linking.link), with the lookups
    jit.Executable makes of an execution engine. The library is closed when this object
    goes: whoever can call into its code keeps it alive. OSError if it does not load.

    The bytes are written to a temporary file (`_folders`: where one does not load, the
    next), opened and unlinked at once (the mapping keeps the file). Its name is new to the
    process (a counter), and the dynamic loader only returns an already loaded library for
    a name it has seen, or for a file still mapped: so this is always the library just
    written."""

    def __init__(self, library: bytes, permanent: bool = False):
        """`permanent`: the library stays mapped until the process exits, even after this
        object goes (RTLD_NODELETE), for code that is called while the interpreter shuts
        down (the block cache's allocator: arrays freed then call its `free`)."""
        global _shm_refused
        mode = os.RTLD_NOW | os.RTLD_LOCAL | (os.RTLD_NODELETE if permanent else 0)
        folders = _folders()
        for folder in folders:
            try:
                self._handle = _load_copy(library, folder, mode)
                break
            except OSError:
                if folder == folders[-1]:
                    raise
        if folder == "/tmp" and folders[0] == SHM:  # /dev/shm refuses code: not again
            _shm_refused = True
        self._close = _ctypes.dlclose  # held: at exit, module globals may be gone

    def _address(self, name: str) -> int:
        try:
            return _ctypes.dlsym(self._handle, name)
        except OSError:  # "undefined symbol"
            return 0

    def get_function_address(self, name: str) -> int:
        """The address of function `name`, 0 if the library does not define it."""
        return self._address(name)

    def get_global_value_address(self, name: str) -> int:
        """The address of global variable `name`, 0 if the library does not define it."""
        return self._address(name)

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None:
            self._close(handle)


def load_code(backend, obj: bytes | None, library: bytes | None = None):
    """The code of a cache entry, loaded: its shared library (`library`) through the
    dynamic loader, which needs no LLVM; else, or if the library does not load here (it
    needs a symbol that only MCJIT resolves), its object through MCJIT (jit.load_object,
    with `backend`'s target); None if the library does not load and `obj` is None (an
    entry read without its object: DiskCache.load's check_object). `backend`: a
    CpuBackend, or the resolved CpuOptions the code was compiled with (a cache hit:
    warm.py)."""
    options = getattr(backend, "options", backend)
    from ember.backends.cpu import block_cache
    # before the code runs: its big intermediates from the cache (the library names every
    # symbol its object does)
    if block_cache.uses(obj if obj is not None else library):
        block_cache.for_code()
    if library:
        try:
            code = SharedCode(library)
            for symbol, find in provided().items():
                slot = code.get_global_value_address(symbol + SLOT)
                if slot:  # before anything can call the thunk
                    ctypes.c_void_p.from_address(slot).value = find(options)
            for symbol, find in pointers().items():
                at = code.get_global_value_address(symbol)
                if at:  # before anything can read it
                    ctypes.c_void_p.from_address(at).value = find(options)
        except OSError:
            pass
        else:
            native.bind(code)
            return code
    if obj is None:
        return None
    from ember.backends.cpu.backend import CpuBackend
    from ember.backends.cpu.jit import load_object
    return load_object(backend if isinstance(backend, CpuBackend) else CpuBackend(options), obj)


def load_library(key: str) -> Optional[SharedCode]:
    """The GEMM library cached under `key` (kernels.library_object) as a shared library,
    linked once and kept in its cache entry; None if the cache has no such library or it
    does not link or load here (kernels.load then loads the object through MCJIT)."""
    from ember.backends.cpu.cache import disk_cache
    disk = disk_cache()
    entry = disk.load(key, check_object=False)  # (its object: read where it has no library)
    if entry is None or entry[1].get("library") != "gemm":
        return None
    obj, meta = entry
    library = meta.pop("shared", None)
    if library is None:
        from ember.backends.cpu.linking import link
        library = link(obj)
        if library is None:
            return None
        disk.store(key, obj, meta, library)
    try:
        return SharedCode(library)
    except OSError:
        return None
