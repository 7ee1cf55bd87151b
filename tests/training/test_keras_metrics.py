"""em.keras.metrics (frontend/training/metrics.py, metrics_confusion.py): Keras's values
(the examples of keras.metrics' docstrings), sample weights, reset_state, the same object
updated eagerly and in an em.function, and the names compile(metrics=[...]) takes."""

import numpy as np
import pytest

import ember as em

M = em.keras.metrics

# (metric, update_state arguments, Keras's result)
CASES = [
    (lambda: M.Sum(), ([1.0, 3.0, 5.0, 7.0],), 16.0),
    (lambda: M.Mean(), ([1.0, 3.0, 5.0, 7.0],), 4.0),
    (lambda: M.Accuracy(), ([[1], [2], [3], [4]], [[0], [2], [3], [4]]), 0.75),
    (lambda: M.BinaryAccuracy(), ([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]]), 0.75),
    (lambda: M.CategoricalAccuracy(),
     ([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]), 0.5),
    (lambda: M.SparseCategoricalAccuracy(),
     ([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]]), 0.5),
    (lambda: M.MeanSquaredError(), ([[0, 1], [0, 0]], [[1, 1], [0, 0]]), 0.25),
    (lambda: M.MeanAbsoluteError(), ([[0, 1], [0, 0]], [[1, 1], [0, 0]]), 0.25),
    (lambda: M.Precision(), ([0, 1, 1, 1], [1, 0, 1, 1]), 2 / 3),
    (lambda: M.Recall(), ([0, 1, 1, 1], [1, 0, 1, 1]), 2 / 3),
    (lambda: M.AUC(num_thresholds=3), ([0, 0, 1, 1], [0, 0.5, 0.3, 0.9]), 0.75),
    (lambda: M.AUC(), ([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 0.75),
]

# (metric, update_state arguments with sample_weight, Keras's result)
WEIGHTED = [
    (lambda: M.Sum(), ([1.0, 3.0, 5.0, 7.0], [1, 0, 0, 1]), 8.0),
    (lambda: M.Mean(), ([1.0, 3.0, 5.0, 7.0], [1, 1, 0, 0]), 2.0),
    (lambda: M.Accuracy(), ([[1], [2], [3], [4]], [[0], [2], [3], [4]], [1, 1, 0, 0]), 0.5),
    (lambda: M.BinaryAccuracy(), ([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]],
                                  [1, 0, 0, 1]), 0.5),
    (lambda: M.CategoricalAccuracy(),
     ([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]], [0.7, 0.3]), 0.3),
    (lambda: M.SparseCategoricalAccuracy(),
     ([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]], [0.7, 0.3]), 0.3),
    (lambda: M.MeanSquaredError(), ([[0, 1], [0, 0]], [[1, 1], [0, 0]], [1, 0]), 0.5),
    (lambda: M.Precision(), ([0, 1, 1, 1], [1, 0, 1, 1], [0, 0, 1, 0]), 1.0),
    (lambda: M.Recall(), ([0, 1, 1, 1], [1, 0, 1, 1], [0, 0, 1, 0]), 1.0),
]


def _update(metric, args, weighted):
    *args, weight = args if weighted else (*args, None)
    metric.update_state(*[a if isinstance(a, em.Tensor) else np.asarray(a, np.float32)
                          for a in args], sample_weight=weight)


@pytest.mark.parametrize("make, args, expected", CASES + WEIGHTED)
def test_keras_values_eagerly_and_compiled(make, args, expected):
    weighted = any(args is w[1] for w in WEIGHTED)
    eager = make()
    _update(eager, args, weighted)
    assert float(eager.result()) == pytest.approx(expected, abs=1e-6)
    compiled = make()
    step = em.function(lambda *a: _update(compiled, a, weighted) or compiled.result())
    tensors = [em.constant(np.asarray(a, np.float32)) for a in args]
    assert float(step(*tensors)) == pytest.approx(expected, abs=1e-6)
    step(*tensors)  # the state accumulates over calls (a mean of the same values: the same)
    again = 2 * expected if type(compiled) is M.Sum else expected
    assert float(compiled.result()) == pytest.approx(again, abs=1e-6)
    compiled.reset_state()
    assert float(compiled.result()) == 0.0


def test_several_thresholds_give_one_value_each():
    m = M.Precision(thresholds=[0.1, 0.5, 0.9])
    m.update_state([0, 1, 1, 1], [0.2, 0.3, 0.95, 0.6])
    np.testing.assert_allclose(m.result().numpy(), [0.75, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"thresholds must be in \[0, 1\]"):
        M.Recall(thresholds=1.5)
    with pytest.raises(ValueError, match="curve must be 'ROC' or 'PR'"):
        M.AUC(curve="DET")


@pytest.mark.parametrize("curve, method, want", [
    # thresholds (-eps, 0.5, 1+eps) on [0, 0, 1, 1] / [0, 0.5, 0.3, 0.9]: recall 1, .5, 0;
    # false positive rate 1, 0, 0; precision .5, 1, 0 (0/0: 0); by hand from Keras's sums
    ("ROC", "interpolation", 0.75), ("ROC", "minoring", 0.5), ("ROC", "majoring", 1.0),
    ("PR", "minoring", 0.25), ("PR", "majoring", 1.0),
    # Davis & Goadrich: (1 + 2/3 ln 4) / 6 + 1/2
    ("PR", "interpolation", (1 + 2 / 3 * np.log(4)) / 6 + 0.5),
])
def test_auc_curves_and_summation_methods(curve, method, want):
    for compiled in (False, True):
        m = M.AUC(num_thresholds=3, curve=curve, summation_method=method)
        update = em.function(m.update_state) if compiled else m.update_state
        update(em.constant([0, 0, 1, 1]), em.constant([0, 0.5, 0.3, 0.9]))
        np.testing.assert_allclose(float(m.result()), want, rtol=1e-6)


def test_pr_auc_of_a_perfect_ranking_is_one():
    m = M.AUC(curve="PR", num_thresholds=200)
    m.update_state([0, 0, 1, 1, 1], [0.1, 0.2, 0.7, 0.8, 0.9])
    np.testing.assert_allclose(float(m.result()), 1.0, rtol=1e-5)


def test_a_custom_metric_subclass():
    class Count(M.Metric):
        def __init__(self, name="count"):
            super().__init__(name=name)
            self.n = self.add_weight("n")

        def update_state(self, values, sample_weight=None):
            self.n.assign_add(em.cast(em.size(values), "float32"))

        def result(self):
            return self.n.read_value()

    c = Count()
    assert float(c([1, 2, 3])) == 3.0 and [v.name for v in c.variables] == ["count/n:0"]


@pytest.mark.parametrize("metrics, names", [
    (["accuracy"], ["loss", "accuracy"]),
    (["acc", "binary_accuracy", "mse", "mae"],
     ["loss", "acc", "binary_accuracy", "mse", "mae"]),
    (["AUC", "Precision", "recall"], ["loss", "auc", "precision", "recall"]),
    ([M.BinaryAccuracy(name="bin"), M.AUC(num_thresholds=50)], ["loss", "bin", "auc"]),
])
def test_compile_takes_names_and_objects(metrics, names):
    rng = np.random.default_rng(0)
    x = rng.random((64, 3)).astype(np.float32)
    y = (x[:, :1] > 0.5).astype(np.float32)
    model = em.keras.Sequential([em.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=em.optimizers.SGD(0.5), loss="binary_crossentropy",
                  metrics=metrics)
    history = model.fit(x, y, epochs=3, batch_size=16, verbose=0).history
    assert list(history) == names and model.metrics_names == names
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(logs) == names
    pred = model.predict(x, verbose=0)
    for name in names:  # evaluate's values are the metrics of the predictions
        if name in ("acc", "accuracy", "bin", "binary_accuracy"):
            assert logs[name] == pytest.approx(np.mean((pred > 0.5) == y), abs=1e-6)
        elif name == "precision":
            assert logs[name] == pytest.approx(
                ((pred > 0.5) & (y == 1)).sum() / max((pred > 0.5).sum(), 1), abs=1e-6)
