"""What the gradient rules refuse, and how: a clear error naming the fix."""

import numpy as np
import pytest

import ember as em


def _grad_of(fn, spec):
    @em.function(input_signature=[spec])
    def grad(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = em.reduce_sum(fn(x))
        return tape.gradient(y, x)
    return grad


@pytest.mark.parametrize("what, fn", [
    ("conv2d", lambda x: em.nn.conv2d(x, np.ones((2, 2, 3, 1)), 1, "SAME")),
    ("max_pool2d", lambda x: em.nn.max_pool2d(x, 2, 2, "VALID")),
    ("avg_pool2d", lambda x: em.nn.avg_pool2d(x, 2, 1, "SAME")),
])
def test_window_gradients_need_static_height_and_width(what, fn):
    grad = _grad_of(fn, em.TensorSpec([None, None, 4, 3], em.float64))
    with pytest.raises(ValueError, match=f"gradient of {what} needs the input's height and "
                       "width known while tracing.*input_signature"):
        grad(em.constant(np.ones((1, 4, 4, 3))))


def test_rfft_gradient_needs_a_static_length():
    grad = _grad_of(lambda x: em.math.abs(em.signal.rfft(x)),
                    em.TensorSpec([2, None], em.float64))
    with pytest.raises(ValueError, match="gradient of rfft needs the innermost dim"):
        grad(em.constant(np.ones((2, 4))))


def test_cumprod_gradient_at_zero_is_zero_as_tensorflow():
    x = em.constant([2.0, 0.0, 3.0], em.float64)
    with em.GradientTape() as tape:
        tape.watch(x)
        y = em.reduce_sum(em.math.cumprod(x))
    # TensorFlow's div_no_nan formula: the element that is 0 gets 0 (its true derivative
    # here is 2 + 2 * 3 = 8); the others are exact
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.0, 0.0, 0.0])


def test_reduce_prod_gradient_with_zeros_is_exact():
    x = em.constant([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]], em.float64)
    with em.GradientTape() as tape:
        tape.watch(x)
        y = em.reduce_sum(em.reduce_prod(x, axis=1))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [[0., 6., 0.], [0., 0., 0.]])
