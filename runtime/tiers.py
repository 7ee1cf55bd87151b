"""Tiered compilation: a first call compiles fast, a hot specialisation is recompiled at the
full tier in the background and swapped in, as JavaScript engines and the JVM do.

Per shape specialisation of a trace (the executor's key), under `em.config.get_tier()`:

  1. "auto" (the default): if a cache (memory or disk) has the full tier's code, run it at
     once. Else compile the fast tier (backends/cpu/backend.py tier_options: LLVM O1
     without vectorisation or unrolling, instructions selected at -O0; products on numpy's
     OpenBLAS, which needs no compiling, or where there is none on Ember's own GEMM at the
     library's fast tier while its full tier is not built yet, kernels.bind_jit) and run it.
  2. Every call of fast-tier code is counted; the call that reaches
     `em.config.tier_threshold()` (default 10) queues a full-tier compile on the one
     background thread and returns at once. Nothing waits for that compile.
  3. When the full tier is ready, the executor swaps it in under its lock (Executor.swap)
     and tells the holders of the fast tier's code (the Function's fast path) to drop it;
     the next call runs the full tier. Calls already running finish on the code they
     started with: they hold it.
  4. If the full-tier compile fails, the fast tier stays, and a `TierWarning` naming the
     function says why (once per trace).
  "fast" compiles the fast tier and never recompiles; "full" compiles the full tier at once
  (what Ember did before tiers). Both tiers are cached on disk under their own keys (the
  options are part of the compile key): a process that finds the full tier never compiles
  the fast one.

At exit, queued compiles are cancelled and a running one is joined (it cannot be stopped
inside LLVM, and a thread left in LLVM while the process tears LLVM down could crash).
`wait()` blocks until the queue is empty (tests and benchmarks use it).

The threshold: bench case B at the fast tier runs ~1 ms per call instead of ~75 us at the
full tier, whose compile costs ~150-200 ms of CPU on the other core; case D runs 1.4x
slower. 10 calls lose ~10 ms on B, a few percent of the compile they trigger, while a
function called once or a few times (a script, a test) never pays the full compile.
"""

from __future__ import annotations

import atexit
import collections
import io
import os
import threading
import warnings
from typing import Callable

from ember.backends import compile_log
from ember.dialects.ember.errors import EmberWarning
from ember.runtime import config


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
        self.failure: str | None = None
        self._promote = promote
        # the threshold is read at each call: set_tier_threshold applies to this code too
        self._waiting = promote is not None
        self._lock = threading.Lock()

    def call_pointers(self, pointers: list[int]):
        self.calls += 1  # unlocked: a count lost to a race only delays the recompile
        if self._waiting and self.calls >= config.tier_threshold():
            self._ask()
        return self.exe.call_pointers(pointers)

    def __call__(self, arrays):
        self.calls += 1
        if self._waiting and self.calls >= config.tier_threshold():
            self._ask()
        return self.exe(arrays)

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


def first_executable(name: str, compile: Callable, swap: Callable, failed: Callable):
    """The code a specialisation's first call runs, by `config.get_tier()` (steps 1-2 of
    the module docstring). `compile(tier, cached_only)` compiles through the backend's
    caches (None when `cached_only` and no cache has it); `swap(fast, full)` puts the
    full tier in place of `fast`; `failed(message)` reports a failed recompile."""
    tier = config.get_tier()
    if tier == "full":
        return compile("full", False)
    if tier == "auto":
        full = compile("full", True)
        if full is not None:
            return full
    promote = None
    if tier == "auto":
        def promote(fast: FastTier) -> None:
            _background.submit(lambda: _recompile(name, fast, compile, swap, failed))
    return FastTier(compile("fast", False), promote)


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
