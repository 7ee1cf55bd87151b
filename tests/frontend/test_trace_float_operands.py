"""A Python float meeting a symbolic tensor (`x * 0.5`) is traced without an eager tensor of
it (tracing.FuncGraph.apply_with_float): the IR, the names and the errors are those of the
general path, which converts the float first (`x * em.constant(0.5, x.dtype)`), but for
one constant op per value in a trace, which all its uses share (trace_constants.py)."""

import re
import warnings

import numpy as np
import pytest

import ember as em
from ember.frontend.dispatch import float_fits


def _traced(fn, dtype):
    concrete = em.function(fn).get_concrete_function(em.TensorSpec([3], dtype))
    return re.sub(r"@\w+\(", "@f(", concrete.mlir("traced"))  # (its unique symbol)


@pytest.mark.parametrize("dtype", [em.float16, em.float32, em.float64])
@pytest.mark.parametrize("value", [0.5, 0.1, -0.0, 0.0, 1e-30, 3.4e38, 1e39, -7e4])
def test_float_operand_traces_as_its_converted_constant(dtype, value):
    def fast(x):
        return (x * value + value) - value

    def general(x):  # a tensor per use, as each use of a Python float makes one
        c = [em.constant(np.asarray(value).astype(dtype.np_dtype), dtype) for _ in range(3)]
        return (x * c[0] + c[1]) - c[2]

    def shared(x):  # one tensor for every use
        c = em.constant(np.asarray(value).astype(dtype.np_dtype), dtype)
        return (x * c + c) - c
    # the fast path takes non-zero floats that convert without a warning: they are literals,
    # one op per trace; the others are converted to a tensor per use, as in TensorFlow
    literal = value != 0 and float_fits(value, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # out of range: inf, with numpy's warning
        traced = _traced(fast, dtype)
        assert traced == _traced(shared if literal else general, dtype)
    assert traced.count('"ember.constant"') == (1 if literal else 3)


def test_float_operand_results_are_named_as_before():
    names = []

    @em.function
    def f(x):
        y = x * 0.5
        z = y + 0.25
        names.extend([y.name, z.name, (z * 2.0).name, (z * em.constant(2.0)).name])
        return z
    f(em.constant([1.0, 2.0]))
    assert names == ["mul:0", "add:0", "mul_1:0", "mul_2:0"]


def test_float_operand_of_an_int_tensor_is_the_same_error():
    f = em.function(lambda x: x * 1.5)
    with pytest.raises(em.OpTypeError, match="tensor<2xi32> and tensor<f32> have different"):
        f(em.constant([1, 2]))


def test_float_operand_under_a_tape_records_its_gradient():
    @em.function
    def grad(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = em.reduce_sum(x * 3.0 + 1.0)
        return tape.gradient(y, x)
    np.testing.assert_array_equal(grad(em.constant([1.0, 2.0])).numpy(), [3.0, 3.0])
