"""Layer.get_config / from_config and Sequential.get_config / from_config
(frontend/training/layer_base.py, layers_core.py) in tf.keras's form: a model rebuilt from
its config, given the same weights, computes the same numbers eagerly, in em.function and
after fit."""

import numpy as np
import pytest

import ember as em

K = em.keras
L = K.layers
RNG = np.random.default_rng(11)


def test_dense_config_is_keras_shaped():
    layer = L.Dense(3, activation="relu", kernel_regularizer="l2", name="head")
    assert layer.get_config() == {
        "name": "head", "trainable": True, "dtype": "float32", "units": 3,
        "activation": "relu", "use_bias": True,
        "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": None}},
        "bias_initializer": {"class_name": "Zeros", "config": {}},
        "kernel_regularizer": {"class_name": "L2", "config": {"l2": 0.01}},
        "bias_regularizer": None, "activity_regularizer": None}


@pytest.mark.parametrize("make", [
    lambda: L.Dense(4, activation="tanh", use_bias=False, bias_regularizer=K.regularizers.L1()),
    lambda: L.Conv2D(2, (3, 2), strides=2, padding="same", activation="gelu"),
    lambda: L.Conv1D(2, 3, dilation_rate=2),
    lambda: L.MaxPooling2D(3, strides=1, padding="same"),
    lambda: L.AveragePooling2D(), lambda: L.GlobalAveragePooling2D(keepdims=True),
    lambda: L.Dropout(0.3, seed=4), lambda: L.Flatten(), lambda: L.Reshape((2, -1)),
    lambda: L.Activation("sigmoid"), lambda: L.Concatenate(axis=1), lambda: L.Add(),
    lambda: L.BatchNormalization(momentum=0.9, epsilon=1e-2),
    lambda: L.LayerNormalization(center=False), lambda: L.Embedding(5, 2),
    lambda: L.Rescaling(0.5, offset=1.0),
])
def test_from_config_round_trips(make):
    layer = make()
    config = layer.get_config()
    again = type(layer).from_config(config)
    assert again.get_config() == config and not again.built


def test_a_sequential_rebuilt_from_its_config_computes_the_same():
    model = K.Sequential([L.Conv2D(3, 3, activation="relu"), L.MaxPooling2D(),
                          L.Flatten(), L.Dense(2, kernel_regularizer=K.regularizers.L2(0.1))])
    x = RNG.standard_normal((2, 6, 6, 1)).astype(np.float32)
    want = model(x).numpy()
    config = model.get_config()
    assert [e["class_name"] for e in config["layers"]] == ["Conv2D", "MaxPooling2D", "Flatten",
                                                          "Dense"]
    assert config["build_input_shape"] == [None, 6, 6, 1]
    clone = K.Sequential.from_config(config)
    assert clone.built and len(clone.weights) == 4  # built from build_input_shape
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(clone(x).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(em.function(lambda v: clone(v))(x).numpy(), want,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose([float(v) for v in clone.losses],
                               [float(v) for v in model.losses], rtol=1e-6)
    y = RNG.standard_normal((2, 2)).astype(np.float32)
    for m in (model, clone):
        m.compile(optimizer=em.optimizers.SGD(0.05), loss="mse")
    h1 = model.fit(x, y, epochs=2, shuffle=False, verbose=0).history["loss"]
    h2 = clone.fit(x, y, epochs=2, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(h2, h1, rtol=1e-5)


def test_config_errors_say_how_to_fix():
    class Scaled(L.Layer):
        def __init__(self, factor, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, x):
            return x * self.factor

    with pytest.raises(TypeError, match=r"arguments \['factor'\].*must override"):
        Scaled(2.0).get_config()
    config = K.Sequential([L.Dense(1)]).get_config()
    config["layers"][0]["class_name"] = "Dence"
    with pytest.raises(ValueError, match="Unknown layer class 'Dence'.*custom_objects"):
        K.Sequential.from_config(config)
    config["layers"][0]["class_name"] = "Mine"
    model = K.Sequential.from_config(config, custom_objects={"Mine": L.Dense})
    assert isinstance(model.layers[0], L.Dense)
