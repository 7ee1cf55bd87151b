"""A Python pass that raises must leave the MLIR context usable: what it raised reaches the
caller only after MLIR's pass manager has unwound (signal_pass_failure), so MLIR's own
bookkeeping runs. Thrown through MLIR's frames, the exception skipped it and the context
stayed marked as running passes: the next pass to register a dialect (the CUDA backend's
NVVM stage) made MLIR abort the process. Run in a subprocess, so an abort is counted."""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import dataclasses
    from typing import ClassVar
    from mlir import ir
    from ember.backends.cuda.backend import CudaBackend
    from ember.dialects.ember.irdl import default_context
    from ember.passes.base import Pass
    from ember.passes.pipeline import PassFailure, Pipeline
    from ember.passes.registry import register_pass

    @register_pass
    @dataclasses.dataclass(frozen=True)
    class RaisingPass(Pass):
        name: ClassVar[str] = "unwind-raise"

        def run(self, module, stats):
            raise ValueError("boom")

    @register_pass
    @dataclasses.dataclass(frozen=True)
    class RaisingFunctionPass(Pass):
        name: ClassVar[str] = "unwind-raise-fn"
        per_function: ClassVar[bool] = True

        def run(self, function, stats):
            raise ValueError("boom")

    SOURCE = """func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
      %0 = "ember.tanh"(%x) : (tensor<64xf32>) -> tensor<64xf32>
      return %0 : tensor<64xf32>
    }"""
    with default_context():
        for text in ("unwind-raise", "func.func(canonicalize),unwind-raise",
                     "builtin.module(func.func(unwind-raise-fn))"):
            module = ir.Module.parse(SOURCE)
            try:
                Pipeline.parse(text).run(module)
            except PassFailure as e:
                assert "boom" in str(e), e
            else:
                raise AssertionError(f"{text} did not fail")
        try:
            Pipeline.parse("unwind-raise").run(ir.Module.parse(SOURCE), print_ir_after="cse")
        except PassFailure:
            pass
        ptx = CudaBackend().lower(ir.Module.parse(SOURCE), "ptx")
        assert ".entry" in ptx
    print("OK")
''')


def test_a_raising_pass_leaves_the_context_usable_for_new_dialects(tmp_path):
    env = {**os.environ, "EMBER_REPRO_DIR": "off"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    assert done.stdout.strip().endswith("OK")
