"""Pass instrumentation: hooks a pipeline run calls around every pass, as MLIR's
`PassInstrumentation` (`runBeforePass`, `runAfterPass`, `runAfterPassFailed`).

    class Count(PassInstrumentation):
        def __init__(self):
            self.names = []
        def run_after_pass(self, name, op, seconds, stats):
            self.names.append(name)

    run_pipeline(module, "ember-canonicalize,cse", instruments=[Count()])

Every ember pass and every upstream pipeline element (`cse`, `canonicalize{...}`,
`func.func(cse)`) is one pass to the hooks, in the order they run; an ember pass nested
under `func.func(...)` runs (and is reported) once per function. `op` is the operation the
pass runs on: the module's operation at the top level, a `func.func` when nested. `stats` is
the ember pass's `Statistics` (None for upstream passes). `seconds` is wall time, the
verifier after the pass included. `run_after_pass_failed` is called for the pass that
failed (raised, or left IR the verifier refuses) before the pipeline's error propagates;
the IR is then what the failing pass left.
"""

from __future__ import annotations

from typing import Optional

from mlir import ir

from ember.passes.base import Statistics


class PassInstrumentation:
    """Base class: every hook does nothing; override the ones you need."""

    def run_before_pass(self, name: str, op: ir.Operation) -> None:
        """Called before pass `name` runs on `op`."""

    def run_after_pass(self, name: str, op: ir.Operation, seconds: float,
                       stats: Optional[Statistics]) -> None:
        """Called after pass `name` succeeded on `op`."""

    def run_after_pass_failed(self, name: str, op: ir.Operation,
                              error: BaseException) -> None:
        """Called after pass `name` failed on `op` with `error`."""

    def run_after_pipeline(self, op: ir.Operation) -> None:
        """Called once after the whole pipeline succeeded on `op` (the module), as MLIR's
        `runAfterPipeline` is for the top-level pipeline: a place to write a report."""
