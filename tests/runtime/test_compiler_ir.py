"""A trace's IR at every stage from Python: ConcreteFunction.mlir(stage) past "optimized"
and Function.experimental_get_compiler_ir (runtime/compiler_ir.py), the text
ember-compile --emit prints for the same module."""

import numpy as np
import pytest

import ember as em

CPU_STAGES = ("traced", "optimized", "linalg", "bufferized", "llvm", "llvmir", "asm")


def test_every_stage_of_a_static_trace():
    f = em.function(lambda x: em.tanh(x) * 2.0)
    ir = f.experimental_get_compiler_ir(em.TensorSpec([4], em.float32))
    assert ir.stages == CPU_STAGES
    assert '"ember.tanh"' in ir() and ir() == ir("optimized")
    assert "linalg.generic" in ir("linalg") and "tensor<4xf32>" in ir("linalg")
    assert "memref<4xf32" in ir("bufferized") and "linalg.generic" in ir("bufferized")
    assert "llvm.func" in ir("llvm")
    assert "define " in ir("llvmir") and ".globl" in ir("asm")
    assert f.experimental_get_tracing_count() == 1  # one trace serves every stage
    np.testing.assert_allclose(f(np.ones(4, np.float32)).numpy(), np.tanh(1.0) * 2.0,
                               rtol=1e-6)


def test_unknown_dims_stay_unknown_and_variables_are_resources():
    v = em.Variable(np.ones(3, np.float32))
    f = em.function(lambda x: v.assign_add(em.reduce_sum(x, axis=0)))
    concrete = f.get_concrete_function(em.TensorSpec([None, 3], em.float32))
    linalg = concrete.mlir("linalg")
    assert "(%arg0: tensor<?x3xf32>, %arg1: tensor<3xf32>)" in linalg  # the Variable's value
    assert '"ember.' not in linalg and "ember.variables = array<i64: 1>" in linalg
    assert "llvm.func" in concrete.mlir("llvm")


def test_an_unknown_stage_lists_the_stages():
    concrete = em.function(lambda x: x + 1.0).get_concrete_function(em.constant(1.0))
    with pytest.raises(ValueError, match="unknown stage 'obj' of '<lambda>'; available: "
                                         "'traced', 'optimized', 'linalg'.*'asm'$"):
        concrete.mlir("obj")


def test_a_trace_the_backend_cannot_lower_says_why():
    f = em.function(lambda x: em.reshape(x, em.cast(x, em.int32)))  # a shape of ? sizes
    concrete = f.get_concrete_function(em.TensorSpec([None], em.float32))
    with pytest.raises(em.errors.BackendError, match="'ember.dynamic_reshape': its shape "
                                                     "operand tensor<.xi32> has a length "
                                                     "known only when it runs"):
        concrete.mlir("linalg")
    np.testing.assert_array_equal(f(np.array([1.0], np.float32)).numpy(), [1.0])  # (static)
    g = em.function(lambda x: em.reshape(x, em.cast(x, em.int32)))
    assert "linalg.generic" in g.get_concrete_function(em.TensorSpec([2], em.float32)).mlir(
        "linalg")  # its shape's length is 2
