"""ember-optimize: the default optimisation pipeline that `em.function` runs on traced IR
(upstream: a `canonicalize,cse,loop-invariant-code-motion,symbol-dce` pipeline iterated by the
greedy driver; ours iterates the whole sequence because each pass opens work for the others).

One rewrite enables another: canonicalisation exposes constants to fold, folding makes
expressions equal for CSE, CSE makes loop bodies invariant for LICM, and each leaves dead ops
for DCE. So the sequence runs until nothing changes, with a cap against passes that would
rewrite back and forth forever.

Algorithm:
  1. Instantiate the passes through the registry, in order: `ember-canonicalize`,
     `ember-constant-fold`, `ember-cse`, `ember-licm`, `ember-dce`.
  2. Run them in sequence (pipeline.run_nested: instruments, `--timing` and IR printing
     see each inner pass); add each one's counters to this pass's statistics as
     `<pass>.<counter>` (`ember-dce.erased`); count `iterations`.
  3. Stop after a round in which no pass counted a change and the number of ops stayed the
     same (a fixed point), or after `max-iterations` rounds.

Side effects (variable writes, prints, host calls) are kept, in order: every inner pass
leaves them alone.

Before:
    %c = "ember.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    %0 = "ember.mul"(%c, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %1 = "ember.add"(%x, %0) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %2 = "ember.add"(%x, %0) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %3 = "ember.mul"(%1, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
After:
    %c = "ember.constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
    %0 = "ember.add"(%x, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %1 = "ember.mul"(%0, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
"""

from __future__ import annotations

import dataclasses
import functools
from typing import ClassVar

from mlir import ir

from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import count_ops
from ember.passes.pipeline import run_nested
from ember.passes.pipeline_syntax import PipelineError, make_pass

# The order matters: canonicalisation and folding create the equal expressions CSE merges
# and the invariant ones LICM hoists; DCE runs last to sweep what they all left behind.
STEPS = ("ember-canonicalize", "ember-constant-fold", "ember-cse", "ember-licm", "ember-dce")


@dataclasses.dataclass(frozen=True)
class OptimizePass(Pass):
    name: ClassVar[str] = "ember-optimize"
    per_function: ClassVar[bool] = True
    max_iterations: int = 4

    def __post_init__(self):
        if self.max_iterations < 1:
            raise PipelineError(f"option 'max-iterations' of {self.name} must be at least 1, "
                                f"got {self.max_iterations}")

    def run(self, module: ir.Module, stats: Statistics) -> None:
        passes = _steps()
        for _ in range(self.max_iterations):
            stats.add("iterations")
            before = count_ops(module)
            changed = False
            for inner in passes:
                counts = run_nested(inner, module).as_dict()
                for counter, n in counts.items():
                    stats.add(f"{inner.name}.{counter}", n)
                changed |= any(counts.values())
            if not changed and count_ops(module) == before:
                return


# Built on the first run, not when the pipeline is parsed: every em.function parses its
# pipeline, and a call whose code is in the compile cache runs no pass, so the five passes
# (and the rewrite machinery they share) load only when something is compiled.
@functools.lru_cache(maxsize=1)
def _steps() -> tuple:
    return tuple(make_pass(step) for step in STEPS)
