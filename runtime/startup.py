"""The process's one-off set-up, done when `ember` is imported rather than inside the first
traced call: the MLIR context traced functions are built in (its dialects loaded), LLVM's
native target and the host CPU's name and features, the BLAS library, the versions and
compiler fingerprint in every compile-cache key, and the passes of the default pipeline
(every em.function parses it). About 12 ms, so that a first call that finds its code in
the disk cache costs only the trace, a cache read and the run.
"""

from __future__ import annotations


def prepare() -> None:
    from ember.backends.cpu.backend import CpuBackend
    from ember.backends.cpu.cache import versions
    from ember.dialects.ember.irdl import default_context
    from ember.passes.pipeline import Pipeline
    from ember.runtime.function import DEFAULT_PIPELINE
    default_context()
    CpuBackend()
    versions()
    Pipeline.parse(DEFAULT_PIPELINE)
