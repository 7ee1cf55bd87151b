"""em.losses against numpy, eagerly and compiled."""

import warnings

import numpy as np
import pytest

import ember as em

LOGITS = np.array([[2.0, -1.0, 0.5], [0.1, 0.2, 3.0], [-2.0, 1.0, 1.0]], np.float32)
PROBS = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
LABELS = np.array([0, 2, 1], np.int32)
ONE_HOT = np.eye(3, dtype=np.float32)[LABELS]


@pytest.fixture(autouse=True)
def no_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        yield


def nll(p, labels):
    return -np.log(np.clip(p, 1e-7, 1 - 1e-7)[np.arange(len(labels)), labels])


CASES = [
    ("sparse-logits", em.losses.SparseCategoricalCrossentropy(from_logits=True), LABELS,
     LOGITS, nll(PROBS, LABELS).mean()),
    ("sparse-probs", em.losses.SparseCategoricalCrossentropy(), LABELS, PROBS,
     nll(PROBS, LABELS).mean()),
    ("sparse-column-labels", em.losses.SparseCategoricalCrossentropy(), LABELS[:, None],
     PROBS, nll(PROBS, LABELS).mean()),
    ("categorical-logits", em.losses.CategoricalCrossentropy(from_logits=True), ONE_HOT,
     LOGITS, nll(PROBS, LABELS).mean()),
    ("categorical-probs", em.losses.CategoricalCrossentropy(), ONE_HOT, PROBS,
     nll(PROBS, LABELS).mean()),
    ("categorical-smoothing", em.losses.CategoricalCrossentropy(label_smoothing=0.3), ONE_HOT,
     PROBS, -(((ONE_HOT * 0.7 + 0.1) * np.log(PROBS)).sum(-1)).mean()),
    ("mse", em.losses.MeanSquaredError(), PROBS, ONE_HOT, ((PROBS - ONE_HOT) ** 2).mean()),
]


@pytest.mark.parametrize("loss, y_true, y_pred, want", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_loss_classes_match_numpy_eager_and_compiled(loss, y_true, y_pred, want):
    eager = float(loss(y_true, y_pred))
    compiled = float(em.function(lambda a, b: loss(a, b))(y_true, y_pred))
    assert eager == pytest.approx(want, rel=1e-5)
    assert compiled == pytest.approx(eager, rel=1e-6)


def test_functional_losses_return_one_value_per_example():
    np.testing.assert_allclose(em.losses.sparse_categorical_crossentropy(LABELS, PROBS),
                               nll(PROBS, LABELS), rtol=1e-5)
    np.testing.assert_allclose(
        em.losses.sparse_categorical_crossentropy(LABELS, LOGITS, from_logits=True),
        nll(PROBS, LABELS), rtol=1e-5)
    np.testing.assert_allclose(em.losses.mean_squared_error(ONE_HOT, PROBS),
                               ((PROBS - ONE_HOT) ** 2).mean(-1), rtol=1e-6)
    np.testing.assert_allclose(em.losses.categorical_crossentropy(ONE_HOT, PROBS),
                               nll(PROBS, LABELS), rtol=1e-5)


def test_probabilities_are_clipped_so_a_certain_mistake_is_finite():
    loss = em.losses.sparse_categorical_crossentropy([1], [[1.0, 0.0]])
    assert float(loss[0]) == pytest.approx(-np.log(1e-7), rel=1e-4)


def test_sample_weight_and_reductions():
    loss = em.losses.MeanSquaredError()
    w = np.array([1.0, 0.0, 2.0], np.float32)
    per = ((PROBS - ONE_HOT) ** 2).mean(-1)
    assert float(loss(ONE_HOT, PROBS, sample_weight=w)) == pytest.approx((per * w).sum() / 3)
    assert float(em.losses.MeanSquaredError(reduction="sum")(ONE_HOT, PROBS)) == \
        pytest.approx(per.sum(), rel=1e-6)
    np.testing.assert_allclose(em.losses.MeanSquaredError(reduction="none")(ONE_HOT, PROBS),
                               per, rtol=1e-6)
    with pytest.raises(ValueError, match="reduction"):
        em.losses.MeanSquaredError(reduction="mean")


def test_bad_inputs_raise():
    with pytest.raises(TypeError, match="y_pred must be floating-point"):
        em.losses.mean_squared_error([1.0], [1])
    with pytest.raises(ValueError, match="same shape"):
        em.losses.categorical_crossentropy(ONE_HOT[:, :2], PROBS)
    with pytest.raises(ValueError, match="one dim fewer"):
        em.losses.SparseCategoricalCrossentropy(from_logits=True)(ONE_HOT, LOGITS)


@pytest.mark.parametrize("loss, y_true", [
    (em.losses.MeanSquaredError(), np.array([[1, 2], [0, 3]], np.int32)),
    (em.losses.MeanAbsoluteError(), np.array([[1, 2], [0, 3]], np.int64)),
    (em.losses.Huber(), np.array([[1, 0], [0, 1]], np.bool_)),
    (em.losses.CategoricalCrossentropy(), np.array([[1, 0], [0, 1]], np.int32)),
    (em.losses.BinaryCrossentropy(), np.array([[True, False], [False, True]])),
])
def test_integer_and_bool_labels_are_cast_to_the_predictions_dtype(loss, y_true):
    """As Keras: a regression fit on integer targets, or bool labels, was a TypeError ("a
    int64 tensor cannot be used where float32 is required")."""
    y_pred = np.array([[0.9, 0.1], [0.2, 0.8]], np.float32)
    want = float(loss(y_true.astype(np.float32), y_pred))
    assert float(loss(y_true, y_pred)) == pytest.approx(want, rel=1e-6)
    compiled = em.function(lambda t, p: loss(t, p))
    assert float(compiled(y_true, y_pred)) == pytest.approx(want, rel=1e-6)
    weighted = float(loss(y_true, y_pred, sample_weight=np.array([1, 0], np.int32)))
    assert weighted == pytest.approx(float(loss(y_true.astype(np.float32), y_pred,
                                                sample_weight=[1.0, 0.0])), rel=1e-6)


def test_fit_on_integer_regression_targets():
    x = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)
    model = em.keras.Sequential([em.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    history = model.fit(x, np.arange(8), epochs=2, verbose=0).history
    assert history["loss"][1] < history["loss"][0]
    assert np.isfinite(model.evaluate(x, np.arange(8), verbose=0)).all()


SAME_RANK = [  # Keras's squeeze_or_expand_to_same_rank: [batch] labels, [batch, 1] predictions
    ("mse", em.losses.MeanSquaredError(), [1.0, 2.0, 3.0], [[1.0], [2.0], [5.0]], 4.0 / 3),
    ("mae", em.losses.MeanAbsoluteError(), [[1.0], [2.0], [3.0]], [1.0, 2.0, 5.0], 2.0 / 3),
    ("huber", em.losses.Huber(), [0.0, 1.0], [[0.5], [3.0]], (0.125 + 1.5) / 2),
    ("bce", em.losses.BinaryCrossentropy(), [1.0, 0.0], [[0.9], [0.1]], -np.log(0.9)),
    ("binary-accuracy", em.keras.metrics.BinaryAccuracy(), [1.0, 0.0, 1.0],
     [[0.9], [0.1], [0.4]], 2.0 / 3),
    ("accuracy", em.keras.metrics.Accuracy(), [1, 2, 3], [[1], [2], [0]], 2.0 / 3),
    ("precision", em.keras.metrics.Precision(), [1.0, 0.0, 0.0], [[0.9], [0.1], [0.8]], 0.5),
    ("metric-mse", em.keras.metrics.MeanSquaredError(), [1.0, 2.0], [[1.0], [4.0]], 2.0),
]


@pytest.mark.parametrize("name,fn,y_true,y_pred,want", SAME_RANK, ids=[c[0] for c in SAME_RANK])
def test_labels_and_predictions_differing_by_a_trailing_1_compare_example_by_example(
        name, fn, y_true, y_pred, want):
    if hasattr(fn, "reset_state"):
        fn.reset_state()
    got = fn(em.constant(y_true), em.constant(y_pred))  # not a [batch, batch] broadcast
    np.testing.assert_allclose(float(got), want, rtol=1e-5)


def test_a_weight_per_example_as_a_column_weighs_its_example():
    loss = em.losses.MeanSquaredError()
    got = loss(em.constant([1.0, 2.0, 3.0]), em.constant([[1.0], [2.0], [5.0]]),
               sample_weight=em.constant([[1.0], [1.0], [0.5]]))
    np.testing.assert_allclose(float(got), 2.0 / 3, rtol=1e-6)


def test_fit_learns_from_labels_of_shape_batch_with_a_one_unit_output():
    x = np.random.default_rng(0).normal(size=(256, 3)).astype(np.float32)
    y = x @ np.array([1.0, -2.0, 0.5], np.float32)  # [256], the Dense layer's output [256, 1]
    model = em.keras.Sequential([em.keras.layers.Dense(1, input_shape=(3,))])
    model.compile(em.optimizers.SGD(0.1), "mse", metrics=["mae"])
    history = model.fit(x, y, epochs=30, verbose=0)
    assert history.history["loss"][-1] < 1e-6 and history.history["mae"][-1] < 1e-3
    np.testing.assert_allclose(model.layers[0].kernel.numpy().ravel(), [1.0, -2.0, 0.5],
                               atol=1e-3)
