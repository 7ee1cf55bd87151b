"""A user-written pass on the rewrite API, registered at run time and used in textual
pipelines: from Python (`run_pipeline`) and inside `em.function(pipeline=...)`.

Run with `.venv/bin/python examples/custom_pass.py`. The pass rewrites `ember.square(x)` into
`ember.mul(x, x)`: one `@rewrite` pattern, a `PatternPass` naming it, and `register_pass`
(one line) adds it to the registry under its `name`, so pipelines find it next to the
built-in passes. Ember's own `ember-div-to-mul` (passes/transforms/div_to_mul.py, with its
lit test lit_tests/passes/ember-div-to-mul.mlir) is written the same way. Importing this
file only registers the pass; `main()` runs the demonstration.
"""

import dataclasses
from typing import ClassVar

import numpy as np
from mlir import ir

import ember as em
from ember.dialects.ember.elementwise.binary import MulOp
from ember.dialects.ember.irdl import make_context
from ember.passes.pipeline import run_pipeline
from ember.passes.registry import register_pass
from ember.passes.rewrite import PatternPass, rewrite, same_type


@rewrite("ember.square")
def square_to_mul(op, rw):  # square(x) -> mul(x, x)
    x = op.operands[0]
    return [rw.emit(MulOp, [x, x])] if same_type(x, op.results[0]) else None


@register_pass
@dataclasses.dataclass(frozen=True)
class SquareToMulPass(PatternPass):
    """square-to-mul: square(x) -> mul(x, x), each counted as `square-to-mul`."""

    name: ClassVar[str] = "square-to-mul"
    patterns: ClassVar[tuple] = (square_to_mul,)


SOURCE = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = "ember.square"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "ember.square"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
"""

# Nested under func.func, as MLIR runs function passes; ember-cse then merges the products.
PIPELINE = "builtin.module(func.func(square-to-mul,ember-div-to-mul),ember-cse)"


def main() -> None:
    with make_context():
        module = ir.Module.parse(SOURCE)
        print(f"Before:\n{module}")
        report = run_pipeline(module, PIPELINE)
        print(f"After {PIPELINE}:\n{module}")
        print(report.format_statistics(), end="")

    @em.function(pipeline=PIPELINE)
    def scaled_square(x):
        return em.square(x) / 4.0

    x = np.array([1.0, -3.0, 0.5], np.float32)
    print(f"em.function: scaled_square({x}) = {scaled_square(x).numpy()}")
    concrete = scaled_square.get_concrete_function(x)
    print(f"Optimized:\n{concrete.mlir('optimized')}")
    print(f"Statistics: {em.passes.stats(concrete)}")


if __name__ == "__main__":
    main()
