"""em.linalg's eigh, eigvalsh, svd, pinv, lstsq and matrix_rank against numpy.linalg:
well- and ill-conditioned, repeated eigenvalues, rank-deficient, batches (static, dynamic,
empty), float32 and float64, eager and compiled (no interpreter fallback). Vectors are
checked by reconstruction and orthonormality: their signs are not specified."""

import warnings

import numpy as np
import pytest

import ember as em

TOL = {np.float64: 1e-10, np.float32: 2e-4}
SHAPES = [(5, 5), (3, 6, 6), (2, 2, 4, 4), (1, 1), (2, 0, 0)]
DTYPES = pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])


def _rng(seed=0):
    return np.random.default_rng(seed)


def _orthogonal(shape, seed):
    q, _ = np.linalg.qr(_rng(seed).standard_normal(shape))
    return q


def _with_spectrum(shape, values, seed=3):
    """Symmetric matrices q diag(values) q^T with random orthogonal q."""
    q = _orthogonal(shape, seed)
    return (q * values) @ np.swapaxes(q, -1, -2)


def _random(shape):
    x = _rng(1).standard_normal(shape)
    return x + np.swapaxes(x, -1, -2)


def _graded(shape):
    return _with_spectrum(shape, np.logspace(0, -12, shape[-1]))


def _repeated(shape):
    n = shape[-1]
    return _with_spectrum(shape, np.where(np.arange(n) < n // 2, 2.0, -1.0))


def _rank_deficient(shape):
    return _with_spectrum(shape, np.where(np.arange(shape[-1]) % 2 == 0, 0.0, 3.0))


SYMMETRIC = {"random": _random, "graded": _graded, "repeated": _repeated,
             "rank_deficient": _rank_deficient}


def _general(shape, kind):
    x = _rng(2).standard_normal(shape)
    k = min(shape[-2:])
    if kind == "graded":
        return x[..., :, :k] @ (np.logspace(0, -10, k)[:, None] * x[..., :k, :])
    if kind == "rank_deficient":
        r = max(k // 2, 1) if k else 0
        return x[..., :, :r] @ _rng(5).standard_normal(shape[:-2] + (r, shape[-1]))
    return x


def _compiled(fn, *args, signature=None):
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        return em.function(fn, input_signature=signature)(*args)


def _close(got, want, dtype, scale=1.0):
    got = got.numpy() if isinstance(got, em.Tensor) else np.asarray(got)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * scale)


def _t(x):
    return np.swapaxes(x, -1, -2)


def _check_eigh(result, a, dtype):
    e, v = (r.numpy() for r in result)
    scale = max(1.0, float(np.abs(a).max())) if a.size else 1.0
    _close(e, np.linalg.eigvalsh(a), dtype, scale)
    _close((v * e[..., None, :]) @ _t(v), a, dtype, scale * a.shape[-1])
    _close(_t(v) @ v, np.broadcast_to(np.eye(a.shape[-1]), v.shape), dtype, a.shape[-1])


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("kind", sorted(SYMMETRIC))
@DTYPES
def test_eigh_eager_matches_numpy(kind, shape, dtype):
    a = SYMMETRIC[kind](shape)
    _check_eigh(em.linalg.eigh(a.astype(dtype)), a, dtype)
    _close(em.linalg.eigvalsh(a.astype(dtype)), np.linalg.eigvalsh(a), dtype,
           max(1.0, float(np.abs(a).max())) if a.size else 1.0)


@pytest.mark.parametrize("kind", sorted(SYMMETRIC))
@DTYPES
def test_eigh_compiled_matches_eager_and_numpy(kind, dtype):
    a = SYMMETRIC[kind]((3, 6, 6)).astype(dtype)
    compiled = _compiled(em.linalg.eigh, a)
    _check_eigh(compiled, a.astype(np.float64), dtype)
    _close(compiled[0], em.linalg.eigh(a)[0].numpy().astype(np.float64), dtype, 10.0)
    _close(_compiled(em.linalg.eigvalsh, a), compiled[0].numpy().astype(np.float64), dtype,
           10.0)


def test_eigh_reads_the_lower_triangle_only():
    a = _random((2, 5, 5))
    upper_noise = np.triu(_rng(9).standard_normal((2, 5, 5)), 1)
    _check_eigh(em.linalg.eigh(np.tril(a) + upper_noise), a, np.float64)
    _check_eigh(_compiled(em.linalg.eigh, np.tril(a) + upper_noise), a, np.float64)


def _check_svd(result, a, dtype, full):
    s, u, v = (r.numpy() for r in result)
    m, n = a.shape[-2:]
    k = min(m, n)
    _, want_s, _ = np.linalg.svd(a, full_matrices=full) if a.size else (None, s, None)
    scale = max(1.0, float(np.abs(a).max())) if a.size else 1.0
    _close(s, np.asarray(want_s, np.float64), dtype, scale)
    assert u.shape == a.shape[:-2] + (m, m if full else k)
    assert v.shape == a.shape[:-2] + (n, n if full else k)
    _close((u[..., :k] * s[..., None, :]) @ _t(v[..., :k]), a, dtype, scale * max(m, n))
    for w in (u, v):
        eye = np.broadcast_to(np.eye(w.shape[-1]), w.shape[:-2] + (w.shape[-1],) * 2)
        _close(_t(w) @ w, eye, dtype, max(m, n))


SVD_SHAPES = [(5, 5), (3, 6, 4), (2, 3, 7), (2, 2, 4, 3), (1, 1), (4, 1), (2, 0, 0)]


@pytest.mark.parametrize("full", [False, True], ids=["thin", "full"])
@pytest.mark.parametrize("shape", SVD_SHAPES, ids=str)
@pytest.mark.parametrize("kind", ["random", "graded", "rank_deficient"])
@DTYPES
def test_svd_eager_matches_numpy(kind, shape, full, dtype):
    a = _general(shape, kind)
    _check_svd(em.linalg.svd(a.astype(dtype), full_matrices=full), a, dtype, full)
    values = em.linalg.svd(a.astype(dtype), compute_uv=False)
    _close(values, em.linalg.svd(a.astype(dtype))[0].numpy().astype(np.float64), dtype, 10.0)


@pytest.mark.parametrize("full", [False, True], ids=["thin", "full"])
@pytest.mark.parametrize("shape", [(3, 6, 4), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("kind", ["random", "rank_deficient"])
@DTYPES
def test_svd_compiled_matches_eager_and_numpy(kind, shape, full, dtype):
    a = _general(shape, kind).astype(dtype)
    compiled = _compiled(lambda x: em.linalg.svd(x, full_matrices=full), a)
    _check_svd(compiled, a.astype(np.float64), dtype, full)
    eager = em.linalg.svd(a, full_matrices=full)
    _close(compiled[0], eager[0].numpy().astype(np.float64), dtype, 10.0)


@pytest.mark.parametrize("batch", [(4,), (0,)], ids=["batch4", "empty"])
def test_compiled_with_dynamic_batch(batch):
    a = _random(batch + (5, 5))
    signature = [em.TensorSpec([None, 5, 5], em.float64)]
    _check_eigh(_compiled(em.linalg.eigh, a, signature=signature), a, np.float64)
    b = _general(batch + (6, 4), "random")
    signature = [em.TensorSpec([None, 6, 4], em.float64)]
    _check_svd(_compiled(em.linalg.svd, b, signature=signature), b, np.float64, False)
    _close(_compiled(em.linalg.pinv, b, signature=signature), np.linalg.pinv(b)
           if batch[0] else np.zeros((0, 4, 6)), np.float64)


@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 5), (4, 4), (2, 6, 6)], ids=str)
@pytest.mark.parametrize("kind", ["random", "rank_deficient"])
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_pinv_and_matrix_rank_match_numpy(kind, shape, compiled):
    a = _general(shape, kind)
    run = (lambda f, *x: _compiled(f, *x)) if compiled else (lambda f, *x: f(*x))
    rcond = 10 * max(shape[-2:]) * np.finfo(np.float64).eps  # TensorFlow's default
    _close(run(em.linalg.pinv, a), np.linalg.pinv(a, rcond=rcond), np.float64, 1e3)
    rank = run(em.linalg.matrix_rank, a)
    assert rank.dtype == em.int32
    np.testing.assert_array_equal(rank.numpy(), np.linalg.matrix_rank(a))


@pytest.mark.parametrize("shape", [(6, 3), (2, 5, 2), (3, 3), (2, 3, 5)], ids=str)
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_lstsq_matches_numpy(shape, compiled):
    a = _general(shape, "random")
    b = _rng(4).standard_normal(shape[:-1] + (2,))
    run = (lambda f, *x: _compiled(f, *x)) if compiled else (lambda f, *x: f(*x))
    want = np.linalg.pinv(a) @ b
    _close(run(em.linalg.lstsq, a, b), want, np.float64, 1e2)
    _close(run(lambda x, y: em.linalg.lstsq(x, y, fast=False), a, b), want, np.float64)
    n = shape[-1]
    ridge = np.linalg.solve(_t(a) @ a + 0.5 * np.eye(n), _t(a) @ b)
    _close(run(lambda x, y: em.linalg.lstsq(x, y, l2_regularizer=0.5), a, b), ridge,
           np.float64)


def test_lstsq_slow_path_gives_the_minimum_norm_solution_of_rank_deficient_input():
    a = _general((2, 6, 4), "rank_deficient")
    b = _rng(4).standard_normal((2, 6, 3))
    want = np.linalg.lstsq(a[0], b[0], rcond=None)[0]
    _close(em.linalg.lstsq(a, b, fast=False)[0], want, np.float64, 1e2)
    with pytest.raises(em.InvalidArgumentError, match="Cholesky decomposition"):
        em.linalg.lstsq(a, b)


def test_eigh_gradient_matches_numeric_difference():
    a = _random((4, 4)) + np.diag([0.0, 3.0, 6.0, 9.0])
    x = em.constant(a)
    with em.GradientTape() as tape:
        tape.watch(x)
        e, v = em.linalg.eigh(x)
        y = em.reduce_sum(e * e) + em.reduce_sum(v * v * e[None, :] ** 3)
    got = tape.gradient(y, x).numpy()
    want = np.zeros_like(a)
    for i in range(4):
        for j in range(i + 1):  # the lower triangle is read: perturb it only
            d = np.zeros_like(a)
            d[i, j] = 1e-6

            def f(m):
                w, u = np.linalg.eigh(m)
                return (w * w).sum() + (u * u * w[None, :] ** 3).sum()
            want[i, j] = (f(a + d) - f(a - d)) / 2e-6
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_svd_gradient_with_full_matrices_and_distant_dims_raises():
    x = em.constant(_general((5, 2), "random"))
    with em.GradientTape() as tape:
        tape.watch(x)
        _, u, _ = em.linalg.svd(x, full_matrices=True)
        y = em.reduce_sum(u)
    with pytest.raises(em.errors.NoGradientError, match="em.linalg.svd: no gradient.*full_matrices"):
        tape.gradient(y, x)


@pytest.mark.parametrize("call,error,match", [
    (lambda: em.linalg.eigh(em.zeros([2, 3])), ValueError, "eigh needs square matrices"),
    (lambda: em.linalg.svd(em.zeros([3])), ValueError, "svd needs .* rank >= 2"),
    (lambda: em.linalg.eigvalsh(em.constant([[1, 2], [2, 1]])), TypeError,
     "eigvalsh supports float32 and float64"),
    (lambda: em.linalg.lstsq(em.zeros([3, 2]), em.zeros([2, 1])), ValueError,
     "lstsq: rhs of shape .* needs 3 rows"),
    (lambda: em.linalg.lstsq(em.zeros([3, 2]), em.zeros([3, 1], em.float64)), TypeError,
     "rhs is float64 but matrix is float32"),
    (lambda: em.linalg.pinv(em.zeros([2, 2], em.int32)), TypeError, "pinv supports"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_dynamic_matrix_dims_are_rejected_with_a_hint():
    fn = em.function(em.linalg.svd, input_signature=[em.TensorSpec([None, None], em.float32)])
    with pytest.raises(ValueError, match="matrix dims .* known while tracing"):
        fn(np.eye(2, dtype=np.float32))
