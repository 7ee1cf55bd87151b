"""numpy's OpenBLAS, which the JIT may call for a matrix product of a shape where it was
measured faster than Ember's own kernel (kernels/choice.py).

numpy's wheels ship OpenBLAS (`numpy.libs/libscipy_openblas64_*`, kernels picked per CPU at
load time, threaded) and every Ember process has numpy loaded, so calling it costs no new
dependency. OpenBLAS reads `OPENBLAS_NUM_THREADS`, `OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE`
when numpy loads it, so its products run with whatever kernel and thread count numpy got.
An AOT library never calls it: it links Ember's own kernels (kernels/).

Finding the library: the shared objects this process has mapped (`/proc/self/maps`, where
numpy's import already put it), then the `numpy.libs` folder next to numpy; the first one
exporting an ILP64 pair (`scipy_cblas_sgemm64_`, or `cblas_sgemm64_` of a 64_-suffixed
OpenBLAS) wins. If none is found, `available()` is false and the GEMM policy resolves to
Ember's own kernels (backend.CpuOptions).

`bind()` gives the JIT the names `@ember_openblas_sgemm` / `@ember_openblas_dgemm` at the
library's addresses, so generated code and the compile cache do not depend on the library.
"""

from __future__ import annotations

import _ctypes
import ctypes
import functools
import os
from typing import Optional

# ILP64 CBLAS (sgemm, dgemm) names, in the order they are looked for.
CANDIDATES = (("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_"),
              ("cblas_sgemm64_", "cblas_dgemm64_"))


class Library:
    """The `path` of a library, its (sgemm, dgemm) symbols (`names`) and their `addresses`.
    (A plain class: a dataclass costs a cache hit ~1 ms to define, a namedtuple ~0.1 ms.)"""
    __slots__ = ("path", "names", "addresses")

    def __init__(self, path: str, names: tuple[str, str], addresses: tuple[int, int]):
        self.path, self.names, self.addresses = path, names, addresses

    def __repr__(self) -> str:
        return f"Library(path={self.path!r}, names={self.names!r}, addresses={self.addresses!r})"


def _mapped_paths() -> list[str]:
    """The libraries with "blas" in their names that this process has mapped."""
    paths = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                if "blas" not in line:
                    continue
                fields = line.split(maxsplit=5)
                if len(fields) == 6 and "blas" in os.path.basename(fields[5].strip()).lower():
                    paths.append(fields[5].strip())
    except OSError:
        pass
    return paths


def _folder_paths() -> list[str]:
    """The libraries with "blas" in their names in the `numpy.libs` folder next to numpy."""
    try:
        import glob
        import numpy
        folder = os.path.dirname(os.path.dirname(os.path.abspath(numpy.__file__)))
        return [p for sub in ("numpy.libs", os.path.join("numpy", ".libs"))
                for p in sorted(glob.glob(os.path.join(folder, sub, "*blas*.so*")))]
    except ImportError:
        return []


def _loaded_folder_paths() -> list[str]:
    """The libraries with "blas" in their names in the `numpy.libs` folder next to numpy
    that this process has loaded (numpy's import loads its OpenBLAS): a listing of that
    folder costs less than reading /proc/self/maps (~0.6 ms at a warm start)."""
    import numpy
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(numpy.__file__))),
                          "numpy.libs")
    try:
        names = sorted(n for n in os.listdir(folder) if "blas" in n.lower() and ".so" in n)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if _handle(os.path.join(folder, n), True)]


def _handle(path: str, loaded: bool = False) -> Optional[int]:
    """The library at `path` opened (`dlopen`, never closed: as ctypes.CDLL leaves it, whose
    class per library costs more than the lookups), or None; with `loaded`, only if the
    process has loaded it already (it is not loaded here: the same handle)."""
    try:
        return _ctypes.dlopen(path, os.RTLD_NOLOAD if loaded else ctypes.DEFAULT_MODE)
    except OSError:
        return None


def _open(path: str, handle: Optional[int] = None) -> Optional[Library]:
    """The ILP64 pair of the library at `path` (opened as `handle`, if given), or None."""
    handle = _handle(path) if handle is None else handle
    if handle is None:
        return None
    for names in CANDIDATES:
        try:
            return Library(path, names, tuple(_ctypes.dlsym(handle, n) for n in names))
        except OSError:  # (dlsym: "undefined symbol")
            continue
    return None


@functools.lru_cache(maxsize=1)
def _find() -> Optional[Library]:
    """The first library that has the ILP64 pair: numpy's, loaded from `numpy.libs`, then
    the others mapped, the folder's only if none of them has it (its glob costs a cache hit
    ~1 ms)."""
    tried = set()
    for paths in (_loaded_folder_paths, _mapped_paths, _folder_paths):
        for path in paths():
            if path in tried or not os.path.isfile(path):
                continue
            tried.add(path)
            found = _open(path)
            if found is not None:
                return found
    return None


def library() -> Optional[Library]:
    """numpy's OpenBLAS, or None if none was found."""
    return _find()


def available() -> bool:
    return library() is not None


_bound: set = set()


def bind() -> bool:
    """Makes `ember_openblas_sgemm`/`ember_openblas_dgemm` resolvable by the JIT
    (process-wide, idempotent);
    false if there is no library to bind them to."""
    lib = library()
    if lib is None:
        return False
    if lib.path not in _bound:
        import llvmlite.binding as llvm_binding
        from ember.backends.cpu.options import OPENBLAS
        for symbol, address in zip(OPENBLAS.values(), lib.addresses):
            llvm_binding.add_symbol(symbol, address)
        _bound.add(lib.path)
    return True
