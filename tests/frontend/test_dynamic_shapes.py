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


# -- item 3: shapes given as tensors ----------------------------------------------------------

Y = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
SHAPE_CASES = {  # name: (function of x, numpy of x)
    "reshape": (lambda x: em.reshape(x, [em.shape(x)[0], -1]), lambda x: x.reshape(3, -1)),
    "reshape-tensor": (lambda x: em.reshape(x, em.shape(x)[::-1]),
                       lambda x: x.reshape(x.shape[::-1])),
    "broadcast_to": (lambda x: em.broadcast_to(1.0, em.shape(x)), np.ones_like),
    "zeros": (lambda x: em.zeros([em.shape(x)[0], 3]), lambda x: np.zeros((3, 3), np.float32)),
    "ones-int64": (lambda x: em.ones([em.shape(x, out_type=em.int64)[1], 2]),
                   lambda x: np.ones((4, 2), np.float32)),
    "fill": (lambda x: em.fill([2, em.shape(x)[2]], 7.0),
             lambda x: np.full((2, 2), 7.0, np.float32)),
    "one_hot": (lambda x: em.one_hot(em.constant([0, 2, 5]), em.shape(x)[0]),
                lambda x: np.eye(3, dtype=np.float32)[[0, 2]].tolist() + [[0.0] * 3]),
    "uniform": (lambda x: em.stateless_random_uniform(em.shape(x), seed=[1, 2]),
                lambda x: em.stateless_random_uniform(list(x.shape), seed=[1, 2]).numpy()),
    "normal": (lambda x: em.stateless_random_normal(em.shape(x)[1:], seed=[3, 4]),
               lambda x: em.stateless_random_normal([4, 2], seed=[3, 4]).numpy()),
}


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
def test_shape_given_as_tensor_compiled_matches_eager(name):
    fn, ref = SHAPE_CASES[name]
    got, eager, _ = compiled(fn, Y)
    same(got, eager, np.asarray(ref(Y), np.float32))


@pytest.mark.parametrize("name", sorted(SHAPE_CASES))
def test_shape_given_as_tensor_of_unknown_dims_is_compiled_for_the_call(name):
    # traced with `?` dims: the shape stays a tensor; specialising to the call's shapes
    # makes it known again, so the (static) sum compiles
    fn, ref = SHAPE_CASES[name]
    f = em.function(lambda x: em.reduce_sum(fn(x)),
                    input_signature=[em.TensorSpec([None, None, 2])])
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        got = f(Y)
    np.testing.assert_allclose(float(got), float(np.sum(ref(Y), dtype=np.float64)), rtol=1e-5)


@pytest.mark.parametrize("make, shape", [
    (lambda x: em.reshape(x, [em.shape(x)[0], -1]), (None, 8)),
    (lambda x: em.zeros([em.shape(x)[0], 3]), (None, 3)),
    (lambda x: em.broadcast_to(1.0, em.shape(x)), (None, 4, 2)),
    (lambda x: em.stateless_random_uniform(em.shape(x)[1:], seed=[1, 2]), (4, 2)),
    (lambda x: em.one_hot(em.constant([0, 1]), em.shape(x)[0]), (2, None)),
])
def test_known_part_of_a_shape_stays_known(make, shape):
    f = em.function(make, input_signature=[em.TensorSpec([None, 4, 2])])
    assert f.get_concrete_function().structured_outputs.shape == shape


def test_shape_from_traced_values_gives_eagers_values():
    # a shape read from tensor values: the result shape is only known at run time
    fn = lambda x, n: em.reshape(em.ones([n, 3]) * x, [-1])  # noqa: E731
    f = em.function(fn)
    for n in (1, 4):
        with warnings.catch_warnings():  # a `?` result: compiled once d1's work lands
            warnings.simplefilter("ignore", InterpreterFallbackWarning)
            got = f(np.float32(2), np.int32(n))
        eager = fn(em.constant(np.float32(2)), em.constant(np.int32(n)))
        same(got, eager, np.full(3 * n, 2.0, np.float32))


@pytest.mark.parametrize("bad, match", [
    (lambda x: em.zeros(em.cast(em.shape(x), em.float32)),
     r"em.fill: a shape must be a list of ints and scalar integer tensors, or a 1-D integer "
     r"tensor; got a tensor of shape \(3,\) and dtype float32"),
    (lambda x: em.reshape(x, em.reshape(em.shape(x), [3, 1])),
     r"em.reshape: a shape must be .*; got a tensor of shape \(3, 1\) and dtype int32"),
    (lambda x: em.broadcast_to(x, [em.reduce_sum(x), 2]),
     r"em.broadcast_to: dim 0 of a shape must be an int or a scalar integer tensor; got a "
     r"tensor of shape \(\) and dtype float32"),
    (lambda x: em.zeros([em.shape(x), 2]),
     r"dim 0 of a shape must be an int or a scalar integer tensor; got a tensor of shape "
     r"\(3,\)"),
])
def test_wrong_shape_tensor_is_a_clear_error(bad, match):
    with pytest.raises(TypeError, match=match):
        em.function(bad)(Y)
    with pytest.raises(TypeError, match=match):
        bad(em.constant(Y))


def test_scalar_tensor_shape_is_a_one_dim_shape():
    # em.ones(n) with a traced n, as em.ones(3) with a Python int
    f = em.function(lambda n: em.ones(n) * 2.0)
    with warnings.catch_warnings():  # a `?` result: compiled once d1's work lands
        warnings.simplefilter("ignore", InterpreterFallbackWarning)
        got = f(np.int32(4))
    same(got, em.ones(em.constant(np.int32(4))) * 2.0, np.full(4, 2.0, np.float32))


def _both(fn, *args):
    """(compiled, eager) results of `fn`, an OpError where it raises."""
    out = []
    for call in (em.function(fn), lambda *a: fn(*[em.constant(v) for v in a])):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", InterpreterFallbackWarning)
                out.append(np.asarray(call(*args)))
        except em.OpError as e:
            out.append(e)
    return out


@pytest.mark.parametrize("make", [
    lambda n: em.zeros([n, 2]) + 1.0,
    lambda n: em.fill(em.stack([2, n]), 1.0),
    lambda n: em.stateless_random_uniform([n, 3], seed=[1, 2]),
    lambda n: em.stateless_random_normal(em.stack([n]), seed=[5, 6], dtype=em.float64),
])
@pytest.mark.parametrize("n", [0, 1, 5, -2])
def test_run_time_shape_compiled_matches_eager_values_and_errors(make, n):
    # the sum is static: compiled even though the shape is known only at run time
    compiled, eager = _both(lambda n: em.reduce_sum(make(n)), np.int32(n))
    if n < 0:
        assert isinstance(compiled, em.OpShapeError) and isinstance(eager, em.OpShapeError)
        assert "op shape operand has a negative dimension -2" in str(compiled)
        assert compiled.op_message == eager.op_message  # (each names its own line)
    else:
        np.testing.assert_allclose(compiled, eager, rtol=1e-6)
        assert compiled.dtype == eager.dtype
