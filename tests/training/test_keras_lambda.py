"""em.keras.layers.Lambda against keras.layers.Lambda's documentation: the function is
called as `function(inputs, **arguments)` (with `training=` / `mask=` only when it takes
them), in Sequential and subclassed models, in fit and inside em.function; `output_shape`
and `compute_output_shape` follow Keras; a function that creates variables is refused."""

import re

import numpy as np
import pytest

import ember as em

Lambda = em.keras.layers.Lambda


def test_keras_docstring_examples():
    squared = Lambda(lambda x: x ** 2)
    np.testing.assert_allclose(squared(em.constant([1.0, -2.0, 3.0])).numpy(), [1, 4, 9])

    def antirectifier(x):  # the antirectifier of Keras's examples, on 2-d inputs
        x -= em.reduce_mean(x, axis=1, keepdims=True)
        x = em.nn.l2_normalize(x, axis=1)
        return em.concat([em.nn.relu(x), em.nn.relu(-x)], axis=1)

    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 4.0]], np.float32)
    centred = x - x.mean(axis=1, keepdims=True)
    unit = centred / np.linalg.norm(centred, axis=1, keepdims=True)
    want = np.concatenate([np.maximum(unit, 0), np.maximum(-unit, 0)], axis=1)
    np.testing.assert_allclose(Lambda(antirectifier)(x).numpy(), want, rtol=1e-6)


def test_arguments_training_and_mask_reach_the_function_only_if_it_takes_them():
    seen = {}

    def fn(x, scale, training=None):
        seen["training"] = training
        return x * scale

    layer = Lambda(fn, arguments={"scale": 3.0})
    assert float(layer(em.constant(2.0), training=True)) == 6.0 and seen["training"] is True
    plain = Lambda(lambda x: x + 1.0)
    assert float(plain(em.constant(1.0), training=True)) == 2.0  # not passed: no error
    masked = Lambda(lambda x, mask=None: x if mask is None else x * mask)
    assert float(masked(em.constant(2.0), mask=em.constant(0.0))) == 0.0


def test_nested_inputs_keep_their_structure_and_numpy_becomes_tensors():
    add = Lambda(lambda xs: xs[0] + xs[1])
    out = add([em.constant([1.0, 2.0]), np.array([10.0, 20.0], np.float32)])
    np.testing.assert_allclose(out.numpy(), [11.0, 22.0])
    pick = Lambda(lambda d: d["b"])
    assert pick({"a": em.constant(1), "b": 2}).dtype is em.int32


def test_a_lambda_has_no_weights_and_keras_names():
    layer = Lambda(lambda x: x)
    assert re.fullmatch(r"lambda(_\d+)?", layer.name)
    assert layer.built and layer.variables == () and layer.trainable_weights == []
    assert Lambda(lambda x: x, name="identity").name == "identity"


def _models():
    em.random.set_seed(1)
    with_lambda = em.keras.Sequential([Lambda(lambda x: x / 10.0), em.keras.layers.Dense(4),
                                       Lambda(em.nn.relu), em.keras.layers.Dense(1)])
    reference = em.keras.Sequential([em.keras.layers.Rescaling(0.1), em.keras.layers.Dense(4),
                                     em.keras.layers.Activation("relu"),
                                     em.keras.layers.Dense(1)])
    for model in (with_lambda, reference):
        model.compile(optimizer=em.optimizers.SGD(0.05), loss="mse")
        model.build((None, 3))
    reference.set_weights(with_lambda.get_weights())
    return with_lambda, reference


def test_sequential_fit_trains_as_the_same_model_of_builtin_layers():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype(np.float32) * 10
    y = x.sum(axis=1, keepdims=True) / 10
    with_lambda, reference = _models()
    assert len(with_lambda.trainable_variables) == 4
    data = em.data.Dataset.from_tensor_slices((x, y)).batch(8)
    got = with_lambda.fit(data, epochs=3, verbose=0).history["loss"]
    want = reference.fit(data, epochs=3, verbose=0).history["loss"]
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(with_lambda.predict(x, verbose=0),
                               reference.predict(x, verbose=0), rtol=1e-5)


def test_in_a_subclassed_model_inside_em_function_compiled_equals_eager():
    class LambdaNet(em.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = em.keras.layers.Dense(2)
            self.half = Lambda(lambda x, training=None: x * 0.5 if training else x)

        def call(self, x, training=None):
            return self.half(self.dense(x), training=training)

    net = LambdaNet()
    x = em.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    eager = net(x, training=True).numpy()
    step = em.function(lambda x: net(x, training=True))
    np.testing.assert_allclose(step(x).numpy(), eager, rtol=1e-6)
    np.testing.assert_allclose(step(x + 1.0).numpy(), net(x + 1.0, training=True).numpy(),
                               rtol=1e-6)
    assert step.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(net(x).numpy(), eager * 2, rtol=1e-6)


@pytest.mark.parametrize("output_shape,input_shape,want", [
    ((3,), (None, 5), [None, 3]),
    ((2, 2), (8, 4), [8, 2, 2]),
    (lambda s: (s[0], 7), (None, 5), [None, 7]),
    (None, (None, 4), [None, 2, 2]),  # inferred by tracing the function
])
def test_compute_output_shape(output_shape, input_shape, want):
    layer = Lambda(lambda x: em.reshape(x, [-1, 2, 2]), output_shape=output_shape)
    assert layer.compute_output_shape(input_shape).as_list() == want


def test_compute_output_shape_of_several_outputs():
    layer = Lambda(lambda xs: [xs[0], em.concat(xs, 1)])
    shapes = layer.compute_output_shape([(None, 2), (None, 3)])
    assert [s.as_list() for s in shapes] == [[None, 2], [None, 5]]
    given = Lambda(lambda xs: xs, output_shape=[(2,), (3,)])
    assert [s.as_list() for s in given.compute_output_shape([(4, 2), (4, 3)])] == \
        [[4, 2], [4, 3]]


def test_output_shape_that_cannot_be_inferred_asks_for_it():
    layer = Lambda(lambda x: x.numpy())
    with pytest.raises(NotImplementedError, match=r"could not infer the shape.*Give the layer "
                                                  r"output_shape="):
        layer.compute_output_shape((None, 3))


@pytest.mark.parametrize("kwargs,match", [
    ({"function": 3}, r"function must be callable"),
    ({"function": abs, "arguments": [1]}, r"arguments must be a dict"),
    ({"function": abs, "output_shape": "4"}, r"output_shape must be a shape without the "
                                             r"batch dim"),
    ({"function": abs, "output_shape": (4, -1)}, r"output_shape must be"),
])
def test_misuse_at_construction(kwargs, match):
    with pytest.raises(TypeError, match=r"Lambda '[^']+': " + match):
        Lambda(**kwargs)


def test_a_function_creating_variables_is_refused_eager_and_traced():
    layer = Lambda(lambda x: x * em.Variable(2.0, name="scale"))
    with pytest.raises(ValueError, match=r"created the variable\(s\) scale:0.*subclass of "
                                         r"em.keras.layers.Layer"):
        layer(em.constant(1.0))
    with pytest.raises(ValueError, match=r"created the variable\(s\) scale:0"):
        em.function(layer)(em.constant(1.0))
    # a variable made outside and passed in is fine (Keras: read, not created)
    scale = em.Variable(3.0)
    assert float(Lambda(lambda x, v: x * v, arguments={"v": scale})(em.constant(2.0))) == 6.0
