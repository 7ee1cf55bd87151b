"""Process-wide switches (the only module that holds global settings; see STYLE.md)."""

from __future__ import annotations

import os
import threading

_lock = threading.Lock()
_run_eagerly = False


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Makes every em.function run its Python body on each call, untraced (for debugging)."""
    global _run_eagerly
    with _lock:
        _run_eagerly = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    """Whether em.functions currently run their Python bodies eagerly."""
    return _run_eagerly


_verify_passes = False


def set_pass_verification(enabled: bool) -> None:
    """Verifies the IR after every optimisation pass of every trace (slower; tests use it)."""
    global _verify_passes
    _verify_passes = bool(enabled)


def verify_passes() -> bool:
    return _verify_passes


# Bounds of the caches of compiled code (see set_compile_cache_limits).
EXECUTABLES_PER_TRACE = 64
_executables_per_trace = EXECUTABLES_PER_TRACE


def set_compile_cache_limits(per_trace: int | None = None, shared: int | None = None) -> None:
    """Bounds how much compiled code a process keeps.

    Args:
      per_trace: how many input-shape specialisations each trace (concrete function)
        keeps compiled, least recently compiled or called through the general path first
        out (default 64). An evicted specialisation is compiled again, from the disk
        cache, if its shapes come back.
      shared: how many executables the process-wide compile cache keeps alive beyond
        those some trace still holds, most recently used first (default 64).

    Traces themselves are kept as TensorFlow keeps them: for as long as the Function
    lives, except those keyed on an object (compared by weak reference), which go when
    the object goes. JAX bounds its dispatch cache instead (an LRU of 4096 entries shared
    by all jitted functions); Ember's bounds are smaller because each entry owns its own
    machine code and output buffers, and reloading one from the disk cache takes
    milliseconds.
    """
    global _executables_per_trace
    for name, value, least in (("per_trace", per_trace, 1), ("shared", shared, 0)):
        if value is not None and (type(value) is not int or value < least):
            raise ValueError(f"set_compile_cache_limits: {name} must be an int >= {least}, "
                             f"got {value!r}")
    if per_trace is not None:
        _executables_per_trace = per_trace
    if shared is not None:
        from ember.backends.cpu.cache import memory_cache
        memory_cache.resize(shared)


def executables_per_trace() -> int:
    """How many input-shape specialisations each trace keeps compiled."""
    return _executables_per_trace


# What a Function does when it cannot be compiled and runs on the interpreter instead.
FALLBACK_POLICIES = ("warn", "error", "silent")
_fallback = "warn"


def set_fallback(policy: str) -> None:
    """Chooses what happens when an em.function cannot be compiled and would run on the
    reference interpreter (string tensors, ops without a CPU lowering, ...).

    Args:
      policy: "warn" (the default: a one-time `InterpreterFallbackWarning` naming the op),
        "error" (an `InterpreterFallbackError` naming the op and its line, raised by the
        call) or "silent" (run on the interpreter without a word). Host work by design
        (`em.py_function`, `em.print` to a Python stream, `jit_compile=False`) runs on the
        interpreter under every policy and never warns or errors.

    Raises:
      ValueError: if `policy` is not one of "warn", "error", "silent".
    """
    global _fallback
    if not isinstance(policy, str) or policy not in FALLBACK_POLICIES:
        raise ValueError(f"em.config.set_fallback: policy must be one of "
                         f"{', '.join(repr(p) for p in FALLBACK_POLICIES)}, got {policy!r}")
    _fallback = policy


def get_fallback() -> str:
    """The current interpreter-fallback policy: "warn", "error" or "silent"."""
    return _fallback


# Tiered compilation (runtime/tiers.py; tier 0: tier0.py): which tier a first call runs,
# and after how many calls at the fast tier a specialisation is recompiled at the full tier.
TIERS = ("auto", "fast", "full", "interp")
TIER_ENV = "EMBER_TIER"
TIER_THRESHOLD = 10
_tier: str | None = None  # None: EMBER_TIER (default "auto"), read at each compile
_tier_threshold = TIER_THRESHOLD


def set_tier(tier: str | None) -> None:
    """Chooses the compilation tier of functions compiled from now on (runtime/tiers.py).

    Args:
      tier: "auto" (the default: run a shape specialisation's first calls on the
        interpreter where tier 0 may run it, else compile the fast tier first; tier 0's
        second call queues the fast tier's compile in the background, and a specialisation
        called `tier_threshold()` times is recompiled at the full tier in the background),
        "fast" (LLVM O1 without vectorisation, never recompiled), "full" (O3 at once),
        "interp" (tier 0 only: functions tier 0 may run, tiers.py, run on the interpreter
        at every call, compiled only for a call that raises there; others as "auto"), or
        None to follow the environment variable EMBER_TIER again.

    Raises:
      ValueError: if `tier` is none of these.
    """
    global _tier
    if tier is not None and (not isinstance(tier, str) or tier not in TIERS):
        raise ValueError(f"em.config.set_tier: tier must be one of "
                         f"{', '.join(repr(t) for t in TIERS)} or None, got {tier!r}")
    _tier = tier


def get_tier() -> str:
    """The tier in force: set_tier's, else EMBER_TIER's, else "auto". ValueError naming
    EMBER_TIER if it holds anything else."""
    if _tier is not None:
        return _tier
    value = os.environ.get(TIER_ENV, "auto").strip().lower() or "auto"
    if value not in TIERS:
        raise ValueError(f"{TIER_ENV}={os.environ[TIER_ENV]!r} is not a compilation tier: "
                         f"set it to one of {', '.join(TIERS)} (or unset it for auto)")
    return value


TIER0_ENV = "EMBER_TIER0"


def tier0_enabled() -> bool:
    """Whether "auto" runs first calls on tier 0 (runtime/tier0.py): unless the environment
    variable EMBER_TIER0 is "off" (or "0"); the test suite turns it off to test compiled
    code. ValueError naming EMBER_TIER0 if it holds anything but on/off/1/0."""
    value = os.environ.get(TIER0_ENV, "on").strip().lower() or "on"
    if value not in ("on", "off", "1", "0"):
        raise ValueError(f"{TIER0_ENV}={os.environ[TIER0_ENV]!r}: set it to on or off (or "
                         f"unset it for on)")
    return value in ("on", "1")


def set_tier_threshold(calls: int) -> None:
    """After how many calls at the fast tier a shape specialisation is recompiled at the
    full tier in the background (default 10; 1 recompiles after the first call).

    Raises:
      ValueError: if `calls` is not an int >= 1.
    """
    global _tier_threshold
    if type(calls) is not int or calls < 1:
        raise ValueError(f"em.config.set_tier_threshold: calls must be an int >= 1, "
                         f"got {calls!r}")
    _tier_threshold = calls


def tier_threshold() -> int:
    """The calls at the fast tier after which the full tier is compiled (set_tier_threshold)."""
    return _tier_threshold
