"""em.numpy_function (tf.numpy_function): numpy arrays in and out, eagerly and compiled, no
gradient, py_function's checks of what it returns."""

import numpy as np
import pytest

import ember as em


def test_numpy_arrays_in_and_out_eagerly_and_compiled():
    seen = []

    def flip(a, b):
        seen.append((type(a), type(b)))
        a[0] = -1  # a copy: the tensor keeps its value
        return np.flip(a) + b, np.float64(b.sum())

    x, y = em.constant([1, 2, 3]), em.constant([10, 20, 30])
    out, total = em.numpy_function(flip, [x, y], [em.int32, em.float64])
    np.testing.assert_array_equal(out.numpy(), [13, 22, 29])
    assert float(total) == 60.0 and x.numpy().tolist() == [1, 2, 3]

    @em.function
    def f(x, y):
        out, total = em.numpy_function(flip, [x, y], [em.int32, em.float64])
        return em.reshape(out, em.shape(x)) * 2, total

    got, total = f(x, y)
    np.testing.assert_array_equal(got.numpy(), [26, 44, 58])
    assert float(total) == 60.0
    assert set(seen) == {(np.ndarray, np.ndarray)}


def test_no_gradient_flows_through_it():
    x = em.constant([1.0, 2.0])
    with em.GradientTape() as tape:
        tape.watch(x)
        y = em.numpy_function(lambda a: a * 2, [x], em.float32) + x
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 1.0])


def test_a_result_tout_cannot_hold_is_refused():
    with pytest.raises(em.errors.InvalidArgumentError, match="cannot hold exactly"):
        em.numpy_function(lambda a: a * 2.5, [em.constant([1])], em.int32)


def test_scalars_come_as_numpy_scalars_eagerly_and_compiled():
    """TensorFlow's PyFunc kernel passes each input through `PyArray_Return`: a 0-d tensor
    reaches the callback as a numpy scalar (bytes for a string), not a 0-d array."""
    seen = []

    def look(x, v, b, i):
        seen.append(tuple(type(a) for a in (x, v, b, i)))
        return x * np.float32(2)  # a numpy scalar back is a 0-d result

    args = [em.constant(1.5), em.constant([1, 2]), em.constant(True), em.constant(7, em.int64)]
    eager = em.numpy_function(look, args, em.float32)
    compiled = em.function(lambda *a: em.numpy_function(look, list(a), em.float32))(*args)
    assert float(eager) == float(compiled) == 3.0 and compiled.shape == ()
    assert seen == [(np.float32, np.ndarray, np.bool_, np.int64)] * 2
    text = em.numpy_function(lambda s: s + b"!", [em.constant("ab")], em.string)
    assert text.numpy() == b"ab!"
