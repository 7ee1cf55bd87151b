"""Pass instrumentation (passes/instrument.py): the hooks see every ember and upstream pass,
nested ones per function, with statistics, and the pass that failed."""

import dataclasses
from typing import ClassVar

import pytest
from mlir import ir

from ember.dialects.ember.irdl import make_context
from ember.passes.base import Pass
from ember.passes.instrument import PassInstrumentation
from ember.passes.pipeline import PassFailure, run_pipeline
from ember.passes import registry
from ember.passes.registry import register_pass

SOURCE = """
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %z = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %y = "ember.add"(%x, %z) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}
func.func @g(%x: tensor<4xi32>) -> tensor<4xi32> {
  %y = "ember.neg"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %y : tensor<4xi32>
}
"""


class Record(PassInstrumentation):
    def __init__(self):
        self.events = []

    def run_before_pass(self, name, op):
        self.events.append(("before", name, op.name))

    def run_after_pass(self, name, op, seconds, stats):
        assert seconds >= 0
        self.events.append(("after", name, op.name, stats and stats.as_dict()))

    def run_after_pass_failed(self, name, op, error):
        self.events.append(("failed", name, op.name, type(error).__name__))


def _run(pipeline, source=SOURCE):
    record = Record()
    with make_context():
        module = ir.Module.parse(source)
        try:
            run_pipeline(module, pipeline, instruments=[record])
        finally:
            text = str(module)
    return record.events, text


def test_every_pass_in_order_with_statistics():
    events, _ = _run("ember-canonicalize,cse,func.func(canonicalize,ember-cse),symbol-dce")
    assert events == [
        ("before", "ember-canonicalize", "builtin.module"),
        ("after", "ember-canonicalize", "builtin.module", {"add-zero": 1}),
        ("before", "cse", "builtin.module"),
        ("after", "cse", "builtin.module", None),
        ("before", "canonicalize", "func.func"),
        ("after", "canonicalize", "func.func", None),
        ("before", "ember-cse", "func.func"),
        ("after", "ember-cse", "func.func", {}),
        ("before", "canonicalize", "func.func"),
        ("after", "canonicalize", "func.func", None),
        ("before", "ember-cse", "func.func"),
        ("after", "ember-cse", "func.func", {}),
        ("before", "symbol-dce", "builtin.module"),
        ("after", "symbol-dce", "builtin.module", None),
    ]


@dataclasses.dataclass(frozen=True)
class _BreakingPass(Pass):
    """Test only: empties @g's body, which the verifier refuses."""
    name: ClassVar[str] = "test-instrument-break"

    def run(self, module, stats):
        for op in module.body.operations:
            if op.sym_name.value == "g":
                op.regions[0].blocks[0].operations[-1].erase()


@pytest.fixture
def breaking_pass():
    register_pass(_BreakingPass)
    yield
    registry.PASSES.pop(_BreakingPass.name)
    registry._CLASSES.pop(_BreakingPass.name)


def test_the_failing_pass_is_reported(breaking_pass):
    record = Record()
    with make_context():
        module = ir.Module.parse(SOURCE)
        with pytest.raises(PassFailure):
            run_pipeline(module, "ember-canonicalize,test-instrument-break,cse",
                         instruments=[record])
    assert record.events[-1] == ("failed", "test-instrument-break", "builtin.module",
                                 "PassFailure")
    assert [e[0] for e in record.events] == ["before", "after", "before", "failed"]


def test_an_upstream_failure_names_the_upstream_pass():
    source = """
    func.func @g(%x: i32) -> i32 {
      %c = arith.constant 1 : i32
      %a = arith.addi %x, %c : i32
      %b = arith.addi %a, %c : i32
      return %b : i32
    }"""
    events = []
    with pytest.raises(PassFailure):
        events = _run("cse,func.func(canonicalize{test-convergence=true max-iterations=1}),"
                      "symbol-dce", source)
    record = Record()
    with make_context():
        module = ir.Module.parse(source)
        with pytest.raises(PassFailure):
            run_pipeline(module, "cse,func.func(canonicalize{test-convergence=true "
                                 "max-iterations=1}),symbol-dce", instruments=[record])
    assert not events
    assert record.events[-2:] == [
        ("before", "func.func(canonicalize{test-convergence=true max-iterations=1})",
         "builtin.module"),
        ("failed", "func.func(canonicalize{test-convergence=true max-iterations=1})",
         "builtin.module", "PassFailure")]


def test_no_instruments_no_hooks():
    _, text = _run("ember-canonicalize,cse")
    assert "ember.add" not in text
