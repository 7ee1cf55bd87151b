"""The composite ops of em.nn, em.math, clipping and em.debugging: eager against a numpy
oracle in float32 and float64, and compiled (static, dynamic and empty shapes) against
eager, with no fallback to the interpreter."""

import numpy as np
import pytest

import ember as em


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


SELU = (1.0507009873554804934193349852946, 1.6732632423543772848170429916717)

# name -> (function of tensors, numpy oracle of arrays, operand builders)
X = np.array([[-3.0, -0.5, 0.0, 0.7], [2.5, -1e-3, 8.0, -7.5]])
Y = np.array([[1.0, 0.2, 0.0, 3.0], [0.5, 2.0, 1.0, 0.0]])
CASES = {
    "relu6": (em.nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6), [X]),
    "leaky_relu": (lambda x: em.nn.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x),
                   [X]),
    "elu": (em.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), [X]),
    "selu": (em.nn.selu, lambda x: SELU[0] * np.where(x > 0, x, SELU[1] * np.expm1(x)), [X]),
    "silu": (em.nn.silu, lambda x: x * _sigmoid(x), [X]),
    "softplus": (em.nn.softplus, lambda x: np.logaddexp(x, 0), [X]),
    "log_sigmoid": (em.math.log_sigmoid, lambda x: -np.logaddexp(-x, 0), [X * 20]),
    "softsign": (em.nn.softsign, lambda x: x / (1 + np.abs(x)), [X]),
    "bias_add": (em.nn.bias_add, lambda x, b: x + b, [X, np.array([1.0, -2.0, 0.5, 3.0])]),
    "l2_normalize": (lambda x: em.nn.l2_normalize(x, axis=1),
                     lambda x: x / np.sqrt(np.maximum((x * x).sum(1, keepdims=True), 1e-12)),
                     [X]),
    "moments_mean": (lambda x: em.nn.moments(x, [1])[0], lambda x: x.mean(1), [X]),
    "moments_variance": (lambda x: em.nn.moments(x, [0])[1], lambda x: x.var(0), [X]),
    "batch_normalization": (
        lambda x, m, v: em.nn.batch_normalization(x, m, v, 0.5, 2.0, 1e-3),
        lambda x, m, v: (x - m) * 2.0 / np.sqrt(v + 1e-3) + 0.5,
        [X, np.array([0.1, 0.2, 0.3, 0.4]), np.array([1.0, 2.0, 0.5, 4.0])]),
    "sigmoid_cross_entropy": (
        lambda z, x: em.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
        lambda z, x: np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))),
        [np.clip(Y, 0, 1), X]),
    "softmax_cross_entropy": (
        lambda z, x: em.nn.softmax_cross_entropy_with_logits(z, x),
        lambda z, x: -(z * (x - x.max(-1, keepdims=True) - np.log(np.exp(
            x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)))).sum(-1),
        [Y / Y.sum(-1, keepdims=True), X]),
    "squared_difference": (em.math.squared_difference, lambda x, y: (x - y) ** 2, [X, Y]),
    "reduce_logsumexp": (lambda x: em.math.reduce_logsumexp(x, axis=1),
                         lambda x: np.log(np.exp(x).sum(1)), [X]),
    "reduce_variance": (lambda x: em.math.reduce_variance(x, axis=0), lambda x: x.var(0), [X]),
    "reduce_std": (lambda x: em.math.reduce_std(x), lambda x: x.std(), [X]),
    "xlogy": (em.math.xlogy, lambda x, y: np.where(x == 0, 0, x * np.log(np.where(
        x == 0, 1, y))), [Y, Y + 0.5]),
    "clip_by_value": (lambda x: em.clip_by_value(x, -1.0, 2.0), lambda x: np.clip(x, -1, 2),
                      [X]),
    "clip_by_norm": (lambda x: em.clip_by_norm(x, 2.0, axes=[1]),
                     lambda x: x * 2.0 / np.maximum(np.sqrt((x * x).sum(1, keepdims=True)),
                                                    2.0), [X]),
}


def _inputs(arrays, dtype):
    return [a.astype(dtype) for a in arrays]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_matches_numpy(name, dtype):
    fn, oracle, arrays = CASES[name]
    arrays = _inputs(arrays, dtype)
    got = fn(*[em.constant(a) for a in arrays])
    assert got.dtype == em.as_dtype(dtype)
    np.testing.assert_allclose(got.numpy(), oracle(*[a.astype(np.float64) for a in arrays]),
                               rtol=2e-6 if dtype == np.float32 else 1e-12, atol=1e-6)


@pytest.fixture
def no_fallback():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    yield
    em.config.set_fallback(previous)


@pytest.mark.parametrize("shapes", ["static", "dynamic"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_matches_eager(name, shapes, no_fallback):
    fn, _, arrays = CASES[name]
    tensors = [em.constant(a.astype(np.float32)) for a in arrays]
    signature = None if shapes == "static" else [
        em.TensorSpec([None] * t.shape.rank, t.dtype) for t in tensors]
    compiled = em.function(fn, input_signature=signature)(*tensors)
    np.testing.assert_allclose(compiled.numpy(), fn(*tensors).numpy(), rtol=2e-6, atol=1e-6)


ELEMENTWISE = ["relu6", "leaky_relu", "elu", "selu", "silu", "softplus", "log_sigmoid",
               "softsign",
               "squared_difference", "clip_by_value", "xlogy"]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_empty_inputs(name, no_fallback):
    fn, oracle, arrays = CASES[name]
    empty = [a[:, :0].astype(np.float32) for a in arrays]
    got = em.function(fn)(*[em.constant(a) for a in empty])
    assert got.shape == (2, 0)


def test_integer_ops():
    x, y = em.constant([7, -7, 7, -7, 6]), em.constant([2, 2, -2, -2, 3])
    np.testing.assert_array_equal(em.math.truncatediv(x, y).numpy(), [3, -3, -3, 3, 2])
    compiled = em.function(em.math.truncatediv)(x, y)
    np.testing.assert_array_equal(compiled.numpy(), [3, -3, -3, 3, 2])
    v = em.constant([[0, 1, 2], [0, 0, 3]])
    assert em.math.count_nonzero(v).numpy() == 3 and em.math.count_nonzero(v).dtype == em.int64
    np.testing.assert_array_equal(em.function(lambda t: em.math.count_nonzero(t, axis=1))(
        v).numpy(), [2, 1])
    inf = em.constant([1.0, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(em.math.is_inf(inf).numpy(), [False, True, True, False])


def test_sparse_softmax_cross_entropy_checks_its_labels(no_fallback):
    logits = em.constant(X.astype(np.float32))
    labels = em.constant([3, 0])
    want = -np.take_along_axis(X - np.log(np.exp(X).sum(-1, keepdims=True)), np.array(
        [[3], [0]]), 1)[:, 0]
    loss = em.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    np.testing.assert_allclose(loss.numpy(), want, rtol=1e-5)
    f = em.function(lambda z, x: em.nn.sparse_softmax_cross_entropy_with_logits(z, x))
    np.testing.assert_allclose(f(labels, logits).numpy(), want, rtol=1e-5)
    for run in (em.nn.sparse_softmax_cross_entropy_with_logits, f):
        with pytest.raises(em.errors.InvalidArgumentError, match="outside"):
            run(em.constant([4, 0]), logits)


def test_debugging_checks_raise_eagerly_and_compiled(no_fallback):
    def checks(x, y):
        em.debugging.assert_less(x, y, message="x must stay below y")
        em.debugging.assert_equal(x, x)
        return em.debugging.check_numerics(x / y, "ratio")
    good = (em.constant([1.0, 2.0]), em.constant([2.0, 3.0]))
    np.testing.assert_allclose(em.function(checks)(*good).numpy(), [0.5, 2 / 3], rtol=1e-6)
    for run in (checks, em.function(checks)):
        with pytest.raises(em.errors.InvalidArgumentError, match="x must stay below y"):
            run(em.constant([3.0, 2.0]), em.constant([2.0, 3.0]))
        with pytest.raises(em.errors.InvalidArgumentError, match="ratio: Tensor had Inf"):
            run(em.constant([-1.0, 2.0]), em.constant([0.0, 3.0]))


def test_erf_erfc_and_exact_gelu(no_fallback):
    import math
    x = np.array([-3.0, -0.7, 0.0, 1e-3, 0.4, 2.5], np.float64)
    erf = np.vectorize(math.erf)(x)
    for dtype, rtol in ((np.float32, 2e-6), (np.float64, 1e-14)):
        t = em.constant(x.astype(dtype))
        np.testing.assert_allclose(em.math.erf(t).numpy(), erf, rtol=rtol, atol=1e-7)
        np.testing.assert_allclose(em.math.erfc(t).numpy(), np.vectorize(math.erfc)(x),
                                   rtol=rtol)
        gelu = 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))
        np.testing.assert_allclose(em.nn.gelu(t).numpy(), gelu, rtol=rtol, atol=1e-7)
        compiled = em.function(lambda v: (em.math.erf(v), em.math.erfc(v), em.nn.gelu(v)))(t)
        np.testing.assert_allclose(compiled[0].numpy(), erf, rtol=rtol, atol=1e-7)
        np.testing.assert_allclose(compiled[1].numpy(), np.vectorize(math.erfc)(x), rtol=1e-6)
        np.testing.assert_allclose(compiled[2].numpy(), gelu, rtol=rtol, atol=1e-7)
    approx = em.nn.gelu(em.constant(x), approximate=True).numpy()
    np.testing.assert_allclose(approx, 0.5 * x * (1 + np.tanh(0.7978845608028654 * (
        x + 0.044715 * x ** 3))), rtol=1e-12)
