"""Ember's optimisation passes, their registry and textual pipelines.

`em.passes.register_pass(cls)` adds a user pass; `em.passes.run_pipeline(module, text)` runs
a textual pipeline; `em.passes.stats(concrete_fn)` gives the per-pass statistics of a trace.
"""

from ember.passes.base import Pass, Statistics
from ember.passes.pipeline import (PassFailure, Pipeline, PipelineError, make_pass,
                                   run_pipeline)
from ember.passes.registry import names, register_pass


def stats(concrete_function) -> dict:
    """Per-pass statistics (ops folded, hoisted, erased, ...) of a ConcreteFunction's
    optimisation pipeline: {pass name: {counter: value}}."""
    return concrete_function.pass_statistics()


__all__ = ["Pass", "PassFailure", "Pipeline", "PipelineError", "Statistics", "make_pass",
           "names", "register_pass", "run_pipeline", "stats"]
