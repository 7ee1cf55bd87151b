"""Wall time of the passes a pass runs inside itself (`ember-optimize`'s canonicalize, fold,
cse, licm and dce rounds), reported as MLIR's `--mlir-timing` nests a pipeline's passes
under it.

MLIR's own timing report (`PassManager.enable_timing`) sees each ember pass as one pass:
the passes it runs through `pipeline.run_nested` are invisible to it. This instrument sees
them (they reach the instruments nested between the outer pass's hooks) and, after the
pipeline, prints a second report with each such pass's total over all its runs:

    ===-------------------------------------------------------------------------===
                           ... Nested pass time report ...
    ===-------------------------------------------------------------------------===
      ----Wall Time----  ----Name----
        0.0123 (100.0%)  ember-optimize
        0.0040 ( 32.5%)    ember-canonicalize
"""

from __future__ import annotations

import sys
from typing import Optional, TextIO

from mlir import ir

from ember.passes.base import Statistics
from ember.passes.instrument import PassInstrumentation

_RULE = "===" + "-" * 73 + "==="


class PassTiming(PassInstrumentation):
    """Totals the wall time of nested passes; writes the report after the pipeline."""

    def __init__(self, stream: Optional[TextIO] = None):
        self.stream = stream
        self._open: list[str] = []
        self.totals: dict[tuple, float] = {}  # path of names -> seconds, in first-run order

    def run_before_pass(self, name: str, op: ir.Operation) -> None:
        self._open.append(name)
        self.totals.setdefault(tuple(self._open), 0.0)

    def run_after_pass(self, name: str, op: ir.Operation, seconds: float,
                       stats: Optional[Statistics]) -> None:
        path = tuple(self._open)
        self._open.pop()
        self.totals[path] += seconds

    def run_after_pass_failed(self, name: str, op: ir.Operation,
                              error: BaseException) -> None:
        self._open.clear()

    def run_after_pipeline(self, op: ir.Operation) -> None:
        text = self.report()
        if text:
            stream = self.stream or sys.stderr
            stream.write(text)
            stream.flush()
        self.totals.clear()

    def report(self) -> str:
        """The nested passes' report ("" when no pass ran another)."""
        parents = {path[:1] for path in self.totals if len(path) > 1}
        if not parents:
            return ""
        lines = [_RULE, " " * 25 + "... Nested pass time report ...", _RULE,
                 "  ----Wall Time----  ----Name----"]
        for root in (p for p in self.totals if p in parents):
            whole = self.totals[root] or 1e-12
            for path, seconds in self.totals.items():
                if path[:1] == root:
                    indent = "  " * (len(path) - 1)
                    lines.append(f"  {seconds:8.4f} ({100 * seconds / whole:5.1f}%)  "
                                 f"{indent}{path[-1]}")
        return "\n".join(lines) + "\n"
