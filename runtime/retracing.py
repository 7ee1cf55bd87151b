"""The retrace log of a Function: how often it is called and traced, why each trace was
made, and the warning when it retraces on most of its recent calls (TensorFlow's retracing
warning, with the argument that changed and how to fix it).
"""

from __future__ import annotations

import collections
import dataclasses
import threading
import warnings
from typing import Optional

from ember.dialects.ember.errors import EmberWarning
from ember.frontend.trace_types import SequenceTraceType, TensorTraceType, TraceType

RETRACE_WINDOW = 10
RETRACE_LIMIT = 5


class RetracingWarning(EmberWarning):
    """An em.function retraced on most of its recent calls."""


@dataclasses.dataclass(frozen=True)
class Retrace:
    """Why one trace was made: the call number and, per changed argument, old -> new type."""

    trace: int
    call: int
    changes: tuple  # (argument, old type, new type)

    def describe(self) -> str:
        if not self.changes:
            return f"trace {self.trace} (call {self.call}): first trace"
        parts = "; ".join(f"argument `{a}`: {old!r} -> {new!r}" for a, old, new in self.changes)
        return f"trace {self.trace} (call {self.call}): {parts}"


class RetraceLog:
    """Calls and traces of the Function named `name`."""

    def __init__(self, name: str):
        self.name = name
        self.calls = 0
        self.recent = collections.deque(maxlen=RETRACE_WINDOW)  # per recent call: traced?
        self.retraces: list[Retrace] = []
        self._last_key: Optional[TraceType] = None
        self._warned = False
        self._lock = threading.Lock()

    def count_call(self, traced: bool) -> None:
        with self._lock:
            self.calls += 1
            self.recent.append(traced)

    def record(self, key: SequenceTraceType, count_call: bool) -> None:
        """Logs a trace for `key`; warns (once) when most recent calls traced."""
        changes = ()
        if self._last_key is not None:  # the previous trace, even if since dropped
            changes = _differences(self._last_key, key)
        if count_call:  # the first trace is not a retrace
            self.count_call(traced=bool(self.retraces))
        self._last_key = key
        self.retraces.append(Retrace(len(self.retraces) + 1, self.calls, changes))
        if not self._warned and sum(self.recent) >= RETRACE_LIMIT:
            self._warned = True
            from ember.frontend.user_code import user_location
            filename, line = user_location()  # the user's call, not Ember's frames
            warnings.warn_explicit(RetracingWarning(self._warning_text(changes)),
                                   RetracingWarning, filename, line)

    def explain(self) -> str:
        if not self.retraces:
            return f"'{self.name}' has not been traced yet."
        lines = [f"'{self.name}' was traced {len(self.retraces)} time(s):"]
        lines += [f"  {r.describe()}" for r in self.retraces]
        return "\n".join(lines)

    def _warning_text(self, changes) -> str:
        recent = sum(self.recent)
        head = (f"em.function '{self.name}' retraced {recent} times in its last "
                f"{len(self.recent)} calls. Tracing is expensive.")
        if not changes:
            return head
        arg, old, new = changes[0]
        if isinstance(old, TensorTraceType) and isinstance(new, TensorTraceType):
            fix = ("pass input_signature=[em.TensorSpec(shape=[None, ...])] with None for the "
                   "changing dims, or reduce_retracing=True")
        elif isinstance(new, TensorTraceType) or isinstance(old, TensorTraceType):
            fix = "pass the same kind of value on every call"
        else:
            fix = ("pass it as a tensor (em.constant(...)) so that one trace serves every "
                   "value; Python values are traced by value")
        return f"{head} Argument `{arg}` changed: {old!r} -> {new!r}. To fix: {fix}."


def _differences(old: SequenceTraceType, new: SequenceTraceType) -> tuple:
    return tuple((name, a, b) for name, a, b in zip(new.names, old.components, new.components)
                 if a != b)
