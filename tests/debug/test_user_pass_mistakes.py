"""Mistakes a pass author makes get errors that name them, not "internal error" (issue 16's
new-user trial): a class that is no Pass, an option type a pipeline cannot spell, a
non-kebab name, a pass that raises, a pattern on an op the dialect lacks, and --print-ir-*
or --list-passes with plugin passes; and a pass that raises leaves MLIR usable."""

import dataclasses
import os
import subprocess
import sys
import textwrap
from typing import ClassVar, Optional

import numpy as np
import pytest

import ember as em
from ember.passes import registry
from ember.passes.base import Pass
from ember.passes.pipeline import PassFailure
from ember.passes.registry import register_pass
from ember.passes.rewrite import rewrite

PLUGIN = textwrap.dedent('''
    import dataclasses
    from typing import ClassVar
    from ember.passes.base import Pass
    from ember.passes.registry import register_pass

    @register_pass
    @dataclasses.dataclass(frozen=True)
    class RaisingPass(Pass):
        """Raises, as a buggy user pass does."""
        name: ClassVar[str] = "trial-raise"

        def run(self, module, stats):
            raise RuntimeError("boom from trial-raise")
''')

SOURCE = textwrap.dedent('''
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %y : tensor<4xf32>
    }
''')


def _ember_opt(*args, cwd):
    return subprocess.run([sys.executable, "-m", "ember.tools.ember_opt", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "EMBER_REPRO_DIR": str(cwd / "repro")})


def test_register_pass_refuses_a_class_that_is_no_pass():
    @dataclasses.dataclass(frozen=True)
    class NotAPass:
        name: ClassVar[str] = "trial-not-a-pass"

        def run(self, module, stats):
            pass
    with pytest.raises(TypeError, match="subclass of ember.passes.base.Pass"):
        register_pass(NotAPass)
    assert "trial-not-a-pass" not in registry.PASSES


def test_register_pass_refuses_options_a_pipeline_cannot_spell():
    @dataclasses.dataclass(frozen=True)
    class MaybePass(Pass):
        name: ClassVar[str] = "trial-maybe"
        maybe: Optional[int] = None
    with pytest.raises(TypeError, match="option 'maybe' of pass class MaybePass has type"):
        register_pass(MaybePass)
    assert "trial-maybe" not in registry.PASSES


def test_register_pass_refuses_snake_case_names():
    @dataclasses.dataclass(frozen=True)
    class SnakePass(Pass):
        name: ClassVar[str] = "trial_snake"
    with pytest.raises(ValueError, match="kebab-case"):
        register_pass(SnakePass)


def test_register_pass_refuses_the_name_of_an_mlir_pass():
    """Found by a pass-researcher trial: a plugin registering "cse" silently replaced
    MLIR's in every pipeline (mlir-opt refuses a duplicate pass name)."""
    @dataclasses.dataclass(frozen=True)
    class MyCse(Pass):
        name: ClassVar[str] = "cse"

        def run(self, module, stats):
            pass
    with pytest.raises(ValueError, match="a pass named 'cse' is MLIR's; give MyCse another "
                                         "name"):
        register_pass(MyCse)
    assert "cse" not in registry.names()


def test_a_pattern_on_an_op_the_dialect_lacks_is_refused_with_a_suggestion():
    with pytest.raises(ValueError, match="no op 'ember.reduce_summ' in the ember dialect; "
                                         "did you mean 'ember.reduce_sum'"):
        rewrite("ember.reduce_summ")
    assert rewrite("arith.addi")  # other dialects' ops are MLIR's to know


def test_a_raising_user_pass_fails_naming_itself(tmp_path, unregister):
    @dataclasses.dataclass(frozen=True)
    class Boom(Pass):
        name: ClassVar[str] = "trial-boom"

        def run(self, module, stats):
            raise KeyError("no such thing")
    register_pass(Boom)
    unregister.append("trial-boom")
    f = em.function(lambda x: -x, pipeline="builtin.module(trial-boom)")
    with pytest.raises(PassFailure, match=r"pass trial-boom \(.*Boom\) raised KeyError") as info:
        f(np.ones(4, np.float32))
    assert isinstance(info.value.__cause__, KeyError)  # its traceback: the line that raised


def test_ember_opt_names_a_raising_plugin_pass_and_lists_plugin_passes(tmp_path):
    (tmp_path / "plugin.py").write_text(PLUGIN)
    (tmp_path / "f.mlir").write_text(SOURCE)
    run = _ember_opt("f.mlir", "--load-pass-plugin=plugin.py", "-p",
                     "builtin.module(trial-raise)", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert "pass trial-raise" in run.stderr and "RuntimeError: boom" in run.stderr
    assert "internal error" not in run.stderr and "reproducer written" in run.stderr
    assert "Traceback" not in run.stderr
    for flag in ("--debug", "EMBER_DEBUG=1"):  # as the error says: the pass's traceback
        env = {"EMBER_DEBUG": "1"} if flag.startswith("EMBER") else {}
        debug = subprocess.run(
            [sys.executable, "-m", "ember.tools.ember_opt", "f.mlir", "--load-pass-plugin="
             "plugin.py", "-p", "builtin.module(trial-raise)",
             *([flag] if flag == "--debug" else [])], cwd=tmp_path, capture_output=True,
            text=True, timeout=120, env={**os.environ, **env,
                                         "EMBER_REPRO_DIR": str(tmp_path / "repro")})
        assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr
        assert 'plugin.py", line 14, in run' in debug.stderr, debug.stderr
    listing = _ember_opt("--load-pass-plugin=plugin.py", "--list-passes", cwd=tmp_path)
    assert listing.returncode == 0 and "trial-raise" in listing.stdout


def test_print_ir_flags_refuse_a_pass_name_that_is_no_pass(tmp_path):
    (tmp_path / "f.mlir").write_text(SOURCE)
    run = _ember_opt("f.mlir", "-p", "builtin.module(ember-cse)",
                     "--print-ir-after=ember-cs", cwd=tmp_path)
    assert run.returncode == 1
    assert "unknown pass 'ember-cs'; did you mean 'ember-cse'?" in run.stderr
    run = _ember_opt("f.mlir", "-p", "builtin.module(cse)", "--print-ir-before=cse",
                     cwd=tmp_path)
    assert run.returncode == 0 and "IR Dump Before cse" in run.stderr


@pytest.fixture
def unregister():
    names = []
    yield names
    for name in names:
        registry.PASSES.pop(name, None)
        registry._CLASSES.pop(name, None)


def test_a_quoted_string_option_keeps_its_spaces_and_round_trips(unregister):
    @dataclasses.dataclass(frozen=True)
    class TagPass(Pass):
        name: ClassVar[str] = "trial-tag"
        tag: str = "none"
    register_pass(TagPass)
    unregister.append("trial-tag")
    from ember.passes.pipeline import Pipeline, PipelineError
    for text, tag in (('trial-tag{tag="a b"}', "a b"), ("trial-tag{tag='x y z'}", "x y z"),
                      ('trial-tag{tag="ab"}', "ab"), ("trial-tag{tag=ab}", "ab")):
        pipeline = Pipeline.parse(text)
        assert pipeline.steps[0].tag == tag
        assert Pipeline.parse(str(pipeline)).steps[0].tag == tag
    with pytest.raises(PipelineError, match="unterminated"):
        Pipeline.parse('trial-tag{tag="a b}')


def test_replaying_a_reproducer_of_a_plugin_pass_without_the_plugin_says_what_to_add(
        tmp_path):
    (tmp_path / "plugin.py").write_text(PLUGIN)
    (tmp_path / "f.mlir").write_text(SOURCE)
    run = _ember_opt("f.mlir", "--load-pass-plugin=plugin.py", "-p",
                     "builtin.module(trial-raise)", cwd=tmp_path)
    repro = next((tmp_path / "repro").glob("*.mlir"))
    replay = _ember_opt(str(repro), "--run-reproducer", cwd=tmp_path)
    assert replay.returncode == 1 and "internal error" not in replay.stderr
    assert "unknown pass 'trial-raise'" in replay.stderr
    assert "--load-pass-plugin=FILE.py" in replay.stderr
    del run


UNWIND = textwrap.dedent('''
    import dataclasses
    from typing import ClassVar
    from mlir import ir
    from ember.backends.cuda.backend import CudaBackend
    from ember.dialects.ember.irdl import default_context
    from ember.passes.base import Pass
    from ember.passes.pipeline import PassFailure, Pipeline
    from ember.passes.registry import register_pass
    import plugin  # registers trial-raise

    @register_pass
    @dataclasses.dataclass(frozen=True)
    class RaisingFunctionPass(Pass):
        name: ClassVar[str] = "trial-raise-fn"
        per_function: ClassVar[bool] = True

        def run(self, function, stats):
            raise ValueError("boom from trial-raise-fn")

    SOURCE = """func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
      %0 = "ember.tanh"(%x) : (tensor<64xf32>) -> tensor<64xf32>
      return %0 : tensor<64xf32>
    }"""
    with default_context():
        for text in ("trial-raise", "func.func(canonicalize),trial-raise",
                     "builtin.module(func.func(trial-raise-fn))"):
            try:
                Pipeline.parse(text).run(ir.Module.parse(SOURCE))
            except PassFailure as e:
                assert "boom from trial-raise" in str(e), e
            else:
                raise AssertionError(f"{text} did not fail")
        try:
            Pipeline.parse("trial-raise").run(ir.Module.parse(SOURCE), print_ir_after="cse")
        except PassFailure:
            pass
        assert ".entry" in CudaBackend().lower(ir.Module.parse(SOURCE), "ptx")
    print("OK")
''')


def test_a_raising_pass_leaves_the_context_usable_for_new_dialects(tmp_path):
    """What a Python pass raises reaches the caller only after MLIR's pass manager has
    unwound (signal_pass_failure). Thrown through MLIR's frames, it skipped their
    bookkeeping and left the context marked as running passes: the next pass to register a
    dialect (the CUDA backend's NVVM stage) made MLIR abort. In a subprocess, so an abort
    is counted."""
    (tmp_path / "plugin.py").write_text(PLUGIN)
    done = subprocess.run([sys.executable, "-c", UNWIND], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path,
                          env={**os.environ, "EMBER_REPRO_DIR": "off",
                               "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    assert done.stdout.strip().endswith("OK")
