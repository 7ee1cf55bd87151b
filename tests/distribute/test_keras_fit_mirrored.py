"""Model.fit under MirroredStrategy: a model made under the scope trains on 2 logical CPU
replicas exactly as on 1 replica with the same global batches (numpy arrays, a Dataset with
a partial last batch, a DatasetCreator), and evaluate / predict agree. The CPU split is fixed
once per process, so the cases run in one subprocess. Under MultiWorkerMirroredStrategy 2 MPI
workers fit as 1 (mw_keras_fit_worker.py)."""

import json
import subprocess
import sys
import textwrap

import numpy as np

from mw_launch import finish, require_mpi, start

CODE = """
import numpy as np
import ember as em
cpu = em.config.list_physical_devices("CPU")[0]
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * 2)
rng = np.random.default_rng(0)
x = rng.normal(size=(100, 3)).astype(np.float32)
y = (x[:, 0] - x[:, 1] > 0).astype(np.int64)


def make(strategy):
    with strategy.scope():
        em.random.set_seed(0)
        norm = em.keras.layers.Normalization()
        norm.adapt(x)
        model = em.keras.Sequential([norm, em.keras.layers.Dense(8, activation="relu"),
                                     em.keras.layers.Dense(2)])
        model.compile(optimizer=em.optimizers.Adam(0.05), metrics=["accuracy"],
                      loss=em.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def dataset_fn(context):
    return em.data.Dataset.from_tensor_slices((x, y)).repeat().batch(
        context.get_per_replica_batch_size(16))


def train(strategy):
    model = make(strategy)
    runs = [model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0).history]
    dataset = em.data.Dataset.from_tensor_slices((x, y)).batch(33)  # 100 = 3 * 33 + 1: a
    # last batch of 1 example: the second replica gets an empty batch
    runs.append(model.fit(dataset, epochs=2, verbose=0).history)
    creator = em.keras.utils.experimental.DatasetCreator(dataset_fn)
    runs.append(model.fit(creator, epochs=2, steps_per_epoch=3, verbose=0).history)
    return (runs, model.get_weights(), model.evaluate(x, y, batch_size=30, verbose=0),
            model.predict(x, batch_size=30, verbose=0), model)


two = em.distribute.MirroredStrategy()
one = em.distribute.MirroredStrategy(["cpu:0"])
runs2, weights2, eval2, pred2, model2 = train(two)
runs1, weights1, eval1, pred1, _ = train(one)
close = lambda a, b: bool(np.allclose(a, b, rtol=1e-5, atol=1e-5))
print(two.num_replicas_in_sync, type(model2.variables[-1]).__name__)
for r2, r1 in zip(runs2, runs1):
    print(sorted(r2), all(close(r2[k], r1[k]) for k in r1))
print(all(close(a, b) for a, b in zip(weights1, weights2)), close(eval1, eval2),
      close(pred1, pred2), pred2.shape)
copies = [two.experimental_local_results(v) for v in model2.variables]
print(all(np.array_equal(c[0].numpy(), c[1].numpy()) for c in copies))
print(runs2[0]["accuracy"][-1] > 0.8 or runs2[-1]["accuracy"][-1] > 0.8)
"""


def test_two_replicas_fit_as_one_with_the_same_global_batch():
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CODE)], capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    keys = "['accuracy', 'loss']"
    assert done.stdout.splitlines() == [
        "2 MirroredVariable", f"{keys} True", f"{keys} True", f"{keys} True",
        "True True True (100, 2)", "True", "True"]


def test_two_mpi_workers_fit_as_one():
    require_mpi()
    jobs = {n: start(n, "mw_keras_fit_worker.py") for n in (1, 2)}  # at the same time
    runs = {}
    for n, job in jobs.items():
        done = finish(job)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[n] = json.loads(done.stdout.strip().splitlines()[-1])
    one, two = runs[1], runs[2]
    assert two["workers"] == 2 and sorted(two["history"]) == ["accuracy", "loss"]
    for key in ("loss", "accuracy"):
        np.testing.assert_allclose(two["history"][key], one["history"][key], atol=1e-5)
    np.testing.assert_allclose(two["evaluation"], one["evaluation"], atol=1e-5)
    assert np.shape(two["predictions"]) == (96, 2)
    np.testing.assert_allclose(two["predictions"], one["predictions"], atol=1e-5)
    for a, b in zip(two["weights"], one["weights"]):
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert one["history"]["accuracy"][-1] > 0.9
