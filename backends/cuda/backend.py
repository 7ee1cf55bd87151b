"""The CUDA backend's compiler as an ordered list of stages, each printable and resumable:

    ember ──linalg──▶ linalg on tensors (the CPU backend's stage: shared)
          ──bufferized──▶ memrefs (no GEMM calls: products stay linalg ops)
          ──mapped──▶ tiled `scf.parallel` nests mapped to blocks × threads
          ──gpu──▶ `gpu.launch_func` on the host, kernels outlined into `gpu.module`s
          ──nvvm──▶ kernels in NVVM, the host in the LLVM dialect
          ──binary──▶ each `gpu.module` a `gpu.binary` holding its PTX (libdevice linked)
          ──ptx──▶ the PTX text of every kernel module
          ──host──▶ the host side's LLVM IR (the PTX embedded, launches as mgpu* calls)

`mapped` is where the GPU's tiling and index arithmetic live; the same module, lowered
for the CPU instead (backends/cuda/emulated.py), runs those loop nests here, so a machine
without a GPU checks them numerically. Everything after `mapped` is upstream MLIR: the
PTX is produced, and `ptxas` checks it, on any machine; running it needs a GPU
(backends/cuda/runtime.py).
"""

from __future__ import annotations

import dataclasses

from mlir import ir

from ember.backends.base import StagedLowering
from ember.backends.cpu.backend import LINALG, BackendError, bufferized_pipeline, run_stage
from ember.backends.cpu.translate import to_llvm_ir

# A GPU reduces in parallel trees (warp shuffles), not in the CPU's serial loops: its sums
# need no blocks (blocked_sum.py), which would only add kernels.
GPU_LINALG = LINALG.replace("convert-ember-to-linalg",
                            "convert-ember-to-linalg{blocked-sums=false}")

STAGES = ("linalg", "bufferized", "mapped", "gpu", "nvvm", "binary", "ptx", "host")

# The NVIDIA targets Ember generates for: compute capability -> the PTX ISA version that
# LLVM 22 needs for it, kept within what ptxas 12.x accepts (DESIGN.md §10).
CHIPS = {"sm_70": 60, "sm_75": 63, "sm_80": 70, "sm_86": 71, "sm_89": 78, "sm_90": 80}
DEFAULT_CHIP = "sm_80"

# Every loop nest is mapped to blocks × threads by Ember's passes. Products go first: f16
# ones on tensor cores (ember-gpu-mma: a gpu.launch, which ember-gpu-mma-emulate makes
# loops for the CPU), the rest register-tiled nests (ember-gpu-tile-matmul), both already
# mapped, so the passes after them leave them alone. Then (passes/transforms/gpu_map*.py)
# reductions over one combiner a block per output reducing over its threads (gpu.all_reduce:
# warp shuffles and shared memory), other reductions a thread per output, other nests tiled
# per their own rank with the contiguous dim on thread_x, and what is left and touches
# memory a 1 × 1 kernel (the host only reads what it branches on: buffers are managed
# memory). Copies become loops (ember-copies-to-linalg), so kernels, not host copies.
# No canonicalize after mapping: it would merge each tile loop into its parent again.
MAPPED = ("builtin.module(inline,convert-bufferization-to-memref,ember-copies-to-linalg,"
          "func.func(ember-gpu-mma,ember-gpu-tile-matmul,ember-gpu-map-reductions,"
          "convert-linalg-to-parallel-loops,"
          "ember-gpu-map{{threads-1d={threads} threads-x={x} threads-y={y}}}),cse)")
# Before outlining: bool buffers as bytes (memref-to-llvm asserts on i1), libm calls as
# libdevice's (ember-gpu-libdevice), integer powers as functions; constants and index
# arithmetic sink into the launches (not kernel parameters).
GPU = ("builtin.module(ember-widen-bool-memrefs,ember-gpu-libdevice,convert-math-to-funcs,"
       "func.func(convert-parallel-loops-to-gpu),"
       "lower-affine,canonicalize,"
       "gpu-launch-sink-index-computations,gpu-kernel-outlining,ember-gpu-device-allocs,cse)")
# Complex arithmetic is expanded inside the kernels; each kernel requires exactly its
# launch's block size (ember-gpu-launch-bounds: PTX .reqntid).
NVVM = ("builtin.module(nvvm-attach-target{{chip={chip} features=+ptx{ptx} O={opt}}},"
        "gpu.module(convert-complex-to-standard,convert-gpu-to-nvvm,convert-complex-to-llvm,"
        "canonicalize,cse,reconcile-unrealized-casts),ember-gpu-launch-bounds,"
        "convert-bufferization-to-memref,convert-linalg-to-loops,convert-scf-to-cf,"
        "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-math-to-llvm,"
        "convert-arith-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,gpu-to-llvm,"
        "reconcile-unrealized-casts)")
BINARY = "builtin.module(gpu-module-to-binary{format=isa})"


@dataclasses.dataclass(frozen=True)
class CudaOptions:
    """Code-generation options: `chip` the compute capability (`sm_80`, `sm_90`, ... see
    CHIPS), `opt_level` LLVM's for the kernels, `tiles` the threads per block of a mapped
    loop nest of 2 or more dims along its last two (y, x: the innermost on x; a short
    known dim narrows its side, ember-gpu-map); a 1-D nest gets their product."""

    chip: str = DEFAULT_CHIP
    opt_level: int = 3
    tiles: tuple[int, ...] = (8, 32)

    def __post_init__(self):
        if self.chip not in CHIPS:
            raise ValueError(f"unknown CUDA target {self.chip!r}; targets: "
                             f"{', '.join(CHIPS)} (e.g. --target cuda:sm_90)")
        if not 0 <= self.opt_level <= 3:
            raise ValueError(f"opt_level must be 0..3, not {self.opt_level}")
        threads = 1
        for t in self.tiles:
            threads *= t
        if len(self.tiles) != 2 or any(t < 1 for t in self.tiles) or threads > 1024:
            raise ValueError(f"tiles {self.tiles}: two sizes (y, x), each at least 1, at "
                             "most 1024 threads per block in all")

    @property
    def ptx_version(self) -> int:
        return CHIPS[self.chip]

    def key(self) -> tuple:
        return ("cuda", self.chip, self.opt_level, self.tiles)


def mapped_pipeline(options: CudaOptions) -> str:
    """The mapped stage's pipeline for `options` (its tile sizes)."""
    y, x = options.tiles
    return MAPPED.format(threads=x * y, x=x, y=y)


def parse_target(text: str) -> CudaOptions:
    """`cuda` or `cuda:sm_90` (ember-compile's --target) as options; ValueError otherwise."""
    name, colon, chip = text.partition(":")
    if colon and not chip:
        raise ValueError(f"{text!r} names no chip: give e.g. cuda:sm_90 (chips: "
                         f"{', '.join(CHIPS)})")
    if name not in ("cuda", "gpu"):
        raise ValueError(f"unknown target {text!r}: give cuda or cuda:<chip> "
                         f"(chips: {', '.join(CHIPS)})")
    return CudaOptions(chip=chip or DEFAULT_CHIP)


class CudaBackend(StagedLowering):
    """Compiles ember modules to PTX kernels and the host code that launches them."""

    STAGES = STAGES
    DEFAULT_STOP = "ptx"
    LOG_PREFIX = "cuda "

    def __init__(self, options: CudaOptions | None = None, instrument: dict | None = None):
        self.options = options or CudaOptions()
        self.instrument = dict(instrument or {})

    @staticmethod
    def path_to(stop: str, start: str = "linalg") -> list[str]:
        """The stages run to reach `stop` from `start` (ptx and host both come from
        binary)."""
        chain = list(STAGES[:6]) + ([stop] if stop in ("ptx", "host") else [])
        chain = chain[:chain.index(stop) + 1]
        return chain[chain.index(start):] if start in chain else []

    def make_linalg(self, module: ir.Module) -> ir.Module:
        return self._run(module, "linalg", GPU_LINALG)

    def make_bufferized(self, module: ir.Module) -> ir.Module:
        return self._run(module, "bufferized", bufferized_pipeline(False))

    def make_mapped(self, module: ir.Module) -> ir.Module:
        return self._run(module, "mapped", mapped_pipeline(self.options))

    def make_gpu(self, module: ir.Module) -> ir.Module:
        return self._run(module, "gpu", GPU)

    def make_nvvm(self, module: ir.Module) -> ir.Module:
        o = self.options
        return self._run(module, "nvvm", NVVM.format(chip=o.chip, ptx=o.ptx_version,
                                                     opt=o.opt_level))

    def make_binary(self, module: ir.Module) -> ir.Module:
        return self._run(module, "binary", BINARY)

    def make_ptx(self, module: ir.Module) -> str:
        """The PTX of every kernel module, each after a `// gpu.binary @name` line (a
        comment saying so when there is none)."""
        parts = [f"// gpu.binary @{name}\n{ptx}" for name, ptx in kernel_ptx(module)]
        if not parts and any(op.operation.name == "gpu.module"
                             for op in module.body.operations):
            raise BackendError("the module's kernels are not compiled yet (gpu.module, no "
                               "gpu.binary): lower it to the binary stage first", [])
        if not parts:  # e.g. results that are constants: the host copies them out
            return "// no GPU kernels: nothing in this function needs computing on a device\n"
        return "\n".join(parts)

    def make_host(self, module: ir.Module) -> str:
        """The host side's LLVM IR: each binary a constant, loaded by a global constructor
        (mgpuModuleLoadJIT), each launch mgpuLaunchKernel on a stream (runtime.py)."""
        return to_llvm_ir(module, allowed=("gpu.launch_func", "gpu.binary"))

    def _run(self, module: ir.Module, stage: str, pipeline: str) -> ir.Module:
        return run_stage(module, pipeline, self.instrument,
                         f"the CUDA backend's {stage} stage")


def kernel_ptx(module: ir.Module) -> list[tuple[str, str]]:
    """(name, PTX text) of each `gpu.binary` in `module`, in order."""
    found = []
    for op in module.body.operations:
        op = op.operation
        if op.name != "gpu.binary":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        for obj in ir.ArrayAttr(op.attributes["objects"]):
            text = str(obj)
            start = text.find('assembly = "')
            if start < 0:
                raise BackendError(f"gpu.binary @{name} holds no PTX (format=isa)", [])
            body, i = [], start + len('assembly = "')
            while text[i] != '"':  # the attribute's string, with MLIR's \XX escapes
                if text[i] == "\\":
                    body.append(chr(int(text[i + 1:i + 3], 16)))
                    i += 3
                else:
                    body.append(text[i])
                    i += 1
            found.append((name, "".join(body)))
    return found
