"""keras.layers' Conv1D, AveragePooling2D, global pools, Reshape, Activation, Concatenate and
Add, and keras.metrics.Mean (frontend/training/layers_extra.py), eager and in em.function,
against numpy."""

import numpy as np
import pytest

import ember as em

L = em.keras.layers
RNG = np.random.default_rng(3)


def _both(layer, *inputs):
    eager = layer(*inputs)
    compiled = em.function(lambda *xs: layer(*xs))(*inputs)
    np.testing.assert_allclose(compiled.numpy(), eager.numpy(), rtol=1e-5, atol=1e-6)
    return eager.numpy()


def test_conv1d_is_a_sliding_dot_product():
    x = RNG.standard_normal((2, 7, 3)).astype(np.float32)
    layer = L.Conv1D(4, 3, use_bias=False)
    got = _both(layer, x)
    k = layer.kernel.numpy()
    want = np.stack([np.einsum("bkc,kcf->bf", x[:, i:i + 3], k) for i in range(5)], 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert L.Conv1D(2, 3, padding="same", strides=2)(x).shape == (2, 4, 2)
    with pytest.raises(ValueError, match="filters must be a positive integer"):
        L.Conv1D(0, 3)


def test_pools_reshape_activation_and_merges():
    x = RNG.standard_normal((2, 4, 6, 3)).astype(np.float32)
    want = x.reshape(2, 2, 2, 3, 2, 3).mean(axis=(2, 4))
    np.testing.assert_allclose(_both(L.AveragePooling2D(), x), want, rtol=1e-6)
    np.testing.assert_allclose(_both(L.GlobalAveragePooling2D(), x), x.mean((1, 2)), rtol=1e-5)
    np.testing.assert_allclose(_both(L.GlobalMaxPooling2D(keepdims=True), x),
                               x.max((1, 2), keepdims=True))
    np.testing.assert_array_equal(_both(L.Reshape((3, -1)), x), x.reshape(2, 3, -1))
    np.testing.assert_array_equal(_both(L.Activation("relu"), x), np.maximum(x, 0))
    y = RNG.standard_normal((2, 4, 6, 1)).astype(np.float32)
    np.testing.assert_array_equal(L.Concatenate()([x, y]).numpy(), np.concatenate([x, y], -1))
    np.testing.assert_array_equal(L.Add()([x, x, x]).numpy(), x + x + x)
    with pytest.raises(ValueError, match="at least 2 inputs"):
        L.Add()([x])
    with pytest.raises(ValueError, match="at most one -1"):
        L.Reshape((-1, -1))
    model = em.keras.Sequential([L.Reshape((4, 4, 1)), L.AveragePooling2D(),
                                 L.GlobalAveragePooling2D(), L.Activation("tanh")])
    assert model(np.ones((5, 16), np.float32)).shape == (5, 1)


def test_metrics_mean_runs_eagerly_and_in_a_function():
    m = em.keras.metrics.Mean()
    assert float(m.result()) == 0.0
    m.update_state([1.0, 2.0])
    m.update_state(6.0)
    assert float(m.result()) == 3.0
    step = em.function(lambda x: m(x))
    assert float(step(em.constant([3.0]))) == 3.0
    m.update_state([10.0], sample_weight=[4.0])
    assert float(m.result()) == 52.0 / 8.0
    m.reset_state()
    assert float(m.count.numpy()) == 0.0
