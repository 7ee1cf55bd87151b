"""The CPU backend's code-generation options and its two tiers, and the names of the GEMMs
compiled code calls: what a compile-cache key and a cache hit need, without the compiler.

A call whose code is in the disk cache computes its key from these (`CpuOptions.key()`)
and loads the code (warm.py); importing the lowering, LLVM or the GEMM kernels' IR
generators is left to a compile. backend.py, kernels/choice.py, kernels/driver_ir.py and
parallel.py re-export what they used to define here.
"""

from __future__ import annotations

import os

from ember.backends.cpu import blas_library, host_target

# The GEMM entry points: Ember's own kernels (kernels/driver_ir.py) and numpy's OpenBLAS
# under Ember's names (blas_library.bind, kernels/choice.py retargets calls to them).
ENTRY = {"f32": "ember_sgemm", "f64": "ember_dgemm"}
OPENBLAS = {"f32": "ember_openblas_sgemm", "f64": "ember_openblas_dgemm"}
GEMM_ELEMENTS = ("f32", "f64")  # the GEMM library's element types (kernels/library.py)
GEMM_THREADS_SYMBOL = "ember_gemm_threads"  # its globals (kernels/driver_ir.py, pool_ir.py)
GEMM_KEEP_SYMBOL = "ember_gemm_keep_threads"

BLAS_ENV = "EMBER_BLAS"
GEMM_MODES = ("auto", "ember", "openblas", "loops")
GEMM_ALIASES = {"": "auto", "auto": "auto", "off": "ember", "0": "ember", "ember": "ember",
                "own": "ember", "openblas": "openblas", "on": "openblas", "1": "openblas",
                "loops": "loops"}

MAX_THREADS = 16


def gemm_policy(value: str | None = None) -> str:
    """The GEMM policy `value` names (None: `EMBER_BLAS` from the environment)."""
    raw = os.environ.get(BLAS_ENV, "") if value is None else value
    mode = GEMM_ALIASES.get(raw.strip().lower())
    if mode is None:
        raise ValueError(f"{BLAS_ENV}={raw!r} is not a GEMM policy: use auto (Ember's kernel "
                         "or OpenBLAS, whichever is faster per shape), off (Ember's own "
                         "kernels only), openblas, or loops")
    return mode


def default_threads() -> int:
    """`EMBER_NUM_THREADS`, else the number of CPUs this process may use (capped)."""
    value = os.environ.get("EMBER_NUM_THREADS", "").strip()
    if value:
        try:
            threads = int(value)
        except ValueError:
            raise ValueError(f"EMBER_NUM_THREADS must be a positive integer, got {value!r}") \
                from None
        if threads < 1:
            raise ValueError(f"EMBER_NUM_THREADS must be a positive integer, got {value!r}")
        return min(threads, MAX_THREADS)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_THREADS))


def _init_llvm() -> tuple[str, str]:
    """The host's CPU name and features as LLVM names them (host_target.py: remembered
    on disk, so a cache hit needs no LLVM; a compile checks them with LLVM first)."""
    return host_target.host()[:2]


class CpuOptions:
    """Code-generation options; `None` cpu/features mean the host's. `gemm`: which GEMM float
    matrix products call (kernels/choice.py): "auto" (Ember's own kernels, or numpy's
    OpenBLAS for a shape where it was measured faster), "ember" (own kernels only),
    "openblas", or "loops" (no GEMM calls); `None` means `EMBER_BLAS` from the environment
    (default auto), and auto/openblas where numpy has no OpenBLAS resolve to "ember".
    `threads`: how many threads a large elementwise function is split across (parallel.py);
    `None` means `EMBER_NUM_THREADS`, else the CPUs this process may use.
    `opt_level` is LLVM's optimisation level (0-3) of the IR; `codegen_level` that of its
    code generator (`None`: `opt_level`; 0 selects instructions fast, FastISel);
    `vectorize=False` turns off LLVM's loop vectoriser and unroller and Ember's masked-tail
    loop annotations (the fast tier, FAST_TIER: most of a cold compile's LLVM time).
    `llvm_passes`, a tuple of llvmlite pass names ("sroa", "instruction_combine", ...), runs
    those passes, in order, in place of the `opt_level` pipeline (the fast tier's short list).

    Immutable, compared, hashed and shown by its FIELDS, as a frozen dataclass would be;
    `replace(**changes)` is dataclasses.replace. It is a plain class because a cache hit
    imports it: a dataclass's processing costs that import ~0.3 ms even with its methods
    written out. A subclass with more options adds them to __slots__ and FIELDS and takes
    them, by name, in its __init__ (cuda/emulated.py)."""

    __slots__ = FIELDS = ("cpu", "features", "opt_level", "gemm", "threads", "vectorize",
                          "codegen_level", "llvm_passes")

    def __init__(self, cpu: str | None = None, features: str | None = None,
                 opt_level: int = 3, gemm: str | None = None, threads: int | None = None,
                 vectorize: bool = True, codegen_level: int | None = None,
                 llvm_passes: tuple | None = None):
        init = object.__setattr__
        init(self, "cpu", cpu)
        init(self, "features", features)
        init(self, "opt_level", opt_level)
        init(self, "gemm", gemm)
        init(self, "threads", threads)
        init(self, "vectorize", vectorize)
        init(self, "codegen_level", codegen_level)
        init(self, "llvm_passes", llvm_passes)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}: {type(self).__name__} is "
                             "immutable (use .replace)")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}: {type(self).__name__} is "
                             "immutable")

    def _values(self) -> tuple:
        return tuple([getattr(self, name) for name in self.FIELDS])

    def replace(self, **changes) -> "CpuOptions":
        """These options with `changes` (TypeError for a name that is not a field)."""
        return type(self)(**{**{name: getattr(self, name) for name in self.FIELDS},
                             **changes})

    def __reduce__(self):  # (pickle and copy: __init__ is the only way to set a field)
        return type(self), self._values()

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(" + ", ".join(
            f"{name}={getattr(self, name)!r}" for name in self.FIELDS) + ")"

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def resolved(self) -> "CpuOptions":
        host_cpu, host_features = _init_llvm()
        return self.replace(cpu=self.cpu or host_cpu,
                            features=self.features if self.features is not None
                            else host_features,
                            gemm=_resolve_gemm(self.gemm),
                            threads=self.threads or default_threads(),
                            codegen_level=self.opt_level if self.codegen_level is None
                            else self.codegen_level)

    def key(self) -> tuple:
        r = self.resolved()
        return ("cpu", r.cpu, r.features, r.opt_level, f"gemm={r.gemm}",
                f"threads={r.threads}", f"vectorize={r.vectorize}",
                f"codegen={r.codegen_level}",
                *(() if r.llvm_passes is None else (f"passes={','.join(r.llvm_passes)}",)))


# The two tiers of tiered compilation (runtime/tiers.py): FULL is the default options; FAST
# cuts what a cold compile spends most in and only hot code repays, measured on bench cases
# B and D (thread CPU time of LLVM optimisation + object emission, EMBER_LOG=compile):
# B 147 ms at O3 -> 131 at O1 -> 62 without vectorisation -> ~45 with codegen at 0;
# D 47 -> 39 -> 19 -> ~12. The price is speed: B runs ~14x slower (scalar tanh), D ~1.4x.
# In place of O1's pipeline, three passes (SROA, instcombine, simplifycfg) clean up what
# the MLIR lowering leaves: O1 took 1.05 s of a new user's training loop (an MLP with Adam
# over a dataset, 1.3 MB of LLVM IR) and the list 0.07 s, its first call 2.0 -> 0.93 s, at
# ~16% slower code until the full tier comes; B's and C's fast-tier code runs as fast as
# O1's (B's LLVM optimisation 20 -> 3 ms).
# Values agree with FULL's within float rounding (vectorised reductions may reassociate).
# Under EMBER_BLAS=auto the fast tier's products call numpy's OpenBLAS (Ember's own
# kernels where there is none): it is already built, while Ember's GEMM library costs
# ~1.2 s of CPU at its own fast tier and ~4 s at O3 on a cold cache, and timing the two per
# shape (kernels/choice.py) runs both repeatedly; only hot code repays either, so the full
# tier makes that choice. Case D's cold first call: ~1.7 s -> ~0.2 s.
FULL_TIER: dict = {}
FAST_TIER = {"opt_level": 0, "vectorize": False, "codegen_level": 0,
             "llvm_passes": ("sroa", "instruction_combine", "simplify_cfg")}


def tier_options(tier: str) -> CpuOptions:
    """The options of compilation tier `tier` ("fast" or "full"; runtime/tiers.py)."""
    if tier != "fast":
        return CpuOptions(**FULL_TIER)
    return CpuOptions(**FAST_TIER, gemm="openblas" if gemm_policy() == "auto" else None)


def _resolve_gemm(gemm: str | None) -> str:
    mode = gemm_policy(gemm)
    if mode in ("auto", "openblas") and not blas_library.available():
        return "ember"
    return mode
