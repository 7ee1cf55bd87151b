"""em.pad with paddings given as a tensor (frontend/dynamic_pad.py): computed in the function
or passed in, so known only when the code runs; values, gradients and errors alike eagerly,
compiled with static shapes and compiled with `None` dims, against numpy's pad."""

import warnings

import numpy as np
import pytest

import ember as em
from ember.errors import AssertionFailedError

X = np.arange(12, dtype=np.float32).reshape(3, 4)
NP_MODE = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}


def _runs(fn):
    """fn eagerly, compiled, and compiled for `None` dims (no interpreter fallback)."""
    spec = [em.TensorSpec([None, None], em.float32), em.TensorSpec([None, None], em.int32)]

    def strict(compiled):
        def run(*args):
            previous = em.config.get_fallback()
            em.config.set_fallback("error")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error", em.InterpreterFallbackWarning)
                    return compiled(*args)
            finally:
                em.config.set_fallback(previous)
        return run
    return [fn, strict(em.function(fn)), strict(em.function(fn, input_signature=spec))]


@pytest.mark.parametrize("mode", sorted(NP_MODE))
@pytest.mark.parametrize("paddings", [[[1, 2], [0, 3]], [[2, 0], [3, 1]], [[0, 0], [0, 0]]])
def test_tensor_paddings_pad_as_numpy(mode, paddings):
    want = np.pad(X, paddings, mode=NP_MODE[mode],
                  **({"constant_values": 7} if mode == "CONSTANT" else {}))
    for run in _runs(lambda x, p: em.pad(x, p, mode=mode, constant_values=7.0)):
        got = run(em.constant(X), em.constant(paddings, dtype=em.int32)).numpy()
        np.testing.assert_array_equal(got, want)


def test_paddings_computed_in_the_function():
    def fn(x, n):
        return em.pad(x, em.stack([em.stack([n, 0]), em.stack([0, n * 2])]))
    want = np.pad(X, [[2, 0], [0, 4]])
    assert np.array_equal(fn(em.constant(X), em.constant(2)).numpy(), want)
    assert np.array_equal(em.function(fn)(em.constant(X), em.constant(2)).numpy(), want)


def test_paddings_as_lists_holding_tensors():
    """A new user's `em.pad(x, [[1, s[0]], [0, 1]])` with `s = em.shape(x)` failed (its
    paddings were turned into a numpy array), with an error that told them to do this."""
    @em.function
    def fn(x, n):
        s = em.shape(x)
        return (em.pad(x, [[1, s[0]], [0, 1]]), em.pad(x, [[1, s[0] - 2], [0, 1]], "REFLECT"),
                em.pad(x, ((n, 0), (0, n))))
    a, b, c = fn(em.constant(X), em.constant(2))
    np.testing.assert_array_equal(a.numpy(), np.pad(X, [[1, 3], [0, 1]]))
    np.testing.assert_array_equal(b.numpy(), np.pad(X, [[1, 1], [0, 1]], mode="reflect"))
    np.testing.assert_array_equal(c.numpy(), np.pad(X, [[2, 0], [0, 2]]))
    eager = em.pad(em.constant(X), [[em.constant(1), 0], [0, 1]]).numpy()
    np.testing.assert_array_equal(eager, np.pad(X, [[1, 0], [0, 1]]))


def test_gradient_through_tensor_paddings_keeps_the_inner_rows():
    @em.function
    def grad(x, p):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = em.reduce_sum(em.pad(x, p, mode="REFLECT") * 2.0)
        return tape.gradient(y, x)
    g = grad(em.constant(X), em.constant([[1, 1], [0, 0]])).numpy()
    # rows 0 and 2 are mirrored once each (row 1 twice): counts 1, 3, 1, times 2
    np.testing.assert_array_equal(g, np.array([[2.0], [6.0], [2.0]]) * np.ones((3, 4)))


@pytest.mark.parametrize("mode, paddings, message", [
    ("CONSTANT", [[-1, 0], [0, 0]], "paddings must be >= 0"),
    ("REFLECT", [[3, 0], [0, 0]], "REFLECT padding of dim 0 exceeds its size - 1"),
    ("SYMMETRIC", [[0, 0], [0, 5]], "SYMMETRIC padding of dim 1 exceeds its size"),
])
def test_bad_tensor_paddings_raise_alike_eagerly_and_compiled(mode, paddings, message):
    for run in _runs(lambda x, p: em.pad(x, p, mode=mode)):
        with pytest.raises(AssertionFailedError, match=message):
            run(em.constant(X), em.constant(paddings, dtype=em.int32))


def test_paddings_of_the_wrong_shape_say_which():
    with pytest.raises(ValueError, match=r"shape \[2, 2\]"):
        em.pad(em.constant(X), em.constant([1, 2]))
    with pytest.raises(AssertionFailedError, match=r"paddings must have shape \[2, 2\]"):
        em.function(lambda x, p: em.pad(x, p), input_signature=[
            em.TensorSpec([3, 4], em.float32), em.TensorSpec([None, 2], em.int32)])(
            X, np.array([[1, 1]], np.int32))


@pytest.mark.parametrize("paddings", [[[1, 0], [0, 1]], em.constant([[1, 0], [0, 1]])])
def test_paddings_known_while_tracing_keep_the_op(paddings):
    concrete = em.function(lambda x: em.pad(x, paddings)).get_concrete_function(
        em.constant(X))
    assert "ember.pad" in concrete.mlir("traced")
