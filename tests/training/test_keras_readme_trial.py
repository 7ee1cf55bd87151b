"""Fixes from a README-only user trial of em.keras: Keras 2's input_shape keywords, the
callback hooks of evaluate/predict, get_layer, pooling names, summary's Output Shape,
Softmax masks, and clear errors for the functional API and model.save."""

import numpy as np
import pytest

import ember as em

L = em.keras.layers


def test_input_shape_builds_sequential_at_construction():
    model = em.keras.Sequential([L.Dense(2, input_shape=(4,)), L.Dense(3)])
    assert model.built and [v.shape.as_list() for v in model.variables] == \
        [[4, 2], [2], [2, 3], [3]]
    lines = []
    model.summary(print_fn=lines.append)
    assert any("Total params: 19" in line for line in lines)
    config = model.get_config()
    assert config["layers"][0]["config"]["batch_input_shape"] == (None, 4)
    again = em.keras.Sequential.from_config(config)
    assert [v.shape.as_list() for v in again.variables] == [[4, 2], [2], [2, 3], [3]]


@pytest.mark.parametrize("kwargs, want", [
    ({"input_dim": 5}, (None, 5)),
    ({"input_shape": (5,), "batch_size": 8}, (8, 5)),
    ({"batch_input_shape": (2, 5)}, (2, 5)),
    ({"batch_input_shape": [None, 5], "input_shape": (7,)}, (None, 5)),
])
def test_input_shape_keywords_as_keras_base_layer(kwargs, want):
    layer = L.Dense(2, **kwargs)
    assert layer.get_config()["batch_input_shape"] == want
    model = em.keras.Sequential()
    model.add(layer)
    model.add(L.Dense(1))
    assert len(model.variables) == 4
    model.compile("sgd", "mse")
    model.fit(np.ones((2, 5), np.float32), np.ones((2, 1), np.float32), verbose=0)


def test_unknown_layer_keyword_is_keras_type_error():
    with pytest.raises(TypeError, match="keyword argument not understood: 'input_shap'"):
        L.Dense(2, input_shap=(4,))
    assert "batch_input_shape" not in L.Dense(2).get_config()
