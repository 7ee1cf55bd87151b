"""LLVM-dialect -> LLVM IR translation refuses modules with any non-LLVM op, nested ones
included (the C API would crash on them rather than fail)."""

import pytest
from mlir import ir

from ember.backends.cpu.translate import TranslationError, to_llvm_ir
from ember.dialects.ember.irdl import default_context

NESTED = """
llvm.func @f(%x: f32) -> f32 {
  %0 = arith.addf %x, %x : f32
  llvm.return %0 : f32
}
"""


def test_a_nested_non_llvm_op_is_an_error_naming_it():
    with default_context():
        module = ir.Module.parse(NESTED)
        with pytest.raises(TranslationError, match="cannot translate 'arith.addf' .*lower the "
                                                   "module to the LLVM dialect first"):
            to_llvm_ir(module)


def test_an_llvm_module_translates():
    with default_context():
        module = ir.Module.parse(NESTED.replace("arith.addf %x, %x : f32",
                                                "llvm.fadd %x, %x : f32"))
        assert "fadd float %0, %0" in to_llvm_ir(module)


def test_dead_calls_of_fast_math_are_not_left_behind():
    """A dead cos of a constant (no ember-optimize ran) lowers to nothing, not to a generic
    without operands that only calls @__ember_cos_f32 and that nothing can lower."""
    import numpy as np
    import ember as em

    def f(x):
        em.cos(em.constant(0.5))  # unused
        return x + 1.0
    g = em.function(f, pipeline=None)
    np.testing.assert_array_equal(g(em.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    assert g.get_concrete_function(em.constant([1.0, 2.0]))._executor.compiled_shapes
