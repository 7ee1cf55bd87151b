"""em.layers: forward passes against numpy, eagerly and compiled (static and dynamic batch,
empty batches), lazy building, training-mode behaviour and argument errors."""

import warnings

import numpy as np
import pytest

import ember as em

RNG = np.random.default_rng(0)
X2 = RNG.standard_normal((4, 5)).astype(np.float32)
IMG = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)


@pytest.fixture(autouse=True)
def no_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        yield


def conv_ref(x, k, stride, same):
    kh, kw = k.shape[:2]
    if same:
        oh = -(-x.shape[1] // stride)
        ph = max((oh - 1) * stride + kh - x.shape[1], 0)
        ow = -(-x.shape[2] // stride)
        pw = max((ow - 1) * stride + kw - x.shape[2], 0)
        x = np.pad(x, [(0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)])
    oh = (x.shape[1] - kh) // stride + 1
    ow = (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, k.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, k, axes=([1, 2, 3], [0, 1, 2]))
    return out


def run_both(layer_fn, x, **kwargs):
    """(eager, compiled static, compiled dynamic-batch) outputs of a layer built eagerly."""
    layer = layer_fn()
    eager = layer(x, **kwargs).numpy()
    static = em.function(lambda t: layer(t, **kwargs))(x).numpy()
    spec = em.TensorSpec([None, *x.shape[1:]], em.as_dtype(x.dtype))
    dynamic = em.function(lambda t: layer(t, **kwargs), input_signature=[spec])
    return layer, eager, static, dynamic(x).numpy(), dynamic(x[:0]).numpy()


def check_all(layer_fn, x, ref, rtol=1e-5, **kwargs):
    layer, eager, static, dynamic, empty = run_both(layer_fn, x, **kwargs)
    want = ref(layer)
    for got in (eager, static, dynamic):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5)
    assert empty.shape == (0, *want.shape[1:])
    return layer


def test_dense_matches_numpy():
    layer = check_all(lambda: em.layers.Dense(3, activation="relu"), X2,
                      lambda l: np.maximum(X2 @ l.kernel.numpy() + l.bias.numpy(), 0))
    assert layer.kernel.shape == (5, 3)
    limit = np.sqrt(6 / (5 + 3))  # glorot_uniform
    assert np.all(np.abs(layer.kernel.numpy()) <= limit) and np.all(layer.bias.numpy() == 0)


def test_dense_on_rank3_inputs_contracts_the_last_axis():
    x = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    layer = em.layers.Dense(4, use_bias=False)
    np.testing.assert_allclose(layer(x).numpy(), x @ layer.kernel.numpy(), rtol=1e-5)
    assert layer.bias is None and len(layer.variables) == 1


@pytest.mark.parametrize("strides, padding", [(1, "valid"), (2, "same"), (1, "same")])
def test_conv2d_matches_numpy(strides, padding):
    check_all(lambda: em.layers.Conv2D(4, 3, strides=strides, padding=padding), IMG,
              lambda l: conv_ref(IMG.astype(np.float64), l.kernel.numpy(), strides,
                                 padding == "same") + l.bias.numpy(), rtol=1e-4)


def test_max_pool2d_and_flatten_match_numpy():
    want = IMG.reshape(2, 3, 2, 3, 2, 3).max(axis=(2, 4))
    check_all(lambda: em.layers.MaxPool2D(), IMG, lambda _: want)
    windows = np.zeros((2, 4, 4, 3), np.float32)
    for i in range(4):
        for j in range(4):
            windows[:, i, j] = IMG[:, i:i + 3, j:j + 3].max(axis=(1, 2))
    check_all(lambda: em.layers.MaxPool2D(3, strides=1), IMG, lambda _: windows)
    check_all(lambda: em.layers.Flatten(), IMG, lambda _: IMG.reshape(2, -1))


def test_embedding_gathers_rows():
    ids = np.array([[1, 0], [4, 4]], np.int32)
    check_all(lambda: em.layers.Embedding(5, 3), ids, lambda l: l.embeddings.numpy()[ids])


def test_layer_normalization_matches_numpy():
    def ref(layer):
        mean, var = X2.mean(-1, keepdims=True), X2.var(-1, keepdims=True)
        return (X2 - mean) / np.sqrt(var + 1e-3) * layer.gamma.numpy() + layer.beta.numpy()
    check_all(lambda: em.layers.LayerNormalization(), X2, ref, rtol=1e-4)


def test_batch_normalization_training_uses_batch_stats_and_updates_moving_stats():
    bn = em.layers.BatchNormalization(momentum=0.9)
    out = bn(X2, training=True).numpy()
    mean, var = X2.mean(0), X2.var(0)
    np.testing.assert_allclose(out, (X2 - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * mean, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * var, rtol=1e-5)
    step = em.function(lambda t: bn(t, training=True))
    step(X2)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.19 * mean, rtol=1e-5, atol=1e-7)
    # inference normalises with the moving statistics, eagerly and compiled alike
    m, v = bn.moving_mean.numpy(), bn.moving_variance.numpy()
    want = (X2 - m) / np.sqrt(v + 1e-3)
    np.testing.assert_allclose(bn(X2).numpy(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(em.function(lambda t: bn(t, training=False))(X2).numpy(),
                               want, rtol=1e-4, atol=1e-5)
    assert [v.name.split("/")[-1] for v in bn.trainable_variables] == ["gamma:0", "beta:0"]
    assert len(bn.non_trainable_variables) == 2


def test_batch_normalization_over_channels_of_images():
    bn = em.layers.BatchNormalization(axis=1)
    x = RNG.standard_normal((4, 3, 2)).astype(np.float32)
    out = bn(x, training=True).numpy()
    mean, var = x.mean((0, 2), keepdims=True), x.var((0, 2), keepdims=True)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    assert bn.gamma.shape == (3,)


def test_dropout_only_in_training():
    em.random.set_seed(3)
    layer = em.layers.Dropout(0.5)
    x = np.ones((200,), np.float32)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    np.testing.assert_array_equal(em.function(lambda t: layer(t, training=False))(x), x)
    for out in (layer(x, training=True).numpy(),
                em.function(lambda t: layer(t, training=True))(x).numpy()):
        assert set(np.unique(out)) == {0.0, 2.0} and 50 < (out == 0).sum() < 150
    with pytest.raises(TypeError, match="Python bool"):
        layer(x, training=em.constant(True))


def test_initial_weights_repeat_after_set_seed():
    def kernel():
        em.random.set_seed(42)
        layer = em.layers.Dense(3)
        layer(X2)
        return layer.kernel.numpy()
    np.testing.assert_array_equal(kernel(), kernel())


def test_building_inside_a_function_happens_on_the_first_trace_only():
    model = em.Sequential([em.layers.Dense(3), em.layers.Dense(2)])
    f = em.function(lambda t: model(t))
    first = f(X2).numpy()
    assert len(model.variables) == 4
    np.testing.assert_allclose(f(X2).numpy(), first)
    np.testing.assert_allclose(model(X2).numpy(), first, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, x, error, match", [
    (lambda: em.layers.Dense(0), None, ValueError, "positive integer"),
    (lambda: em.layers.Dense(2, activation="nope"), None, ValueError, "unknown activation"),
    (lambda: em.layers.Dense(2, kernel_initializer="nope"), X2, ValueError,
     "unknown initializer"),
    (lambda: em.layers.Dense(2), np.ones(3, np.float32), ValueError, "rank >= 2"),
    (lambda: em.layers.Conv2D(2, 3, padding="full"), None, ValueError, "'valid' or 'same'"),
    (lambda: em.layers.Conv2D(2, (3, 0)), None, ValueError, "kernel_size"),
    (lambda: em.layers.Conv2D(2, 3), X2, ValueError, "NHWC images of rank 4"),
    (lambda: em.layers.MaxPool2D(), X2, ValueError, "NHWC images of rank 4"),
    (lambda: em.layers.Dropout(1.5), None, ValueError, "rate"),
    (lambda: em.layers.Embedding(4, 2), X2, TypeError, "integer ids"),
    (lambda: em.layers.BatchNormalization(axis=3), X2, ValueError, "out of range"),
    (lambda: em.layers.LayerNormalization(epsilon=0), None, ValueError, "epsilon"),
    (lambda: em.layers.Dense(2, dtype="int32"), None, TypeError, "floating-point"),
])
def test_bad_arguments_raise(make, x, error, match):
    with pytest.raises(error, match=match):
        layer = make()
        layer(x)


def test_layer_names_are_unique_and_keras_shaped():
    a, b = em.layers.Conv2D(1, 1), em.layers.Conv2D(1, 1)
    assert a.name.startswith("conv2d") and a.name != b.name
    assert em.layers.Dense(1, name="head").name == "head"


def test_build_before_use_lets_one_function_serve_two_models():
    """The guide: call model.build(input_shape) to create the weights before a Function
    that already ran is given a second model (else: variables on a non-first call)."""
    def make():
        return em.Sequential([em.layers.Dense(3), em.layers.BatchNormalization(),
                              em.layers.Dense(1)])
    apply = em.function(lambda model, x: model(x))
    first, second = make(), make()
    apply(first, X2)
    with pytest.raises(ValueError, match="non-first call"):
        apply(second, X2)
    third = make()
    third.build([None, 5])
    assert len(third.variables) == 8 and all(l.built for l in third.layers)
    np.testing.assert_allclose(apply(third, X2).numpy(), third(X2).numpy(), rtol=1e-5,
                               atol=1e-6)  # near-zero outputs: summation order differs
    dense = em.layers.Dense(2)
    dense.build([None, 4])
    kernel = dense.kernel
    dense(np.ones((1, 4), np.float32))
    assert dense.kernel is kernel  # built once


def test_weights_are_listed_in_the_order_keras_lists_them():
    model = em.Sequential([em.layers.Dense(4), em.layers.BatchNormalization(),
                           em.layers.Dense(2)])
    model(em.ones([3, 5]))
    assert [v.name.split("/")[-1] for v in model.trainable_variables] == [
        "kernel:0", "bias:0", "gamma:0", "beta:0", "kernel:0", "bias:0"]


class _AutoEncoder(em.keras.Model):
    def __init__(self):
        super().__init__()
        self.encoder = em.layers.Dense(4)  # made first: listed first, as Keras tracks it
        self.decoder = em.layers.Dense(4)

    def call(self, x):
        return self.decoder(self.encoder(x))


def test_a_models_sublayers_are_listed_in_the_order_they_were_set():
    """Not sorted by attribute name (tf.Module's walk): a Keras-ordered set_weights list
    put the encoder's weights in the decoder (wrong outputs, no error)."""
    model, x = _AutoEncoder(), np.ones((1, 4), np.float32)
    model(x)
    assert [v.name for v in model.trainable_variables] == [
        model.encoder.kernel.name, model.encoder.bias.name, model.decoder.kernel.name,
        model.decoder.bias.name]
    eye = np.eye(4, dtype=np.float32)
    model.set_weights([2 * eye, np.zeros(4, np.float32), eye, np.full(4, 10, np.float32)])
    np.testing.assert_array_equal(model(x).numpy(), [[12.0] * 4])


def test_a_frozen_layer_leaves_trainable_variables_and_fit_keeps_it():
    model = em.keras.Sequential([em.keras.layers.Dense(4), em.keras.layers.Dense(1)])
    model(np.ones((2, 3), np.float32))
    base = model.layers[0]
    base.trainable = False
    assert len(model.trainable_variables) == 2 and len(model.non_trainable_variables) == 2
    assert len(base.trainable_weights) == 0 and base.kernel.trainable  # the Variable as made
    before = base.kernel.numpy().copy()
    model.compile(optimizer=em.keras.optimizers.SGD(0.1), loss="mse")
    model.fit(np.ones((8, 3), np.float32), np.ones((8, 1), np.float32), epochs=2, verbose=0)
    np.testing.assert_array_equal(base.kernel.numpy(), before)
    model.trainable = False  # reaches every sublayer, and back
    assert model.trainable_variables == ()
    model.trainable = True
    assert len(model.trainable_variables) == 4
