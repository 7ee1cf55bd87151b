"""em.keras.Model / em.keras.Sequential: compile, fit (numpy arrays, em.data.Dataset,
DatasetCreator), evaluate, predict, summary, get_weights / set_weights, callbacks, and their
errors, on one replica. (Several replicas: tests/distribute/test_keras_fit_mirrored.py.)"""

import numpy as np
import pytest

import ember as em
from ember.runtime.keras.dispatch import execution_for


def _problem(n=256, seed=0):
    """Four classes, each a quadrant of the plane (learnable by a small MLP)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + 2 * (x[:, 1] > 0).astype(np.int64)
    return x, y


def _mlp():
    em.random.set_seed(0)
    return em.keras.Sequential([em.keras.layers.Dense(16, activation="relu"),
                                em.keras.layers.Dense(4)])


def test_fit_evaluate_predict_on_a_small_problem(capsys):
    x, y = _problem()
    model = _mlp()
    model.compile(optimizer=em.optimizers.Adam(0.02),
                  loss=em.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=12, validation_data=_problem(64, 1))
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history.epoch == list(range(12))
    assert history.history["loss"][-1] < history.history["loss"][0] / 3
    assert history.history["accuracy"][-1] > 0.9 and history.history["val_accuracy"][-1] > 0.85
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "Epoch 1/12" and printed[1].startswith("8/8 - loss: ")
    loss, accuracy = model.evaluate(x, y, verbose=0)
    assert accuracy > 0.9 and loss < 0.5
    assert model.evaluate(x, y, verbose=0, return_dict=True) == {"loss": loss,
                                                                "accuracy": accuracy}
    logits = model.predict(x, batch_size=50, verbose=0)
    assert logits.shape == (256, 4)
    assert np.mean(logits.argmax(-1) == y) == pytest.approx(accuracy)
    np.testing.assert_allclose(logits, model(x).numpy(), rtol=1e-5, atol=1e-6)


def test_fit_agrees_with_an_eager_training_loop():
    """fit's compiled step = the eager GradientTape loop on the same batches (SGD)."""
    x, y = _problem(64)
    model = _mlp()
    model.add(em.keras.layers.Dense(4, activation="softmax"))  # probabilities
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    model.build([None, 2])
    start = model.get_weights()
    model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    eager = em.keras.Sequential([em.keras.layers.Dense(16, activation="relu"),
                                 em.keras.layers.Dense(4),
                                 em.keras.layers.Dense(4, activation="softmax")])
    eager.build([None, 2])
    eager.set_weights(start)
    optimizer = em.optimizers.SGD(0.01)
    loss_fn = em.losses.SparseCategoricalCrossentropy()
    for _ in range(2):
        for i in range(0, 64, 16):
            with em.GradientTape() as tape:
                loss = loss_fn(y[i:i + 16], eager(x[i:i + 16]))
            grads = tape.gradient(loss, eager.trainable_variables)
            optimizer.apply_gradients(zip(grads, eager.trainable_variables))
    for a, b in zip(model.get_weights(), eager.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_fit_on_a_dataset_and_a_dataset_creator():
    x, y = _problem(128)
    model = _mlp()
    model.compile(optimizer="adam", loss=em.losses.SparseCategoricalCrossentropy(True),
                  metrics=["sparse_categorical_accuracy"])
    dataset = em.data.Dataset.from_tensor_slices((x, y)).batch(32)
    history = model.fit(dataset, epochs=2, verbose=0)
    assert len(history.history["sparse_categorical_accuracy"]) == 2
    contexts = []

    def dataset_fn(input_context):
        contexts.append((input_context.num_input_pipelines, input_context.input_pipeline_id,
                         input_context.get_per_replica_batch_size(32)))
        return em.data.Dataset.from_tensor_slices((x, y)).repeat().batch(32)

    creator = em.keras.utils.experimental.DatasetCreator(dataset_fn)
    history = model.fit(creator, epochs=3, steps_per_epoch=5, verbose=0)
    assert history.epoch == [0, 1, 2] and contexts == [(1, 0, 32)]
    with pytest.raises(ValueError, match="steps_per_epoch is required with a DatasetCreator"):
        model.fit(creator, epochs=1)


def test_steps_per_epoch_continues_one_iterator_and_stops_when_data_runs_out(capsys):
    x, y = _problem(64)
    model = _mlp()
    model.compile(optimizer="sgd", loss=em.losses.SparseCategoricalCrossentropy(True))
    seen = []

    class Batches(em.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen.append(batch)

    dataset = em.data.Dataset.from_tensor_slices((x, y)).batch(16)  # 4 batches in all
    history = model.fit(dataset, epochs=3, steps_per_epoch=3, callbacks=[Batches()],
                        verbose=0)
    assert history.epoch == [0, 1] and seen == [0, 1, 2, 0]
    assert "the input ran out of data after 1 steps of epoch 2" in capsys.readouterr().out


def test_losses_and_optimizers_by_name():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    w = np.array([[1.0], [-2.0], [0.5]], np.float32)
    em.random.set_seed(0)
    regression = em.keras.Sequential([em.keras.layers.Dense(1)])
    regression.compile(optimizer=em.optimizers.SGD(0.1), loss="mse")
    history = regression.fit(x, x @ w, batch_size=16, epochs=20, verbose=0)
    assert history.history["loss"][-1] < 1e-3
    assert isinstance(regression.optimizer, em.optimizers.SGD)
    binary = em.keras.Sequential([em.keras.layers.Dense(1, activation="sigmoid")])
    binary.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    assert isinstance(binary.optimizer, em.optimizers.Adam)
    labels = (x @ w > 0).astype(np.float32)
    binary.optimizer.learning_rate = 0.1
    history = binary.fit(x, labels, batch_size=16, epochs=15, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
    onehot = em.keras.Sequential([em.keras.layers.Dense(2)])
    onehot.compile(optimizer="adam",
                   loss=em.losses.CategoricalCrossentropy(from_logits=True),
                   metrics=["accuracy"])
    out = onehot.evaluate(x, np.eye(2, dtype=np.float32)[labels[:, 0].astype(int)], verbose=0)
    assert len(out) == 2 and 0 <= out[1] <= 1


def test_a_subclassed_model_with_preprocessing_inside():
    class Net(em.keras.Model):
        def __init__(self):
            super().__init__()
            self.lookup = em.keras.layers.IntegerLookup(vocabulary=[10, 20, 30, 40])
            self.embed = em.keras.layers.Embedding(5, 4)
            self.flatten = em.keras.layers.Flatten()
            self.out = em.keras.layers.Dense(2)

        def call(self, x, training=None):
            return self.out(self.flatten(self.embed(self.lookup(x))))

    em.random.set_seed(0)
    model = Net()
    model.compile(optimizer=em.optimizers.Adam(0.05),
                  loss=em.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    tokens = np.array([10, 20, 30, 40, 50] * 20, np.int64)[:, None]
    labels = (tokens[:, 0] >= 30).astype(np.int64)
    history = model.fit(tokens, labels, batch_size=20, epochs=8, verbose=0)
    assert history.history["accuracy"][-1] == 1.0
    lines = []
    model.summary(print_fn=lines.append)
    assert lines[0] == 'Model: "net"' and "Total params: 30" in lines
    assert any(line.startswith("dense") and line.endswith("10") for line in lines)


def test_weights_round_trip_and_callbacks_stop_training():
    x, y = _problem(64)
    model = _mlp()
    model.compile(optimizer="sgd", loss=em.losses.SparseCategoricalCrossentropy(True))
    model.build([None, 2])
    weights = model.get_weights()
    assert [w.shape for w in weights] == [(2, 16), (16,), (16, 4), (4,)]
    model.set_weights([w + 1 for w in weights])
    np.testing.assert_allclose(model.get_weights()[1], weights[1] + 1)

    class Stop(em.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.model.stop_training = epoch == 1

    assert model.fit(x, y, epochs=10, callbacks=[Stop()], verbose=0).epoch == [0, 1]
    with pytest.raises(ValueError, match="the model has 4 weights, got 3 arrays"):
        model.set_weights(weights[:3])
    with pytest.raises(ValueError, match=r"has shape \[16\], got an array of shape \[3\]"):
        model.set_weights(weights[:1] + [np.zeros(3)] + weights[2:])


def test_errors_say_what_to_do():
    model = _mlp()
    x, y = _problem(8)
    with pytest.raises(RuntimeError, match=r"Sequential.fit: call model.compile\(optimizer, "):
        model.fit(x, y)
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        model.compile(loss="hinge")
    with pytest.raises(ValueError, match="unknown optimizer 'lbfgs'"):
        model.compile(optimizer="lbfgs", loss="mse")
    with pytest.raises(ValueError, match="unknown metric 'f1'"):
        model.compile(loss="mse", metrics=["f1"])
    model.compile(optimizer="sgd")  # no loss: for a train_step computing its own (Keras)
    with pytest.raises(ValueError, match="No loss found. You may have forgotten to provide "
                                         "a `loss` argument in the `compile"):
        model.fit(x, y, verbose=0)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match="x and y must have the same number of examples"):
        model.fit(x, y[:4])
    with pytest.raises(ValueError, match="y must not be given when x is a dataset"):
        model.fit(em.data.Dataset.from_tensor_slices((x, y)).batch(4), y)
    with pytest.raises(ValueError, match=r"must be a \(features, labels\) pair"):
        model.fit(em.data.Dataset.from_tensor_slices(x).batch(4))
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        model.fit(x, y, batch_size=0)
    with pytest.raises(ValueError, match="epochs must be an integer >= 0, got '3'"):
        model.fit(x, y, epochs="3")
    with pytest.raises(TypeError, match="x must be a numpy array, an em.Tensor, a dict "
                                        r"/ tuple / list of them \(several inputs\), an "
                                        "em.data.Dataset or a DatasetCreator, got NoneType"):
        model.fit(None, y)
    with pytest.raises(TypeError, match="the strategy .* is not supported"):
        execution_for(object())
    with pytest.raises(TypeError, match="the functional API.* is not available"):
        em.keras.Model(inputs=None, outputs=None)
