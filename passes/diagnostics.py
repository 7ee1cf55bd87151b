"""Diagnostics from passes: errors, warnings and remarks at an op's location, collected per
pipeline run (MLIR's `op->emitError()`, `emitWarning()`, `emitRemark()`).

    from ember.passes import diagnostics
    diagnostics.remark(op, "division by 2^k became a multiplication")
    diagnostics.warning(op, "this product overflows int32 for inputs above 46341")
    diagnostics.error(op, "cannot lower a dynamic axis")   # the pass fails once it returns

`Pipeline.run` collects every diagnostic emitted while it runs (`collect`): those of this
module and those MLIR emits itself (upstream passes' warnings and remarks, and errors that a
Python pass emits through MLIR, `op.location.emit_error(...)`), through handlers on the
context: one for the run, one around each Python pass. The bindings would otherwise keep
such an error for an `MLIRError` and, since the pass then succeeds, this build aborts on an
assertion ("unhandled captured errors"). What a pass probes (`op.verify()` in a `try`) still
raises its MLIRError: the bindings' capture of that call comes first. An error fails the pass
that emitted it once it returns: `PassFailure` with every located diagnostic of the run;
warnings and remarks are on `PipelineReport.diagnostics`. `ember-opt` prints them as
`file:line:col: warning: ...` (exit status 0 unless there was an error) and
`--verify-diagnostics` matches them with `expected-warning`/`expected-remark` comments, as
mlir-opt does.

Outside a pipeline run (a pass's `apply` called directly) `error` raises PassFailure at once
and warnings and remarks are printed to stderr, as MLIR's default handler prints them.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator, Optional

from mlir import ir

from ember.dialects.ember.verifier import Diagnostic
from ember.passes.bufferizable import PassFailure

__all__ = ["Collector", "active", "collect", "error", "remark", "warning"]

_SEVERITY = {ir.DiagnosticSeverity.ERROR: "error", ir.DiagnosticSeverity.WARNING: "warning",
             ir.DiagnosticSeverity.NOTE: "note", ir.DiagnosticSeverity.REMARK: "remark"}


class Collector:
    """The diagnostics of one pipeline run, in the order they were emitted."""

    def __init__(self):
        self.diagnostics: list[Diagnostic] = []

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def add_mlir(self, diagnostic: ir.Diagnostic) -> None:
        """Records a diagnostic MLIR emitted, then its notes."""
        self.diagnostics.append(Diagnostic.at(
            diagnostic.location, diagnostic.message, _SEVERITY.get(diagnostic.severity, "error")))
        for note in diagnostic.notes:
            self.add_mlir(note)

    def errors_after(self, mark: int) -> list[Diagnostic]:
        """The errors emitted after the first `mark` diagnostics."""
        return [d for d in self.diagnostics[mark:] if d.severity == "error"]

    def attach(self, failure: PassFailure) -> PassFailure:
        """`failure` with the run's diagnostics in the order emitted, then its own that the
        run did not collect, so a caller sees the warnings around the error too."""
        seen = {id(d) for d in self.diagnostics}
        failure.diagnostics = self.diagnostics + \
            [d for d in failure.diagnostics if id(d) not in seen]
        return failure


_ACTIVE: list[Collector] = []  # the runs in progress, innermost last


def active() -> Optional[Collector]:
    """The collector of the innermost pipeline run in progress, or None."""
    return _ACTIVE[-1] if _ACTIVE else None


@contextlib.contextmanager
def collect(context: ir.Context, into: Optional[Collector] = None) -> Iterator[Collector]:
    """Collects the diagnostics emitted while the block runs, this module's and MLIR's own
    in `context`, into `into` (a new Collector by default), which is `active()` meanwhile.

    MLIR consults the handler attached last first: errors raised inside the block by a call
    that captures them (`op.verify()`, a nested PassManager run) still reach that call."""
    found = into if into is not None else Collector()

    def handle(diagnostic: ir.Diagnostic) -> bool:
        try:
            found.add_mlir(diagnostic)
        except Exception:  # noqa: BLE001 - never raise into MLIR's diagnostic engine
            found.diagnostics.append(Diagnostic(str(diagnostic)))
        return True

    handler = context.attach_diagnostic_handler(handle)
    _ACTIVE.append(found)
    try:
        yield found
    finally:
        _ACTIVE.pop()
        handler.detach()


def _emit(op, message: str, severity: str) -> Diagnostic:
    location = op if isinstance(op, ir.Location) else getattr(op, "location", None)
    if not isinstance(location, ir.Location):
        raise TypeError(f"diagnostics.{severity}() takes an operation or a location, got "
                        f"{type(op).__name__}")
    found = Diagnostic.at(location, str(message), severity)
    collector = active()
    if collector is not None:
        collector.diagnostics.append(found)
    elif severity == "error":
        raise PassFailure(found.format(), [found])
    else:
        print(found.format(), file=sys.stderr)
    return found


def error(op, message: str) -> Diagnostic:
    """Emits an error at `op`'s location (an operation, op view or `ir.Location`); the
    pass fails once it returns (PassFailure, located). Returns the diagnostic.

    Example:
      >>> from mlir import ir
      >>> with ir.Context():
      ...     loc = ir.Location.file("model.mlir", 3, 5)
      ...     with collect(loc.context) as found:
      ...         _ = error(loc, "'ember.div' op divides by zero")
      >>> print(found.errors[0].format())
      model.mlir:3:5: error: 'ember.div' op divides by zero
    """
    return _emit(op, message, "error")


def warning(op, message: str) -> Diagnostic:
    """Emits a warning at `op`'s location; the pass goes on. Returns the diagnostic."""
    return _emit(op, message, "warning")


def remark(op, message: str) -> Diagnostic:
    """Emits a remark (what the pass did or why it did not) at `op`'s location."""
    return _emit(op, message, "remark")
