"""Compiled code as a shared library, loaded without LLVM: what a disk-cache hit runs.

An entry of the compile cache (cache.py) holds the relocatable object LLVM emitted and,
where this works, the same code linked into a shared library (`ld -shared`: no C compiler,
no start files, a few milliseconds). Loading that library is a `dlopen` through ctypes, so
a process whose first call finds its code on disk never imports llvmlite (~70 ms) nor
creates an MCJIT engine; only an object that does not link or load this way goes through
MCJIT (jit.load_object), as before.

What the library may need from the process: the symbols its object leaves undefined are
resolved by the dynamic loader in the process's global scope, so only code that calls
nothing but libc, libm and libpthread (the error runtime's `_setjmp`/`longjmp`,
`pthread_*specific`, `malloc`/`free`, math functions) loads this way. A symbol MCJIT
would get from Ember at run time (a GEMM kernel, numpy's OpenBLAS, a host callback) makes
the `dlopen` fail with an OSError: `link` then stores no library (it tries one in the
compiling process), and a process where it fails anyway loads the object through MCJIT.
Symbols the library defines bind to its own definitions (`-Bsymbolic`): a function named
like a libc one (`exp`) calls itself, as in MCJIT. Each library is opened `RTLD_LOCAL`,
so its symbols are seen by no other library, and closed when the last object calling
into it goes (`SharedCode`). Where temporary files cannot be mapped executable (a
`noexec` /tmp), loading fails with OSError and MCJIT runs the object.
"""

from __future__ import annotations

import _ctypes
import ctypes
import itertools
import os
import shutil
import sys
import tempfile
from typing import Optional

from ember.backends.cpu import native

LD_ENV = "EMBER_LD"  # the linker to use; "" turns shared libraries off


def linker() -> Optional[str]:
    """The linker's path (`$EMBER_LD`, else `ld` on PATH), or None: then code is loaded
    through MCJIT only."""
    if not sys.platform.startswith("linux"):
        return None
    name = os.environ.get(LD_ENV, "ld")
    return shutil.which(name) if name else None


def link(obj: bytes) -> Optional[bytes]:
    """The shared library of object file `obj`, or None if there is no linker, linking
    fails or the library does not load in this process (it needs symbols only Ember
    provides at run time): the object alone is cached then."""
    ld = linker()
    if ld is None or not obj:
        return None
    import subprocess  # only where code is compiled: a warm start runs no linker
    with tempfile.TemporaryDirectory(prefix="ember-link-") as work:
        source, out = os.path.join(work, "code.o"), os.path.join(work, "code.so")
        with open(source, "wb") as f:
            f.write(obj)
        command = [ld, "-shared", "-Bsymbolic", "-z", "noexecstack", "-z", "now",
                   "--hash-style=gnu", "-o", out, source]
        try:
            done = subprocess.run(command, capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        with open(out, "rb") as f:
            library = f.read()
    try:
        SharedCode(library)
    except OSError:
        return None
    return library


_names = itertools.count()  # a path the process never dlopens twice


class SharedCode:
    """A shared library loaded from its bytes (`library`, from `link`), with the lookups
    jit.Executable makes of an execution engine. The library is closed when this object
    goes: whoever can call into its code keeps it alive. OSError if it does not load.

    The bytes are written to a temporary file, opened and unlinked at once (the mapping
    keeps the file). Its name is new to the process (a counter), and the dynamic loader
    only returns an already loaded library for a name it has seen, or for a file still
    mapped: so this is always the library just written."""

    def __init__(self, library: bytes):
        fd, path = tempfile.mkstemp(prefix=f"ember-code-{next(_names)}-", suffix=".so")
        try:
            try:
                view = memoryview(library)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            self._lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        finally:
            os.unlink(path)
        self._close = _ctypes.dlclose  # held: at exit, module globals may be gone

    def _address(self, name: str) -> int:
        try:
            return ctypes.cast(self._lib[name], ctypes.c_void_p).value or 0
        except AttributeError:
            return 0

    def get_function_address(self, name: str) -> int:
        """The address of function `name`, 0 if the library does not define it."""
        return self._address(name)

    def get_global_value_address(self, name: str) -> int:
        """The address of global variable `name`, 0 if the library does not define it."""
        return self._address(name)

    def __del__(self):
        lib = getattr(self, "_lib", None)
        if lib is not None:
            self._close(lib._handle)


def load_code(backend, obj: bytes, library: bytes | None = None):
    """The code of a cache entry, loaded: its shared library (`library`) through the
    dynamic loader, which needs no LLVM; else, or if the library does not load here (it
    needs a symbol that only MCJIT resolves), its object through MCJIT (jit.load_object,
    with `backend`'s target)."""
    if library:
        try:
            code = SharedCode(library)
        except OSError:
            pass
        else:
            native.bind(code)
            return code
    from ember.backends.cpu.jit import load_object
    return load_object(backend, obj)
