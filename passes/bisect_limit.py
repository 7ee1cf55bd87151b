"""The opt-bisect gate: apply only the first N pass (and pattern) applications, as LLVM's
`-opt-bisect-limit=N`.

    with bisect_limit.limited(3):
        run_pipeline(module, "ember-canonicalize,cse,ember-dce,ember-licm")
    # stderr:
    # BISECT: running pass (1) ember-canonicalize on builtin.module
    # BISECT: running pass (2) cse on builtin.module
    # BISECT: running pass (3) ember-dce on builtin.module
    # BISECT: NOT running pass (4) ember-licm on builtin.module

Whoever is about to apply a transformation asks `should_run(description)`: outside a
`limited(...)` block it returns True and prints nothing; inside, it counts the application,
prints the `BISECT:` line to stderr and says whether the count is within the limit (a
negative limit runs everything and still prints the numbered lines, as LLVM's -1 does).
Pipeline.run asks for every ember pass and every upstream pipeline element; a pattern
driver asks once per pattern application (`should_run(f"pattern {name} on {op.name}")`) and
leaves the op unchanged when told no. Bisecting then means finding the smallest N whose
output is wrong: the culprit is application N.

Differences from LLVM: the limit lives in a context variable for the duration of a
`limited` block (a run, not a process-wide flag), and upstream passes count per pipeline
element (`func.func(cse)` is one application on the module, as MLIR runs it nested).
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from typing import Iterator, TextIO


class _Gate:
    def __init__(self, limit: int, stream: TextIO | None):
        self.limit = limit
        self.count = 0
        self.stream = stream

    def decide(self, description: str) -> bool:
        self.count += 1
        run = self.limit < 0 or self.count <= self.limit
        stream = self.stream or sys.stderr
        stream.write(f"BISECT: {'running' if run else 'NOT running'} pass ({self.count}) "
                     f"{description}\n")
        return run


_GATE: contextvars.ContextVar[_Gate | None] = contextvars.ContextVar("ember_bisect_limit",
                                                                     default=None)


def active() -> bool:
    """Whether a `limited(...)` block is open (applications are being counted)."""
    return _GATE.get() is not None


def should_run(description: str) -> bool:
    """Whether the next transformation, `description` ("ember-cse on func.func (@f)",
    "pattern fold-add on ember.add"), may run; counts and prints it inside `limited`."""
    gate = _GATE.get()
    return True if gate is None else gate.decide(description)


def applications() -> int:
    """How many applications the open `limited` block has counted (0 outside one)."""
    gate = _GATE.get()
    return 0 if gate is None else gate.count


@contextlib.contextmanager
def limited(limit: int, stream: TextIO | None = None) -> Iterator[None]:
    """Counts applications from 1 and lets only the first `limit` run (all if negative);
    `BISECT:` lines go to `stream` (stderr by default)."""
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise TypeError(f"the opt-bisect limit must be an int, got {limit!r}")
    token = _GATE.set(_Gate(limit, stream))
    try:
        yield
    finally:
        _GATE.reset(token)


@contextlib.contextmanager
def suspended() -> Iterator[None]:
    """Runs without the gate (a replay for a reproducer must not count applications)."""
    token = _GATE.set(None)
    try:
        yield
    finally:
        _GATE.reset(token)
