"""Fixes from a new-user trial of em.keras: input rank checks, nested inputs, summary on an
unbuilt model, names and callbacks users reach for (kfix)."""

import numpy as np
import pytest

import ember as em


def _data(n=10):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, 5)).astype(np.float32), (np.arange(n) % 2).astype(np.int32)


def _model():
    em.random.set_seed(0)
    m = em.keras.Sequential([em.keras.layers.Dense(2)])
    m.compile(optimizer="adam",
              loss=em.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def test_unbatched_dataset_on_a_built_model_is_rejected_like_keras():
    x, y = _data()
    m = _model()
    m.build((None, 5))
    with pytest.raises(ValueError, match=r'layer "dense.*expected min_ndim=2, found ndim=1'
                                         r'.*batch the dataset'):
        m.fit(em.data.Dataset.from_tensor_slices((x, y)), epochs=1, verbose=0)


def test_batched_then_unbatched_dataset_gives_a_clear_error():
    x, y = _data()
    m = _model()
    m.fit(em.data.Dataset.from_tensor_slices((x, y)).batch(4), epochs=1, verbose=0)
    with pytest.raises(ValueError, match=r"(min_ndim=2, found ndim=1|unknown rank).*batch"):
        m.fit(em.data.Dataset.from_tensor_slices((x, y)), epochs=1, verbose=0)


def test_dense_called_on_a_vector_names_the_layer():
    layer = em.keras.layers.Dense(3, name="d0")
    with pytest.raises(ValueError, match=r'"d0".*min_ndim=2, found ndim=1'):
        layer(em.ones([4]))


class _Two(em.keras.Model):
    def __init__(self):
        super().__init__()
        self.d = em.keras.layers.Dense(1)

    def call(self, inputs):
        if isinstance(inputs, dict):
            return self.d(em.concat([inputs["a"], inputs["b"]], axis=1))
        return self.d(em.concat(list(inputs), axis=1))


def _two_inputs(n=32):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(n, 2)).astype(np.float32)
    b = rng.normal(size=(n, 1)).astype(np.float32)
    return a, b, a[:, :1] + b


def test_dict_and_tuple_inputs_in_fit_evaluate_predict():
    a, b, y = _two_inputs()
    em.random.set_seed(0)
    t = _Two()
    t.compile(optimizer="sgd", loss="mse")
    h = t.fit({"a": a, "b": b}, y, batch_size=8, epochs=2, verbose=0,
              validation_data=({"a": a, "b": b}, y))
    assert len(h.history["loss"]) == 2 and "val_loss" in h.history
    ds = em.data.Dataset.from_tensor_slices(({"a": a, "b": b}, y)).batch(8)
    t.fit(ds, epochs=1, verbose=0)
    by_arrays = t.evaluate({"a": a, "b": b}, y, verbose=0)
    assert np.isclose(by_arrays, t.evaluate(ds, verbose=0), rtol=1e-5)
    out = t.predict({"a": a[:5], "b": b[:5]}, verbose=0)
    assert out.shape == (5, 1)
    np.testing.assert_allclose(out, t.predict((a[:5], b[:5]), verbose=0), rtol=1e-6)
    np.testing.assert_allclose(
        out, t.predict(em.data.Dataset.from_tensor_slices({"a": a[:5], "b": b[:5]}).batch(2),
                       verbose=0), rtol=1e-6)
    t.fit([a, b], y, batch_size=8, epochs=1, verbose=0)  # a list of arrays: two inputs


def test_nested_inputs_errors_are_short():
    a, b, y = _two_inputs()
    t = _Two()
    t.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match=r"same number of examples, got lengths \[16, 32\]"):
        t.fit({"a": a[:16], "b": b}, y, verbose=0)
    with pytest.raises(TypeError, match="every input of a nested x must be an array") as e:
        t.fit({"a": a, "b": object()}, y, verbose=0)
    assert len(str(e.value)) < 200
    with pytest.raises(TypeError, match=r"Model '.*': the inputs must be tensors") as e:
        t({"a": a, "b": object()})
    assert len(str(e.value)) < 300


def test_summary_of_an_unbuilt_model_raises_like_keras(capsys):
    m = em.keras.Sequential([em.keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="has not yet been built. Build the model first"):
        m.summary()
    m.build((None, 3))
    m.summary()
    assert "Total params: 8" in capsys.readouterr().out
    t = _Two()
    with pytest.raises(ValueError, match="not yet been built"):
        t.summary()
    t({"a": np.ones((1, 2), np.float32), "b": np.ones((1, 1), np.float32)})
    t.summary()
    assert "Total params: 4" in capsys.readouterr().out


def test_mae_and_huber_by_name_and_class_agree_with_keras_formulas():
    y_true = np.array([[0.0, 1.0], [2.0, -1.0]], np.float32)
    y_pred = np.array([[0.5, 3.0], [2.0, 0.5]], np.float32)
    np.testing.assert_allclose(em.losses.mean_absolute_error(y_true, y_pred).numpy(),
                               np.abs(y_true - y_pred).mean(-1), rtol=1e-6)
    e = np.abs(y_pred - y_true)
    want = np.where(e <= 1.0, 0.5 * e ** 2, e - 0.5).mean(-1)
    np.testing.assert_allclose(em.losses.huber(y_true, y_pred).numpy(), want, rtol=1e-6)
    assert np.isclose(float(em.losses.Huber()(y_true, y_pred)), want.mean())
    assert np.isclose(float(em.losses.MeanAbsoluteError()(y_true, y_pred)), e.mean())
    x, _ = _data(16)
    for loss in ("mae", "mean_absolute_error", "huber", em.losses.Huber(delta=0.5)):
        m = em.keras.Sequential([em.keras.layers.Dense(1)])
        m.compile(optimizer="sgd", loss=loss, metrics=["mae", "mean_absolute_error"])
        h = m.fit(x, x[:, :1], epochs=1, verbose=0)
        assert set(h.history) == {"loss", "mae", "mean_absolute_error"}


def test_early_stopping_stops_and_restores_best_weights():
    x, _ = _data(16)
    y = x[:, :1]
    m = em.keras.Sequential([em.keras.layers.Dense(1)])
    m.compile(optimizer=em.optimizers.SGD(5.0), loss="mse")  # diverges: loss grows
    m.build((None, 5))
    first = m.get_weights()
    stop = em.keras.callbacks.EarlyStopping(monitor="loss", patience=2,
                                            restore_best_weights=True)
    h = m.fit(x, y, epochs=20, batch_size=16, shuffle=False, verbose=0, callbacks=[stop])
    losses = h.history["loss"]
    best = int(np.argmin(losses))
    assert len(losses) == best + 3 and stop.stopped_epoch == best + 2
    assert stop.best_epoch == best
    # the restored weights are those after the best epoch, which the next epoch's (one
    # full batch) loss was computed with
    assert np.isclose(m.evaluate(x, y, verbose=0), losses[best + 1], rtol=1e-5)
    assert losses[best + 1] < losses[-1]
    assert not all(np.array_equal(a, b) for a, b in zip(first, m.get_weights()))
    with pytest.raises(ValueError, match="mode must be 'auto', 'min' or 'max'"):
        em.keras.callbacks.EarlyStopping(mode="up")
    assert em.keras.callbacks.EarlyStopping(monitor="val_accuracy").mode == "max"


def test_early_stopping_min_delta_counts_small_gains_as_none():
    x, _ = _data(16)
    m = em.keras.Sequential([em.keras.layers.Dense(1)])
    m.compile(optimizer=em.optimizers.SGD(1e-6), loss="mse")  # barely moves
    stop = em.keras.callbacks.EarlyStopping(monitor="loss", min_delta=1.0, patience=1)
    h = m.fit(x, x[:, :1], epochs=10, verbose=0, callbacks=[stop])
    assert len(h.history["loss"]) == 2


def test_learning_rate_scheduler_sets_the_rate_each_epoch():
    x, _ = _data(16)
    m = em.keras.Sequential([em.keras.layers.Dense(1)])
    m.compile(optimizer=em.optimizers.SGD(0.1), loss="mse")
    seen = []
    sched = em.keras.callbacks.LearningRateScheduler(
        lambda epoch, lr: seen.append(lr) or 0.1 / (epoch + 1))
    h = m.fit(x, x[:, :1], epochs=3, verbose=0, callbacks=[sched])
    np.testing.assert_allclose(h.history["learning_rate"], [0.1, 0.05, 0.1 / 3], rtol=1e-6)
    np.testing.assert_allclose(seen, [0.1, 0.1, 0.05], rtol=1e-6)
    m.fit(x, x[:, :1], epochs=1, verbose=0,
          callbacks=[em.keras.callbacks.LearningRateScheduler(lambda epoch: 0.25)])
    assert np.isclose(float(m.optimizer.learning_rate.numpy()), 0.25)
    with pytest.raises(ValueError, match="must return a float"):
        m.fit(x, x[:, :1], epochs=1, verbose=0,
              callbacks=[em.keras.callbacks.LearningRateScheduler(lambda e, lr: "x")])


def test_validation_split_holds_out_the_last_fraction():
    x, y = _data(20)
    m = _model()
    h = m.fit(x, y, epochs=2, batch_size=4, validation_split=0.25, verbose=0)
    assert "val_loss" in h.history
    assert np.isclose(h.history["val_loss"][-1], m.evaluate(x[15:], y[15:], verbose=0),
                      rtol=1e-5)
    t = _Two()
    t.compile(optimizer="sgd", loss="mse")
    a, b, yy = _two_inputs()
    assert "val_loss" in t.fit({"a": a, "b": b}, yy, validation_split=0.5, verbose=0).history
    with pytest.raises(ValueError, match="validation_split is only supported for numpy"):
        m.fit(em.data.Dataset.from_tensor_slices((x, y)).batch(4), validation_split=0.2)
    with pytest.raises(ValueError, match=r"validation_split must be a float in \[0, 1\)"):
        m.fit(x, y, validation_split=1.0)


def test_flatten_of_a_scalar_names_the_layer():
    with pytest.raises(ValueError, match=r'"flat".*expected min_ndim=1, found ndim=0'):
        em.keras.layers.Flatten(name="flat")(em.constant(1.0))


def test_learning_rate_scheduler_refuses_an_optimizer_with_a_schedule():
    x, _ = _data(8)
    m = em.keras.Sequential([em.keras.layers.Dense(1)])
    decay = em.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    m.compile(optimizer=em.optimizers.SGD(decay), loss="mse")
    with pytest.raises(TypeError, match="learning rate is not settable"):
        m.fit(x, x[:, :1], verbose=0,
              callbacks=[em.keras.callbacks.LearningRateScheduler(lambda e, lr: lr)])
