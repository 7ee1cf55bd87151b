"""String tensors run on the interpreter by design: any string-typed value (an argument, a
result, an op's or a region's value) keeps a function away from the CPU compiler, even when
no string op is left in it, so the call gives eager's answer instead of aborting the process
in bufferization (strings have no memref type)."""

import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import pytest
from mlir import ir

import ember as em
from ember.backends.cpu.compiler import NotCompilable, check_compilable
from ember.runtime.executor import InterpreterFallbackWarning

WORDS = ["a", "bc"]


def test_identity_of_a_string_tensor_runs_in_subprocess():
    # This aborted in MemRefType::get: identity folds away, leaving no string op to refuse.
    env = dict(os.environ, EMBER_CACHE_DIR=tempfile.mkdtemp(prefix="ember-test-cache-"))
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c",
         "import ember as em\n"
         "print(em.function(lambda s: em.identity(s))(em.constant(['a', 'bc'])).numpy()"
         ".tolist())\n"],
        capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[b'a', b'bc']"


@pytest.mark.parametrize("fn,match", [
    (lambda s, x: (em.identity(s), x * 2.0), r"argument 0 of @\w+ is a string tensor "
                                              r"\(tensor<2x!ember.string>\)"),
    (lambda s, x: (em.cond(em.reduce_sum(x) > 0, lambda: s, lambda: s), x + 1.0),
     r"'scf.if' \(at .*\) works on string tensors"),
    (lambda s, x: (s, x + 1.0), r"argument 0 of @\w+ is a string tensor"),
], ids=["identity", "cond-of-strings", "unchanged"])
def test_functions_holding_string_values_run_on_the_interpreter(fn, match):
    s, x = em.constant(WORDS), em.constant([1.0, -3.0])
    eager = fn(s, x)
    with pytest.warns(InterpreterFallbackWarning, match=match):
        got = em.function(fn)(s, x)
    for g, e in zip(got, eager):
        np.testing.assert_array_equal(g.numpy(), e.numpy())


@pytest.mark.parametrize("body,match", [
    # returns its string argument: no op at all
    ("return %s : tensor<2x!ember.string>", r"argument 0 of @f is a string tensor"),
    # a string made by an op and dropped
    ('%c = "ember.constant"() {value = dense<"x"> : tensor<!ember.string>} : () -> '
     'tensor<!ember.string>\n  return %s : tensor<2x!ember.string>',
     r"'ember.constant' \(at .*\) works on string tensors"),
])
def test_check_compilable_refuses_any_string_typed_value(body, match):
    from ember.dialects.ember.irdl import default_context
    with default_context():
        module = ir.Module.parse("func.func @f(%s: tensor<2x!ember.string>) -> "
                                 f"tensor<2x!ember.string> {{\n  {body}\n}}")
        with pytest.raises(NotCompilable, match=match):
            check_compilable(module, "f")


def test_not_compilable_says_which_kind_of_reason():
    """The runtime decides on NotCompilable.reason, never on the message: a host callback
    runs on the host by design (quietly), a string tensor is not supported yet (it warns),
    a missing function is a bad call."""
    from ember.dialects.ember.irdl import default_context
    with default_context():
        strings = ir.Module.parse("func.func @f(%s: tensor<2x!ember.string>) -> "
                                  "tensor<2x!ember.string> {\n  return %s : "
                                  "tensor<2x!ember.string>\n}")
        with pytest.raises(NotCompilable) as caught:
            check_compilable(strings, "f")
        assert caught.value.reason is NotCompilable.Reason.UNSUPPORTED
        with pytest.raises(NotCompilable) as caught:
            check_compilable(strings, "g")
        assert caught.value.reason is NotCompilable.Reason.BAD_ARGUMENTS
    f = em.function(lambda x: em.py_function(lambda a: a, [x], em.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # host work by design: no fallback warning
        assert f(em.constant([1.0])).numpy().tolist() == [1.0]
