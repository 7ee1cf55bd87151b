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
        self.trackers: list = []  # see `tracking`: they hear of Variable reads and writes
        self.replays: list[dict] = []  # see `replaying`: per replay, id(Variable) -> value
        self.drawn: list[list] = []  # see `replaying`: per replay, generators to draw from


_state = _State()


def tapes() -> list:
    """The tapes recording in the current context (innermost last); empty when paused."""
    return [] if _state.paused else _state.contexts[-1]


def recording() -> bool:
    return (bool(_state.contexts[-1]) and not _state.paused) or bool(_state.readers) or \
        bool(_state.trackers)


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
def tracking(tracker):
    """`tracker._record_read(variable, value)` and `tracker._record_write(variable)` hear of
    every Variable read and write traced in the block, a replay's included (what a region
    traced for a gradient uses to find the Variables whose values its replay needs)."""
    _state.trackers.append(tracker)
    try:
        yield tracker
    finally:
        _state.trackers.remove(tracker)


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
    _heard_read(variable, value)
    for tape in tapes():
        tape._record_read(variable, value)


def _heard_read(variable, value) -> None:
    for reader in _state.readers:
        reader._record_read(variable, value)
    for tracker in _state.trackers:
        tracker._record_read(variable, value)


def record_write(variable) -> None:
    """Called by a Variable's traced write (a replay's included)."""
    for tracker in _state.trackers:
        tracker._record_write(variable)


class ReplayLog:
    """What a replay of a trace for its gradient needs to know of it (the trace's
    `FuncGraph.replay_log`): the Variables it writes (id -> Variable) and the generators its
    random ops drew from, in order (random_seed.generator_for), its callees' included."""

    __slots__ = ("written", "drawn")

    def __init__(self):
        self.written: dict[int, object] = {}
        self.drawn: list = []

    def called(self, callee: "ReplayLog") -> None:
        """A call of the trace `callee` is traced: it writes and draws what `callee` does."""
        self.written.update(callee.written)
        self.drawn.extend(callee.drawn)


@contextlib.contextmanager
def replaying(values: dict | None = None, drawn: list = ()):
    """A region is traced again for its gradient (control.py): its Variable writes already
    happened in the forward trace, so they are not emitted again; a read sees the value the
    Variable had there: `values` (id(Variable) -> its value where the region began, read by
    the forward for the replay), or the value written in the replay (`replayed_write`,
    `replayed_read`). A read there must not read the Variable itself, which by the time of
    the gradient holds what the forward wrote (a random op's state: other numbers). Its
    random ops draw from the generators the forward's did, `drawn`, in order: a traced
    random op with an op seed makes a generator of its own, and the replay's must be the
    forward's (`replayed_generator`)."""
    _state.replays.append(dict(values or {}))
    _state.drawn.append(list(drawn))
    try:
        yield
    finally:
        _state.replays.pop()
        _state.drawn.pop()


def replaying_now() -> bool:
    return bool(_state.replays)


def replayed_write(variable, value) -> None:
    """The replay's write of `value` (the variable's new value): seen by later reads."""
    _state.replays[-1][id(variable)] = value
    record_write(variable)


def replayed_read(variable):
    """The value `variable` has in the replay (`replaying`), or None. As a read in the
    forward, it is a value of its own that the tapes see as a read of the Variable (not a
    function of what the replay wrote: a write passes no gradient)."""
    value = _state.replays[-1].get(id(variable)) if _state.replays else None
    if value is None:
        return None
    from ember.frontend.autodiff.custom import stop_gradient
    value = stop_gradient(value)
    if recording():
        record_read(variable, value)
    return value


def replayed_generator():
    """The generator the forward's random op drew from where the replay traces one, or
    None outside a replay (or past the forward's random ops)."""
    if not _state.drawn or not _state.drawn[-1]:
        return None
    return _state.drawn[-1].pop(0)


def replay_values() -> dict | None:
    """The innermost replay's values (id(Variable) -> value), to read and rebind; or None."""
    return _state.replays[-1] if _state.replays else None
