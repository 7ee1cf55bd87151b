"""Which gradient tapes are recording, on this thread and in this trace.

A tape records only the ops of the context it was created in: eager code, or the one
function being traced. Tracing a function (`tracing.graph_scope`) starts a new, empty set of
tapes, so a tape outside never sees the ops of a function it calls; it records the call as
one op instead (`calls.py`), as TensorFlow records a `tf.function` call.

`dispatch.execute` calls `record_op` after every op and `Variable.read_value` calls
`record_read`; both cost one attribute lookup when no tape is recording.
"""

from __future__ import annotations

import contextlib
import threading


class _State(threading.local):
    def __init__(self):
        self.contexts: list[list] = [[]]  # one list of recording tapes per (nested) trace
        self.paused = 0  # inside em.stop_gradient / a custom_gradient's forward
        self.readers: list = []  # see `reads`: they hear of Variable reads even when paused


_state = _State()


def tapes() -> list:
    """The tapes recording in the current context (innermost last); empty when paused."""
    return [] if _state.paused else _state.contexts[-1]


def recording() -> bool:
    return (bool(_state.contexts[-1]) and not _state.paused) or bool(_state.readers)


@contextlib.contextmanager
def reads(reader):
    """`reader._record_read(variable, value)` hears of every Variable read in the block
    (what custom_gradient uses to find the Variables its function reads)."""
    _state.readers.append(reader)
    try:
        yield reader
    finally:
        _state.readers.remove(reader)


@contextlib.contextmanager
def new_context():
    """A trace starts: no tape of the enclosing context records its ops."""
    _state.contexts.append([])
    try:
        yield
    finally:
        _state.contexts.pop()


@contextlib.contextmanager
def paused():
    """No tape records (what `stop_gradient` and custom gradients' forwards run under)."""
    _state.paused += 1
    try:
        yield
    finally:
        _state.paused -= 1


def push(tape) -> None:
    _state.contexts[-1].append(tape)


def pop(tape) -> None:
    stack = _state.contexts[-1]
    if tape in stack:
        stack.remove(tape)


@contextlib.contextmanager
def without(tape):
    """`tape` stops recording for a while (while it computes its own gradient), others go on."""
    stack = _state.contexts[-1]
    index = stack.index(tape) if tape in stack else None
    if index is not None:
        stack.pop(index)
    try:
        yield
    finally:
        if index is not None:
            stack.insert(min(index, len(stack)), tape)


def record_op(spec, operands, attrs, results) -> None:
    """Called by `dispatch.execute` after an op ran (or was traced) with a tape recording."""
    outs = results if isinstance(results, tuple) else (results,)
    for tape in tapes():
        tape._record_op(spec, operands, attrs, outs)


def record_read(variable, value) -> None:
    for reader in _state.readers:
        reader._record_read(variable, value)
    for tape in tapes():
        tape._record_read(variable, value)
