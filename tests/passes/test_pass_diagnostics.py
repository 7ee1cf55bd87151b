"""Diagnostics from passes (passes/diagnostics.py): located warnings and remarks on the
pipeline's report, errors failing their pass, MLIR's own errors captured, ember-opt."""

import dataclasses
import doctest
from typing import ClassVar

import pytest
from mlir import ir

from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.verifier import iter_ops
from ember.passes import diagnostics, registry
from ember.passes.base import Pass, Statistics
from ember.passes.pipeline import PassFailure, run_pipeline
from ember.tools import ember_opt


@dataclasses.dataclass(frozen=True)
class _DiagnosePass(Pass):
    """Remarks on exp, warns on log, errors on sqrt (this API) and abs (MLIR's emit_error);
    probes MLIR with an invalid memref type, which must not count."""
    name: ClassVar[str] = "test-diagnose"
    per_function: ClassVar[bool] = True

    def run(self, module, stats: Statistics) -> None:
        root = module.operation if isinstance(module, ir.Module) else module
        for op in iter_ops(root):
            if op.name == "ember.exp":
                diagnostics.remark(op, "exp stays an exp")
            elif op.name == "ember.log":
                diagnostics.warning(op, "log of a value that may be negative")
            elif op.name == "ember.sqrt":
                diagnostics.error(op, "sqrt is not supported here")
            elif op.name == "ember.abs":
                op.location.emit_error("abs is not supported here")
        try:
            ir.MemRefType.get([1], ir.Type.parse("!ember.string"))
        except ir.MLIRError:
            pass


@pytest.fixture
def diagnose_pass():
    registry.register_pass(_DiagnosePass)
    yield _DiagnosePass
    registry.PASSES.pop(_DiagnosePass.name, None)
    registry._CLASSES.pop(_DiagnosePass.name, None)


@pytest.fixture
def mlir_context():
    context = make_context()
    with context, ir.Location.unknown():
        yield context


def _module(*ops: str) -> ir.Module:
    body = "\n".join(f'  %v{i} = "ember.{op}"(%x) : (tensor<4xf32>) -> tensor<4xf32> '
                     f'loc("model.py":{10 + i}:5)' for i, op in enumerate(ops))
    return ir.Module.parse(f"func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {{\n{body}\n"
                           "  return %x : tensor<4xf32>\n}")


def test_warnings_and_remarks_are_located_on_the_report(mlir_context, diagnose_pass):
    report = run_pipeline(_module("exp", "log"), "builtin.module(func.func(test-diagnose))")
    assert [d.format() for d in report.diagnostics] == [
        "model.py:10:5: remark: exp stays an exp",
        "model.py:11:5: warning: log of a value that may be negative"]


@pytest.mark.parametrize("op,message", [("sqrt", "sqrt is not supported here"),
                                        ("abs", "abs is not supported here")])
def test_an_error_fails_its_pass_located_with_the_warnings_before_it(mlir_context, diagnose_pass,
                                                                     op, message):
    # `abs` errs through MLIR's own emit_error without failing the pass: the bindings kept
    # such errors for an MLIRError, and the run's success then aborted the interpreter
    module = _module("log", op, "exp")
    with pytest.raises(PassFailure, match=f"test-diagnose failed: {message}") as caught:
        run_pipeline(module, "builtin.module(func.func(test-diagnose),ember-cse)")
    assert [d.format() for d in caught.value.diagnostics] == [
        "model.py:10:5: warning: log of a value that may be negative",
        f"model.py:11:5: error: {message}",
        "model.py:12:5: remark: exp stays an exp"]


def test_the_collectors_are_gone_after_a_run(mlir_context, diagnose_pass):
    with pytest.raises(PassFailure):
        run_pipeline(_module("sqrt"), "builtin.module(test-diagnose)")
    assert diagnostics.active() is None
    with pytest.raises(ir.MLIRError, match="invalid memref element type"):
        ir.MemRefType.get([1], ir.Type.parse("!ember.string"))  # MLIRError as before


def test_outside_a_pipeline_errors_raise_and_warnings_print(mlir_context, capsys):
    module = _module("sqrt", "log")
    sqrt, log = list(iter_ops(module.operation))[1:3]
    diagnostics.warning(log, "log of a value that may be negative")
    assert capsys.readouterr().err == \
        "model.py:11:5: warning: log of a value that may be negative\n"
    with pytest.raises(PassFailure, match="model.py:10:5: error: sqrt is not supported") as e:
        diagnostics.error(sqrt, "sqrt is not supported")
    assert e.value.diagnostics[0].line == 10
    with pytest.raises(TypeError, match=r"diagnostics.remark\(\) takes an operation or a "
                                        "location, got str"):
        diagnostics.remark("ember.exp", "no")


INPUT = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @+1 {{exp stays an exp}}
  %a = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-warning @+1 {{may be negative}}
  %b = "ember.log"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}
"""


def _opt(tmp_path, text: str, *flags: str) -> int:
    path = tmp_path / "input.mlir"
    path.write_text(text)
    return ember_opt.main([str(path), "-p", "builtin.module(func.func(test-diagnose))",
                           *flags])


def test_ember_opt_verify_diagnostics_matches_a_pass_warnings_and_remarks(tmp_path, capsys,
                                                                          diagnose_pass):
    assert _opt(tmp_path, INPUT, "--verify-diagnostics") == 0
    assert capsys.readouterr().err == ""
    unexpected = INPUT.replace("  // expected-warning @+1 {{may be negative}}\n", "")
    assert _opt(tmp_path, unexpected, "--verify-diagnostics") == 1
    assert "input.mlir:4:8: warning: log of a value that may be negative\n  (unexpected " \
           "warning)" in capsys.readouterr().err


def test_ember_opt_prints_a_pass_warnings_and_still_succeeds(tmp_path, capsys, diagnose_pass):
    assert _opt(tmp_path, INPUT) == 0
    captured = capsys.readouterr()
    assert f"{tmp_path / 'input.mlir'}:5:8: warning: log of a value that may be negative" \
        in captured.err
    assert '"ember.log"' in captured.out


def test_ember_opt_reports_a_pass_error_located_with_status_1(tmp_path, capsys, diagnose_pass):
    text = INPUT.replace('"ember.log"', '"ember.abs"').replace(
        "// expected-warning @+1 {{may be negative}}", "// expected-error @+1 {{abs is not}}")
    assert _opt(tmp_path, text, "--verify-diagnostics") == 0
    assert _opt(tmp_path, text) == 1
    assert f"{tmp_path / 'input.mlir'}:5:8: error: abs is not supported here" \
        in capsys.readouterr().err


def test_diagnostics_docstring_examples_run():
    result = doctest.testmod(diagnostics, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 3
