"""Building the GEMM library for a target CPU: parameters per ISA, MLIR -> LLVM IR -> code.

The library is one module: for f32 and f64, the packing, micro-kernel, blocked loop nest
and slicing of gemm_ir.py (lowered by upstream passes) and the CBLAS entries of driver_ir.py
(added in the LLVM dialect). `llvm_ir(cpu, features)` is its LLVM IR for a target;
`object_code` its position-independent object (what an AOT library links, and what the
JIT's disk cache keeps); `jit_library()` the host's, loaded once per process.
"""

from __future__ import annotations

import functools
import hashlib

from mlir import ir

from ember.backends.cpu.kernels import (direct_ir, dot_ir, dott_ir, driver_ir, gemm_ir,
                                        packing_ir, split_ir)
from ember.backends.cpu.kernels.gemm_ir import Params
from ember.backends.cpu.options import GEMM_ELEMENTS

# Upstream passes only: the library is written in func/scf/arith/math/memref/vector/affine.
PIPELINE = ("builtin.module(lower-affine,convert-scf-to-cf,convert-vector-to-llvm,"
            "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,convert-math-to-llvm,"
            "convert-arith-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,"
            "reconcile-unrealized-casts)")


# CPU names whose features an empty feature string stands for (an AOT target given by name)
AVX512_CPUS = ("x86-64-v4", "skylake-avx512", "cascadelake", "cooperlake", "icelake-server",
               "icelake-client", "tigerlake", "sapphirerapids", "graniterapids", "znver4",
               "znver5")
AVX2_CPUS = ("x86-64-v3", "haswell", "broadwell", "skylake", "alderlake", "raptorlake",
             "meteorlake", "znver1", "znver2", "znver3")


def isa_params(features: str, cpu: str = "") -> tuple[Params, Params]:
    """The (f32, f64) kernel shapes for a target's LLVM feature string (or, when it is
    empty, its CPU name): the register tile fills the vector registers (32 with AVX-512 and
    on AArch64, 16 with AVX2 and SSE) less the NRV vectors of B and one broadcast; blocks
    sized for a 32-48 KiB L1 and a 1-2 MiB L2. With AVX-512, 6 x 64 (NRV 4) measured
    faster than 12 x 32, 8 x 48 and 14 x 32 on this kind of machine (Zen 4): 4 loads of B
    and 6 broadcasts per 24 FMAs; KC 384 was slower than 256 for transposed B."""
    on = {f[1:] for f in features.split(",") if f.startswith("+")}
    if not features:
        on = {"avx512f"} if cpu in AVX512_CPUS else {"avx2", "fma"} if cpu in AVX2_CPUS \
            else {"neon"} if cpu.startswith(("cortex", "neoverse", "apple")) else set()
    if "avx512f" in on:
        lanes, mr, nrv = 16, 6, 4
    elif "avx2" in on and "fma" in on:
        lanes, mr, nrv = 8, 6, 2
    elif "neon" in on:
        lanes, mr, nrv = 4, 8, 3
    else:
        lanes, mr, nrv = 4, 4, 2
    f32 = Params("f32", lanes, mr, nrv, kc=256, mc=mr * (480 // mr), nc=nrv * lanes * 128)
    f64 = Params("f64", lanes // 2, mr, nrv, kc=256, mc=mr * (240 // mr),
                 nc=nrv * lanes // 2 * 128)
    return f32, f64


def mlir_text(params: tuple[Params, ...]) -> str:
    """The library's func-level MLIR for each Params."""
    parts = []
    for i, p in enumerate(params):
        body = "".join(gemm_ir.micro_kernel(p, r) for r in gemm_ir.row_variants(p)) + \
            direct_ir.direct_kernels(p) + direct_ir.direct(p) + dot_ir.dot(p) + \
            dott_ir.dott(p) + \
            packing_ir.packing(p) + gemm_ir.blocked(p) + \
            split_ir.split(p)
        if i:  # one declaration of ember_gemm_cpus
            body = body.replace("  func.func private @ember_gemm_cpus() -> i64\n", "", 1)
        parts.append(body)
    return "module {\n" + "\n".join(parts) + "\n}\n"


ELEMENTS = GEMM_ELEMENTS


@functools.lru_cache(maxsize=16)
def llvm_ir(features: str, cpu: str = "", elements: tuple[str, ...] = ELEMENTS) -> str:
    """The library's LLVM IR for a target with LLVM `features` (and CPU name `cpu`), with
    the GEMMs of `elements` (the JIT loads each on first use: a fifth of a second to two
    seconds of LLVM each)."""
    return llvm_ir_of(tuple(p for p in isa_params(features, cpu) if p.element in elements))


def llvm_ir_of(params: tuple[Params, ...]) -> str:
    """The library's LLVM IR for these kernel shapes (one Params per element type)."""
    from ember.backends.cpu.translate import to_llvm_ir
    from ember.dialects.ember.irdl import default_context
    from ember.passes.pipeline import run_pipeline
    with default_context():
        module = ir.Module.parse(mlir_text(params))
        run_pipeline(module, PIPELINE, verify_each=False)
        # the entries call the lowered functions: parse them into the module's body, in
        # place of the lowered declaration of what the runtime text defines
        defined = ("  llvm.func @ember_gemm_cpus(", "  llvm.func @ember_s_take(",
                   "  llvm.func @ember_d_take(", "  llvm.func @ember_s_give(",
                   "  llvm.func @ember_d_give(", "  llvm.func @free(")
        lowered = "\n".join(line for line in str(module).split("\n")
                            if not line.startswith(defined))
        runtime = driver_ir.COMMON + "".join(driver_ir.driver(p) for p in params)
        module = ir.Module.parse(lowered[:lowered.rindex("}")] + runtime + "}\n")
        return to_llvm_ir(module)


def fingerprint(cpu: str, features: str) -> str:
    """What identifies the library's code for a target (part of cache keys)."""
    text = mlir_text(isa_params(features, cpu)) + "".join(
        driver_ir.driver(p) for p in isa_params(features, cpu))
    return hashlib.sha256(f"{cpu}\0{features}\0{text}".encode()).hexdigest()
