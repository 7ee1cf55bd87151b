"""The process's one-off set-up, done when `ember` is imported rather than inside the first
traced call: the MLIR context traced functions are built in (its dialects loaded), LLVM's
native target and the host CPU's name and features, the BLAS library, and the versions and
compiler fingerprint in every compile-cache key. About 10 ms, so that a first call that
finds its code in the disk cache costs only the trace, a cache read and the run.
"""

from __future__ import annotations


def prepare() -> None:
    from ember.backends.cpu.backend import CpuBackend
    from ember.backends.cpu.cache import versions
    from ember.dialects.ember.irdl import default_context
    default_context()
    CpuBackend()
    versions()
