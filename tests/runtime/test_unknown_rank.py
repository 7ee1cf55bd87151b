"""Tensors of unknown rank (`TensorSpec(None)` inputs, `py_function` results) trace, and
their Functions compile for each call's static shapes (issue 10 item 4): reductions over
every dim or given axes, elementwise ops, em.shape/em.rank/em.size, and the ops whose
inference keeps what the attributes say. Compiled results equal numpy's, with no
interpreter fallback; what needs the rank in Python raises TensorFlow's kind of error with
how to give one.
"""

import warnings

import numpy as np
import pytest

import ember as em
from ember.runtime.executor import InterpreterFallbackWarning

UNRANKED = em.TensorSpec(None, em.float32)
X = np.arange(-11, 13, dtype=np.float32).reshape(2, 3, 4) / 4


def compiled(fn, *args, specs=None):
    """Calls em.function(fn) with unranked inputs; a fallback to the interpreter fails."""
    specs = specs or [em.TensorSpec(None, em.as_dtype(np.asarray(a).dtype)) for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        return em.function(fn, input_signature=specs)(*args).numpy()


REDUCTIONS = {
    "reduce_sum": np.sum, "reduce_mean": np.mean, "reduce_max": np.max,
    "reduce_min": np.min, "reduce_prod": np.prod,
}


@pytest.mark.parametrize("axis,keepdims", [(None, False), (None, True), (1, False),
                                           ([0, -1], True)])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_of_unranked_input_runs_compiled(name, axis, keepdims):
    got = compiled(lambda x: getattr(em, name)(x, axis=axis, keepdims=keepdims), X)
    want = REDUCTIONS[name](X, axis=None if axis is None else tuple(axis)
                            if isinstance(axis, list) else axis, keepdims=keepdims)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("value", [np.float32(2.5), np.zeros((0, 3), np.float32),
                                   np.arange(5, dtype=np.float32)])
def test_reduction_over_every_dim_of_any_rank(value):
    fn = em.function(lambda x: (em.reduce_mean(x), em.reduce_max(x, keepdims=True)),
                     input_signature=[UNRANKED])
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        mean, top = fn(value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy: "Mean of empty slice"
        np.testing.assert_array_equal(mean.numpy(), np.mean(value, dtype=np.float32))
    want = np.max(value, keepdims=True, initial=-np.inf)
    np.testing.assert_array_equal(top.numpy(), want)


def test_integer_and_bool_reductions_of_unranked_input():
    ints = np.arange(-7, 5, dtype=np.int32).reshape(2, 3, 2)
    assert compiled(lambda x: em.reduce_mean(x), ints) == -1  # truncating, as TensorFlow
    bools = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(compiled(lambda b: em.reduce_any(b, keepdims=True), bools),
                                  [[True]])
    assert not compiled(lambda b: em.reduce_all(b), bools)


def test_elementwise_on_unranked_inputs_runs_compiled():
    fn = lambda x, y: em.exp(x) * 2.0 + y  # noqa: E731
    got = compiled(fn, X, X[0, 0])
    want = fn(em.constant(X), em.constant(X[0, 0])).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_py_function_result_of_unknown_rank_flows_into_reductions():
    def fn(x):
        y = em.py_function(lambda a: a.numpy() * 2, [x], em.float32)
        assert y.shape == em.TensorShape(None)
        return em.reduce_sum(y) + em.reduce_mean(y * 3.0, axis=0)

    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)  # host-only: silent
        got = em.function(fn)(X).numpy()
    np.testing.assert_allclose(got, np.sum(X * 2) + np.mean(X * 6, axis=0), rtol=1e-6)


@pytest.mark.parametrize("value", [X, np.float32(1.0), np.zeros((0, 2), np.float32)])
def test_shape_rank_and_size_of_unranked_input(value):
    fn = em.function(lambda x: (em.shape(x), em.rank(x), em.size(x)),
                     input_signature=[UNRANKED])
    assert "tensor<?xi32>" in fn.get_concrete_function().mlir()
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        shape, rank, size = (t.numpy() for t in fn(value))
    np.testing.assert_array_equal(shape, np.shape(value))
    assert shape.dtype == np.int32 and shape.shape == (np.ndim(value),)
    assert rank == np.ndim(value) and rank.dtype == np.int32
    assert size == np.size(value)


def test_python_shape_of_unranked_tensor_is_unknown():
    seen = {}

    def fn(x):
        seen["shape"], seen["str"] = x.shape, str(x)
        with pytest.raises(ValueError, match="unknown rank"):
            len(x.shape)
        with pytest.raises(ValueError, match="unknown rank"):
            list(x.shape)
        with pytest.raises(TypeError, match="rank is unknown"):
            len(x)
        with pytest.raises(TypeError, match="rank is unknown"):
            iter(x)
        return x

    em.function(fn, input_signature=[UNRANKED]).get_concrete_function()
    assert seen["shape"] == em.TensorShape(None) and seen["shape"].rank is None
    assert repr(seen["shape"]) == "TensorShape(None)" and "shape=" not in seen["str"]
    assert not seen["shape"] and seen["shape"].num_elements() is None
    assert not seen["shape"].is_fully_defined() and seen["shape"][1:] == em.TensorShape(None)


@pytest.mark.parametrize("fn,what", [
    (lambda x: em.transpose(x), "transpose without perm"),
    (lambda x: em.concat([x, x], 0), "concat"),
    (lambda x: em.stack([x, x]), "stack"),
])
def test_ops_that_need_the_rank_in_python_say_how_to_give_it(fn, what):
    with pytest.raises(ValueError, match=f"^{what} needs the rank of .* give the input a "
                                         "known rank"):
        em.function(fn, input_signature=[UNRANKED]).get_concrete_function()


OPS = {
    "transpose": (lambda x: em.transpose(x, [2, 0, 1]), X),
    "expand_dims": (lambda x: em.expand_dims(x, -1), X),
    "squeeze": (lambda x: em.squeeze(x), X.reshape(1, 24, 1)),
    "squeeze_axis": (lambda x: em.squeeze(x, [0]), X.reshape(1, 24, 1)),
    "getitem": (lambda x: x[1, ..., 1:3], X),
    "gather": (lambda x: em.gather(x, [2, 0], axis=1), X),
    "pad": (lambda x: em.pad(x, [[1, 0], [0, 2], [0, 0]]), X),
    "softmax": (lambda x: em.softmax(x, axis=1), X),
    "argmax": (lambda x: em.argmax(x, axis=-1), X),
    "max_pool2d": (lambda x: em.max_pool2d(x, 2, 1), X.reshape(1, 2, 3, 4)),
    "reshape": (lambda x: em.reshape(x, [-1, 4]), X),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_on_unranked_input_runs_compiled_as_eager(name):
    fn, value = OPS[name]
    got = compiled(fn, value)
    want = fn(em.constant(value)).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)  # softmax: compiled exp is within 1ulp


def test_one_hot_and_conv2d_of_unranked_inputs_run_compiled():
    idx = np.array([[1, 3], [0, 2]], np.int32)
    np.testing.assert_array_equal(compiled(lambda i: em.one_hot(i, 4), idx), np.eye(4)[idx])
    x, f = np.ones((1, 4, 4, 2), np.float32), np.ones((3, 3, 2, 1), np.float32)
    np.testing.assert_array_equal(compiled(em.conv2d, x, f), np.full((1, 2, 2, 1), 18.0))


def test_wrong_rank_at_call_raises_eagers_error():
    fn = lambda x: em.reduce_sum(x, axis=3)  # noqa: E731
    with pytest.raises(em.OpAttributeError, match="axis 3 is out of range for rank 2") as eager:
        fn(em.constant(X[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InterpreterFallbackWarning)
        with pytest.raises(em.OpAttributeError) as traced:
            em.function(fn, input_signature=[UNRANKED])(X[0])
    assert str(traced.value).startswith(str(eager.value))


@pytest.mark.parametrize("spec", [UNRANKED, em.TensorSpec([None, 4], em.float32)])
def test_cond_on_unranked_input_runs_compiled(spec):
    def fn(x):
        y = em.cond(em.reduce_sum(x) > 0.0, lambda: x * 2.0, lambda: x - 1.0)
        return y, em.reduce_sum(y, axis=0)

    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        for value in (X[0], -X[0]):
            y, s = em.function(fn, input_signature=[spec])(value)
            want = value * 2 if value.sum() > 0 else value - 1
            np.testing.assert_array_equal(y.numpy(), want)
            np.testing.assert_allclose(s.numpy(), want.sum(axis=0), rtol=1e-6)


@pytest.mark.parametrize("spec", [UNRANKED, em.TensorSpec([None, 4], em.float32)])
def test_while_loop_carrying_unranked_value_runs_compiled(spec):
    def fn(x):
        _, y = em.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2.0 - 1.0), (0, x))
        return em.reduce_max(y, keepdims=True)

    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        got = em.function(fn, input_signature=[spec])(X[0]).numpy()
    want = X[0]
    for _ in range(3):
        want = want * 2 - 1
    np.testing.assert_array_equal(got, want.max(keepdims=True))


def test_while_loop_whose_value_grows_keeps_eagers_results():
    def fn(x):
        return em.while_loop(lambda s: em.size(s) < 20, lambda s: (em.concat([s, s], 0),),
                             (x,), shape_invariants=(em.TensorShape([None]),))[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InterpreterFallbackWarning)
        got = em.function(fn, input_signature=[em.TensorSpec([None], em.float32)])(X[0, 0])
    np.testing.assert_array_equal(got.numpy(), np.tile(X[0, 0], 8))
