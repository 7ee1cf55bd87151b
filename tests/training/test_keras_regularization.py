"""em.keras.regularizers, Layer.add_loss / losses (frontend/training/layer_base.py) and fit
adding them to the loss as tf.keras does, against numpy written out here: eagerly, inside
em.function, and through both of fit's step paths (the built-in summing step and
Keras's train_step)."""

import numpy as np
import pytest

import ember as em

K = em.keras
RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 3)).astype(np.float32)
Y = RNG.standard_normal((4, 1)).astype(np.float32)
W0 = np.array([[0.5], [-0.25], [1.0]], np.float32)


def test_l1_l2_and_l1l2_penalties_match_numpy():
    w = RNG.standard_normal((3, 2)).astype(np.float32)
    cases = [(K.regularizers.L1(0.3), 0.3 * np.abs(w).sum()),
             (K.regularizers.L2(0.2), 0.2 * (w ** 2).sum()),
             (K.regularizers.L1L2(l1=0.1, l2=0.4), 0.1 * np.abs(w).sum() + 0.4 * (w ** 2).sum()),
             (K.regularizers.get("l2"), 0.01 * (w ** 2).sum()),
             (K.regularizers.get("l1_l2"), 0.01 * np.abs(w).sum() + 0.01 * (w ** 2).sum())]
    for reg, want in cases:
        np.testing.assert_allclose(float(reg(w)), want, rtol=1e-5)
        np.testing.assert_allclose(float(em.function(reg)(w)), want, rtol=1e-5)
        again = K.regularizers.get(K.regularizers.serialize(reg))
        assert type(again) is type(reg) and again.get_config() == reg.get_config()
    assert K.regularizers.get(None) is None
    with pytest.raises(ValueError, match="unknown regularizer 'l3'"):
        K.regularizers.get("l3")
    with pytest.raises(ValueError, match="l2 must be a float >= 0"):
        K.regularizers.L2(-1.0)


def _dense(**kwargs):
    return K.layers.Dense(1, use_bias=False, kernel_initializer=K.initializers.Constant(0.0),
                          **kwargs)


def test_weight_and_activity_regularizers_fill_losses_eagerly_and_traced():
    layer = K.layers.Dense(2, kernel_regularizer=K.regularizers.L2(0.1),
                           bias_regularizer=K.regularizers.L1(0.5),
                           bias_initializer=K.initializers.Constant(-1.0),
                           activity_regularizer=K.regularizers.L1(0.2))
    out = layer(X).numpy()
    kernel = layer.kernel.numpy()
    want = [0.2 * np.abs(out).sum() / 4, 0.1 * (kernel ** 2).sum(), 0.5 * 2.0]
    np.testing.assert_allclose([float(v) for v in layer.losses], want, rtol=1e-5)

    @em.function
    def total(x):
        layer(x)
        return em.add_n(layer.losses)
    np.testing.assert_allclose(float(total(X)), sum(want), rtol=1e-5)
    layer.kernel.assign(kernel * 2)  # weight penalties are read again on each access
    np.testing.assert_allclose(float(layer.losses[1]), 0.4 * (kernel ** 2).sum(), rtol=1e-5)


def test_add_loss_inside_call_is_cleared_by_the_next_outer_call():
    class Penalised(K.layers.Layer):
        def call(self, x):
            self.add_loss(em.reduce_sum(x) * 0.5)
            return x * 2.0

    inner = Penalised()
    model = K.Sequential([inner, Penalised()])
    model(X)
    np.testing.assert_allclose(sorted(float(v) for v in model.losses),
                               sorted([0.5 * X.sum(), 0.5 * 2 * X.sum()]), rtol=1e-5)
    model(X[:2])  # the outermost call drops the last call's losses
    assert len(model.losses) == 2
    np.testing.assert_allclose(float(inner.losses[0]), 0.5 * X[:2].sum(), rtol=1e-5)
    inner.add_loss(lambda: em.constant(3.0))  # a callable may be added anywhere
    assert [float(v) for v in inner.losses][-1] == 3.0
    with pytest.raises(ValueError, match="only be added inside the layer's call"):
        inner.add_loss(em.constant(1.0))


def _numpy_step(w, lr, l2, act):
    """One SGD step of mean-squared error + l2 * sum(w**2) + act * sum(pred**2) / batch."""
    pred = X @ w
    loss = ((pred - Y) ** 2).mean() + l2 * (w ** 2).sum() + act * (pred ** 2).sum() / len(X)
    grad = 2 * X.T @ (pred - Y) / len(X) + 2 * l2 * w + 2 * act * X.T @ pred / len(X)
    return loss, w - lr * grad


class _OwnStep(K.Sequential):
    def train_step(self, data):  # Keras's path, compiled
        return super().train_step(data)


@pytest.mark.parametrize("make, eager", [(K.Sequential, False), (K.Sequential, True),
                                         (_OwnStep, False)])
def test_fit_adds_the_regularization_losses_as_keras(make, eager):
    model = make([_dense(kernel_regularizer=K.regularizers.L2(0.1),
                         activity_regularizer=K.regularizers.L2(0.05))])
    model(X)
    model.set_weights([W0])
    model.compile(optimizer=em.optimizers.SGD(0.1), loss="mse", run_eagerly=eager)
    history = model.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    loss0, w1 = _numpy_step(W0, 0.1, 0.1, 0.05)
    loss1, w2 = _numpy_step(w1, 0.1, 0.1, 0.05)
    np.testing.assert_allclose(history.history["loss"], [loss0, loss1], rtol=1e-5)
    np.testing.assert_allclose(model.get_weights()[0], w2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.evaluate(X, Y, verbose=0), _numpy_step(w2, 0, 0.1, 0.05)[0],
                               rtol=1e-5)


def test_a_subclassed_models_add_loss_joins_the_trained_loss():
    class Net(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = _dense()

        def call(self, x, training=None):
            out = self.dense(x)
            self.add_loss(0.05 * em.reduce_sum(em.square(out)) / 4.0)
            return out

    model = Net()
    model(X)
    model.dense.kernel.assign(W0)
    model.compile(optimizer=em.optimizers.SGD(0.1), loss="mse")
    loss = model.fit(X, Y, batch_size=4, shuffle=False, verbose=0).history["loss"]
    loss0, w1 = _numpy_step(W0, 0.1, 0.0, 0.05)
    np.testing.assert_allclose(loss, [loss0], rtol=1e-5)
    np.testing.assert_allclose(model.dense.kernel.numpy(), w1, rtol=1e-5, atol=1e-6)
