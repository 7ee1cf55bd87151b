"""Tiered compilation: a first call runs on the interpreter (tier 0) or compiles fast, a hot
specialisation is recompiled at the full tier in the background and swapped in, as
JavaScript engines and the JVM do.

Per shape specialisation of a trace (the executor's key), under `em.config.get_tier()`:

  0. "auto" (the default): if a cache (memory or disk) has the full tier's code, run it at
     once; else the fast tier's, if cached. (No cache is looked at when this host has no
     record in the cache directory, backends/cpu/host_target.remembered: no process
     compiled for it there, and looking would load LLVM.) Else, if tier 0 may run the
     function (tier0.py: pure float ops without loops or callbacks, Ember's pipeline),
     the calls run the trace on the reference interpreter, and the end of the second one
     (tier0.COMPILE_AT_CALL) queues the fast tier's compile on the background thread; when
     it is done it is swapped in (the tier-0 calls made so far counted, step 2). Where each
     tier-0 call took HOT_SECONDS or more, the full tier is compiled instead, and swapped
     in for tier 0 directly (the fast tier could be slower than the interpreter's numpy
     kernels, and such calls repay the full compile within a few). A tier-0 call that
     raises is run again on the fast tier, compiled then and there, so errors are the
     compiled code's. If that background compile fails, tier 0 stays (a TierWarning).
  1. Else compile the fast tier (backends/cpu/backend.py tier_options: LLVM O1
     without vectorisation or unrolling, instructions selected at -O0; products on numpy's
     OpenBLAS, which needs no compiling, or where there is none on Ember's own GEMM at the
     library's fast tier while its full tier is not built yet, kernels.bind_jit) and run it.
  2. Every call of fast-tier code is counted and timed; the call that reaches
     `em.config.tier_threshold()` (default 10), or brings the time spent in them to
     HOT_SECONDS, queues a full-tier compile on the one background thread and returns at
     once. Nothing waits for that compile.
  3. When the full tier is ready, the executor swaps it in under its lock (Executor.swap)
     and tells the holders of the fast tier's code (the Function's fast path) to drop it;
     the next call runs the full tier. Calls already running finish on the code they
     started with: they hold it.
  4. If the full-tier compile fails, the fast tier stays, and a `TierWarning` naming the
     function says why (once per trace).
  "fast" compiles the fast tier and never recompiles; "full" compiles the full tier at once
  (what Ember did before tiers); "interp" is "auto" whose tier 0 neither looks in the
  caches nor queues a compile (every call interpreted even where a cache has the code, but
  for a call that raises there). Both compiled tiers are
  cached on disk under their own keys (the options are part of the compile key): a process
  that finds the full tier never compiles the fast one. `swaps()` lists the latest swaps.
  em.aot compiles ahead of time and has no tiers.

At exit, queued compiles are cancelled and a running one is joined (it cannot be stopped
inside LLVM, and a thread left in LLVM while the process tears LLVM down could crash).
`wait()` blocks until the queue is empty (tests and benchmarks use it).

The threshold: bench case B at the fast tier runs ~1 ms per call instead of ~75 us at the
full tier, whose compile costs ~150-200 ms of CPU on the other core; case D runs 1.4x
slower. 10 calls lose ~10 ms on B, a few percent of the compile they trigger, while a
function called once or a few times (a script, a test) never pays the full compile.
Tier 0 instead of the fast tier on a cold first call: case B's trace interprets in a few
ms (~250 numpy calls on 1,000 floats) and D's is its three products on OpenBLAS, while
the fast tier's compile costs ~150-300 ms (LLVM loaded, passes, codegen); the compile
starts after the second call returns: it never competes with the first, and a function
called once never compiles.
"""

from __future__ import annotations

import atexit
import collections
import io
import os
import threading
import time
import warnings
import weakref
from typing import Callable

from ember.backends import compile_log
from ember.backends.cpu import host_target
from ember.dialects.ember.errors import EmberWarning
from ember.runtime import config


# Seconds of calls that make code hot whatever their count: the fast tier's calls that
# add up to this ask for the full tier; tier-0 calls this long compile it at once, not the
# fast tier (whose scalar loops run elementwise transcendentals several times slower than
# the interpreter's numpy kernels: a new user's 20M-float function took 0.36 s a call on
# tier 0 and 1 s on the fast tier). Bench case D's tier-0 calls take ~40 ms.
HOT_SECONDS = 0.2
SLOWER_THAN_TIER0 = 1.5  # a fast-tier call this many times tier 0's shortest: ask at once


class TierWarning(EmberWarning, RuntimeWarning):
    """Recompiling a hot function at the full tier failed: it keeps running its fast-tier
    code (correct, only slower)."""


class FastTier:
    """Fast-tier code that counts its calls and, at the threshold, asks once for the full
    tier (`promote(self)`). It runs as the executable it wraps; `failure` says why the full
    tier could not be had, if it could not."""

    tier = "fast"

    def __init__(self, exe, promote: Callable[["FastTier"], None] | None):
        self.exe = exe
        self.fast_path = exe.fast_path
        self.variables = exe.variables
        self.calls = 0
        self.seconds = 0.0  # spent in calls while waiting to ask for the full tier
        self.failure: str | None = None
        # tier 0's shortest call, where this code replaced tier 0 (`_interpreted`)
        self.tier0_seconds: float | None = None
        self._promote = promote
        # the threshold is read at each call: set_tier_threshold applies to this code too
        self._waiting = promote is not None
        self._lock = threading.Lock()

    def call_pointers(self, pointers: list[int]):
        self.calls += 1  # unlocked: a count lost to a race only delays the recompile
        if not self._waiting:
            return self.exe.call_pointers(pointers)
        start = time.perf_counter()
        try:
            return self.exe.call_pointers(pointers)
        finally:
            self._count(time.perf_counter() - start)

    def __call__(self, arrays):
        self.calls += 1
        if not self._waiting:
            return self.exe(arrays)
        start = time.perf_counter()
        try:
            return self.exe(arrays)
        finally:
            self._count(time.perf_counter() - start)

    def _count(self, seconds: float) -> None:
        """Hot (step 2): `tier_threshold()` calls, or HOT_SECONDS spent in them (a few
        long calls are as hot as many short ones, as the JVM's loop counters say), or a
        call SLOWER_THAN_TIER0 times the tier-0 calls it replaced (the fast tier's scalar
        loops can run `sin`/`exp` slower than the interpreter's numpy kernels: the full
        tier is then wanted at once, not after the threshold's calls)."""
        self.seconds += seconds
        if self.calls >= config.tier_threshold() or self.seconds >= HOT_SECONDS or (
                self.tier0_seconds is not None and
                seconds > SLOWER_THAN_TIER0 * self.tier0_seconds):
            self._ask()

    def _ask(self) -> None:
        with self._lock:
            promote, self._promote = self._promote, None
            self._waiting = False
        if promote is not None:
            promote(self)

    def __getattr__(self, name: str):  # the wrapped executable's other attributes
        if name == "exe":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.exe, name)


def first_executable(name: str, compile: Callable, swap: Callable, failed: Callable,
                     interpret: Callable | None = None):
    """The code a specialisation's first call runs, by `config.get_tier()` (steps 0-2 of
    the module docstring). `compile(tier, cached_only)` compiles through the backend's
    caches (None when `cached_only` and no cache has it); `swap(old, new)` puts `new` in
    place of `old`; `failed(message)` reports a failed recompile; `interpret()` gives the
    trace's tier-0 interpreter, or None where tier 0 may not run it (tier0.py)."""
    tier = config.get_tier()
    if tier == "full":
        return compile("full", False)
    promote = None
    if tier != "fast":
        def promote(fast: FastTier) -> None:
            _background.submit(lambda: _recompile(name, fast, compile, swap, failed))
        tier0 = interpret is not None and (tier == "interp" or config.tier0_enabled())
        # no record of this host: nothing compiled for it can be cached (host_target.py),
        # and looking would load LLVM first
        if not tier0 or (tier != "interp" and host_target.remembered()):
            full = compile("full", True)
            if full is not None:
                return full
            fast = compile("fast", True)
            if fast is not None:
                return FastTier(fast, promote)
        interpreter = None
        if tier0:
            with compile_log.stage(f"tier 0 {name} (interpreter plan)"):  # EMBER_LOG=compile
                interpreter = interpret()
        if interpreter is not None:
            return _interpreted(name, interpreter, tier == "auto", compile, swap, failed,
                                promote)
    return FastTier(compile("fast", False), promote)


def _interpreted(name, interpreter, background: bool, compile, swap, failed, promote):
    """Tier 0 (tier0.py): the interpreter, and after its second call the fast tier compiled
    in the background (`background`), swapped in with the calls made so far counted."""
    from ember.runtime.tier0 import Interpreted

    def compiled(old: Interpreted, tier: str = "fast"):
        new = compile(tier, False)
        if tier == "fast":
            new = FastTier(new, promote)
            new.calls, new.tier0_seconds = old.calls, old.shortest
        with _swap_lock:
            if old.replaced:  # by a call that raised, or by the background compile
                return old.successor
            old.replaced, old.successor = True, new
            swap(old, new)
        _swaps.append((name, "interp", tier, time.perf_counter()))
        return new

    def job(old: Interpreted) -> None:
        # long tier-0 calls: the full tier at once (its compile repays within a few calls)
        tier = "full" if old.shortest >= HOT_SECONDS else "fast"
        try:
            with compile_log.stage(f"{tier} tier {name} (background)", stream=io.StringIO()):
                new = compiled(old, tier)
        except Exception as e:  # noqa: BLE001 - any failure keeps tier 0, reported
            failed(f"em.function '{name}': compiling its code in the background failed, "
                   f"so it keeps running on the interpreter (correct, slower): "
                   f"{type(e).__name__}: {e}")
            return
        if isinstance(new, FastTier) and new._waiting and \
                new.calls >= config.tier_threshold():
            new._ask()  # hot already: the full tier next, on this thread's queue

    def recover(old: Interpreted):
        """A call that raised on the interpreter: compiled code now (its error is the one
        the caller gets), or None if it cannot be had."""
        try:
            return compiled(old)
        except Exception:  # noqa: BLE001 - the interpreter's error stands
            return None

    def start(old: Interpreted) -> None:
        # the queue holds the code weakly: a trace dropped before its turn is not compiled
        ref = weakref.ref(old)
        _background.submit(lambda: _background_job(ref))

    return Interpreted(interpreter, start if background else None, recover, job)


def _background_job(ref) -> None:
    old = ref()
    if old is not None and not old.replaced:
        old.compile_in_background(old)


_swap_lock = threading.Lock()
_swaps: collections.deque = collections.deque(maxlen=256)


def swaps() -> list[tuple[str, str, str, float]]:
    """The latest tier changes, oldest first: (function, from tier, to tier,
    time.perf_counter() when the new code was swapped in)."""
    return list(_swaps)


def _recompile(name: str, fast: FastTier, compile: Callable, swap: Callable,
               failed: Callable) -> None:
    """The background job: the full tier of `fast`'s specialisation, swapped in; on any
    failure the fast tier stays and `failed` reports it."""
    try:
        # logged as a step of its own; no status line from a background thread
        with compile_log.stage(f"full tier {name} (background)", stream=io.StringIO()):
            full = compile("full", False)
    except Exception as e:  # noqa: BLE001 - any failure keeps the fast tier, reported
        fast.failure = f"{type(e).__name__}: {e}"
        failed(f"em.function '{name}': recompiling a hot specialisation at the full tier "
               f"failed, so it keeps running its fast-tier code (correct, slower): "
               f"{fast.failure}")
        return
    swap(fast, full)
    _swaps.append((name, "fast", "full", time.perf_counter()))


def warn_failure(message: str) -> None:
    """Reports a failed background recompile as a TierWarning."""
    warnings.warn(TierWarning(message), stacklevel=2)


class _Background:
    """One daemon thread running queued compiles in order (one at a time: a full-tier
    compile keeps a core busy, and the caller has the other)."""

    def __init__(self):
        self._jobs: collections.deque = collections.deque()
        self._cond = threading.Condition()
        self._pending = 0  # queued + running
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, job: Callable[[], None]) -> bool:
        """Queues `job`; False once the process is exiting."""
        with self._cond:
            if self._closed:
                return False
            self._jobs.append(job)
            self._pending += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="ember-tier-compile")
                self._thread.start()
            self._cond.notify_all()
        return True

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._jobs and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                job = self._jobs.popleft()
            try:
                job()
            except BaseException:  # noqa: BLE001 - a job reports its own failures; the
                pass  # thread lives on for the next (an exit is seen as _closed)
            finally:
                with self._cond:
                    self._pending -= 1
                    self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Blocks until no compile is queued or running; False if `timeout` ran out."""
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout)

    def close(self) -> None:
        """Cancels the queued compiles and joins the running one (at exit)."""
        with self._cond:
            self._closed = True
            self._pending -= len(self._jobs)
            self._jobs.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()


_background = _Background()
atexit.register(lambda: _background.close())


def _after_fork() -> None:  # the child has no compile thread: start afresh
    global _background
    _background = _Background()


os.register_at_fork(after_in_child=_after_fork)


def wait(timeout: float | None = None) -> bool:
    """Blocks until every queued full-tier compile has finished and been swapped in (or
    failed); False if `timeout` seconds ran out first."""
    return _background.wait(timeout)
