"""The CPU backend as an ordered list of stages, each printable and resumable.

    ember ──make_linalg──▶ linalg on tensors ──make_bufferized──▶ memrefs ──make_llvm──▶
    LLVM dialect ──make_llvmir──▶ LLVM IR ──make_asm / make_obj / JIT (llvmlite)──▶ native

Each `make_<stage>` takes the previous stage's output (an `ir.Module`, or LLVM IR text for
the last ones) and returns the next, so `ember-compile --emit=<stage>` can stop anywhere
and a stage can resume from a file. Options are a frozen dataclass whose `key()` is part of
every compile-cache key (STYLE.md: every option that changes code is in the key).
"""

from __future__ import annotations

from mlir import ir

from ember.passes.bufferizable import PassFailure
from ember.passes.pipeline import run_pipeline
from ember.passes.transforms.round_to_bf16 import EMULATE
from ember.backends import compile_log
from ember.backends.base import StagedLowering
from ember.backends.cpu import blas_library, host_target, libcalls
from ember.backends.cpu import kernels
from ember.backends.cpu import native_ir, nontemporal
from ember.backends.cpu.interleave import interleave_long_chains, loop_latches
from ember.backends.cpu.kernels import choice
from ember.backends.cpu.options import (FAST_TIER, FULL_TIER, CpuOptions,  # noqa: F401
                                        tier_options)
from ember.backends.cpu import vector_variants
from ember.backends.cpu.translate import to_llvm_ir

STAGES = ("linalg", "bufferized", "llvm", "llvmir", "asm", "obj")

# Each IR stage is one pipeline of upstream and ember passes (DESIGN.md §10), so
# `--print-ir-after-all` and `--timing` show every step, the workarounds included (each
# `ember-*` pass below names the upstream limitation it works around and when it can go).
# ember-dce first: a dead op whose lowering calls a function (fastmath.call) would otherwise
# survive as a generic without results, which upstream cannot erase or lower.
LINALG = ("builtin.module(ember-dce,convert-ember-to-linalg,canonicalize,"
          "linalg-fuse-elementwise-ops,cse)")
# Buffers allocated inside loops and branches are freed by the ownership-based deallocation.
# With BLAS, products are prepared on tensors and become calls after bufferization.
# Arguments are the caller's arrays: read-only (an in-place update copies them first).
BUFFERIZED = ("builtin.module(ember-copy-repeated-results,ember-drop-empty-concat-operands,"
              "ember-unrank-dynamic-results,ember-readonly-arguments,{prepare}"
              "one-shot-bufferize{{bufferize-function-boundaries "
              "allow-return-allocs-from-loops function-boundary-type-conversion="
              "identity-layout-map}},ember-copy-repeated-results,"
              "buffer-results-to-out-params{{hoist-static-allocs modify-public-functions}},"
              "canonicalize,ownership-based-buffer-deallocation,canonicalize,"
              "buffer-deallocation-simplification,bufferization-lower-deallocations,cse,"
              "canonicalize{blas})")
_BLAS_CALLS = ",ember-linalg-to-blas{{min-macs={min_macs}}},canonicalize,cse"
# convert-bufferization-to-memref first: the clones ownership-based deallocation returns (a
# result of dynamic shape that aliases an argument) become alloc + copy, before copies
# become loops. bf16 is computed in f32 and rounded in software (no denormal flush).
# convert-math-to-funcs: integer powers (math.ipowi) become a small function (no libm has
# one). convert-complex-to-standard expands complex ops into arith/math on their parts
# (before math is lowered); convert-complex-to-llvm lowers what remains (create, re, im).
# ember-outline-loop-nests: a function of many loop nests becomes one function per nest
# (LLVM's loop passes cost more than linearly in the size of a function).
LLVM = ("builtin.module(convert-bufferization-to-memref,ember-copies-to-linalg,"
        "convert-linalg-to-loops,ember-outline-loop-nests,convert-scf-to-cf,"
        "expand-strided-metadata,lower-affine,convert-complex-to-standard,"
        f"ember-widen-bool-memrefs,{EMULATE},ember-round-to-bf16,"
        "convert-math-to-funcs,finalize-memref-to-llvm,convert-math-to-llvm,"
        "convert-math-to-libm,convert-complex-to-llvm,convert-arith-to-llvm,"
        "convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)")
# with the vector loops nontemporal.py writes (large elementwise outputs, full tier)
LLVM_VECTOR = LLVM.replace("finalize-memref-to-llvm,",
                           "convert-vector-to-llvm,finalize-memref-to-llvm,")


def bufferized_pipeline(blas: bool) -> str:
    """The bufferized stage's pipeline, with the GEMM passes when `blas` (products become
    calls of @ember_sgemm/@ember_dgemm)."""
    from ember.passes.transforms import linalg_to_blas  # the lowering's: not on a cache hit
    return BUFFERIZED.format(prepare="ember-prepare-blas," if blas else "",
                             blas=_BLAS_CALLS.format(min_macs=linalg_to_blas.MIN_MACS)
                             if blas else "")


class CpuBackend(StagedLowering):
    """Compiles ember modules for this machine's CPU (`lower` runs its stages)."""

    def __init__(self, options: CpuOptions | None = None, instrument: dict | None = None):
        self.requested = options or CpuOptions()  # as given: resolved again if the host
        self.options = self.requested.resolved()  # record was wrong (host_target.verify)
        # MLIR's instrumentation of every stage's pipeline, as Pipeline.run takes it
        # (print_ir_after_all, print_ir_after, timing): ember-compile's flags
        self.instrument = dict(instrument or {})

    STAGES = STAGES
    DEFAULT_STOP = "llvmir"

    @staticmethod
    def path_to(stop: str, start: str = "linalg") -> list[str]:
        """The stages run to reach `stop` from `start` (asm and obj both come from
        llvmir)."""
        chain = list(STAGES[:4]) + [stop] if stop in ("asm", "obj") else list(STAGES[:4])
        chain = chain[:chain.index(stop) + 1]
        return chain[chain.index(start):] if start in chain else []

    def make_linalg(self, module: ir.Module) -> ir.Module:
        """ember -> linalg/tensor/arith/math on tensors; elementwise chains fused."""
        return self._run(module, "linalg", LINALG)

    def make_bufferized(self, module: ir.Module) -> ir.Module:
        """tensors -> memrefs; results of static shape become caller-allocated output
        arguments, results of dynamic shape are returned unranked (the caller frees). With
        `options.gemm` other than "loops", float matrix products become calls of
        @ember_sgemm/@ember_dgemm (Ember's kernels, kernels/; transposes of their inputs
        folded into the calls' flags first), some retargeted to OpenBLAS (kernels/choice.py)."""
        self._run(module, "bufferized", bufferized_pipeline(self.options.gemm != "loops"))
        if self.options.gemm in ("auto", "openblas"):
            with module.context:
                choice.retarget(module, self.options.gemm,
                                lambda shapes: self._chooser().timings_of(shapes))
        return module

    def _chooser(self) -> "choice.Chooser":
        """Times Ember's kernels against OpenBLAS for this machine and thread count."""
        o = self.options
        key = (o.cpu, o.features, o.threads)
        chooser = _CHOOSERS.get(key)
        if chooser is None:
            lib = blas_library.library()
            chooser = choice.Chooser(
                lambda element: kernels.bind_jit(o.cpu, o.features, o.threads, element),
                dict(zip(("f32", "f64"), lib.addresses)),
                (o.cpu, o.features, o.threads, lib.path, kernels.fingerprint(o.cpu, o.features)))
            _CHOOSERS[key] = chooser
        return chooser

    def make_llvm(self, module: ir.Module) -> ir.Module:
        """memrefs and loops -> the LLVM dialect (bool buffers stored as bytes), with the
        runtime by which native code raises errors (native.py)."""
        avx512 = "+avx512f" in (self.options.features or "").split(",")
        streaming = 0
        if self.options.vectorize:  # sin/cos branch on huge arguments per vector
            with module.context, ir.Location.unknown():
                vector_variants.add(module, self.options.features, masked=avx512)
                streaming = nontemporal.add(module, self.options.features)
        self._run(module, "llvm", LLVM_VECTOR if streaming else LLVM)
        with module.context, ir.Location.unknown():
            native_ir.install(module)  # checked malloc, error sites, what the entry needs
            if self.options.vectorize and "+avx512f" in (self.options.features or "").split(","):
                fold_loop_tails(module)  # masked tails are cheap with mask registers
            if self.options.vectorize:  # latency-bound loop bodies (interleave.py)
                interleave_long_chains(module, _FOLD_TAIL)
            mark_buffers_noalias(module)
        return module

    def _run(self, module: ir.Module, stage: str, pipeline: str) -> ir.Module:
        return run_stage(module, pipeline, self.instrument, f"the CPU backend's {stage} stage")

    def make_llvmir(self, module: ir.Module) -> str:
        return to_llvm_ir(module)

    def target_machine(self, reloc: str = "default"):
        llvm = host_target.binding()  # loaded by what compiles, not by a cache hit
        target = llvm.Target.from_default_triple()
        return target.create_target_machine(cpu=self.options.cpu,
                                            features=self.options.features,
                                            opt=self.options.codegen_level, reloc=reloc,
                                            codemodel="jitdefault" if reloc == "default"
                                            else "small")

    def optimize_llvm(self, llvm_ir: str, machine=None):
        """Parses and optimises LLVM IR at the configured level; returns the llvmlite module."""
        llvm = host_target.binding()
        mod = llvm.parse_assembly(libcalls.provide(llvm_ir))
        mod.verify()
        machine = machine or self.target_machine()
        tuning = llvm.create_pipeline_tuning_options(speed_level=self.options.opt_level)
        if not self.options.vectorize:
            tuning.loop_vectorization = tuning.slp_vectorization = False
            tuning.loop_unrolling = tuning.loop_interleaving = False
        builder = llvm.create_pass_builder(machine, tuning)
        if self.options.llvm_passes is None:
            builder.getModulePassManager().run(mod, builder)
        else:  # (the fast tier's short list: options.py)
            passes = llvm.create_new_module_pass_manager()
            for name in self.options.llvm_passes:
                add = getattr(passes, f"add_{name}_pass", None)
                if add is None:
                    raise ValueError(f"CpuOptions.llvm_passes: llvmlite has no pass {name!r} "
                                     "(its names are those of add_<name>_pass)")
                add()
            passes.run(mod, builder)
        if vector_variants.present(llvm_ir):
            vector_variants.finish(mod, llvm, builder)
        return mod

    def make_asm(self, llvm_ir: str) -> str:
        machine = self.target_machine()
        return machine.emit_assembly(self.optimize_llvm(llvm_ir, machine))

    def make_obj(self, llvm_ir: str) -> bytes:
        machine = self.target_machine(reloc="pic")
        return machine.emit_object(self.optimize_llvm(llvm_ir, machine))


_CHOOSERS: dict = {}

_FOLD_TAIL = "#llvm.loop_annotation<vectorize = <predicateEnable = true>>"


def fold_loop_tails(module: ir.Module) -> int:
    """Asks LLVM to vectorise each loop with masked (predicated) iterations instead of a
    scalar (and a second, narrower vector) copy of the body for the remainder: with AVX-512
    mask registers the same speed for about a third less code to optimise and generate
    (bench case B's 50-step body); `make_llvm` asks only for
    targets that have them. Loops are found by their back edges: after scf-to-cf every
    loop's latch branches to a block that comes before it. Returns how many."""
    annotation = ir.Attribute.parse(_FOLD_TAIL)
    count = 0
    for _, term in loop_latches(module):
        term.attributes["loop_annotation"] = annotation
        count += 1
    return count


def mark_buffers_noalias(module: ir.Module) -> None:
    """Marks the aligned pointer of every buffer argument `noalias` (in MLIR's calling
    convention a buffer is `allocated ptr, aligned ptr, offset, sizes..., strides...`).

    The contract this states: an output buffer overlaps no other argument. The runtime keeps
    it: outputs are freshly allocated, or recycled only when nothing else refers to them
    (results.OutputBuffers), and variables' new values come back in outputs; inputs are only
    read, so inputs sharing memory break nothing. An AOT caller must keep it too. In
    return LLVM drops the run-time overlap checks and the scalar copy of each loop that
    they guard (bench case B: half the machine code, less time in LLVM, the same speed)."""
    for fn in module.body.operations:
        fn = fn.operation
        if fn.name != "llvm.func" or not fn.regions[0].blocks:
            continue
        args = list(fn.regions[0].blocks[0].arguments)
        attrs = list(fn.attributes["arg_attrs"]) if "arg_attrs" in fn.attributes else \
            [ir.DictAttr.get({}) for _ in args]
        i, marked = 0, False
        while i + 1 < len(args):
            if str(args[i].type) == "!llvm.ptr" and str(args[i + 1].type) == "!llvm.ptr":
                entries = {a.name: a.attr for a in ir.DictAttr(attrs[i + 1])}
                entries["llvm.noalias"] = ir.UnitAttr.get()
                attrs[i + 1] = ir.DictAttr.get(entries)
                i, marked = i + 2, True
            else:
                i += 1
        if marked:
            fn.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)


def run_stage(module: ir.Module, pipeline: str, instrument: dict, what: str) -> ir.Module:
    """Runs a backend stage's `pipeline` on `module` in place, with the MLIR instrumentation
    `instrument` (Pipeline.run's options) and the compile log's; BackendError naming
    `what` if a pass fails."""
    instruments = tuple(instrument.get("instruments", ())) + compile_log.instruments()
    try:
        run_pipeline(module, pipeline, verify_each=False,
                     **{**instrument, "instruments": instruments})
    except PassFailure as e:
        raise BackendError(f"{what} failed: {e}", e.diagnostics) from None
    return module


class BackendError(PassFailure):
    """A stage of a backend's lowering failed; carries MLIR's diagnostics."""
