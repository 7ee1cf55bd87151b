"""Shared by the AOT tests: a numpy-only Python to run artifacts in, and the JIT with
Ember's own GEMM kernels (what the library computes, bit for bit)."""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]


def numpy_only_path(tmp: pathlib.Path) -> str:
    """A folder holding only numpy (links to it and its bundled libraries)."""
    site = tmp / "numpy-only"
    if not site.exists():
        site.mkdir()
        package = pathlib.Path(np.__file__).parent
        for path in package.parent.iterdir():
            if path.name == "numpy" or path.name.startswith("numpy.libs"):
                (site / path.name).symlink_to(path)
    return str(site)


def run_clean(tmp: pathlib.Path, code: str, *args: str, cwd=None) -> subprocess.CompletedProcess:
    """Runs `code` in `python -I -S` whose sys.path has the standard library and numpy only
    (no project source, no mlir, no ember); it checks that first."""
    prelude = ("import sys\n"
               f"sys.path.append({numpy_only_path(tmp)!r})\n"
               "for name in ('mlir', 'ember', 'llvmlite'):\n"
               "    try:\n"
               "        __import__(name)\n"
               "    except ImportError:\n"
               "        pass\n"
               "    else:\n"
               "        raise SystemExit(f'{name} is importable in the clean process')\n")
    return subprocess.run([sys.executable, "-I", "-S", "-c", prelude + code, *args],
                          capture_output=True, text=True, cwd=cwd or tmp, timeout=120)


@contextlib.contextmanager
def own_kernels_jit():
    """The JIT with Ember's own GEMM kernels everywhere (EMBER_BLAS=off), as an AOT
    library has them."""
    old = os.environ.get("EMBER_BLAS")
    os.environ["EMBER_BLAS"] = "off"
    try:
        yield
    finally:
        if old is None:
            del os.environ["EMBER_BLAS"]
        else:
            os.environ["EMBER_BLAS"] = old


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
