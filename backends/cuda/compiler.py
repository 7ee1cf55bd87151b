"""The CUDA backend as the runtime sees it (backends.Backend): specialise as the CPU
backend does (backends/cpu/compiler.py), lower through backend.py's stages to PTX and the
host code that launches it, and load both through the CUDA driver (runtime.py).

Selecting it (`em.function(..., backend="cuda")`) needs a GPU: backends/__init__.py
registers driver.probe as its requirement, so without one the decorator raises
GpuUnavailableError at once; its stages (`ember-compile --target cuda`) work anywhere."""

from __future__ import annotations

from typing import Sequence

from ember.backends.base import NotCompilable
from ember.backends.cuda.backend import CudaBackend, CudaOptions
from ember.dialects.ember.types import TensorType


class CudaCompiler:
    name = "cuda"
    compiles = True

    def __init__(self, options: CudaOptions | None = None):
        self.options = options or CudaOptions()

    def stages(self, instrument: dict | None = None, **options) -> CudaBackend:
        chip = options.pop("chip", None)
        options = {k: v for k, v in options.items() if v is not None}
        if options:
            raise NotCompilable(f"the CUDA backend has no option {', '.join(options)} "
                                "(its options: chip)", NotCompilable.Reason.BAD_ARGUMENTS)
        return CudaBackend(CudaOptions(chip=chip) if chip else self.options, instrument)

    def compile(self, module_text, symbol: str, arg_types: Sequence[TensorType], *,
                source_key: str | None = None, pipeline: str = "ember-optimize"):
        """The executable of `@symbol` for `arg_types`, for the GPU of each call
        (runtime.DeviceDispatch); GpuUnavailableError without a GPU."""
        from ember.backends.cuda import runtime
        runtime.require_device()
        return runtime.DeviceDispatch(lambda device: runtime.compile_function(
            module_text, symbol, arg_types, self.options, source_key=source_key,
            pipeline=pipeline, device=device))
