"""em.nn's activations, normalisation and losses against TensorFlow's definitions: default
arguments (leaky_relu's alpha 0.2, silu's beta, gelu's approximate), constants (selu), the
formulas where they matter numerically (l2_normalize's rsqrt(max(sum, eps)), the stable
sigmoid cross-entropy, moments of half floats in float32), argument checks (bias_add's
data_format and sizes, the losses' shapes, sparse labels' range), eager and compiled."""

import math

import numpy as np
import pytest

import ember as em


@pytest.fixture
def no_fallback():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    yield
    em.config.set_fallback(previous)


def both(fn, *args):
    """[eager, compiled] results of fn(*args)."""
    return [fn(*args), em.function(fn)(*args)]


X = np.array([-6.0, -2.5, -1.0, -1e-3, 0.0, 0.3, 1.0, 4.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activations_follow_tensorflow_formulas(dtype, no_fallback):
    x = em.constant(X.astype(dtype))
    tol = 2e-6 if dtype == np.float32 else 1e-13
    scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    erf = np.vectorize(math.erf)
    cases = {
        "leaky_relu default alpha 0.2": (em.nn.leaky_relu, np.where(X > 0, X, 0.2 * X)),
        "elu": (em.nn.elu, np.where(X > 0, X, np.expm1(X))),
        "selu": (em.nn.selu, scale * np.where(X > 0, X, alpha * np.expm1(X))),
        "silu": (em.nn.silu, X / (1 + np.exp(-X))),
        "silu beta": (lambda t: em.nn.silu(t, beta=2.5), X / (1 + np.exp(-2.5 * X))),
        "swish": (em.nn.swish, X / (1 + np.exp(-X))),
        "gelu exact": (em.nn.gelu, 0.5 * X * (1 + erf(X / np.sqrt(2)))),
        "gelu tanh": (lambda t: em.nn.gelu(t, approximate=True),
                      0.5 * X * (1 + np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X ** 3)))),
    }
    for name, (fn, want) in cases.items():
        for got in both(fn, x):
            assert got.dtype == em.as_dtype(dtype), name
            np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol, err_msg=name)


def test_selu_saturates_at_minus_scale_times_alpha():
    got = em.nn.selu(em.constant([-np.inf, 1.0], em.float64)).numpy()
    np.testing.assert_allclose(got, [-1.0507009873554805 * 1.6732632423543772,
                                     1.0507009873554805], rtol=1e-15)


def test_leaky_relu_casts_integers_to_float32_as_tensorflow():
    got = em.nn.leaky_relu(em.constant([-5, 3]))
    assert got.dtype == em.float32
    np.testing.assert_allclose(got.numpy(), [-1.0, 3.0])


def test_l2_normalize_clamps_the_squared_sum_with_epsilon(no_fallback):
    x = em.constant([[0.0, 0.0], [3.0, 4.0], [1e-7, 0.0]], em.float64)
    for got in both(lambda t: em.nn.l2_normalize(t, axis=1), x):
        # zero rows stay zero (no NaN); a row whose squared sum is below epsilon is scaled
        # by rsqrt(epsilon) = 1e6, not normalised to unit length
        np.testing.assert_allclose(got.numpy(), [[0, 0], [0.6, 0.8], [0.1, 0]], rtol=1e-12)
    whole = em.nn.l2_normalize(em.constant([[3.0, 0.0], [0.0, 4.0]])).numpy()
    np.testing.assert_allclose(whole, [[0.6, 0], [0, 0.8]], rtol=1e-6)
    eps = em.nn.l2_normalize(em.constant([0.1, 0.0], em.float64), epsilon=1.0).numpy()
    np.testing.assert_allclose(eps, [0.1, 0.0], rtol=1e-15)


def test_moments_keepdims_and_half_floats_in_float32(no_fallback):
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4) ** 1.5
    for keepdims, shape in ((False, (3,)), (True, (1, 3, 1))):
        mean, var = em.nn.moments(em.constant(x), [0, 2], keepdims=keepdims)
        assert mean.shape == shape and var.shape == shape
        np.testing.assert_allclose(mean.numpy().ravel(), x.mean((0, 2)), rtol=1e-14)
        np.testing.assert_allclose(var.numpy().ravel(), x.var((0, 2)), rtol=1e-13)
    # float16 has a step of 0.5 at 1000: a float16 mean (1001) would give variance 0.375
    h = em.constant(np.array([1000, 1000.5, 1001, 1001.5], np.float16))
    for mean, var in both(lambda t: em.nn.moments(t, [0]), h):
        assert mean.dtype == em.float16 and var.dtype == em.float16
        assert float(var) == 0.3125
        assert float(mean) == np.float16(1000.75)


def test_batch_normalization_takes_python_and_numpy_statistics(no_fallback):
    x = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    got = em.nn.batch_normalization(em.constant(x), [1.0, 2.0], np.array([4.0, 9.0]), None,
                                    None, 0.0)
    np.testing.assert_allclose(got.numpy(), (x - [1, 2]) / [2, 3], rtol=1e-6)
    fn = lambda t, m, v, o, s: em.nn.batch_normalization(t, m, v, o, s, 1e-3)  # noqa: E731
    args = [em.constant(a) for a in (x, [0.5, 1.0], [1.0, 2.0], [0.1, -0.1], [2.0, 3.0])]
    want = (x - [0.5, 1.0]) * [2.0, 3.0] / np.sqrt(np.array([1.0, 2.0]) + 1e-3) + [0.1, -0.1]
    for got in both(fn, *args):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    with pytest.raises(TypeError, match="float64"):
        em.nn.batch_normalization(em.constant(x), em.constant([0.0, 0.0], em.float64), 1.0,
                                  None, None, 0.0)


def test_bias_add_data_formats(no_fallback):
    v = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    b3, b4 = np.array([10.0, 20.0, 30.0], np.float32), np.arange(4, dtype=np.float32)
    cases = [(None, b4, v + b4), ("NHWC", b4, v + b4), ("N...C", b4, v + b4),
             ("NCHW", b3, v + b3[:, None]), ("NC...", b3, v + b3[:, None])]
    for fmt, b, want in cases:
        for got in both(lambda x, y: em.nn.bias_add(x, y, data_format=fmt), v, b):
            np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("args,match", [
    ((np.zeros((2, 3)), np.zeros(2), None), r"bias of size 2 does not match the channel dim "
                                            r"\(3\)"),
    ((np.zeros((3, 2, 4)), np.zeros(4), "NCHW"), r"bias of size 4 does not match the "
                                                 r"channel dim \(2\)"),
    ((np.zeros((2, 3)), np.zeros((1, 3)), None), "bias must be 1-D"),
    ((np.zeros(3), np.zeros(3), None), "value must have rank >= 2"),
    ((np.zeros((2, 3)), np.zeros(3), "HWCN"), "data_format must be of the form 'N...C'"),
])
def test_bias_add_rejects_what_tensorflow_rejects(args, match):
    v, b, fmt = args
    with pytest.raises(ValueError, match=match):
        em.nn.bias_add(v.astype(np.float32), b.astype(np.float32), data_format=fmt)


def test_sigmoid_cross_entropy_is_stable_for_large_logits(no_fallback):
    logits = em.constant([1000.0, -1000.0, 0.0, 30.0])
    labels = em.constant([0.0, 1.0, 0.5, 1.0])
    for got in both(lambda z, x: em.nn.sigmoid_cross_entropy_with_logits(z, x), labels,
                    logits):
        np.testing.assert_allclose(got.numpy(), [1000.0, 1000.0, math.log(2),
                                                 math.log1p(math.exp(-30))], rtol=1e-6)
    with pytest.raises(ValueError, match="logits and labels must have the same shape"):
        em.nn.sigmoid_cross_entropy_with_logits(em.zeros([2, 3]), em.zeros([2, 1]))


def test_softmax_cross_entropy_along_an_axis(no_fallback):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3)).astype(np.float64)
    z = rng.random((4, 3))
    z /= z.sum(0, keepdims=True)
    log_sm = x - np.log(np.exp(x).sum(0, keepdims=True))
    for got in both(lambda a, b: em.nn.softmax_cross_entropy_with_logits(a, b, axis=0), z, x):
        assert got.shape == (3,)
        np.testing.assert_allclose(got.numpy(), -(z * log_sm).sum(0), rtol=1e-12)
    with pytest.raises(ValueError, match="must have the same shape"):
        em.nn.softmax_cross_entropy_with_logits(em.zeros([4, 2]), em.zeros([4, 3]))


def test_sparse_softmax_cross_entropy_label_rank_and_range(no_fallback):
    logits = em.constant(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="labels must have one dim fewer than logits"):
        em.nn.sparse_softmax_cross_entropy_with_logits(em.constant([[0], [1]]), logits)
    fn = em.nn.sparse_softmax_cross_entropy_with_logits
    for run in (fn, em.function(fn)):
        np.testing.assert_allclose(run(em.constant([2, 0]), logits).numpy(),
                                   [math.log(3)] * 2, rtol=1e-6)
        for bad in ([-1, 0], [0, 3]):
            with pytest.raises(em.errors.InvalidArgumentError, match=r"outside \[0, classes\)"):
                run(em.constant(bad), logits)
