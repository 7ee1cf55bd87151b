"""What the gradient rules refuse, and how: a clear error naming the fix."""

import warnings

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


EMPTY = [
    ("conv2d", lambda x: em.nn.conv2d(x, np.ones((2, 2, 3, 2)), 2, "SAME"), (0, 4, 4, 3)),
    ("conv2d_no_output", lambda x: em.nn.conv2d(x, np.ones((3, 3, 3, 2)), 1, "VALID"),
     (1, 2, 4, 3)),
    ("depthwise", lambda x: em.nn.depthwise_conv2d(x, np.ones((2, 2, 3, 2)), [1, 1, 1, 1],
                                                   "SAME"), (0, 3, 3, 3)),
    ("max_pool", lambda x: em.nn.max_pool2d(x, 2, 2, "SAME"), (0, 3, 3, 2)),
    # (a pool whose window is larger than the input, an empty result, is left out: its
    # forward falls back to the interpreter when compiled, a lowering issue of the pools)
    ("avg_pool", lambda x: em.nn.avg_pool2d(x, 2, 2, "VALID"), (0, 3, 3, 2)),
    ("reduce_prod", lambda x: em.reduce_prod(x, axis=1), (2, 0)),
    ("cumprod", lambda x: em.math.cumprod(x, axis=1, exclusive=True), (2, 0)),
    ("sort", lambda x: em.sort(x), (3, 0)),
    ("scatter_max", lambda x: em.tensor_scatter_nd_max(x, np.zeros((0, 1), np.int32),
                                                       np.zeros((0, 2))) - x, (3, 2)),
    ("fft", lambda x: em.math.real(em.signal.fft(em.complex(x, x))), (0, 4)),
    ("digamma", em.math.digamma, (0,)),
]


@pytest.mark.parametrize("name, fn, shape", EMPTY, ids=[e[0] for e in EMPTY])
def test_gradients_of_empty_tensors(name, fn, shape):
    """Empty inputs or results: zero gradients of the input's shape, eager and compiled."""
    def grad(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = em.reduce_sum(fn(x))
        return tape.gradient(y, x)
    x = em.constant(np.ones(shape))
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        for g in (grad(x), em.function(grad)(x)):
            assert g.shape == shape and not np.any(g.numpy()), name


def test_conv_gradient_needs_a_static_filter():
    @em.function(input_signature=[em.TensorSpec([1, 4, 4, 2], em.float64),
                                  em.TensorSpec([2, 2, 2, None], em.float64)])
    def grad(x, f):
        with em.GradientTape() as tape:
            tape.watch([x, f])
            y = em.reduce_sum(em.nn.conv2d(x, f, 1, "VALID"))
        return tape.gradient(y, [x, f])
    with pytest.raises(ValueError, match="gradient of conv2d needs the filter's shape"):
        grad(em.constant(np.ones((1, 4, 4, 2))), em.constant(np.ones((2, 2, 2, 3))))
