"""Matrix products call a well-kept BLAS: the OpenBLAS that numpy already loads.

Why a BLAS, and why this one: `convert-linalg-to-loops` turns `linalg.matmul` into a naive
triple loop (about 1.6 s for the 256x784x1024x1024x10 MLP forward here, 300x numpy). Tiling
and vectorising in MLIR to OpenBLAS's level (packing, register blocking per ISA, threads)
is a project of its own; numpy's wheels ship OpenBLAS (`numpy.libs/libscipy_openblas64_*`,
its kernels picked per CPU at load time, threaded, maintained by the OpenBLAS and
scipy-openblas projects) and every ember process has numpy loaded, so calling it costs no
new dependency and gives numpy's own speed. OpenBLAS reads `OPENBLAS_NUM_THREADS`,
`OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE` when numpy loads it, so ember's products run with
whatever kernel and thread count numpy got.

With `CpuOptions.blas`, the backend runs two passes: `ember-prepare-blas` on tensors
(transposes folded into the products, each product its own zero fill) and, after
bufferization, `ember-linalg-to-blas`, which turns each large float product into a call of
`@ember_sgemm`/`@ember_dgemm` (the ILP64 `cblas_sgemm` signature; see that pass).

Finding the library: the shared objects this process has mapped (`/proc/self/maps`, where
numpy's import already put it), then the `numpy.libs` folder next to numpy; the first one
exporting an ILP64 pair (`scipy_cblas_sgemm64_`, or `cblas_sgemm64_` of a 64_-suffixed
OpenBLAS) wins. If none is found, or `EMBER_DISABLE_BLAS=1`, `available()` is false, the
options resolve to `blas=False` (which is part of every compile-cache key) and every
product keeps the loop lowering: no error.

`bind()` gives the JIT (jit.py) ember's symbol names `@ember_sgemm` / `@ember_dgemm` at the
library's addresses, so generated code and the compile cache do not depend on the library.
An AOT object (`ember-compile --emit=obj`) that multiplies float matrices therefore needs
them at link time: rename the references to an ILP64 CBLAS, e.g. numpy's (checked with gcc
and a C driver):

    objcopy --redefine-sym ember_sgemm=scipy_cblas_sgemm64_ \\
            --redefine-sym ember_dgemm=scipy_cblas_dgemm64_ f.o f_blas.o
    cc main.c f_blas.o -L.../numpy.libs -l:libscipy_openblas64_-<hash>.so

(or link a two-line C shim defining ember_sgemm/ember_dgemm). Compile with
`EMBER_DISABLE_BLAS=1` for an object with no external calls but malloc/free/memset.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import glob
import os
from typing import Optional

from ember.passes.transforms.linalg_to_blas import SYMBOLS

DISABLE_ENV = "EMBER_DISABLE_BLAS"
# ILP64 CBLAS (sgemm, dgemm) names, in the order they are looked for.
CANDIDATES = (("scipy_cblas_sgemm64_", "scipy_cblas_dgemm64_"),
              ("cblas_sgemm64_", "cblas_dgemm64_"))


@dataclasses.dataclass(frozen=True)
class Library:
    path: str
    names: tuple[str, str]       # the (sgemm, dgemm) symbols in the library
    addresses: tuple[int, int]


def _candidate_paths() -> list[str]:
    paths = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                fields = line.split(maxsplit=5)
                if len(fields) == 6 and "blas" in os.path.basename(fields[5].strip()).lower():
                    paths.append(fields[5].strip())
    except OSError:
        pass
    try:
        import numpy
        folder = os.path.dirname(os.path.dirname(os.path.abspath(numpy.__file__)))
        for sub in ("numpy.libs", os.path.join("numpy", ".libs")):
            paths += sorted(glob.glob(os.path.join(folder, sub, "*blas*.so*")))
    except ImportError:
        pass
    return list(dict.fromkeys(p for p in paths if os.path.isfile(p)))


@functools.lru_cache(maxsize=1)
def _find() -> Optional[Library]:
    for path in _candidate_paths():
        try:
            lib = ctypes.CDLL(path)  # already loaded by numpy: the same handle
        except OSError:
            continue
        for names in CANDIDATES:
            try:
                fns = [getattr(lib, n) for n in names]
            except AttributeError:
                continue
            return Library(path, names,
                           tuple(ctypes.cast(fn, ctypes.c_void_p).value for fn in fns))
    return None


def library() -> Optional[Library]:
    """The BLAS ember calls, or None (none found, or `EMBER_DISABLE_BLAS=1`)."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        return None
    return _find()


def available() -> bool:
    return library() is not None


_bound: set = set()


def bind() -> bool:
    """Makes `ember_sgemm`/`ember_dgemm` resolvable by the JIT (process-wide, idempotent);
    false if there is no library to bind them to."""
    lib = library()
    if lib is None:
        return False
    if lib.path not in _bound:
        import llvmlite.binding as llvm_binding
        for symbol, address in zip(SYMBOLS.values(), lib.addresses):
            llvm_binding.add_symbol(symbol, address)
        _bound.add(lib.path)
    return True
