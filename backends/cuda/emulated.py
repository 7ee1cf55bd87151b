"""The CUDA backend's mapped loop nests compiled for, and run on, this machine's CPU:
`em.function(f, backend="cuda-emulated")`.

A machine without a GPU cannot run the PTX, but everything that decides which element
each GPU thread computes is in the `mapped` stage (backend.py), before any GPU op exists:
the tiling of each loop nest into blocks × threads, the guards of ragged edges, the
grid-stride loops, the delinearised block indices, the parallel reductions (each
thread's strided partial from the combiner's identity, combined with the output's old
value), the 1 × 1 kernels of leftover host code. This backend is the CPU backend with that
stage inserted after bufferization: its `scf.parallel` nests run sequentially
(convert-scf-to-cf; a reducing loop folds its threads' partials in order), so the
differential tests against the reference interpreter check that index arithmetic and
those reductions numerically, for every op family, on any machine.

ember-gpu-mma's tensor-core launches (warp-wide `gpu.subgroup_mma_*` ops, which no CPU
lowering knows) run as the same computation on loops (ember-gpu-mma-emulate): their
grid-to-tile indexing is checked, the fragments' layout inside a warp is not.

What it cannot check: what happens after `mapped` — the launch configuration itself,
gpu.all_reduce's warp shuffles and shared memory, barriers, concurrency between threads
(a race shows only on a GPU), NVVM and the PTX (ptxas checks that PTX assembles, a GPU
that it runs: backends/cuda/runtime.py), nor the 16-byte alignment the vector loads and
stores assume (dropped here: numpy arrays need not have it). Products run as the mapped
loop nests, never through the CPU's GEMM kernels, on one thread (no row splitting).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from mlir import ir

from ember.backends.base import NotCompilable
from ember.backends.cpu.backend import CpuBackend, CpuOptions
from ember.backends.cpu.compiler import DEFAULT_PIPELINE, compile_function
from ember.backends.cuda.backend import CudaBackend, CudaOptions
from ember.dialects.ember.types import TensorType

NAME = "cuda-emulated"
# The tensor-core launches ember-gpu-mma writes in the mapped stage, as loops a CPU runs.
EMULATE_LAUNCHES = "builtin.module(ember-gpu-mma-emulate)"


class EmulatedOptions(CpuOptions):
    """The CPU's code-generation options with products as loops on one thread, and the
    CUDA options whose mapped stage is emulated (`cuda`: its tiles shape the nests)."""

    __slots__ = ("cuda",)
    FIELDS = CpuOptions.FIELDS + ("cuda",)

    def __init__(self, cpu: str | None = None, features: str | None = None,
                 opt_level: int = 3, gemm: str | None = "loops", threads: int | None = 1,
                 vectorize: bool = True, codegen_level: int | None = None,
                 llvm_passes: tuple | None = None, cuda: CudaOptions = CudaOptions()):
        super().__init__(cpu, features, opt_level, gemm, threads, vectorize, codegen_level,
                         llvm_passes)
        object.__setattr__(self, "cuda", cuda)

    def key(self) -> tuple:  # never the CPU backend's cache entries
        return (NAME, *self.cuda.key(), *super().key())


class EmulatedBackend(CpuBackend):
    """The CPU backend's stages, `bufferized` followed by the CUDA backend's `mapped`."""

    def __init__(self, options: EmulatedOptions | None = None,
                 instrument: dict | None = None):
        options = options or EmulatedOptions()
        if not isinstance(options, EmulatedOptions):
            raise TypeError(f"{NAME} takes EmulatedOptions, not {type(options).__name__}")
        super().__init__(options, instrument)

    def make_bufferized(self, module: ir.Module) -> ir.Module:
        """The CPU's bufferized stage (no GEMM calls), then the CUDA backend's mapped one:
        the nests the GPU would run, which the CPU's later stages lower sequentially."""
        super().make_bufferized(module)
        cuda = CudaBackend(self.options.cuda, self.instrument)
        cuda.make_mapped(module)
        cuda._run(module, "mapped", EMULATE_LAUNCHES)
        drop_vector_alignment(module)
        return module

    def _run(self, module: ir.Module, stage: str, pipeline: str) -> ir.Module:
        if stage == "llvm":  # the mapped stage's vector loads and stores (the CPU has none)
            pipeline = pipeline.replace("finalize-memref-to-llvm,",
                                        "convert-vector-to-llvm,finalize-memref-to-llvm,")
        return super()._run(module, stage, pipeline)


def drop_vector_alignment(module: ir.Module) -> None:
    """The mapped stage's vector loads and stores promise 16-byte alignment, which the
    GPU's buffers have (cuMemAlloc gives 256); numpy arrays given to the CPU need not
    (a contiguous slice starts anywhere), so here they promise only their element's."""
    found = []
    module.operation.walk(lambda o: (found.append(o.operation) if o.operation.name in (
        "vector.load", "vector.store") else None) or ir.WalkResult.ADVANCE)
    for operation in found:
        if "alignment" in operation.attributes:
            del operation.attributes["alignment"]


class EmulatedCompiler:
    """The `cuda-emulated` backend as the runtime sees it (backends.Backend)."""
    name = NAME
    compiles = True

    def __init__(self, options: EmulatedOptions | None = None):
        self.options = options or EmulatedOptions()

    def compile(self, module_text, symbol: str, arg_types: Sequence[TensorType], *,
                source_key: str | None = None, pipeline: str = DEFAULT_PIPELINE):
        return compile_function(module_text, symbol, arg_types, EmulatedBackend(self.options),
                                source_key=source_key, pipeline=pipeline)

    def stages(self, instrument: dict | None = None, **options) -> EmulatedBackend:
        """Its stages with CPU options (cpu, features, opt_level) and CUDA ones (chip,
        tiles); products stay loops on one thread (no gemm, threads)."""
        options = {k: v for k, v in options.items() if v is not None}
        unknown = sorted(set(options) - {"cpu", "features", "opt_level", "chip", "tiles"})
        if unknown:
            raise NotCompilable(f"the {NAME} backend has no option {', '.join(unknown)} (its "
                                "options: cpu, features, opt_level, chip, tiles)",
                                NotCompilable.Reason.BAD_ARGUMENTS)
        cuda = {k: options.pop(k) for k in ("chip", "tiles") if k in options}
        base = self.options.replace(**options) if options else self.options
        if cuda:
            base = base.replace(cuda=dataclasses.replace(base.cuda, **cuda))
        return EmulatedBackend(base, instrument)
