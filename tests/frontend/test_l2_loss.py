"""em.nn.l2_loss (tf.nn.l2_loss = sum(t ** 2) / 2): values against numpy in each float
dtype, eager and compiled (static and `?` dims), and its gradient `t` (times the upstream
gradient) through em.GradientTape, eagerly, inside em.function and for a Variable."""


import numpy as np
import pytest

import ember as em

T = np.array([[-3.0, -0.5, 0.0, 0.7], [2.5, -1e-3, 8.0, -7.5], [1.0, 2.0, -2.0, 0.25]])
RTOL = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-13}


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 4), (12,), (), (0, 4)])
def test_l2_loss_is_half_the_sum_of_squares(dtype, shape, no_fallback):
    t = (T.reshape(-1)[:int(np.prod(shape))].reshape(shape)).astype(dtype)
    want = np.sum(np.square(t.astype(np.float64))) / 2
    spec = [em.TensorSpec([None] * len(shape), em.as_dtype(dtype))]
    runs = {"eager": em.nn.l2_loss, "static": em.function(em.nn.l2_loss),
            "dynamic": em.function(em.nn.l2_loss, input_signature=spec)}
    for how, run in runs.items():
        got = run(em.constant(t))
        assert got.dtype == em.as_dtype(dtype) and got.shape == (), how
        np.testing.assert_allclose(float(got), want, rtol=RTOL[dtype], err_msg=how)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_l2_loss_needs_floats_eager_and_compiled(dtype):
    t = np.ones([2], dtype)
    with pytest.raises(TypeError, match="em.nn.l2_loss needs a floating-point tensor"):
        em.nn.l2_loss(em.constant(t))
    with pytest.raises(TypeError, match="em.nn.l2_loss needs a floating-point tensor"):
        em.function(em.nn.l2_loss)(t)


def _gradient(t, scale):
    with em.GradientTape() as tape:
        tape.watch(t)
        loss = em.nn.l2_loss(t) * scale
    return loss, tape.gradient(loss, t)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_l2_loss_gradient_is_the_input_eager_and_compiled(dtype, no_fallback):
    t, scale = T.astype(dtype), dtype(1.5)
    spec = [em.TensorSpec([None, 4], em.as_dtype(dtype)), em.TensorSpec([], em.as_dtype(dtype))]
    runs = {"eager": _gradient, "compiled": em.function(_gradient),
            "dynamic": em.function(_gradient, input_signature=spec)}
    for how, run in runs.items():
        loss, grad = run(em.constant(t), em.constant(scale))
        np.testing.assert_allclose(float(loss), 1.5 * np.sum(T ** 2) / 2, rtol=1e-6,
                                   err_msg=how)
        assert grad.dtype == em.as_dtype(dtype), how
        np.testing.assert_allclose(grad.numpy(), 1.5 * T, rtol=1e-6, err_msg=how)


def test_l2_loss_as_weight_decay_on_a_variable(no_fallback):
    w = em.Variable(T.astype(np.float32))

    def step():
        with em.GradientTape() as tape:
            loss = 0.01 * em.nn.l2_loss(w)
        return tape.gradient(loss, w)
    np.testing.assert_allclose(step().numpy(), 0.01 * T, rtol=1e-6)
    np.testing.assert_allclose(em.function(step)().numpy(), 0.01 * T, rtol=1e-6)


def test_l2_loss_second_derivative_is_one():
    x = em.constant([1.0, -2.0, 3.0])
    with em.GradientTape() as outer:
        outer.watch(x)
        with em.GradientTape() as inner:
            inner.watch(x)
            loss = em.nn.l2_loss(x)
        grad = inner.gradient(loss, x)
        total = em.reduce_sum(grad)
    np.testing.assert_allclose(outer.gradient(total, x).numpy(), [1.0, 1.0, 1.0])
