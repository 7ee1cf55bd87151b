"""`Model.fit(shuffle=True)` on arrays under `em.random.set_seed`: as TF's fit, which shuffles
with a random op of its own, the orders of the examples follow the global seed, so two runs
(in one process or two) with the same `set_seed` before building the model train alike."""

import inspect
import subprocess
import sys

import numpy as np

import ember as em
from ember.frontend import random_seed
from ember.runtime.keras import fit as fit_lib


def _fit(shuffle=True):
    """The losses of a small fit; run here and, from its source, in another process."""
    em.random.set_seed(3)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 2)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + 2 * (x[:, 1] > 0).astype(np.int64)
    model = em.keras.Sequential([em.keras.layers.Dense(8, activation="relu"),
                                 em.keras.layers.Dense(4)])
    model.compile(optimizer=em.optimizers.SGD(0.1),
                  loss=em.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, batch_size=8, epochs=3, shuffle=shuffle, verbose=0)
    return [float(v) for v in history.history["loss"]]


def test_fit_with_shuffle_repeats_after_the_same_set_seed():
    first = _fit()
    assert _fit() == first
    assert _fit(shuffle=False) != first  # the shuffled batches differ


def test_fit_with_shuffle_repeats_in_another_process():
    code = "import numpy as np\nimport ember as em\n" + inspect.getsource(_fit) + \
        "print(_fit())\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(_fit())


def test_the_orders_of_the_epochs_differ_and_repeat():
    def orders():
        em.random.set_seed(5)
        shuffler = fit_lib.shuffler()
        return [shuffler.permutation(10).tolist() for _ in range(3)]
    first = orders()
    assert orders() == first and first[0] != first[1] != first[2]


def test_without_a_global_seed_the_orders_differ(monkeypatch):
    monkeypatch.setitem(random_seed._global, "seed", None)
    orders = {tuple(fit_lib.shuffler().permutation(20)) for _ in range(3)}
    assert len(orders) > 1
    assert np.array_equal(np.sort(next(iter(orders))), np.arange(20))
