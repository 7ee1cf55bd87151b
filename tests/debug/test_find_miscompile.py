"""em.debug.find_miscompile: the first pass (or lowering and codegen) whose output differs
from the trace on the interpreter, and the reproducer that replays the bisection."""

import pathlib
import shlex
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember as em
from ember.runtime import repro_bisect

A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
B = np.array([[0.5, -1.0, 7.0], [2.0, 9.0, -3.0]], np.float32)


def _ember_opt_argv(command: str) -> list[str]:
    argv = shlex.split(command)
    assert argv[0] == "ember-opt"
    return [str(pathlib.Path(sys.executable).with_name("ember-opt"))] + argv[1:]


def test_planted_wrong_rewrite_is_named_and_its_reproducer_fails_the_same_way(planted,
                                                                              repro_dir):
    @em.function(pipeline=f"ember-optimize,{planted.NAME},ember-cse")
    def f(a, b):
        return em.subtract(a, b) * 2.0 + 1.0

    found = em.debug.find_miscompile(f, A, B)

    assert found is not None and found.pass_name == planted.NAME
    assert '"ember.sub"(%arg0, %arg1)' in found.before
    assert '"ember.sub"(%arg1, %arg0)' in found.after
    assert pathlib.Path(found.reproducer).parent == repro_dir
    assert f"after '{planted.NAME}'" in str(found) and found.command in str(found)
    text = pathlib.Path(found.reproducer).read_text()
    assert f'pipeline: "builtin.module({planted.NAME})"' in text
    assert "--load-pass-plugin=" in found.command and "planted_pass.py" in found.command

    rerun = subprocess.run(_ember_opt_argv(found.command), capture_output=True, text=True,
                           timeout=300)
    assert rerun.returncode == 1, rerun.stderr
    assert f"differs after '{planted.NAME}'" in rerun.stderr
    assert f"first differs from the traced module's after '{planted.NAME}'" in rerun.stdout


def test_a_correct_pipeline_agrees_through_compiled_code(repro_dir):
    @em.function
    def f(a, b):
        return em.reduce_sum(em.subtract(a, b) * a, axis=1) + 1.0

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a step left unchecked would warn
        assert em.debug.find_miscompile(f, A, B) is None
    assert not repro_dir.exists()


def test_tensor_specs_bisect_on_seeded_random_inputs(planted, repro_dir):
    @em.function(pipeline=planted.NAME)
    def f(a, b):
        return a - b

    spec = em.TensorSpec([None, 4], em.float32)
    found = em.debug.find_miscompile(f, spec, spec, compiled=False, seed=7)
    assert found.pass_name == planted.NAME
    inputs = repro_bisect.load_inputs(found.command.split("--inputs ")[1].split()[0])
    assert [a.shape for a in inputs] == [(repro_bisect.DYNAMIC_DIM, 4)] * 2
    again = em.debug.find_miscompile(f, spec, spec, compiled=False, seed=7)
    assert again.reproducer == found.reproducer  # same seed, same inputs, same file


def test_lowering_and_codegen_is_one_step_when_compiled_code_differs(monkeypatch, repro_dir):
    real = repro_bisect.compile_function

    def off_by_one(*args, **kwargs):
        exe = real(*args, **kwargs)
        return lambda arrays: [np.asarray(r) + 1 for r in exe(arrays)]

    monkeypatch.setattr(repro_bisect, "compile_function", off_by_one)

    @em.function
    def f(a):
        return a * 3.0

    found = em.debug.find_miscompile(f, A)
    assert found.pass_name == repro_bisect.LOWERING
    assert "define" in found.after  # the LLVM IR it became
    assert "result #0 differs" in found.difference


def test_steps_the_interpreter_cannot_run_are_reported_not_passed(repro_dir):
    @em.function
    def f(a):
        return a * 3.0

    with pytest.warns(UserWarning, match="interpreter cannot run the IR after "
                                         "'convert-ember-to-linalg'"):
        found = em.debug.find_miscompile(f, A, pipeline="ember-canonicalize,"
                                         "convert-ember-to-linalg")
    assert found is None


def test_a_function_calling_python_is_refused():
    @em.function
    def f(a):
        return em.py_function(lambda x: x, [a], em.float32)

    with pytest.raises(em.errors.BisectError, match="calls Python"):
        em.debug.find_miscompile(f, A)


def test_bisect_names_the_missing_function():
    text = "func.func @g(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}"
    with pytest.raises(repro_bisect.BisectError, match="no function @f; it has @g"):
        repro_bisect.bisect(text, "", "f")


def test_inputs_that_do_not_fit_are_refused():
    text = "func.func @g(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}"
    with pytest.raises(repro_bisect.BisectError, match=r"input #0 of @g is float64\[3\]"):
        repro_bisect.bisect(text, "", "g", [np.zeros(3)])


def test_the_backend_transform_that_matters_is_named(monkeypatch, repro_dir):
    real = repro_bisect.compile_function

    def wrong_when_llvm_optimises(text, symbol, types, backend, **kwargs):
        exe = real(text, symbol, types, backend, **kwargs)
        if backend.options.opt_level == 0:
            return exe
        return lambda arrays: [np.asarray(r) * 2 for r in exe(arrays)]

    monkeypatch.setattr(repro_bisect, "compile_function", wrong_when_llvm_optimises)

    @em.function
    def f(a):
        return a + 1.0

    found = em.debug.find_miscompile(f, A)
    assert found.pass_name == repro_bisect.LOWERING
    assert found.notes == ["the output agrees with LLVM's optimisation turned off "
                           "(opt_level=0)"]
    assert "note: the output agrees with LLVM's optimisation turned off" in str(found)


MULTI = """func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @g(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = func.call @h(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "ember.add"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}
func.func private @g(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.sub"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @h(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.mul"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}"""


def test_a_nested_culprit_is_narrowed_to_the_function_it_breaks(planted, repro_dir):
    found, notes = repro_bisect.bisect(MULTI, f"func.func(cse,{planted.NAME}),ember-dce", "f",
                                       compiled=False)
    assert found.pass_name == f"func.func({planted.NAME})"
    assert notes == [f"run on one function at a time, 'func.func({planted.NAME})' changes "
                     "the output on @g"]
