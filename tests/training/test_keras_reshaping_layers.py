"""keras.layers' ReLU, Softmax, LeakyReLU, ELU, Permute, RepeatVector, ZeroPadding2D and
UpSampling2D (frontend/training/layers_reshaping.py) against numpy, eagerly, inside
em.function and in a model trained by fit."""

import numpy as np
import pytest

import ember as em

L = em.keras.layers
RNG = np.random.default_rng(5)
X4 = RNG.standard_normal((2, 3, 4, 2)).astype(np.float32)
X2 = RNG.standard_normal((3, 5)).astype(np.float32) * 3


def _both(layer, x):
    eager = layer(x).numpy()
    np.testing.assert_allclose(em.function(lambda v: layer(v))(x).numpy(), eager,
                               rtol=1e-5, atol=1e-6)
    again = type(layer).from_config(layer.get_config())
    np.testing.assert_allclose(again(x).numpy(), eager, rtol=1e-6)
    return eager


@pytest.mark.parametrize("layer, want", [
    (L.ReLU(), np.maximum(X2, 0)),
    (L.ReLU(max_value=2.0, negative_slope=0.1, threshold=0.5),
     np.where(X2 >= 2, 2, np.where(X2 > 0.5, X2, 0.1 * (X2 - 0.5)))),
    (L.Softmax(axis=0), np.exp(X2) / np.exp(X2).sum(0)),
    (L.LeakyReLU(), np.where(X2 > 0, X2, 0.3 * X2)),
    (L.ELU(alpha=0.5), np.where(X2 > 0, X2, 0.5 * np.expm1(X2))),
    (L.RepeatVector(3), np.stack([X2] * 3, axis=1)),
], ids=["relu", "relu-options", "softmax", "leaky", "elu", "repeat"])
def test_activation_and_repeat_layers_match_numpy(layer, want):
    np.testing.assert_allclose(_both(layer, X2), want, rtol=1e-5, atol=1e-6)


def test_permute_pad_and_upsample_match_numpy():
    np.testing.assert_array_equal(_both(L.Permute((3, 1, 2)), X4), X4.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(_both(L.ZeroPadding2D(((1, 0), (2, 1))), X4),
                                  np.pad(X4, [(0, 0), (1, 0), (2, 1), (0, 0)]))
    np.testing.assert_array_equal(_both(L.ZeroPadding2D(1), X4),
                                  np.pad(X4, [(0, 0), (1, 1), (1, 1), (0, 0)]))
    np.testing.assert_array_equal(_both(L.UpSampling2D((2, 3)), X4),
                                  X4.repeat(2, axis=1).repeat(3, axis=2))


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="permutation of 1..2"):
        L.Permute((0, 1))
    with pytest.raises(ValueError, match="n must be a positive integer"):
        L.RepeatVector(0)
    with pytest.raises(ValueError, match="rank 2"):
        L.RepeatVector(2)(X4)
    with pytest.raises(ValueError, match="padding must be"):
        L.ZeroPadding2D((1, 2, 3))
    with pytest.raises(ValueError, match="only interpolation='nearest'"):
        L.UpSampling2D(interpolation="bilinear")
    with pytest.raises(ValueError, match="negative_slope must be a number >= 0"):
        L.ReLU(negative_slope=-1)


def test_a_model_of_them_trains_with_fit_as_numpy_says():
    """Upsample + pad + permute, then a Dense head with a LeakyReLU: one SGD step of fit
    equals the numpy gradient step written out here."""
    model = em.keras.Sequential([L.UpSampling2D(2), L.ZeroPadding2D(1), L.Permute((3, 1, 2)),
                                 L.Reshape((-1,)), L.Dense(1, use_bias=False), L.LeakyReLU(0.2)])
    x = RNG.standard_normal((4, 2, 2, 1)).astype(np.float32)
    y = RNG.standard_normal((4, 1)).astype(np.float32)
    model(x)
    w = RNG.standard_normal((36, 1)).astype(np.float32) * 0.1
    model.set_weights([w])
    model.compile(optimizer=em.optimizers.SGD(0.1), loss="mse")
    model.fit(x, y, batch_size=4, shuffle=False, verbose=0)
    feats = np.pad(x.repeat(2, 1).repeat(2, 2), [(0, 0), (1, 1), (1, 1), (0, 0)])
    feats = feats.transpose(0, 3, 1, 2).reshape(4, -1)
    z = feats @ w
    pred = np.where(z > 0, z, 0.2 * z)
    dz = 2 * (pred - y) / 4 * np.where(z > 0, 1, 0.2)
    np.testing.assert_allclose(model.get_weights()[0], w - 0.1 * feats.T @ dz,
                               rtol=1e-5, atol=1e-6)
