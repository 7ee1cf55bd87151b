"""The optimisation stages of a trace: the traced module, the module the Function's pipeline
made of a copy of it (the one that runs), the pipeline's report, and each stage's text,
printed on first request (most traces never need it).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from mlir import ir

from ember.frontend.tracing import FuncGraph
from ember.backends import compile_log
from ember.backends.dumps import open_dump
from ember.passes.pipeline import PassFailure, Pipeline, PipelineReport
from ember.runtime import config


class Stages:
    """Stage name ("traced", "optimized") -> module text, printed on first request."""

    __slots__ = ("_modules", "_texts")

    def __init__(self, **modules: ir.Module):
        self._modules = modules
        self._texts: dict[str, str] = {}

    def __contains__(self, stage) -> bool:
        return stage in self._modules

    def __iter__(self):
        return iter(self._modules)

    def __getitem__(self, stage: str) -> str:
        text = self._texts.get(stage)
        if text is None:
            text = self._texts[stage] = str(self._modules[stage])
        return text


@dataclasses.dataclass(frozen=True)
class Optimized:
    """What optimising a trace gave: its stages, the pipeline's report (None without a
    pipeline) and the module to run."""
    stages: Stages
    report: Optional[PipelineReport]
    module: ir.Module


def optimize(graph: FuncGraph, pipeline: Optional[Pipeline]) -> Optimized:
    """Runs `pipeline` on a copy of the traced module (the trace itself stays as recorded,
    for `.graph` and `mlir("traced")`)."""
    dump = open_dump(graph.name)  # EMBER_DUMP_DIR
    if dump is not None:
        dump.write("traced", str(graph.module))
    if pipeline is None:
        return Optimized(Stages(traced=graph.module, optimized=graph.module), None,
                         graph.module)
    with graph.context, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            for op in graph.module.body.operations:
                op.operation.clone()
    try:
        with compile_log.stage(f"optimize {graph.name}"):
            # a user's pass is verified after it runs, so invalid IR is blamed on it
            verify = config.verify_passes() or not pipeline.is_builtin()
            report = pipeline.run(module, verify_each=verify,
                                  instruments=compile_log.instruments() +
                                  ((dump,) if dump is not None else ()))
    except PassFailure as e:
        raise PassFailure(f"optimising the trace of '{graph.name}' failed ({pipeline}): {e}",
                          e.diagnostics) from e.__cause__  # (what a user's pass raised)
    return Optimized(Stages(traced=graph.module, optimized=module), report, module)
