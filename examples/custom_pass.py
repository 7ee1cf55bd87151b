"""A user-written pass, registered at run time and used in a textual pipeline.

Run with `.venv/bin/python examples/custom_pass.py`. The pass rewrites `ember.square(x)` into
`ember.mul(x, x)`; `register_pass` adds it to the registry under its `name`, so pipelines find
it next to the built-in passes (here `ember-cse` then merges the two equal products).
"""

import dataclasses
from typing import ClassVar

from mlir import ir

from ember.dialects.ember.builder import emit
from ember.dialects.ember.elementwise import MulOp
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.verifier import iter_ops
from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import functions, replace_op
from ember.passes.pipeline import run_pipeline
from ember.passes.registry import register_pass


@register_pass
@dataclasses.dataclass(frozen=True)
class SquareToMulPass(Pass):
    """square-to-mul: square(x) -> mul(x, x).

    Algorithm:
      1. Walk every function's ops (nested regions included).
      2. Replace each `ember.square` whose type is its operand's by `ember.mul` of the
         operand with itself; count `rewritten`.
    """

    name: ClassVar[str] = "square-to-mul"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for fn in functions(module):
            for op in list(iter_ops(fn)):
                x = op.operands[0] if op.name == "ember.square" else None
                if x is None or x.type != op.results[0].type:
                    continue
                with ir.InsertionPoint(op):
                    product = emit(MulOp, [x, x], loc=op.location)
                replace_op(op, [product])
                stats.add("rewritten")


SOURCE = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = "ember.square"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "ember.square"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}
"""


def main() -> None:
    with make_context():
        module = ir.Module.parse(SOURCE)
        print(f"Before:\n{module}")
        report = run_pipeline(module, "builtin.module(square-to-mul,ember-cse)")
        print(f"After square-to-mul,ember-cse:\n{module}")
        print(report.format_statistics(), end="")


if __name__ == "__main__":
    main()
