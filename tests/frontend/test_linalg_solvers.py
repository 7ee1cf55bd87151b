"""em.linalg's solvers and factorisations against numpy.linalg: eager and compiled (no
interpreter fallback), batches (static, dynamic and empty), float32 and float64, and the
singular / not-positive-definite errors, eager and compiled."""

import warnings

import numpy as np
import pytest

import ember as em

TOL = {np.float64: 1e-10, np.float32: 1e-4}


def _rng(seed=0):
    return np.random.default_rng(seed)


def _general(shape, seed=0):
    """Well-conditioned square matrices (diagonally shifted Gaussians)."""
    n = shape[-1]
    return _rng(seed).standard_normal(shape) + 2 * np.sqrt(n) * np.eye(n)


def _spd(shape, seed=0):
    x = _rng(seed).standard_normal(shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def _rhs(shape, k=3, seed=1):
    return _rng(seed).standard_normal(shape[:-1] + (k,))


def _narrow(shape):
    return shape[:-1] + (max(shape[-1] - 2, 1),)


def _flat(shape):
    return shape[:-2] + (max(shape[-2] - 2, 1), shape[-1])


def _lu(a, part):
    """Doolittle LU with partial pivoting (first largest magnitude), batched: the packed
    factors (part 0) or the permutation (part 1), as tf.linalg.lu returns them."""
    flat = a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:]).copy()
    perms = np.tile(np.arange(a.shape[-1]), (flat.shape[0], 1))
    for m, p in zip(flat, perms):
        for k in range(m.shape[0]):
            i = k + np.argmax(np.abs(m[k:, k]))
            m[[k, i]], p[[k, i]] = m[[i, k]], p[[i, k]]
            if m[k, k] != 0:
                m[k + 1:, k] /= m[k, k]
            m[k + 1:, k + 1:] -= np.outer(m[k + 1:, k], m[k, k + 1:])
    return flat.reshape(a.shape) if part == 0 else perms.reshape(a.shape[:-1])


def _from_lower(a):
    """The symmetric matrix whose lower triangle is a's."""
    return np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)


def _lower_solve(a, b):
    return np.linalg.solve(np.tril(a), b)


def _tril_t(a):
    return np.swapaxes(np.tril(a), -1, -2)


# name -> (function of tensors, numpy oracle, operand builders of a matrix shape)
CASES = {
    "inv": (em.linalg.inv, np.linalg.inv, [_general]),
    "inv_adjoint": (lambda a: em.linalg.inv(a, adjoint=True),
                    lambda a: np.linalg.inv(np.swapaxes(a, -1, -2)), [_general]),
    "solve": (em.linalg.solve, np.linalg.solve, [_general, _rhs]),
    "solve_adjoint": (lambda a, b: em.linalg.solve(a, b, adjoint=True),
                      lambda a, b: np.linalg.solve(np.swapaxes(a, -1, -2), b),
                      [_general, _rhs]),
    "det": (em.linalg.det, np.linalg.det, [_general]),
    "slogdet_sign": (lambda a: em.linalg.slogdet(a).sign, lambda a: np.linalg.slogdet(a)[0],
                     [lambda s: _rng(4).standard_normal(s)]),
    "slogdet_log": (lambda a: em.linalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1],
                    [_general]),
    "lu": (lambda a: em.linalg.lu(a).lu, lambda a: _lu(a, 0),
           [lambda s: _rng(6).standard_normal(s)]),
    "lu_p": (lambda a: em.linalg.lu(a).p, lambda a: _lu(a, 1).astype(np.int32),
             [lambda s: _rng(6).standard_normal(s)]),
    "lu_singular": (lambda a: em.linalg.lu(a)[0], lambda a: _lu(a, 0),
                    [lambda s: np.where(np.arange(s[-1]) < 2, 0.0, _general(s))]),
    "cholesky": (em.linalg.cholesky, np.linalg.cholesky, [_spd]),
    "cholesky_reads_lower": (lambda a: em.linalg.cholesky(a),
                             lambda a: np.linalg.cholesky(_from_lower(a)),
                             [lambda s: np.tril(_spd(s)) + np.triu(_general(s, 5), 1)]),
    "triangular_solve": (em.linalg.triangular_solve, _lower_solve, [_general, _rhs]),
    "triangular_solve_upper": (lambda a, b: em.linalg.triangular_solve(a, b, lower=False),
                               lambda a, b: np.linalg.solve(np.triu(a), b),
                               [_general, _rhs]),
    "triangular_solve_adjoint": (lambda a, b: em.linalg.triangular_solve(a, b, adjoint=True),
                                 lambda a, b: np.linalg.solve(_tril_t(a), b),
                                 [_general, _rhs]),
    "qr_q": (lambda a: em.linalg.qr(a).q, lambda a: np.linalg.qr(a)[0],
             [lambda s: _rng(2).standard_normal(s)]),
    "qr_r": (lambda a: em.linalg.qr(a).r, lambda a: np.linalg.qr(a)[1],
             [lambda s: _rng(2).standard_normal(s)]),
    "qr_tall_q": (lambda a: em.linalg.qr(a).q, lambda a: np.linalg.qr(a)[0],
                  [lambda s: _rng(2).standard_normal(_narrow(s))]),
    "qr_tall_r": (lambda a: em.linalg.qr(a)[1], lambda a: np.linalg.qr(a)[1],
                  [lambda s: _rng(2).standard_normal(_narrow(s))]),
    "qr_wide_q": (lambda a: em.linalg.qr(a).q, lambda a: np.linalg.qr(a)[0],
                  [lambda s: _rng(2).standard_normal(_flat(s))]),
    "qr_wide_r": (lambda a: em.linalg.qr(a).r, lambda a: np.linalg.qr(a)[1],
                  [lambda s: _rng(2).standard_normal(_flat(s))]),
    "qr_full_q": (lambda a: em.linalg.qr(a, full_matrices=True).q,
                  lambda a: np.linalg.qr(a, mode="complete")[0],
                  [lambda s: _rng(2).standard_normal(_narrow(s))]),
    "qr_full_r": (lambda a: em.linalg.qr(a, full_matrices=True).r,
                  lambda a: np.linalg.qr(a, mode="complete")[1],
                  [lambda s: _rng(2).standard_normal(_narrow(s))]),
    "qr_zero_column": (lambda a: em.linalg.qr(a).r, lambda a: np.linalg.qr(a)[1],
                       [lambda s: np.where(np.arange(s[-1]) == 1, 0.0,
                                           _rng(2).standard_normal(s))]),
}

SHAPES = [(5, 5), (3, 6, 6), (2, 2, 4, 4), (1, 1), (2, 0, 0)]


def _operands(name, shape, dtype):
    return [make(shape).astype(dtype) for make in CASES[name][2]]


def _compiled(fn, *args, signature=None):
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        return em.function(fn, input_signature=signature)(*args)


def _check(got, want, dtype):
    got = got.numpy() if isinstance(got, em.Tensor) else np.asarray(got)
    if want.dtype == np.int32:
        np.testing.assert_array_equal(got, want)
        return
    assert got.dtype == dtype and got.shape == want.shape
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype] * scale)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_matches_numpy(name, dtype, shape):
    fn, oracle, _ = CASES[name]
    xs = _operands(name, shape, dtype)
    want = oracle(*[x.astype(np.float64) for x in xs])
    _check(fn(*[em.constant(x) for x in xs]), want, dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_matches_numpy(name, dtype):
    fn, oracle, _ = CASES[name]
    xs = _operands(name, (3, 6, 6), dtype)
    want = oracle(*[x.astype(np.float64) for x in xs])
    _check(_compiled(fn, *xs), want, dtype)


@pytest.mark.parametrize("batch", [(4,), (0,)], ids=["batch4", "empty"])
@pytest.mark.parametrize("name", ["inv", "solve", "det", "cholesky", "triangular_solve",
                                  "qr_q", "qr_tall_r", "lu", "lu_p"])
def test_compiled_with_dynamic_batch(name, batch):
    fn, oracle, _ = CASES[name]
    xs = _operands(name, batch + (5, 5), np.float64)
    signature = [em.TensorSpec([None] + list(x.shape[1:]), em.float64) for x in xs]
    _check(_compiled(fn, *xs, signature=signature),
           oracle(*xs) if batch[0] else np.asarray(oracle(*xs)), np.float64)


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_on_empty_matrices(name):
    fn, oracle, _ = CASES[name]
    xs = _operands(name, (2, 0, 0), np.float32)
    _check(_compiled(fn, *xs), oracle(*[x.astype(np.float64) for x in xs]), np.float32)


def test_solve_broadcasts_batch_dims():
    a, b = _general((3, 1, 4, 4)), _rhs((2, 4, 4))
    want = np.linalg.solve(a, np.broadcast_to(b, (3, 2, 4, 3)))
    _check(em.linalg.solve(a, b), want, np.float64)
    _check(_compiled(em.linalg.solve, a, b), want, np.float64)


def test_inverse_of_permutation_needs_pivoting():
    a = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(em.linalg.inv(a).numpy(), a.T)
    np.testing.assert_array_equal(_compiled(em.linalg.inv, a).numpy(), a.T)
    assert em.linalg.det(a).numpy() == 1.0


SINGULAR = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]])
NOT_PD = np.array([[[1.0, 2.0], [2.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]]])

ERRORS = [
    ("inv", em.linalg.inv, SINGULAR, "Input is not invertible."),
    ("solve", lambda a: em.linalg.solve(a, np.ones((2, 2, 1))), SINGULAR,
     "Input matrix is not invertible."),
    ("cholesky", em.linalg.cholesky, NOT_PD,
     "Cholesky decomposition was not successful. The input might not be valid."),
]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name,fn,x,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_singular_input_raises_invalid_argument(name, fn, x, message, compiled):
    with pytest.raises(em.InvalidArgumentError, match=message.replace(".", "\\.")):
        if compiled:
            _compiled(fn, x)
        else:
            fn(em.constant(x))


def test_lu_reconstructs_input_and_takes_int64():
    a = _rng(7).standard_normal((2, 4, 4))
    packed, perm = _compiled(lambda x: em.linalg.lu(x, output_idx_type=em.int64), a)
    assert perm.dtype == em.int64
    low = np.tril(packed.numpy(), -1) + np.eye(4)
    np.testing.assert_allclose(low @ np.triu(packed.numpy()),
                               np.take_along_axis(a, perm.numpy()[..., None], 1), atol=1e-12)


def test_singular_determinant_is_zero():
    np.testing.assert_array_equal(em.linalg.det(SINGULAR).numpy(), [0.0, 1.0])
    sign, logabs = _compiled(em.linalg.slogdet, SINGULAR)
    np.testing.assert_array_equal(sign.numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(logabs.numpy(), [-np.inf, 0.0])


@pytest.mark.parametrize("call,error,match", [
    (lambda: em.linalg.inv(em.zeros([2, 3])), ValueError, "needs square matrices"),
    (lambda: em.linalg.inv(em.zeros([3])), ValueError, "rank >= 2"),
    (lambda: em.linalg.inv(em.constant([[1, 2], [3, 4]])), TypeError, "float32 and float64"),
    (lambda: em.linalg.solve(em.zeros([2, 2]), em.zeros([3, 1])), ValueError, "needs 2 rows"),
    (lambda: em.linalg.solve(em.zeros([2, 2]), em.zeros([2, 1], em.float64)), TypeError,
     "rhs is float64 but matrix is float32"),
])
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


@pytest.mark.parametrize("call,message", [
    (lambda: em.linalg.eigh(em.ones([3, 4])),
     "em.linalg.eigh needs square matrices, got a float32 tensor of shape (3, 4)"),
    (lambda: em.linalg.solve(em.ones([3, 3]), em.ones([4, 1])),
     "em.linalg.solve: rhs of shape (4, 1) needs 3 rows for a matrix of shape (3, 3)"),
    (lambda: em.linalg.svd(em.ones([3, 3], em.int32)),
     "em.linalg.svd supports float32 and float64, got an int32 tensor of shape (3, 3); cast "
     "it with em.cast"),
    (lambda: em.linalg.diag_part(em.ones([3])),
     "em.linalg.diag_part needs a tensor of rank >= 2, got a float32 tensor of shape (3,)"),
])
def test_messages_name_shapes_not_values(call, message):
    """A new user's finding: the messages printed the operands' values, over many lines."""
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    assert str(info.value) == message


def test_dynamic_matrix_dims_are_rejected_with_a_hint():
    fn = em.function(em.linalg.inv, input_signature=[em.TensorSpec([None, None], em.float32)])
    with pytest.raises(ValueError, match="matrix dims .* known while tracing"):
        fn(np.eye(2, dtype=np.float32))


def test_solvers_nest_in_autograph_loops_and_branches():
    a = _general((2, 4, 4))
    spd = _spd((2, 4, 4))

    def repeated_inverse(x, n):
        for _ in em.range(n):
            x = em.linalg.inv(x)
        return x

    def branch(x):
        if em.reduce_sum(x) > 0:
            y = em.linalg.cholesky(x)
        else:
            y = em.linalg.qr(x).r
        return y

    _check(_compiled(repeated_inverse, a, em.constant(3)), np.linalg.inv(a), np.float64)
    _check(_compiled(branch, spd), np.linalg.cholesky(spd), np.float64)
    _check(_compiled(branch, -spd), np.linalg.qr(-spd)[1], np.float64)


@pytest.mark.parametrize("name", ["solve", "triangular_solve"])
def test_rhs_may_be_fully_dynamic(name):
    fn, oracle, _ = CASES[name]
    a, b = _operands(name, (3, 4, 4), np.float64)
    signature = [em.TensorSpec([None, 4, 4], em.float64),
                 em.TensorSpec([None, None, None], em.float64)]
    _check(_compiled(fn, a, b, signature=signature), oracle(a, b), np.float64)
    _check(_compiled(fn, a, b[..., :0], signature=signature), oracle(a, b[..., :0]),
           np.float64)
