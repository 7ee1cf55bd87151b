"""IR printing as MLIR's instrumentation (passes/printing.py), nested passes as passes to the
instruments (pipeline.run_nested), the nested time report (passes/timing.py) and list-valued
pass options (pipeline_syntax.py)."""

import dataclasses
import io
from typing import ClassVar

import pytest
from mlir import ir

from ember.dialects.ember.irdl import make_context
from ember.passes.base import Pass
from ember.passes.instrument import PassInstrumentation
from ember.passes.pipeline import PassFailure, PipelineError, make_pass, run_pipeline
from ember.passes.printing import ALL, PrintIR, pass_names
from ember.passes.registry import register_pass
from ember.passes.timing import PassTiming

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


def _printed(pipeline, **options):
    out = io.StringIO()
    with make_context():
        module = ir.Module.parse(SOURCE)
        try:
            run_pipeline(module, pipeline, instruments=[PrintIR(stream=out, **options)])
        except PassFailure:
            pass
    return out.getvalue()


def _headers(text):
    return [line for line in text.splitlines() if line.startswith("// -----//")]


def test_print_before_a_named_pass_only():
    text = _printed("ember-canonicalize,cse,symbol-dce", before=("cse",))
    assert _headers(text) == ["// -----// IR Dump Before cse //----- //"]
    assert '"ember.add"' not in text  # printed after ember-canonicalize removed it


def test_print_before_all_and_a_pass_inside_a_nested_upstream_element():
    assert _headers(_printed("ember-cse,func.func(cse)", before=ALL)) == [
        "// -----// IR Dump Before ember-cse (ember-cse) //----- //",
        "// -----// IR Dump Before func.func(cse) //----- //"]
    assert len(_headers(_printed("ember-cse,func.func(cse)", before=("cse",)))) == 1


def test_print_after_change_skips_passes_that_changed_nothing():
    text = _printed("ember-cse,ember-canonicalize,cse", after_change=True)
    # only ember-canonicalize (add x, 0 -> x) changes this module
    assert _headers(text) == ["// -----// IR Dump After ember-canonicalize (ember-canonicalize) "
                              "//----- //"]


def test_nested_pass_prints_its_function_or_with_module_scope_the_module():
    text = _printed("func.func(ember-canonicalize)", after=("ember-canonicalize",))
    assert _headers(text) == ["// -----// IR Dump After ember-canonicalize (ember-canonicalize) "
                              "//----- //"] * 2
    assert "module" not in text and text.count("func.func @") == 2
    text = _printed("func.func(ember-canonicalize)", after=("ember-canonicalize",),
                    module_scope=True)
    assert _headers(text) == [
        "// -----// IR Dump After ember-canonicalize (ember-canonicalize) ('func.func' "
        "operation: @f) //----- //",
        "// -----// IR Dump After ember-canonicalize (ember-canonicalize) ('func.func' "
        "operation: @g) //----- //"]
    assert text.count("module {") == 2 and text.count("func.func @") == 4


@register_pass
@dataclasses.dataclass(frozen=True)
class _EmptyingPass(Pass):
    """Test only: empties @g's body, which the verifier refuses."""
    name: ClassVar[str] = "test-printing-break"

    def run(self, module, stats):
        for op in module.body.operations:
            if op.attributes["sym_name"].value == "g":
                for inner in reversed(list(op.regions[0].blocks[0].operations)):
                    inner.operation.erase()


def test_print_after_failure_shows_the_ir_the_failing_pass_left():
    text = _printed("ember-canonicalize,test-printing-break,cse", after_failure=True)
    assert _headers(text) == [
        "// -----// IR Dump After test-printing-break Failed (test-printing-break) //----- //"]
    assert '"ember.neg"' not in text  # what the pass left: @g emptied
    upstream = _printed("cse,one-shot-bufferize", after_failure=True)
    assert _headers(upstream) == ["// -----// IR Dump After one-shot-bufferize Failed //----- //"]


def test_print_ir_after_all_is_the_same_with_instruments(capfd):
    """MLIR's own printing, and with instruments the per-element managers plus PrintIR for
    ember passes, print the same dumps (no hook passes among them)."""
    outputs = []
    for instruments in ([], [PassInstrumentation()]):
        with make_context():
            module = ir.Module.parse(SOURCE)
            run_pipeline(module, "ember-canonicalize,cse,func.func(ember-cse,canonicalize)",
                         print_ir_after_all=True, instruments=instruments)
        outputs.append(capfd.readouterr().err)
    assert "ember-instrument" not in outputs[1]
    assert "IR Dump After CSE (cse) ('builtin.module' operation)" in outputs[1]
    assert "IR Dump After ember-cse (ember-cse) ('func.func' operation: @g)" in outputs[1]
    assert outputs[0].replace(_NEST_DUMP, "") == outputs[1]


# MLIR's own printing also dumps after the Python pass that runs a nest of ember passes
_NEST_DUMP = None


@pytest.fixture(autouse=True, scope="module")
def _nest_dump():
    global _NEST_DUMP
    with make_context():
        module = ir.Module.parse(SOURCE)
        run_pipeline(module, "ember-canonicalize,cse")
        _NEST_DUMP = ("// -----// IR Dump After func.func (func.func) ('builtin.module' "
                      "operation) //----- //\n" + str(module) + "\n\n")
    yield


def test_pass_names_of_upstream_elements():
    assert pass_names("func.func(cse,canonicalize{max-iterations=2}),symbol-dce") == [
        "cse", "canonicalize", "symbol-dce"]


class _Names(PassInstrumentation):
    def __init__(self):
        self.events = []

    def run_before_pass(self, name, op):
        self.events.append(("before", name))

    def run_after_pass(self, name, op, seconds, stats):
        self.events.append(("after", name, stats and stats.as_dict()))


def test_ember_optimize_inner_passes_reach_the_instruments_nested():
    names = _Names()
    with make_context():
        run_pipeline(ir.Module.parse(SOURCE), "ember-optimize", instruments=[names])
    inner = ["ember-canonicalize", "ember-constant-fold", "ember-cse", "ember-licm",
             "ember-dce"]
    expected = [("before", "ember-optimize")]
    for _ in range(2):  # the second round changes nothing: a fixed point
        for name in inner:
            expected += [("before", name), ("after", name)]
    assert [e[:2] for e in names.events] == expected + [("after", "ember-optimize")]
    # the outer pass's counters are its inner passes' ones, prefixed
    inner_counts = {f"{e[1]}.{k}": v for e in names.events[:-1] if e[0] == "after"
                    for k, v in e[2].items()}
    assert inner_counts == {"ember-canonicalize.add-zero": 1}
    assert names.events[-1][2] == {"iterations": 2, **inner_counts}


def test_nested_time_report_lists_inner_passes_under_their_pass():
    timing = PassTiming(stream=io.StringIO())
    with make_context():
        run_pipeline(ir.Module.parse(SOURCE), "func.func(ember-optimize),cse",
                     instruments=[timing])
    lines = timing.stream.getvalue().splitlines()
    assert "Nested pass time report" in lines[1]
    names = [line[21:] for line in lines[4:]]
    assert names == ["ember-optimize", "  ember-canonicalize", "  ember-constant-fold",
                     "  ember-cse", "  ember-licm", "  ember-dce"]
    assert "(100.0%)  ember-optimize" in lines[4]


def test_no_nested_time_report_without_nested_passes():
    timing = PassTiming(stream=io.StringIO())
    with make_context():
        run_pipeline(ir.Module.parse(SOURCE), "ember-cse,cse", instruments=[timing])
    assert timing.stream.getvalue() == ""


def test_pipeline_timing_prints_the_nested_report(capfd):
    with make_context():
        run_pipeline(ir.Module.parse(SOURCE), "ember-optimize", timing=True)
    err = capfd.readouterr().err
    assert err.index("Execution time report") < err.index("Nested pass time report")
    assert "    ember-licm" in err


def test_upstream_statistics_from_mlir(capfd):
    with make_context():
        run_pipeline(ir.Module.parse(SOURCE), "ember-canonicalize,cse", statistics=True)
    err = capfd.readouterr().err
    assert "Pass statistics report" in err and "num-cse'd" in err
    with make_context():  # no upstream pass: no MLIR report (Ember's counters are the report)
        run_pipeline(ir.Module.parse(SOURCE), "ember-canonicalize", statistics=True)
    assert capfd.readouterr().err == ""


# -- list-valued options ----------------------------------------------------------------------

@register_pass
@dataclasses.dataclass(frozen=True)
class _ListOptionPass(Pass):
    """Test only: has list options."""
    name: ClassVar[str] = "test-list-options"
    names: tuple[str, ...] = ()
    sizes: tuple[int, ...] = (1, 2)
    flag: bool = False

    def run(self, module, stats):
        stats.add("sizes", sum(self.sizes))


def test_list_option_parses_and_round_trips():
    p = make_pass("test-list-options", "names=a,b,c sizes=4,8,16")
    assert p.names == ("a", "b", "c") and p.sizes == (4, 8, 16)
    assert p.spelling() == "test-list-options{names=a,b,c sizes=4,8,16}"
    assert make_pass("test-list-options", "sizes=").sizes == ()
    assert make_pass("test-list-options", "sizes=1,2").spelling() == "test-list-options"


def test_list_option_in_a_pipeline_and_its_spelling():
    with make_context():
        report = run_pipeline(ir.Module.parse(SOURCE),
                              "test-list-options{sizes=1,2,3 names=x},cse")
    assert report.statistics[0].as_dict() == {"sizes": 6}
    from ember.passes.pipeline import Pipeline
    text = "builtin.module(test-list-options{names=x sizes=1,2,3},cse)"
    assert str(Pipeline.parse("test-list-options{sizes=1,2,3 names=x},cse")) == text
    assert str(Pipeline.parse(text)) == text


@pytest.mark.parametrize("options, message", [
    ("sizes=1,x,3", "element #1 of option 'sizes' of test-list-options expects an integer, "
                    "got 'x'"),
    ("sizes=1,,3", "option 'sizes' of test-list-options has an empty element #1 in '1,,3'"),
    ("names=a, flag=true", "has an empty element #1"),
])
def test_bad_list_elements_are_named(options, message):
    with pytest.raises(PipelineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_pass("test-list-options", options)
