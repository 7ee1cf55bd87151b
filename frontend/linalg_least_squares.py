"""em.linalg's pseudo-inverse, least squares and rank: `pinv`, `lstsq`, `matrix_rank`
(tf.linalg's, same defaults), compositions of `svd` and of `cholesky` /
`triangular_solve`, so they compile, batch and differentiate as those do."""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.linalg_gradients import cholesky, triangular_solve
from ember.frontend.linalg_solvers import _matrix, described
from ember.frontend.linalg_spectral import svd
from ember.frontend.tensor import convert_to_tensor

__all__ = ["lstsq", "matrix_rank", "pinv"]


def _eps(dtype) -> float:
    return float(np.finfo(np.float32 if dtype == dtypes.float32 else np.float64).eps)


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse of each matrix (tf.linalg.pinv) from its SVD,
    dropping singular values at or below `rcond * max(s)`; `rcond` defaults to
    `10 * max(M, N) * eps` (numpy's default is 1e-15). Returns [..., N, M].

    Example:
      >>> import ember as em
      >>> em.linalg.pinv(em.constant([[2.0, 0.0], [0.0, 0.0]])).numpy().tolist()
      [[0.5, 0.0], [0.0, 0.0]]
    """
    del validate_args, name
    x, m, n = _matrix(a, "pinv", square=False)
    if rcond is None:
        rcond = 10.0 * max(m, n) * _eps(x.dtype)
    rcond = convert_to_tensor(rcond, dtype=x.dtype)
    s, u, v = svd(x, full_matrices=False, compute_uv=True)
    cutoff = rcond * ops.reduce_max(s, axis=-1, keepdims=True)
    kept = ops.greater(s, cutoff)
    inverse = ops.where(kept, 1 / ops.where(kept, s, ops.ones_like(s)), ops.zeros_like(s))
    return ops.matmul(v * ops.expand_dims(inverse, -2), u, transpose_b=True)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """X minimising ||matrix @ X - rhs||^2 + l2_regularizer ||X||^2 for each matrix of the
    batch (tf.linalg.lstsq; matrix [..., M, N], rhs [..., M, K] -> [..., N, K]).

    With `fast` (the default) the regularised normal equations are solved by Cholesky:
    (A^T A + l2 I) X = A^T B when M >= N, else X = A^T (A A^T + l2 I)^-1 B; this needs A
    numerically full rank (or l2 > 0) and raises `em.InvalidArgumentError` otherwise. With
    `fast=False` X is the minimum-norm solution pinv(A) B, robust to rank deficiency; as in
    TensorFlow, l2_regularizer is then ignored.

    Example:
      >>> import ember as em
      >>> em.linalg.lstsq(em.constant([[1.0], [1.0]]), em.constant([[1.0], [3.0]])
      ...                 ).numpy().tolist()
      [[2.0]]
    """
    del name
    a, m, n = _matrix(matrix, "lstsq", square=False)
    b = convert_to_tensor(rhs, dtype_hint=a.dtype)
    if b.dtype != a.dtype:
        raise TypeError(f"em.linalg.lstsq: rhs is {b.dtype.name} but matrix is "
                        f"{a.dtype.name}; cast one of them")
    if b.shape.rank is None or b.shape.rank < 2:
        raise ValueError(f"em.linalg.lstsq needs rhs of rank >= 2 ([..., M, K]), got "
                         f"{described(b)}")
    if b.shape[-2] is not None and b.shape[-2] != m:
        raise ValueError(f"em.linalg.lstsq: rhs of shape {tuple(b.shape)} needs {m} rows (M) "
                         f"for a matrix of shape {tuple(a.shape)}")
    if not fast:
        return ops.matmul(pinv(a), b)
    l2 = convert_to_tensor(l2_regularizer, dtype=a.dtype)
    small = min(m, n)
    eye = ops.cast(ops.equal(ops.expand_dims(ops.range(small), 1), ops.range(small)),
                   a.dtype)
    if m >= n:
        gram = ops.matmul(a, a, transpose_a=True) + l2 * eye
        return _cholesky_solve(gram, ops.matmul(a, b, transpose_a=True))
    gram = ops.matmul(a, a, transpose_b=True) + l2 * eye
    return ops.matmul(a, _cholesky_solve(gram, b), transpose_a=True)


def _cholesky_solve(gram, b):
    low = cholesky(gram)
    return triangular_solve(low, triangular_solve(low, b), adjoint=True)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above `tol` for each matrix (tf.linalg.matrix_rank),
    an int32 [...]; `tol` defaults to `eps * max(M, N) * max(s)`.

    Example:
      >>> import ember as em
      >>> int(em.linalg.matrix_rank(em.constant([[1.0, 2.0], [2.0, 4.0]])).numpy())
      1
    """
    del validate_args, name
    x, m, n = _matrix(a, "matrix_rank", square=False)
    s = svd(x, compute_uv=False)
    if tol is None:
        tol = _eps(x.dtype) * max(m, n) * ops.reduce_max(s, axis=-1, keepdims=True)
    else:
        tol = convert_to_tensor(tol, dtype=x.dtype)
    return ops.reduce_sum(ops.cast(ops.greater(s, tol), dtypes.int32), axis=-1)
