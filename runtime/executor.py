"""Running a traced function: compiled code per static input shape, else the interpreter.

The first call with a new combination of input shapes and dtypes compiles the optimised
module for exactly those shapes (backends/cpu/compiler.py) and caches the executable;
later calls with the same shapes go straight to native code. Functions the CPU backend
cannot compile run on the reference interpreter: silently when they call Python by design
(em.py_function, printing to a Python stream object), with a one-time
`InterpreterFallbackWarning` naming the op otherwise (string ops, data-dependent shapes),
or an `InterpreterFallbackError` on every such call under `em.config.set_fallback("error")`
(nothing under "silent").
Variables are passed in and written back (also when loops and branches write them);
em.print to stdout/stderr calls back into Python from compiled code.

The executables are an LRU of `config.executables_per_trace()` entries (64 by default):
calling with ever new shapes does not grow memory without bound. An evicted executable
is dropped here and by whoever registered with `watch` (the Function's fast path), so its
machine code is freed once the last caller that could still run it lets go.

A backend with tiers (the CPU's) compiles a specialisation at the fast tier first and swaps
in the full tier once it is hot (tiers.py, `swap`): the fast-tier code's watchers drop it
then, as on eviction.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import threading
import warnings
from typing import Callable

import numpy as np

from ember.backends import Backend, NotCompilable, get
from ember.backends.interpreter import Interpreter
from ember.dialects.ember import digest, dtypes
from ember.dialects.ember.errors import EmberError, EmberWarning
from ember.dialects.ember.types import TensorType
from ember.frontend import effects
from ember.frontend.user_code import user_location
from ember.runtime import config, tier0, tiers

class InterpreterFallbackWarning(EmberWarning, RuntimeWarning):
    """A traced function runs on the interpreter because it cannot be compiled."""


class InterpreterFallbackError(EmberError, RuntimeError):
    """A traced function cannot be compiled and `em.config.set_fallback("error")` forbids
    running it on the interpreter."""


class Executor:
    """Chooses, per call, between a cached compiled executable and the interpreter."""

    def __init__(self, name: str, module_text: Callable[[], str], symbol: str,
                 interpreter: Callable[[], Interpreter], compile_enabled: bool,
                 source_key: str | None = None, pipeline: str = "ember-optimize",
                 backend: Backend | None = None, tier0=None):
        """`module_text()` gives the optimised module and `interpreter()` its interpreter,
        both on first need; `source_key` (the traced module and pipeline) keys the compile
        cache in place of the optimised text when given (see Backend.compile); `pipeline`
        (the Function's, "" for none) is the only optimisation specialisation runs;
        `backend` compiles (the CPU's by default); `tier0`, the FuncGraph traced, may run
        on tier 0 (tier0.py) with Ember's own pipeline."""
        self.name = name
        self._text = module_text
        self._source_key = source_key
        self._symbol = symbol
        self._pipeline = pipeline
        self._backend = backend or get("cpu")
        self._interpreter = interpreter
        self._compiled: collections.OrderedDict = collections.OrderedDict()
        self._watchers: dict = {}  # key -> callbacks run when its executable is evicted
        self._lock = threading.Lock()
        self._tiered = "fast" in getattr(self._backend, "tiers", ())
        self._tier_failure_reported = False
        self._traced = tier0  # the FuncGraph, for tier 0
        self._may_write: set | None = None  # the variables' arguments it may write
        self._written_of: dict = {}  # `_written`'s answers, by variables list
        self._replay: Interpreter | bool | None = None  # `_replayer`'s (False: none)
        self.fallback_reason: str | None = None if compile_enabled else "compilation disabled"
        self._by_design = True  # the fallback (if any) is host work by design: never an error

    def run(self, arrays: list[np.ndarray], extra: list, borrowed=(), captured=()) -> tuple:
        """Runs on `arrays` (the tensor inputs) and `extra` (variable handles, read and
        written in place, and arrays of large captured constants, in argument order).
        The arrays at indices `borrowed` are the caller's (not copied for the call):
        compiled code only reads them; the interpreter, which may keep or return what it
        is given, gets copies. `captured`: the caller's (kind, object) of each of `extra`
        (its Variables name the locks a call holds: `held_variables`)."""
        values = [e if isinstance(e, np.ndarray) else e.value for e in extra]
        if self.fallback_reason is None and all(v is not None for v in values):
            inputs = arrays + values
            exe = self._executable(inputs)
            if borrowed and isinstance(exe, tier0.Interpreted):
                arrays, borrowed = _owned(arrays, borrowed), ()
                inputs = arrays + values
            written = self._written(exe.variables) if exe is not None else ()
            if exe is not None and not written:  # (a variable only read comes back as it
                outs = exe(inputs)               # was: not stored, a write meanwhile stays)
                return tuple(outs[:len(outs) - len(exe.variables)])
            if exe is not None:
                # read, run and write under the written variables' locks, as TensorFlow's
                # AssignAdd: calls from several threads (compiled code releases the GIL)
                # must not add to the same old value
                with _locked(extra, [i - len(arrays) for i in written], self.name, captured):
                    inputs = arrays + [e if isinstance(e, np.ndarray) else e.value
                                       for e in extra]
                    exe = self._executable(inputs)  # (another shape assigned meanwhile)
                    if exe is not None:
                        try:
                            outs = exe(inputs)
                        except Exception as error:  # an op's error, MemoryError, ...
                            self._write_up_to(error, _owned(arrays, borrowed), extra)
                            raise
                        count = len(outs) - len(exe.variables)
                        for index, value in zip(exe.variables, outs[count:]):
                            if index in written:
                                extra[index - len(arrays)].value = value
                        return tuple(outs[:count])
        if self.fallback_reason is not None and not self._by_design:
            self._check_policy(self.fallback_reason)
        arrays = _owned(arrays, borrowed)
        with _locked(extra, [i for i, e in enumerate(extra) if not isinstance(e, np.ndarray)],
                     self.name, captured):
            return self._interpreter().call(self._symbol, arrays + extra)

    def _write_up_to(self, error: Exception, arrays: list, extra: list) -> None:
        """Leaves the variables as eager execution would after a call that raised `error`:
        written by the ops before the failing one. Compiled code returns its writes, so a
        failed call made none; the interpreter writes as it goes, and runs the call again
        (prints muted: they were printed) where nothing else it runs calls out of Ember.
        If the interpreter does not raise the same error, the variables are put back. The
        caller holds the variables' locks."""
        try:
            replay = self._replayer()
        except Exception:  # (no interpreter for it: the call's error is what is raised)
            return
        if replay is None:
            return
        handles = [e for e in extra if not isinstance(e, np.ndarray)]
        before = [h.value for h in handles]
        try:
            replay.call(self._symbol, arrays + extra)
        except type(error):
            return  # the same failure: the writes before it stand
        except Exception:  # another one (a disagreement with compiled code): undo the writes
            pass
        for handle, value in zip(handles, before):
            handle.value = value

    def _replayer(self) -> Interpreter | None:
        """The interpreter `_write_up_to` runs: host callbacks other than prints (Python
        code, datasets, collectives) would run twice, so None where the trace has any."""
        if self._replay is None:
            base = self._interpreter()
            callbacks = {symbol: _muted for symbol in base.callbacks if effects.is_print(symbol)}
            self._replay = False if len(callbacks) < len(base.callbacks) else Interpreter(
                base.module, callbacks, streams={"stdout": _NOWHERE, "stderr": _NOWHERE})
        return self._replay or None

    def _written(self, variables: list) -> frozenset:
        """Which of the argument numbers `variables` (the variables the code returns) the
        trace may write: its argument is used by anything but `ember.read_variable` (an
        assign, a call). The others are only read, and their values are not stored back."""
        if not variables:
            return frozenset()
        key = tuple(variables)
        known = self._written_of.get(key)  # (each call asks: once per variables list)
        if known is not None:
            return known
        if self._may_write is None:
            graph, may_write = self._traced, set()
            for arg in graph.block.arguments if graph is not None else ():
                if str(arg.type).startswith("!ember.resource") and any(
                        getattr(use.owner, "operation", use.owner).name != "ember.read_variable"
                        for use in arg.uses):
                    may_write.add(arg.arg_number)
            self._may_write = may_write if graph is not None else None
        known = self._written_of[key] = frozenset(variables) if self._may_write is None else \
            frozenset(i for i in variables if i in self._may_write)
        return known

    def _executable(self, inputs: list):
        key = tuple((a.shape, a.dtype.str) for a in inputs)
        exe = self._compiled.get(key)
        if exe is None:
            return self._compile(key, inputs)
        self._touch(key)
        return exe

    def _compile(self, key, arrays):
        with self._lock:
            if key in self._compiled:
                return self._compiled[key]
            if self.fallback_reason is not None:
                return None
            types = [TensorType(dtypes.as_dtype(a.dtype), a.shape) for a in arrays]
            try:
                if self._tiered:
                    exe = tiers.first_executable(self.name, functools.partial(
                        self._compile_tier, types), functools.partial(self.swap, key),
                        self._report_tier_failure, self._tier0_plan)
                else:
                    exe = self._backend.compile(self._text, self._symbol, types,
                                                source_key=self._source_key,
                                                pipeline=self._pipeline)
            except NotCompilable as e:
                if e.reason is not NotCompilable.Reason.HOST_ONLY:  # host work by design: quiet
                    self._check_policy(str(e))
                    self._by_design = False
                    if config.get_fallback() == "warn":
                        filename, line = user_location()
                        warnings.warn_explicit(InterpreterFallbackWarning(
                            f"em.function '{self.name}' runs on the interpreter: {e}"),
                            InterpreterFallbackWarning, filename, line)
                self.fallback_reason = str(e)
                return None
            self._compiled[key] = exe
            evicted = []
            while len(self._compiled) > config.executables_per_trace():
                old, _ = self._compiled.popitem(last=False)
                evicted += self._watchers.pop(old, ())
        for callback in evicted:  # outside the lock: they may take other locks
            callback()
        return exe

    def _tier0_plan(self):
        """The trace's tier-0 interpreter (tier0.plan), or None where it may not run it."""
        graph = self._traced
        if graph is None or not tier0.default_pipeline(self._pipeline):
            return None
        return tier0.plan(graph.module, graph.symbol, graph.callbacks)

    def _compile_tier(self, types: list, tier: str, cached_only: bool):
        return self._backend.compile(self._text, self._symbol, types,
                                     source_key=self._source_key, pipeline=self._pipeline,
                                     tier=tier, cached_only=cached_only)

    def swap(self, key, old, new) -> None:
        """Puts executable `new` in place of `old` for `key` (the full tier in place of the
        fast one) if `old` is still there, and drops `old`'s watchers: they fetch `new`."""
        with self._lock:
            if self._compiled.get(key) is not old:  # evicted meanwhile: nothing to replace
                return
            self._compiled[key] = new  # keeps its place in the LRU
            dropped = self._watchers.pop(key, ())
        for callback in dropped:  # outside the lock: they may take other locks
            callback()

    def _report_tier_failure(self, message: str) -> None:
        with self._lock:
            first, self._tier_failure_reported = not self._tier_failure_reported, True
        if first:
            tiers.warn_failure(message)

    def _check_policy(self, reason: str) -> None:
        """InterpreterFallbackError if the fallback policy is "error"."""
        if config.get_fallback() != "error":
            return
        filename, line = user_location()
        raise InterpreterFallbackError(
            f"em.function '{self.name}', called at {filename}:{line}, cannot be compiled: "
            f"{reason}; em.config.set_fallback(\"error\") forbids running it on the "
            f"interpreter. Remove that op from the function (or move it into "
            f"em.py_function, which runs on the host by design), or allow the fallback "
            f"with em.config.set_fallback(\"warn\")")

    def _touch(self, key) -> None:
        try:
            self._compiled.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile
            pass

    def watch(self, key, callback: Callable[[], None], exe=None) -> None:
        """Calls `callback()` when the executable compiled for `key` (`exe`, if given) is
        evicted or replaced by another tier (at once if it is not there): holders of the
        executable drop it then."""
        with self._lock:
            if key in self._compiled and (exe is None or self._compiled[key] is exe):
                self._watchers.setdefault(key, []).append(callback)
                return
        callback()

    def compiled(self, key):
        """The executable compiled for `key` ((shape, dtype.str) per input), if any."""
        return self._compiled.get(key)

    @property
    def compiled_shapes(self) -> list:
        return list(self._compiled)

    def tiers(self) -> dict:
        """Key -> "fast" or "full": the tier of each compiled specialisation's code."""
        return {key: getattr(exe, "tier", "full") for key, exe in list(self._compiled.items())}


def _muted(*arrays) -> tuple:
    """An em.print callback's stand-in in a call run again (`_write_up_to`)."""
    return ()


class _Nowhere:
    """The stream a call run again prints its ember.print ops to (`_write_up_to`)."""

    @staticmethod
    def write(text: str) -> int:
        return len(text)


_NOWHERE = _Nowhere()


def _owned(arrays: list, borrowed) -> list:
    """`arrays` with those at indices `borrowed` copied."""
    return [a.copy() if i in borrowed else a for i, a in enumerate(arrays)] if borrowed \
        else arrays


class _Holding(threading.local):
    def __init__(self):
        self.calls: list = []  # (name, positions, extra, captured) of `_locked`'s calls


_holding = _Holding()


@contextlib.contextmanager
def _locked(extra: list, positions: list, name: str, captured):
    """Holds the locks of the variable handles at `positions` of `extra` (each once, in the
    order of their ids: two calls locking the same variables cannot deadlock), noted for
    `held_variables` meanwhile."""
    handles = {extra[p].id: extra[p] for p in positions}
    with contextlib.ExitStack() as stack:
        for _, handle in sorted(handles.items()):
            stack.enter_context(handle.lock)
        _holding.calls.append((name, positions, extra, captured))
        try:
            yield
        finally:
            _holding.calls.pop()


def held_variables() -> list:
    """(function name, variables) of each call running on this thread that holds the locks
    of variables (a host call inside it runs while it does, e.g. an all-reduce waiting for
    other replicas): the captured Variables when its caller gave them, else handles."""
    return [(name, [captured[p][1] if captured else extra[p] for p in positions])
            for name, positions, extra, captured in _holding.calls]


def constant_digests(graph) -> str:
    """One line per large captured constant of a FuncGraph: a hash of its bytes (its type is
    in the IR), for the compile key of the trace."""
    return "".join(f"\nconstant {digest.hexdigest(obj._value.data)}"
                   for kind, obj in graph.extra_args if kind == "constant")
