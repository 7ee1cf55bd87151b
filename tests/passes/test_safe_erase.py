"""A pass that erases an op whose results are still used gets a Python error naming the op
and its user (passes/safe_erase.py); the bindings, built with assertions, would abort the
process. Run in subprocesses, so a regression's abort fails the test, not the run."""

import os
import subprocess
import sys
import textwrap
import time

from mlir import ir

from ember.dialects.ember.irdl import make_context
from ember.passes.safe_erase import EraseInUseError

TEXT = """
func.func @f(%x: tensor<f32>) -> tensor<f32> {
  %0 = "ember.add"(%x, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "ember.mul"(%0, %0) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %2 = "ember.neg"(%x) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
"""


def run(code: str, tmp_path) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"  # (a file, older than AutoGraph's 5 s: its source is read)
    script.write_text(textwrap.dedent(code))
    os.utime(script, (time.time() - 3600,) * 2)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, check=False)


def ops_of(module):
    return list(module.body.operations[0].regions[0].blocks[0].operations)


def test_erasing_a_used_op_raises_and_leaves_the_ir_as_it_was():
    with make_context():
        module = ir.Module.parse(TEXT)
        add, mul, neg, _ = ops_of(module)
        try:
            add.erase()
        except EraseInUseError as e:
            message = str(e)
        else:
            raise AssertionError("erase of a used op did not raise")
        assert "cannot erase 'ember.add'" in message and "'ember.mul'" in message
        assert "2 use(s) in all" in message and "replace_all_uses_with" in message
        assert module.operation.verify()
        neg.erase()  # unused: erased as before
        names = [op.name for op in ops_of(module)]
        assert names == ["ember.add", "ember.mul", "func.return"]


def test_erasing_in_the_right_order_works_through_opviews_too():
    with make_context():
        module = ir.Module.parse(TEXT)
        add, mul, neg, ret = ops_of(module)
        ret.operation.erase()  # an Operation
        mul.erase()  # an OpView
        add.operation.erase()
        assert [op.name for op in ops_of(module)] == ["ember.neg"]


def test_a_raw_pass_erasing_a_used_op_fails_the_compile_with_the_reason(tmp_path):
    done = run("""
        import dataclasses
        from typing import ClassVar
        import ember as em
        from ember.passes import register_pass
        from ember.passes.base import Pass

        @register_pass
        @dataclasses.dataclass(frozen=True)
        class EraseFirstAdd(Pass):
            name: ClassVar[str] = "test-erase-first-add"
            def run(self, module, stats):
                for op in module.body.operations[0].regions[0].blocks[0].operations:
                    if op.name == "ember.add":
                        op.erase()
                        return

        f = em.function(lambda x: (x + 1.0) * 2.0, pipeline="test-erase-first-add")
        try:
            f(em.constant(1.0))
        except Exception as e:
            print(type(e).__name__, e)
        """, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "PassFailure" in done.stdout and "pass test-erase-first-add" in done.stdout
    assert "cannot erase 'ember.add'" in done.stdout and "'ember.mul'" in done.stdout
