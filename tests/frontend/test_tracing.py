"""frontend/tracing.py: what a trace records of a call. Inputs and outputs of every structure
are flattened and rebuilt (kinds kept); tensors are traced by dtype and shape, Python values
by value; a symbolic tensor used outside its trace is an error saying where it was made."""

import numpy as np
import pytest

import ember as em
from three_ways import STRUCTURES, assert_same, parts, run_three_ways

X = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
KINDS = sorted(STRUCTURES)


@pytest.mark.parametrize("kind", KINDS)
def test_structured_inputs_and_outputs_round_trip(kind):
    make = STRUCTURES[kind]

    def program(s, scale):
        a, b = parts(s)
        return make(a * scale, [em.reduce_sum(b), b + 1.0])
    results = run_three_ways(program, make(X, X[0]), 3.0)
    assert_same(results)
    concrete = em.function(program).get_concrete_function(make(X, X[0]), 3.0)
    assert type(concrete.structured_outputs) is type(make(0, 0))


@pytest.mark.parametrize("kind", KINDS)
def test_python_values_in_a_structure_are_traced_by_value(kind):
    make = STRUCTURES[kind]
    f = em.function(lambda s, x: x * parts(s)[0] + parts(s)[1])
    for scale, shift in [(2.0, 1.0), (2.0, 1.0), (3.0, 1.0), (2.0, 0.5)]:
        got = f(make(scale, shift), em.constant(X))
        np.testing.assert_array_equal(got.numpy(), X * scale + shift)
    assert f.experimental_get_tracing_count() == 3  # one trace per distinct value pair


def test_tensors_are_traced_by_dtype_and_shape():
    f = em.function(lambda x: x + 1)
    f(em.constant(X))
    f(em.constant(X * 2))  # same dtype and shape: no retrace
    assert f.experimental_get_tracing_count() == 1
    f(em.constant(X[0]))
    f(em.constant(X.astype(np.float64)))
    assert f.experimental_get_tracing_count() == 3


def test_a_returned_python_value_comes_back_as_a_tensor_and_none_as_none():
    results = run_three_ways(lambda x: (x, 1 + 1, None), X)
    assert results[1][1].numpy() == 2 and results[2][2] is None


def test_a_symbolic_tensor_used_after_its_trace_is_an_error_naming_its_origin():
    leaked = []

    @em.function
    def f(x):
        leaked.append(x * 2.0)
        return x

    f(em.constant(X))
    with pytest.raises(em.errors.OutOfScopeError, match="test_tracing.py"):
        leaked[0] + 1.0


def test_the_trace_is_a_function_of_the_arguments_it_was_given():
    f = em.function(lambda x, y=2.0: x * y)
    concrete = f.get_concrete_function(em.TensorSpec([None, 2]))
    assert concrete.structured_outputs.shape == (None, 2)
    np.testing.assert_array_equal(concrete(em.constant(X)).numpy(), X * 2.0)
    assert "ember.mul" in concrete.mlir("traced")
