"""Call-time specialisation keeps the IR valid, and no invalid IR reaches upstream passes.

Specialising a `?`-typed argument to this call's static type used to retype it in place, so
an `scf.while` carrying the argument got a static initial value for a `?` loop variable;
one-shot bufferization then aborted the process ("expected same shape"). Now the users that
pin the old type see a `tensor.cast` back to it, and every upstream pipeline verifies its
input first, turning invalid IR into an error with MLIR's diagnostics."""

import os
import re
import subprocess
import sys
import tempfile
import textwrap
import warnings

import numpy as np
import pytest
from mlir import ir

import ember as em
from ember.backends.cpu import backend as cpu_backend
from ember.backends.cpu.compiler import NotCompilable, specialize
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.types import TensorType
from ember.passes.pipeline import PassFailure, run_pipeline
from ember.runtime.executor import InterpreterFallbackWarning

_LOOP_WRITING_A_VARIABLE = textwrap.dedent("""
    import numpy as np, ember as em

    def make():
        v = em.Variable(np.zeros(4, np.float32))

        def f(x):
            def body(i, acc):
                v.assign(acc)
                return i + 1, acc * 2.0
            _, acc = em.while_loop(lambda i, acc: i < 3, body, (0, x))
            return em.reduce_sum(acc)
        return v, f
""")


def test_loop_over_dynamic_argument_writing_a_variable_runs_in_subprocess():
    code = _LOOP_WRITING_A_VARIABLE + textwrap.dedent("""
        import warnings
        from ember.runtime.executor import InterpreterFallbackWarning
        warnings.simplefilter("error", InterpreterFallbackWarning)
        v, f = make()
        g = em.function(f, input_signature=[em.TensorSpec([None], em.float32)])
        out = g(np.arange(4, dtype=np.float32))
        print(float(out), v.numpy().tolist())
    """)
    env = dict(os.environ, EMBER_CACHE_DIR=tempfile.mkdtemp(prefix="ember-test-cache-"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "48.0 [0.0, 4.0, 8.0, 12.0]"


def test_loop_over_dynamic_argument_writing_a_variable_matches_eager():
    scope: dict = {}
    exec(_LOOP_WRITING_A_VARIABLE, scope)
    x = np.arange(4, dtype=np.float32) - 2.0
    v_eager, f_eager = scope["make"]()
    want = f_eager(em.constant(x))
    v, f = scope["make"]()
    g = em.function(f, input_signature=[em.TensorSpec([None], em.float32)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        got = g(x)
    assert float(got) == float(want)
    np.testing.assert_array_equal(v.numpy(), v_eager.numpy())
    assert g.get_concrete_function()._executor.compiled_shapes


_WHILE_OVER_ARG = """
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = scf.while (%a = %x) : (tensor<?xf32>) -> tensor<?xf32> {
    %s = "ember.reduce_sum"(%a) {axes = array<i64: 0>, keepdims = false}
        : (tensor<?xf32>) -> tensor<f32>
    %z = "ember.constant"() {value = dense<1.0e3> : tensor<f32>} : () -> tensor<f32>
    %l = "ember.less"(%s, %z) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c = tensor.extract %l[] : tensor<i1>
    scf.condition(%c) %a : tensor<?xf32>
  } do {
  ^bb0(%a: tensor<?xf32>):
    %n = "ember.add"(%a, %a) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    scf.yield %n : tensor<?xf32>
  }
  return %0 : tensor<?xf32>
}
"""


def test_specialize_casts_arguments_for_users_that_pin_their_type():
    grows = _WHILE_OVER_ARG.replace(
        '%n = "ember.add"(%a, %a) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>',
        "%n = tensor.concat dim(0) %a, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>")
    module = specialize(grows, "f", [TensorType(em.float32, (4,))])
    with module.context:
        module.operation.verify()  # raised before: the loop's operand was retyped in place
    text = str(module)
    assert "tensor.cast %arg0 : tensor<4xf32> to tensor<?xf32>" in text
    assert "(%arg1 = %cast) : (tensor<?xf32>) -> tensor<?xf32>" in text


def test_specialize_gives_a_loop_that_keeps_its_type_the_static_type():
    module = specialize(_WHILE_OVER_ARG, "f", [TensorType(em.float32, (4,))])
    with module.context:
        module.operation.verify()
    text = str(module)
    assert "(%arg1 = %arg0) : (tensor<4xf32>) -> tensor<4xf32>" in text
    assert re.search(r"scf.yield %\w+ : tensor<4xf32>", text)


def test_specialize_rejects_argument_types_that_do_not_fit():
    with pytest.raises(NotCompilable, match=r"@f argument #0 has type tensor<\?xf32>: "
                                            r"tensor<2x2xf32> is not a refinement"):
        specialize(_WHILE_OVER_ARG, "f", [TensorType(em.float32, (2, 2))])


def _invalid_module() -> ir.Module:
    """A scf.while whose initial value no longer has its loop variable's type."""
    module = ir.Module.parse(_WHILE_OVER_ARG)
    block = module.body.operations[0].regions[0].blocks[0]
    block.arguments[0].set_type(ir.Type.parse("tensor<4xf32>"))
    return module


def test_backend_verifies_ir_before_upstream_passes():
    with default_context():
        module = _invalid_module()
        with pytest.raises(cpu_backend.BackendError,
                           match=r"bufferized stage failed: the IR is invalid before upstream "
                                 r"pipeline 'one-shot-bufferize.*"
                                 r"func.func' op type of entry block argument #0"):
            cpu_backend.CpuBackend().make_bufferized(module)


def test_pipeline_verifies_ir_before_upstream_passes():
    with default_context():
        module = _invalid_module()
        with pytest.raises(PassFailure, match=r"the IR is invalid before upstream pipeline "
                                              r"'canonicalize': .*entry block argument #0"):
            run_pipeline(module, "canonicalize", verify_each=False)
