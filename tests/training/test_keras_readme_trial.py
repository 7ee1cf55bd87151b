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


class _Recorder(em.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __getattribute__(self, name):
        attr = object.__getattribute__(self, name)
        if not name.startswith("on_") or name in ("on_train_batch_begin",
                                                   "on_train_batch_end"):
            return attr  # (the train-batch hooks reach on_batch_* through the base class)

        def record(*args, **kwargs):
            logs = kwargs.get("logs", args[-1] if args and not isinstance(args[-1], int)
                              else None)
            self.calls.append((name, sorted(logs) if isinstance(logs, dict) else logs))
            return attr(*args, **kwargs)
        return record


def _compiled_model():
    model = em.keras.Sequential([L.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse", metrics=["mae"])
    return model


def test_fit_calls_batch_aliases_and_validation_test_hooks():
    rec = _Recorder()
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    _compiled_model().fit(x, y, batch_size=2, validation_data=(x, y), callbacks=[rec],
                          verbose=0)
    names = [c[0] for c in rec.calls]
    assert names == ["on_train_begin", "on_epoch_begin",
                     "on_batch_begin", "on_batch_end", "on_batch_begin", "on_batch_end",
                     "on_test_begin", "on_test_batch_begin", "on_test_batch_end",
                     "on_test_end", "on_epoch_end", "on_train_end"]
    assert rec.calls[3][1] == ["loss", "mae"] and rec.calls[8][1] == ["loss", "mae"]
    assert rec.calls[9][1] == ["loss", "mae"]
    assert rec.calls[10][1] == ["loss", "mae", "val_loss", "val_mae"]


def test_evaluate_and_predict_call_their_hooks_with_keras_logs():
    model, rec = _compiled_model(), _Recorder()
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    model.evaluate(x, y, batch_size=2, callbacks=[rec], verbose=0)
    assert rec.calls == [("on_test_begin", None),
                         ("on_test_batch_begin", None), ("on_test_batch_end", ["loss", "mae"]),
                         ("on_test_batch_begin", None), ("on_test_batch_end", ["loss", "mae"]),
                         ("on_test_end", ["loss", "mae"])]
    assert rec.model is model
    seen = []

    class Outputs(em.keras.callbacks.Callback):
        def on_predict_begin(self, logs=None):
            seen.append("begin")

        def on_predict_batch_end(self, batch, logs=None):
            seen.append((batch, np.asarray(logs["outputs"]).shape))

        def on_predict_end(self, logs=None):
            seen.append("end")
    out = model.predict(np.ones((3, 2), np.float32), batch_size=2, callbacks=[Outputs()])
    assert out.shape == (3, 1) and seen == ["begin", (0, (2, 1)), (1, (1, 1)), "end"]


def test_get_layer_by_name_or_index_as_keras():
    model = em.keras.Sequential([L.Conv2D(2, 3, input_shape=(6, 6, 1)), L.MaxPooling2D(),
                                 L.AveragePooling2D(1), L.Flatten(), L.Dense(1)])
    assert model.layers[1].name.startswith("max_pooling2d")
    assert model.get_layer(model.layers[1].name) is model.layers[1]
    assert model.get_layer(index=4) is model.layers[4]
    assert type(model.layers[1]).__name__ == "MaxPooling2D" and L.MaxPool2D is L.MaxPooling2D
    assert model.layers[2].name.startswith("average_pooling2d")
    with pytest.raises(ValueError, match="No such layer: nope. Existing layers are"):
        model.get_layer("nope")
    with pytest.raises(ValueError, match="at index 5 but model only has 5 layers"):
        model.get_layer(index=5)
    with pytest.raises(ValueError, match="Provide either a layer name or layer index"):
        model.get_layer()
    with pytest.raises(ValueError, match="Provide only a layer name or a layer index"):
        model.get_layer("dense", 0)


def test_summary_prints_output_shapes_as_keras():
    model = em.keras.Sequential([L.Conv2D(2, 3, input_shape=(6, 6, 1)), L.MaxPooling2D(),
                                 L.Flatten(), L.Dense(1)])
    lines = []
    model.summary(print_fn=lines.append)
    assert "Output Shape" in lines[2]
    conv, pool, flat, dense = lines[4:8]
    assert "(MaxPooling2D)" in pool and pool.startswith(model.layers[1].name + " ")
    assert "(None, 4, 4, 2)" in conv and "(None, 2, 2, 2)" in pool
    assert "(None, 8)" in flat and "(None, 1)" in dense

    class Net(em.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = L.Dense(2)

        def call(self, x):
            return self.dense(x)
    net = Net()
    net(np.ones((1, 3), np.float32))
    lines = []
    net.summary(print_fn=lines.append)
    assert any(line.startswith("dense") and "multiple" in line for line in lines)
    assert net.get_layer(index=0) is net.dense


def test_softmax_mask_adds_keras_large_negative():
    x = np.array([[1.0, 2.0, 1.0], [0.5, 0.5, 3.0]], np.float32)
    mask = np.array([[True, False, True], [True, True, False]])
    want = np.exp(x + (1.0 - mask) * -1e9)
    want /= want.sum(-1, keepdims=True)
    layer = L.Softmax()
    np.testing.assert_allclose(layer(x, mask=mask).numpy(), want, rtol=1e-6)
    traced = em.function(lambda v, m: layer(v, mask=m))
    np.testing.assert_allclose(traced(x, mask.astype(np.float32)).numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("get, match", [
    (lambda: em.keras.Input, r"em.keras.Input: .*Sequential.*subclass em.keras.Model"),
    (lambda: em.keras.layers.Input, r"em.keras.layers.Input: the functional API"),
    (lambda: em.keras.Sequential().save, r"Sequential.save: .*em.train.Checkpoint"),
    (lambda: em.keras.Model().save_weights, r"Model.save_weights: .*em.train.Checkpoint"),
])
def test_functional_api_and_model_files_say_what_to_use(get, match):
    with pytest.raises(AttributeError, match=match):
        get()
    assert not hasattr(em.keras.Sequential(), "save")
