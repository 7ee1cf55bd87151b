"""Reproducers of failed pipelines (passes/reproducer.py): written for em.function compiles
and tool runs, re-run by the command in the error, placed by EMBER_REPRO_DIR."""

import os
import pathlib
import shlex
import subprocess
import sys

import numpy as np
import pytest

import ember as em
from ember.passes import reproducer
from ember.passes.pipeline import PassFailure


def test_a_failing_pass_in_em_function_leaves_a_local_reproducer(planted, repro_dir):
    @em.function(pipeline=f"ember-canonicalize,func.func(ember-cse,{planted.FAIL_NAME}),"
                          "ember-dce")
    def f(a):
        return a * 2.0

    with pytest.raises(PassFailure, match=f"{planted.FAIL_NAME} met an ember.mul") as info:
        f(np.ones(3, np.float32))
    message = str(info.value)
    path = message.split("reproducer: ")[1].split("\n")[0]
    assert pathlib.Path(path).parent == repro_dir
    text = pathlib.Path(path).read_text()
    # the IR before the failing pass, with that pass alone embedded as MLIR embeds it
    assert f'pipeline: "builtin.module(func.func({planted.FAIL_NAME}))"' in text
    assert "verify_each: true" in text and '"ember.mul"' in text
    command = message.split("run: ")[1].split("\n")[0]
    argv = shlex.split(command)
    assert argv[:3] == ["ember-opt", path, "--run-reproducer"]
    rerun = subprocess.run([str(pathlib.Path(sys.executable).with_name("ember-opt"))]
                           + argv[1:], capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 1
    assert f"{planted.FAIL_NAME} met an ember.mul" in rerun.stderr


def test_the_default_directory_is_under_the_system_temp(monkeypatch):
    monkeypatch.delenv("EMBER_REPRO_DIR", raising=False)
    assert reproducer.directory() == os.path.join(__import__("tempfile").gettempdir(),
                                                  "ember-repro")
    monkeypatch.setenv("EMBER_REPRO_DIR", "off")
    assert reproducer.directory() is None


def test_off_writes_nothing(planted, repro_dir, monkeypatch):
    monkeypatch.setenv("EMBER_REPRO_DIR", "off")

    @em.function(pipeline=f"func.func({planted.FAIL_NAME})")
    def f(a):
        return a * 2.0

    with pytest.raises(PassFailure) as info:
        f(np.ones(3, np.float32))
    assert "reproducer:" not in str(info.value)


def test_header_round_trips_and_is_what_mlir_parses():
    text = reproducer.header("builtin.module(cse)", {"function": "f", "rtol": 0.001})
    resource, extra = reproducer.read(text + "module {}\n")
    assert resource == {"pipeline": "builtin.module(cse)", "disable_threading": True,
                        "verify_each": True}
    assert extra == {"function": "f", "rtol": "0.001"}
    from mlir import ir
    from ember.dialects.ember.irdl import make_context
    with make_context() as context:
        context.attach_diagnostic_handler(lambda d: True)  # MLIR ignores unknown resources
        ir.Module.parse(text + "module {}\n")


def test_read_refuses_a_file_without_a_pipeline():
    with pytest.raises(ValueError, match="has no '{-# external_resources"):
        reproducer.read("// {-# not: here #-}\nmodule {}")


def test_a_failed_translation_leaves_an_ember_compile_reproducer(tmp_path, repro_dir):
    source = tmp_path / "bad.mlir"
    source.write_text("module {\n  llvm.func @f(%arg0: i64) -> i64 {\n"
                      "    %0 = arith.addi %arg0, %arg0 : i64\n    llvm.return %0 : i64\n"
                      "  }\n}\n")
    tool = str(pathlib.Path(sys.executable).with_name("ember-compile"))
    done = subprocess.run([tool, str(source), "--from=llvm", "--emit=llvmir"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "cannot translate 'arith.addi'" in done.stderr
    command = done.stderr.split("run: ")[1].strip()
    argv = shlex.split(command)
    assert argv[0] == "ember-compile" and pathlib.Path(argv[1]).parent == repro_dir
    again = subprocess.run([tool] + argv[1:], capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and "cannot translate 'arith.addi'" in again.stderr


def test_single_steps_cut_nests_and_upstream_lists_into_single_applications():
    from ember.passes.pipeline import Pipeline
    steps = Pipeline.parse("builtin.module(func.func(cse,canonicalize{max-iterations=3}),"
                           "ember-simplify,func.func(ember-cse,cse))").steps
    assert reproducer.single_steps(steps) == [
        "func.func(cse)", "func.func(canonicalize{max-iterations=3})", "ember-canonicalize",
        "ember-constant-fold", "ember-cse", "ember-dce", "func.func(ember-cse)",
        "func.func(cse)"]
