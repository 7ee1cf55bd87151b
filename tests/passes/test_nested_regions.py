"""Passes on deeply nested control flow: each nested `scf` op is looked at a bounded number
of times, not once per path through the ops that enclose it.

`is_pure` of an scf op used to ask `is_pure` of every nested scf op, which walked that one's
body again: 2^depth walks, so ember-dce (and every pipeline containing it) hung for minutes
on 30 nested `scf.if`. Counting the calls pins the complexity without timing anything.
"""

from mlir import ir

from ember.dialects.ember.irdl import default_context
from ember.passes.analysis import effects
from ember.passes.pipeline import run_pipeline


def _nested_ifs(depth: int) -> str:
    body = '%y = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n scf.yield %y : tensor<4xf32>'
    for i in range(depth):
        body = (f"%r{i} = scf.if %b -> (tensor<4xf32>) {{\n {body}\n }} else {{\n"
                f" scf.yield %x : tensor<4xf32>\n }}\n scf.yield %r{i} : tensor<4xf32>")
    return ("func.func @g(%b: i1, %x: tensor<4xf32>) -> tensor<4xf32> {\n"
            f"  %out = scf.execute_region -> tensor<4xf32> {{\n {body}\n }}\n"
            "  return %out : tensor<4xf32>\n}\n")


def test_dce_asks_purity_a_bounded_number_of_times_per_nested_if(monkeypatch):
    depth = 12
    calls = []
    original = effects._own_pure  # every purity question ends in this per-op check

    def counting(op):
        calls.append(op.name)
        return original(op)
    monkeypatch.setattr(effects, "_own_pure", counting)
    with default_context():
        module = ir.Module.parse(_nested_ifs(depth))
    run_pipeline(module, "builtin.module(ember-dce)")
    assert str(module).count("scf.if") == depth  # all live: nothing erased
    assert len(calls) <= 8 * depth + 20  # was 49,120 is_pure calls for 12 levels


def test_purity_of_nested_control_flow_is_that_of_its_innermost_ops():
    pure = _nested_ifs(6)
    effectful = pure.replace('%y = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>',
                             '"ember.print"(%x) {end = "\\0A", format = "{}", stream = '
                             '"stdout", summarize = 3 : i64} : (tensor<4xf32>) -> ()\n %y = "ember.neg"(%x) : '
                             "(tensor<4xf32>) -> tensor<4xf32>")
    for text, expected in ((pure, True), (effectful, False)):
        with default_context():
            module = ir.Module.parse(text)
            fn = next(iter(module.body.operations)).operation
            region_op = list(fn.regions[0].blocks[0].operations)[0].operation
            assert region_op.name == "scf.execute_region"
            assert effects.is_pure(region_op) is expected
