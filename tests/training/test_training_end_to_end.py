"""A tiny model trained end to end with em.GradientTape + an optimizer: the loss drops, and
the compiled train step computes what the eager one does, step by step."""

import warnings

import numpy as np
import pytest

import ember as em

RNG = np.random.default_rng(1)
X = RNG.standard_normal((64, 6)).astype(np.float32)
Y = (X[:, 0] + X[:, 1] > 0).astype(np.int32) + (X[:, 2] > 1).astype(np.int32)


def make(optimizer):
    em.random.set_seed(7)
    model = em.Sequential([em.layers.Dense(16, activation="relu"),
                           em.layers.BatchNormalization(),
                           em.layers.Dense(3)])
    model(X[:2])  # build eagerly, so the eager and compiled runs start from one state
    return model, optimizer()


def train(model, opt, compiled, steps=8):
    loss_fn = em.losses.SparseCategoricalCrossentropy(from_logits=True)

    def train_step(x, y):
        with em.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    if compiled:
        train_step = em.function(train_step)
    losses = [float(train_step(X, Y)) for _ in range(steps)]
    if compiled:
        assert train_step.experimental_get_tracing_count() == 1
    return losses


# (the update formulas of every optimizer are checked compiled in
# test_training_optimizers.py; here the whole step, where each case costs a compile)
@pytest.mark.parametrize("optimizer", [
    lambda: em.optimizers.SGD(0.2, momentum=0.9),
    lambda: em.optimizers.Adam(0.05),
], ids=["sgd-momentum", "adam"])
def test_loss_drops_and_compiled_agrees_with_eager(optimizer):
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        eager_model, eager_opt = make(optimizer)
        eager = train(eager_model, eager_opt, compiled=False)
        compiled_model, compiled_opt = make(optimizer)
        compiled = train(compiled_model, compiled_opt, compiled=True)
    assert eager[-1] < 0.6 * eager[0]
    np.testing.assert_allclose(compiled, eager, rtol=2e-4, atol=1e-5)
    for a, b in zip(eager_model.variables, compiled_model.variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-5)


def test_layers_built_inside_the_first_trace_train():
    em.random.set_seed(3)
    model = em.Sequential([em.layers.Dense(8, activation="tanh"), em.layers.Dense(1)])
    opt = em.optimizers.SGD(0.1)
    target = X[:, :1] * 2.0

    @em.function
    def train_step(x, y):
        with em.GradientTape() as tape:
            loss = em.losses.MeanSquaredError()(y, model(x))
        opt.minimize(loss, model.trainable_variables, tape=tape)
        return loss
    losses = [float(train_step(X, target)) for _ in range(20)]
    assert len(model.trainable_variables) == 4 and losses[-1] < 0.5 * losses[0]
