"""A custom train_step (the Keras guide's, with compiled_loss / compiled_metrics, sample
weights, metric objects, run_eagerly) under MirroredStrategy: 2 logical CPU replicas train
and log exactly as 1 replica on the same global batches, a partial last batch included, and
the metrics' copies agree. A step with its own Mean tracker and a loss scaled by the global
batch size does too; a metric made outside the scope is refused. The CPU split is fixed
once per process: one subprocess."""

import subprocess
import sys
import textwrap

CODE = """
import numpy as np
import ember as em
keras = em.keras
cpu = em.config.list_physical_devices("CPU")[0]
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * 2)
rng = np.random.default_rng(0)
x = rng.normal(size=(100, 3)).astype(np.float32)
y = (x[:, 0] - x[:, 1] > 0).astype(np.int64)
w = rng.random(100).astype(np.float32)


class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.a, self.b = keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2)

    def call(self, x):
        return self.b(self.a(x))


class Guide(Net):
    def train_step(self, data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        with em.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, sample_weight=sample_weight,
                                      regularization_losses=self.losses)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred, sample_weight=sample_weight)
        return {m.name: m.result() for m in self.metrics}


class Tracker(Net):
    def __init__(self):
        super().__init__()
        self.tracker = keras.metrics.Mean(name="loss")
        self.acc = keras.metrics.SparseCategoricalAccuracy(name="acc")

    def train_step(self, data):
        x, y = data
        with em.GradientTape() as tape:
            y_pred = self(x, training=True)
            per_example = em.losses.sparse_categorical_crossentropy(y, y_pred,
                                                                    from_logits=True)
            loss = em.reduce_sum(per_example) / 20.0  # the global batch size
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.tracker.update_state(per_example)
        self.acc.update_state(y, y_pred)
        return {"loss": self.tracker.result(), "acc": self.acc.result()}

    @property
    def metrics(self):
        return [self.tracker, self.acc]


def train(strategy, cls, **kwargs):
    with strategy.scope():
        em.random.set_seed(0)
        model = cls()
        model.compile(optimizer=em.optimizers.SGD(0.1),
                      loss=em.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy", keras.metrics.SparseCategoricalAccuracy("sca")],
                      **kwargs)
    runs = [model.fit(x, y, batch_size=20, epochs=2, shuffle=False, verbose=0).history]
    if cls is Guide:  # 100 = 3 * 33 + 1: the second replica's last share is empty
        data = em.data.Dataset.from_tensor_slices((x, y, w)).batch(33)
        runs.append(model.fit(data, epochs=2, verbose=0).history)
    logs = model.evaluate(x, y, batch_size=30, verbose=0, return_dict=True)
    return runs, model.get_weights(), logs, model


def close(a, b):
    return bool(np.allclose(a, b, rtol=1e-5, atol=1e-5))


two = em.distribute.MirroredStrategy()
one = em.distribute.MirroredStrategy(["cpu:0"])
for cls, kwargs in ((Guide, {}), (Guide, {"run_eagerly": True}), (Tracker, {})):
    runs2, weights2, logs2, model2 = train(two, cls, **kwargs)
    runs1, weights1, logs1, _ = train(one, cls, **kwargs)
    same = [list(r2) == list(r1) and all(close(r2[k], r1[k]) for k in r1)
            for r2, r1 in zip(runs2, runs1)]
    copies = [two.experimental_local_results(v) for m in model2.metrics for v in m.variables]
    print(cls.__name__, list(runs2[0]), same,
          all(close(a, b) for a, b in zip(weights2, weights1)),
          list(logs2) == list(logs1) and all(close(logs2[k], logs1[k]) for k in logs1),
          {type(c).__name__ for m in model2.metrics for c in m.variables},
          all(np.array_equal(c[0].numpy(), c[1].numpy()) for c in copies))
with two.scope():
    model = Guide()
try:  # made outside the scope: one variable every replica would add the global sum to
    model.compile(loss="mse", metrics=[keras.metrics.AUC()])
except ValueError as e:
    print(str(e).split(":")[1].strip())
"""


def test_a_custom_train_step_on_two_replicas_trains_as_on_one():
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CODE)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    metrics = "['loss', 'accuracy', 'sca']"
    assert done.stdout.splitlines() == [
        f"Guide {metrics} [True, True] True True {{'MirroredVariable'}} True",
        f"Guide {metrics} [True, True] True True {{'MirroredVariable'}} True",
        "Tracker ['loss', 'acc'] [True] True True {'MirroredVariable'} True",
        "the metrics ['auc'] were made outside the scope of the model's strategy, so their "
        "variables are not mirrored"]
