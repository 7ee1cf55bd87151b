"""--opt-bisect-limit counts pattern applications of the rewrite API (passes/rewrite.py): a
refused application leaves its op as it was and erases what the pattern had built."""

import io

from mlir import ir

from ember.dialects.ember.irdl import make_context
from ember.passes import bisect_limit
from ember.passes.pipeline import run_pipeline

SOURCE = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "ember.constant"() {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %a = "ember.div"(%x, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = "ember.div"(%a, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %d = "ember.div"(%b, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}
"""


def _run(limit: int) -> tuple[str, list[str]]:
    stream = io.StringIO()
    with make_context():
        module = ir.Module.parse(SOURCE)
        with bisect_limit.limited(limit, stream):
            run_pipeline(module, "builtin.module(func.func(ember-div-to-mul))")
        return str(module), stream.getvalue().splitlines()


def test_only_the_first_pattern_applications_run():
    for limit, muls in ((1, 0), (2, 1), (3, 2), (4, 3), (-1, 3)):
        text, lines = _run(limit)
        assert text.count('"ember.mul"') == muls, (limit, text)
        assert text.count('"ember.div"') == 3 - muls
        # what a refused application built is gone: one constant per rewrite, plus the 4.0
        assert text.count('"ember.constant"') == (1 + muls if muls < 3 else 3)
        assert lines[0] == "BISECT: running pass (1) ember-div-to-mul on func.func (@f)"
        assert lines[1].startswith("BISECT: ") and lines[1].endswith(
            "pattern div-pow2 on ember.div")


def test_refused_applications_are_numbered_and_said_not_run():
    _, lines = _run(2)
    assert lines[1] == "BISECT: running pass (2) pattern div-pow2 on ember.div"
    assert lines[2] == "BISECT: NOT running pass (3) pattern div-pow2 on ember.div"
    assert all("NOT running" in line for line in lines[2:])


def test_without_a_limit_nothing_is_counted():
    with make_context():
        module = ir.Module.parse(SOURCE)
        run_pipeline(module, "builtin.module(func.func(ember-div-to-mul))")
        assert str(module).count('"ember.mul"') == 3
    assert bisect_limit.applications() == 0
