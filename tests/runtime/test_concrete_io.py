"""ConcreteFunction.inputs / .outputs / .structured_* against TensorFlow's documented
behaviour: `inputs` is the graph's flat list of placeholders (argument tensors in order,
captured values last; a variable's handle is a `resource` tensor of shape ()), `outputs` the
flat list of result tensors in `nest.flatten(structured_outputs)` order."""

import doctest

import numpy as np
import pytest

import ember as em
from ember.frontend.tracing import SymbolicValueError
from ember.runtime import concrete_io


def _spec(shape, dtype=em.float32):
    return em.TensorSpec(shape, dtype)


def test_inputs_are_the_argument_placeholders_in_order():
    @em.function
    def f(x, pair, n, *, scale):
        return x + pair[0] * pair[1] * scale + n

    cf = f.get_concrete_function(_spec([3]), (_spec([3]), _spec([None])), 4,
                                 scale=_spec([]))
    assert [t.name for t in cf.inputs] == ["x:0", "pair:0", "pair_1:0", "scale:0"]
    assert [t.shape.as_list() for t in cf.inputs] == [[3], [3], [None], []]
    assert all(t.dtype is em.float32 for t in cf.inputs)
    # the Python argument (n=4) is part of the trace, not an input
    specs = [s for s in em.nest.flatten(cf.structured_input_signature)
             if isinstance(s, em.TensorSpec)]
    assert [(s.shape, s.dtype) for s in specs] == [(t.shape, t.dtype) for t in cf.inputs]


def test_captured_variable_is_the_last_input_a_resource_of_shape_scalar():
    v = em.Variable([1.0, 2.0, 3.0], name="scale")

    @em.function
    def f(x):
        return x * v

    x, handle = f.get_concrete_function(_spec([3])).inputs
    assert x.name == "x:0"
    assert handle.name == "scale:0" and handle.dtype.name == "resource"
    assert handle.shape.as_list() == [] and handle.variable is v
    assert repr(handle) == "<ember.Tensor 'scale:0' shape=() dtype=resource>"


def test_captured_large_constant_and_enclosing_tensor_are_inputs():
    big = em.constant(np.arange(300_000, dtype=np.float32))  # > 1 MiB: an argument

    @em.function
    def f(x):
        return x + big

    x, const = f.get_concrete_function(_spec([300_000])).inputs
    assert (const.shape.as_list(), const.dtype) == ([300_000], em.float32)

    seen = {}

    @em.function
    def outer(x):
        @em.function
        def inner(y):
            return y + x  # x: a tensor of the enclosing trace, captured

        seen["inputs"] = inner.get_concrete_function(_spec([2])).inputs
        return inner(x)

    outer(em.constant([1.0, 2.0]))
    assert [t.name for t in seen["inputs"]] == ["y:0", "x:0"]


def test_outputs_are_the_flat_result_tensors():
    @em.function
    def f(x):
        return {"b": (x * 2.0, None), "a": x + 1.0, "n": 3}

    cf = f.get_concrete_function(_spec([2]))
    structured = cf.structured_outputs
    # dict leaves flatten in sorted key order; None is not a result; 3 became a tensor
    assert cf.outputs == [structured["a"], structured["b"][0], structured["n"]]
    assert [t.shape.as_list() for t in cf.outputs] == [[2], [2], []]
    assert cf.outputs[2].dtype is em.int32
    assert structured["b"][1] is None


def test_no_arguments_and_no_tensor_results():
    @em.function
    def f():
        return None

    cf = f.get_concrete_function()
    assert cf.inputs == [] and cf.outputs == [] and cf.structured_outputs is None
    assert cf.structured_input_signature == ((), {})


def test_structured_input_signature_keeps_python_values_and_names():
    @em.function
    def f(x, flag=True):
        return x

    cf = f.get_concrete_function(_spec([None, 2], em.int32))
    args, kwargs = cf.structured_input_signature
    assert args == (em.TensorSpec([None, 2], em.int32, name="x"), True) and kwargs == {}


def test_inputs_and_outputs_are_symbolic():
    @em.function
    def f(x):
        return x * 2.0

    cf = f.get_concrete_function(_spec([2]))
    with pytest.raises(SymbolicValueError, match="out of scope"):
        cf.inputs[0].numpy()
    with pytest.raises(SymbolicValueError, match="out of scope"):
        cf.outputs[0].numpy()
    # the list is a copy: changing it changes nothing in the function
    cf.inputs.clear()
    assert len(cf.inputs) == 1
    np.testing.assert_allclose(cf(em.constant([1.0, 2.0])).numpy(), [2.0, 4.0])


def test_docstring_examples():
    result = doctest.testmod(concrete_io, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
