"""Keras's customisation points of fit / evaluate / predict (runtime/keras/steps.py,
runners.py): an overridden train_step / test_step / predict_step runs (compiled, or as
Python with run_eagerly), its dict becomes the logs, and the "Customizing what happens in
fit()" guide's examples (Keras 2) train; fit(sample_weight=..., class_weight=...)."""

import numpy as np
import pytest

import ember as em

keras = em.keras


def _data(n=256, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, 8)).astype(np.float32)
    y = (x @ np.linspace(-1, 1, 8, dtype=np.float32)[:, None] + 0.5).astype(np.float32)
    return x, y


class _Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)

    def call(self, x):
        return self.dense(x)


class GuideModel(_Net):
    """The guide's first example: GradientTape, compiled_loss, compiled_metrics."""

    def train_step(self, data):
        x, y = data
        with em.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


class TrackerModel(_Net):
    """The guide's lower-level example: compile(optimizer) only, a loss_tracker Mean and a
    MeanAbsoluteError, listed by the `metrics` property so fit resets them each epoch."""

    def __init__(self):
        super().__init__()
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")

    def train_step(self, data):
        x, y = data
        with em.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = em.reduce_mean(keras.losses.mean_squared_error(y, y_pred))
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]


class WeightedModel(_Net):
    """The guide's sample_weight example: data may be (x, y, sample_weight)."""

    def train_step(self, data):
        if len(data) == 3:
            x, y, sample_weight = data
        else:
            sample_weight = None
            x, y = data
        with em.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, sample_weight=sample_weight,
                                      regularization_losses=self.losses)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred, sample_weight=sample_weight)
        return {m.name: m.result() for m in self.metrics}


class EvalModel(_Net):
    """The guide's test_step example."""

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def _same_start(*models, x=None):
    x = _data(4)[0] if x is None else x
    for m in models:
        m(x)
    for m in models[1:]:
        m.set_weights(models[0].get_weights())


def _close(h1, h2, rtol=1e-5):
    """Two histories (or logs) with the same keys, in order, and values close."""
    assert list(h1) == list(h2)
    for key in h1:
        np.testing.assert_allclose(h1[key], h2[key], rtol=rtol, atol=1e-6, err_msg=key)


def test_an_overridden_train_step_is_what_fit_runs():
    calls = []

    class M(_Net):
        def train_step(self, data):
            calls.append(1)
            return {"my_loss": em.constant(0.0)}

    m = M()
    m.compile(optimizer="sgd", loss="mse")
    h = m.fit(np.ones((8, 2), np.float32), np.ones((8, 1), np.float32), epochs=2, verbose=0)
    assert calls and list(h.history) == ["my_loss"] and h.history["my_loss"] == [0.0, 0.0]


@pytest.mark.parametrize("run_eagerly", [False, True])
def test_the_guide_model_trains_as_the_built_in_step(run_eagerly):
    x, y = _data()
    custom, builtin = GuideModel(), _Net()
    _same_start(custom, builtin)
    custom.compile(optimizer="adam", loss="mse", metrics=["mae"], run_eagerly=run_eagerly)
    builtin.compile(optimizer="adam", loss="mse", metrics=["mae"])
    h1 = custom.fit(x, y, epochs=3, shuffle=False, verbose=0)
    h2 = builtin.fit(x, y, epochs=3, shuffle=False, verbose=0)
    assert list(h1.history) == ["loss", "mae"]
    _close(h1.history, h2.history)
    assert h1.history["loss"][-1] < h1.history["loss"][0]
    for a, b in zip(custom.get_weights(), builtin.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert custom.metrics_names == ["loss", "mae"]
    for model in (custom, builtin):  # the metrics hold the last epoch's, then evaluate's
        assert {m.name: float(m.result()) for m in model.metrics} == pytest.approx(
            {k: v[-1] for k, v in h1.history.items()}, rel=1e-5)
        logs = model.evaluate(x[:100], y[:100], verbose=0, return_dict=True)
        assert {m.name: float(m.result()) for m in model.metrics} == pytest.approx(logs)


def test_metrics_listed_by_the_property_are_reset_each_epoch():
    x, y = _data()
    model = TrackerModel()
    model.compile(optimizer="adam")
    h = model.fit(x, y, epochs=4, verbose=0)
    loss = h.history["loss"]
    assert list(h.history) == ["loss", "mae"] and loss == sorted(loss, reverse=True)
    # reset each epoch: the last epoch's mean is below the mean over every epoch
    assert float(model.loss_tracker.result()) == pytest.approx(loss[-1])


def test_super_train_step_and_metrics_tracked_as_attributes():
    x, y = _data()

    class Counting(_Net):
        def __init__(self):
            super().__init__()
            self.seen = keras.metrics.Sum(name="seen")

        def train_step(self, data):
            self.seen.update_state(em.cast(em.shape(data[0])[0], "float32"))
            return super().train_step(data)

    model = Counting()
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    h = model.fit(x, y, epochs=2, batch_size=64, verbose=0)
    assert model.metrics_names == ["loss", "mae", "seen"]
    assert h.history["seen"] == [256.0, 256.0]  # reset at each epoch's start


def test_compute_loss_override():
    x, y = _data()

    class Custom(_Net):
        def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
            return em.reduce_mean(em.abs(y_pred - y))

    model = Custom()
    model.compile(optimizer=em.optimizers.SGD(0.1), metrics=["mae"])
    h = model.fit(x, y, epochs=3, verbose=0)
    assert list(h.history) == ["mae"] and h.history["mae"][-1] < h.history["mae"][0]


def test_test_step_and_predict_step_overrides():
    x, y = _data()
    model = EvalModel()
    model.compile(loss="mse", metrics=["mae"])
    loss, mae = model.evaluate(x, y, verbose=0)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert logs == pytest.approx({"loss": loss, "mae": mae})
    pred = model.predict(x, verbose=0)
    np.testing.assert_allclose(mae, np.mean(np.abs(pred - y)), rtol=1e-5)

    class Doubled(_Net):
        def predict_step(self, data):
            return 2.0 * super().predict_step(data)

    doubled = Doubled()
    doubled(x[:1])
    doubled.set_weights(model.get_weights())
    np.testing.assert_allclose(doubled.predict(x, batch_size=50, verbose=0), 2 * pred,
                               rtol=1e-5)


def test_a_step_must_return_a_dict():
    class Bad(_Net):
        def train_step(self, data):
            return em.constant(1.0)

    model = Bad()
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(TypeError, match="Model.train_step must return a dict"):
        model.fit(*_data(8), verbose=0)


def test_sample_weight_weighs_the_loss_as_keras():
    x, y = _data(64)
    plain, weighted, custom = _Net(), _Net(), WeightedModel()
    _same_start(plain, weighted, custom)
    plain.compile(optimizer=em.optimizers.SGD(0.1), loss="mse")
    weighted.compile(optimizer=em.optimizers.SGD(0.05), loss="mse")
    custom.compile(optimizer=em.optimizers.SGD(0.05), loss="mse")
    h1 = plain.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    twos = np.full(64, 2.0, np.float32)
    h2 = weighted.fit(x, y, sample_weight=twos, batch_size=16, epochs=2, shuffle=False,
                      verbose=0)
    h3 = custom.fit(x, y, sample_weight=twos, batch_size=16, epochs=2, shuffle=False,
                    verbose=0)
    assert h2.history["loss"] == pytest.approx([2 * v for v in h1.history["loss"]])
    _close(h3.history, h2.history)
    for a, b in zip(plain.get_weights(), weighted.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert weighted.evaluate(x, y, sample_weight=twos, verbose=0) == pytest.approx(
        2 * weighted.evaluate(x, y, verbose=0), rel=1e-5)


def test_class_weight_is_a_weight_per_label():
    rng = np.random.default_rng(1)
    x = rng.random((48, 4)).astype(np.float32)
    y = (x[:, 0] > 0.5).astype(np.int64)
    models = [keras.Sequential([keras.layers.Dense(2)]) for _ in range(2)]
    _same_start(*models, x=x[:1])
    for m in models:
        m.compile(optimizer="sgd", metrics=["accuracy"],
                  loss=em.losses.SparseCategoricalCrossentropy(from_logits=True))
    h1 = models[0].fit(x, y, class_weight={0: 1.0, 1: 3.0}, shuffle=False, verbose=0)
    h2 = models[1].fit(x, y, sample_weight=np.where(y == 1, 3.0, 1.0), shuffle=False,
                       verbose=0)
    _close(h1.history, h2.history)
    with pytest.raises(ValueError, match="keys from 0 to one less than the number"):
        models[0].fit(x, y, class_weight={1: 2.0}, verbose=0)
    # the held-out examples are not class-weighted (Keras weights the training data only)
    h = models[0].fit(x, y, class_weight={0: 1.0, 1: 3.0}, validation_split=0.25, verbose=0)
    assert h.history["val_loss"][0] == pytest.approx(
        models[0].evaluate(x[36:], y[36:], verbose=0)[0], rel=1e-5)


def test_weights_and_unknown_arguments_say_what_to_do():
    x, y = _data(16)
    model = _Net()
    model.compile(optimizer="sgd", loss="mse")
    dataset = em.data.Dataset.from_tensor_slices((x, y)).batch(4)
    with pytest.raises(ValueError, match="`sample_weight` argument is not supported when x "
                                         r"is a dataset; make its elements \(x, y, sample"):
        model.fit(dataset, sample_weight=np.ones(16), verbose=0)
    with pytest.raises(ValueError, match=r"sample_weight must hold one weight per example "
                                         r"\(16\), got shape \[3\]"):
        model.fit(x, y, sample_weight=np.ones(3), verbose=0)
    with pytest.raises(TypeError, match="Model.fit\\(\\) got an unexpected keyword argument "
                                        "'validation_freq'"):
        model.fit(x, y, validation_freq=2, verbose=0)
    model.fit(x, y, workers=4, use_multiprocessing=False, verbose=0)  # accepted, unused
    weighted = em.data.Dataset.from_tensor_slices((x, y, np.ones(16, np.float32))).batch(4)
    assert list(model.fit(weighted, verbose=0).history) == ["loss"]


class GAN(keras.Model):
    """The guide's GAN (dense, small): no call(), compile overridden, two optimizers."""

    def __init__(self, discriminator, generator, latent_dim):
        super().__init__()
        self.discriminator, self.generator = discriminator, generator
        self.latent_dim = latent_dim
        self.d_loss_tracker = keras.metrics.Mean(name="d_loss")
        self.g_loss_tracker = keras.metrics.Mean(name="g_loss")

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer, self.g_optimizer, self.loss_fn = d_optimizer, g_optimizer, loss_fn

    @property
    def metrics(self):
        return [self.d_loss_tracker, self.g_loss_tracker]

    def train_step(self, real_images):
        if isinstance(real_images, tuple):
            real_images = real_images[0]
        batch_size = em.shape(real_images)[0]
        latent = em.random.normal(shape=(batch_size, self.latent_dim))
        combined = em.concat([self.generator(latent), real_images], axis=0)
        labels = em.concat([em.ones((batch_size, 1)), em.zeros((batch_size, 1))], axis=0)
        labels += 0.05 * em.random.uniform(em.shape(labels))
        with em.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(combined))
        grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
        self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
        latent = em.random.normal(shape=(batch_size, self.latent_dim))
        with em.GradientTape() as tape:
            predictions = self.discriminator(self.generator(latent))
            g_loss = self.loss_fn(em.zeros((batch_size, 1)), predictions)
        grads = tape.gradient(g_loss, self.generator.trainable_weights)
        self.g_optimizer.apply_gradients(zip(grads, self.generator.trainable_weights))
        self.d_loss_tracker.update_state(d_loss)
        self.g_loss_tracker.update_state(g_loss)
        return {"d_loss": self.d_loss_tracker.result(), "g_loss": self.g_loss_tracker.result()}


def test_the_guide_gan_trains_two_models_with_two_optimizers():
    generator = keras.Sequential([keras.layers.Dense(16, activation="relu"),
                                  keras.layers.Dense(8, activation="sigmoid")])
    discriminator = keras.Sequential([keras.layers.Dense(16, activation="relu"),
                                      keras.layers.Dense(1)])
    gan = GAN(discriminator, generator, latent_dim=4)
    gan.compile(d_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
                g_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
                loss_fn=keras.losses.BinaryCrossentropy(from_logits=True))
    images = np.random.default_rng(0).random((64, 8)).astype(np.float32)
    h = gan.fit(em.data.Dataset.from_tensor_slices(images).batch(16), epochs=2, verbose=0)
    assert list(h.history) == ["d_loss", "g_loss"]
    assert all(np.isfinite(v).all() and 0.3 < v[0] < 1.5 for v in h.history.values())
    assert gan.d_optimizer.iterations.numpy() == 8 == gan.g_optimizer.iterations.numpy()
