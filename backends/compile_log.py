"""What a compile is doing and how long each step took: the `ember.compile` log and the
live status line.

    EMBER_LOG=compile python train.py
    ember.compile: trace mlp: 41.2 ms
    ember.compile: optimize mlp > ember-optimize > ember-cse: 1.9 ms
    ...
    ember.compile: compile @mlp > llvm-optimize: 212.5 ms

Every compile step runs inside `stage(name)`: tracing, the optimisation pipeline (each of
its passes through `instruments()`), specialisation, each lowering stage and its passes,
LLVM's optimisation, object emission and loading. Each step is logged on finishing (logger
`ember.compile`, level INFO) with its path of enclosing steps and its wall time;
`EMBER_LOG=compile` (a comma-separated list) sends that logger to stderr, and any logging
configuration that enables the logger works too.

On a terminal, a step that has been running for 2 s (THRESHOLD) gets a one-line status,
rewritten in place (`\\r`) every 0.1 s and cleared when the outermost step ends:

    ember: compile @mlp > llvm > convert-linalg-to-loops  3.4 s

One background thread per process prints these lines, only if stderr is a TTY; a compile
faster than the threshold prints nothing. The thread needs the GIL: it updates the line
while the compiling thread runs Python (between passes and stages), not during one long
call into MLIR.
(Upstream: LLVM's `-time-passes` and `-debug-pass-manager` log steps; JAX's
`jax_log_compiles` logs each compile with its time.)
"""

from __future__ import annotations

import _thread
import contextlib
import logging
import os
import sys
import threading
import time
import warnings
from typing import Optional, TextIO

from mlir import ir

from ember.passes.base import Statistics
from ember.passes.instrument import PassInstrumentation

LOGGER = logging.getLogger("ember.compile")
ENV = "EMBER_LOG"
LOGS = frozenset({"compile"})  # what EMBER_LOG may name
THRESHOLD = 2.0  # seconds a step runs before the status line appears
INTERVAL = 0.1  # seconds between updates of the status line

_state = threading.local()  # per thread: the open steps (names) and the status line
_configured = False


def _configure() -> None:
    """Sends the logger to stderr when EMBER_LOG names `compile` (once per process)."""
    global _configured
    if _configured:
        return
    _configured = True
    names = {p.strip() for p in os.environ.get(ENV, "").split(",")} - {""}
    if unknown := sorted(names - LOGS):
        warnings.warn(f"{ENV}={os.environ[ENV]!r}: Ember has no log named "
                      f"{', '.join(unknown)}; the logs are: {', '.join(sorted(LOGS))} "
                      "(comma-separated)", RuntimeWarning, stacklevel=2)
    if "compile" in names:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
        LOGGER.addHandler(handler)
        LOGGER.setLevel(logging.INFO)
        LOGGER.propagate = False


def _open() -> list:
    if not hasattr(_state, "open"):
        _state.open, _state.status = [], None
    return _state.open


@contextlib.contextmanager
def stage(name: str, stream: Optional[TextIO] = None, threshold: Optional[float] = None):
    """Times the compile step `name` (logged on success; shown in the status line while it
    runs). The outermost step of a thread starts the status line; `stream` and
    `threshold` (default: stderr, THRESHOLD) are for tests."""
    _configure()
    steps = _open()
    outermost = not steps
    if outermost:
        _state.status = Status(stream if stream is not None else sys.stderr,
                               THRESHOLD if threshold is None else threshold)
    steps.append(name)
    _state.status.show(steps)
    start = time.perf_counter()
    outcome = "failed after "
    try:
        yield
        outcome = ""
    finally:
        if LOGGER.isEnabledFor(logging.INFO):
            LOGGER.info("%s: %s%.1f ms", " > ".join(steps), outcome,
                        1e3 * (time.perf_counter() - start))
        steps.pop()
        if outermost:
            _state.status.stop()
            _state.status = None
        else:
            _state.status.show(steps)


def active() -> bool:
    """Whether per-pass reports are wanted: the log is enabled or a status line could
    appear (stderr is a terminal)."""
    _configure()
    return LOGGER.isEnabledFor(logging.INFO) or _isatty(sys.stderr)


class PassSteps(PassInstrumentation):
    """Each pass of a pipeline as a compile step (logged, shown in the status line)."""

    def __init__(self):
        self._open: list = []

    def run_before_pass(self, name: str, op: ir.Operation) -> None:
        step = stage(name)
        step.__enter__()
        self._open.append(step)

    def run_after_pass(self, name: str, op: ir.Operation, seconds: float,
                       stats: Optional[Statistics]) -> None:
        self._open.pop().__exit__(None, None, None)

    def run_after_pass_failed(self, name: str, op: ir.Operation,
                              error: BaseException) -> None:
        while self._open:
            self._open.pop().__exit__(type(error), error, None)


def instruments() -> tuple:
    """The instruments a compile's pipelines run with: (PassSteps(),) when `active()`."""
    return (PassSteps(),) if active() else ()


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Status:
    """The live status line of one outermost compile step (module docstring)."""

    def __init__(self, stream: TextIO, threshold: float = THRESHOLD,
                 interval: float = INTERVAL):
        self.stream, self.threshold, self.interval = stream, threshold, interval
        self.start = time.perf_counter()
        self.due = self.start + threshold  # when the watcher writes the line (again)
        self.text = ""
        self.width = 0  # characters on the line now (0: nothing printed)
        self.done = False
        self._lock = threading.Lock()
        if _isatty(stream):
            _Watcher.of_process().watch(self)

    def show(self, steps: list) -> None:
        self.text = "ember: " + " > ".join(steps)

    def _write(self) -> None:
        import shutil  # (with bz2 and lzma: only once a compile runs long, not at import)
        columns = shutil.get_terminal_size((80, 24)).columns
        line = f"{self.text}  {time.perf_counter() - self.start:.1f} s"
        if len(line) >= columns:
            line = line[:columns - 4] + "..."
        with self._lock:
            if self.done:
                return
            self.stream.write("\r" + line.ljust(self.width))
            self.stream.flush()
            self.width = len(line)

    def stop(self) -> None:
        """Ends the line: clears it if it was printed; nothing is written after this."""
        with self._lock:
            self.done = True
            if self.width:
                self.stream.write("\r" + " " * self.width + "\r")
                self.stream.flush()
                self.width = 0


class _Watcher:
    """The one thread that writes the status lines of the steps running on a terminal,
    started by the first such step of the process. (A thread per step cost every outermost
    step, each trace and compile, ~0.2 ms to start and join: ~0.8 ms of a warm start's
    first call on a terminal.)"""

    _process: Optional["_Watcher"] = None
    _made = threading.Lock()

    def __init__(self):
        self._cond = threading.Condition()
        self._statuses: list[Status] = []
        # (_thread: threading.Thread's start waits until the thread runs, ~0.1 ms of a first
        # step; the watcher needs no join, and dies with the process as a daemon does)
        _thread.start_new_thread(self._run, ())

    @classmethod
    def of_process(cls) -> "_Watcher":
        with cls._made:
            if cls._process is None:
                cls._process = cls()
            return cls._process

    def watch(self, status: Status) -> None:
        with self._cond:
            self._statuses.append(status)
            self._cond.notify()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._statuses = [s for s in self._statuses if not s.done]
                if not self._statuses:
                    self._cond.wait()
                    continue
                first = min(self._statuses, key=lambda s: s.due)
                wait = first.due - time.perf_counter()
                if wait > 0:
                    self._cond.wait(wait)  # (a new step may be due sooner)
                    continue
            try:  # (not holding the lock: a step starting now need not wait)
                first._write()
            except (OSError, ValueError):  # a stream closed or broken: that line ends
                first.done = True
            first.due = time.perf_counter() + first.interval


def _forget_watcher() -> None:  # a forked child has none of the parent's threads
    _Watcher._process, _Watcher._made = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_watcher)
