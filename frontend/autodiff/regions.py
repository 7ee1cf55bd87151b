"""What the tapes see of a region (a branch or a loop body) traced while they record.

While a region is traced the tapes record its ops as usual; when it is done those entries
are dropped (their values live only inside the region) and the control-flow op is recorded
as one entry whose inputs are the values the region read from outside (`region`, `record`).

The gradient traces the region again (control.gradient_of). Its Variable reads must see the
values the forward's reads saw, not what the Variables hold when the gradient runs: a region
that draws random numbers advances its generator's state Variable, and reading that again
would draw other numbers (TensorFlow keeps the forward's intermediates instead). So a
region notes the Variables it reads and writes, and the forward reads each one where the
region begins (`Region.snapshot`; a loop keeps, per iteration, the values of those its body
writes: loops.py), which the replay's reads see (recording.replaying); and the generators
its random ops drew from (an op with a seed makes its own), which the replay's draw from
again. In the compiled code
a read is the variable's current SSA value (convert-ember-to-linalg threads variables
through the function): a snapshot costs nothing. A cond traced inside a replay passes the
replay's values through its branches (`ReplayedBranches`), as a loop does (loops.py).
"""

from __future__ import annotations

import contextlib

from ember.frontend.autodiff import recording
from ember.frontend.autodiff.tape import Entry
from ember.frontend.tensor import Tensor


class Region:
    """What the tapes saw while one region was traced: per tape, the outside values read;
    and the Variables read and written in it."""

    def __init__(self):
        from ember.frontend.tracing import current_graph
        self.touched: dict[int, tuple] = {}  # id(tape) -> (tape, [values read from outside])
        self.graph = current_graph()
        self.read: dict[int, object] = {}  # id(Variable) -> Variable, in the order read
        self.written: set[int] = set()
        self.snapshots: list[tuple] = []  # (Variable, its value where the region begins)
        self.runs: list[list] = []  # per trace into it, the generators its random ops drew

    def inputs(self) -> list:
        """The outside values any tape saw the region read (no repeats, in order)."""
        seen, out = set(), []
        for _, values in self.touched.values():
            for v in values:
                if id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    def passes(self, leaves) -> None:
        """Adds the outside values among `leaves` (a region's outputs): a region that
        returns one as it is reads it with no op, so no entry of it shows the read."""
        for tape in recording.tapes():
            _, values = self.touched.setdefault(id(tape), (tape, []))
            for v in leaves:
                if isinstance(v, Tensor) and tape._connected(v) and \
                        all(x is not v for x in values):
                    values.append(v)

    # -- Variables (recording.tracking) ----------------------------------------------------

    def _record_read(self, variable, value) -> None:
        from ember.frontend.tracing import current_graph
        if current_graph() is self.graph:  # (not a nested Function's trace)
            self.read.setdefault(id(variable), variable)

    def _record_write(self, variable) -> None:
        from ember.frontend.tracing import current_graph
        if current_graph() is self.graph:
            self.written.add(id(variable))

    def rewritten(self) -> list:
        """The Variables the region reads and writes (their values change as it runs)."""
        return [v for key, v in self.read.items() if key in self.written]

    def snapshot(self, variables=None) -> None:
        """Reads each Variable the region reads (or those of `variables`) where it is
        called, before the region's op (a read costs nothing compiled: see the module)."""
        chosen = self.read.values() if variables is None else variables
        self.snapshots += [(v, v.read_value()) for v in chosen]


@contextlib.contextmanager
def region(into: Region):
    """Traces a region: its entries are dropped from the tapes at the end, and the outside
    values they read are added to `into`, as are the Variables it reads and writes."""
    marks = [(tape, len(tape._entries)) for tape in recording.tapes()]
    drawn = into.graph.replay_log.drawn
    first = len(drawn)
    try:
        with recording.tracking(into):
            yield into
    finally:
        into.runs.append(drawn[first:])
        for tape, mark in marks:
            inner = tape._entries[mark:]
            del tape._entries[mark:]
            produced = {id(o) for e in inner for o in e.outputs if o is not None}
            _, values = into.touched.setdefault(id(tape), (tape, []))
            for e in inner:
                for value in e.inputs:
                    if value is not None and id(value) not in produced and \
                            tape._connected(value) and all(v is not value for v in values):
                        values.append(value)
            for key in produced:
                tape._live.pop(key, None)


def record(inputs: list, outputs: list, backward, touched: Region | None = None) -> None:
    """Records a control-flow op on each recording tape that sees one of `inputs`."""
    outs = [o if isinstance(o, Tensor) else None for o in outputs]
    for tape in recording.tapes():
        if any(tape._connected(v) for v in inputs):
            tape._add(Entry(inputs, outs, backward))


class ReplayedBranches:
    """A cond traced inside a replay (see `replaying`): each branch starts from the replay's
    Variable values before the cond, and a value a branch writes becomes one more result
    of the cond, which the replay reads after it (as convert-ember-to-linalg makes a
    Variable a branch writes a result of the `scf.if`). Outside a replay it does nothing."""

    def __init__(self):
        self.values = recording.replay_values()
        self.start = dict(self.values) if self.values else None
        self.ends: list[dict] = []
        self.written: list[int] = []

    def enter(self) -> None:
        """A branch begins (or the cond is done): the values from before the cond."""
        if self.start is not None:
            self.values.clear()
            self.values.update(self.start)

    def leave(self) -> None:
        if self.start is not None:
            self.ends.append(dict(self.values))
            self.enter()

    def outputs(self, outs: list) -> list:
        """The branches' outputs with the values they leave the written Variables with."""
        if self.start is None:
            return outs
        self.written = [k for k, v in self.start.items()
                        if any(end.get(k) is not v for end in self.ends)]
        if not self.written:
            return outs
        return [(out, tuple(end.get(k, self.start[k]) for k in self.written))
                for out, end in zip(outs, self.ends)]

    def result(self, merged):
        """The cond's result without the written values, which the replay now reads."""
        if not self.written:
            return merged
        result, values = merged
        self.values.update(zip(self.written, values))
        return result
