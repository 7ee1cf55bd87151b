"""Shapes computed from `em.shape(x)` and shapes given as tensors (issue 10, items 1 and 3).

What is known at trace time stays known (TensorFlow's `constant_value_as_shape`): the shape
of `em.zeros(em.shape(x))` is x's, static dims included, so functions run compiled; unknown
dims stay `?`. Each case runs compiled with no interpreter fallback and matches eager and
numpy.
"""

import warnings

import numpy as np
import pytest

import ember as em
from ember.runtime.executor import InterpreterFallbackWarning


def compiled(fn, *args, signature=None):
    """`fn` run as an em.function (compiled: a fallback is an error) and eagerly."""
    f = em.function(fn, input_signature=signature)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        got = f(*args)
    eager = fn(*[em.constant(a) for a in args])
    return got, eager, f


def same(got, eager, expected):
    got, eager = np.asarray(got), np.asarray(eager)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(eager, expected)
    assert got.dtype == eager.dtype == np.asarray(expected).dtype


X = np.arange(6, dtype=np.float32).reshape(2, 3)


# -- item 1: shapes from em.shape(x) ------------------------------------------------------

@pytest.mark.parametrize("make, value", [
    (lambda x: em.ones_like(x), 1.0),
    (lambda x: em.zeros_like(x), 0.0),
    (lambda x: em.zeros(em.shape(x)), 0.0),
    (lambda x: em.fill(em.shape(x), 2.5), 2.5),
    (lambda x: em.ones(em.shape(x, out_type=em.int64)), 1.0),
])
def test_shape_of_input_folds_to_static_dims_compiled(make, value):
    got, eager, f = compiled(lambda x: make(x) + x, X)
    same(got, eager, np.full(X.shape, value, np.float32) + X)
    graph = f.get_concrete_function(X).mlir()
    assert "tensor<?" not in graph  # every dim of the fill is static


@pytest.mark.parametrize("make", [
    lambda x: em.ones_like(x), lambda x: em.zeros(em.shape(x)),
    lambda x: em.fill(em.shape(x), 1.0)])
def test_partially_known_shape_keeps_its_static_dims(make):
    f = em.function(make, input_signature=[em.TensorSpec([None, 3])])
    assert f.get_concrete_function().structured_outputs.shape == (None, 3)
    assert "-> tensor<?x3xf32>" in f.get_concrete_function().mlir()


def test_zeros_of_shape_as_while_loop_start_value_is_compiled():
    def fn(x):
        _, acc = em.while_loop(lambda i, acc: i < 3, lambda i, acc: (i + 1, acc + x),
                               (0, em.zeros_like(x)))
        return acc
    got, eager, _ = compiled(fn, X)
    same(got, eager, 3 * X)


def test_reduction_of_partially_known_fill_is_compiled():
    fn = em.function(lambda x: em.reduce_sum(em.ones(em.shape(x)) * x),
                     input_signature=[em.TensorSpec([None, 3])])
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        got = fn(X)
    assert float(got) == float(np.sum(X))
