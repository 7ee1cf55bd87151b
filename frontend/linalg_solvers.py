"""em.linalg's factorisations and solvers: `inv`, `solve`, `det`, `slogdet`, `cholesky`,
`triangular_solve`, `qr` (upstream: tf.linalg, whose kernels are Eigen's PartialPivLU, LLT,
HouseholderQR).

Each is a loop of whole-row and whole-column vector ops over `em.while_loop` (an `scf.while`
when compiled): n iterations of O(n^2) work per matrix, batched over any leading dims.
Rows and columns are picked with one-hot masks built from the loop counter, so the loop
body has no dynamic indexing. Batch dims (and the right-hand sides' dims) may be dynamic;
the matrix dims must be known while tracing. float32 and float64.

- `inv`/`solve`/`det`/`slogdet`: Gauss-Jordan elimination with partial pivoting on
  `[A | B]` (B the identity for `inv`, empty for the determinants).
- `cholesky`: left-looking column Cholesky reading the lower triangle only.
- `triangular_solve`: forward or back substitution, one row per iteration.
- `qr`: Householder reflections with LAPACK's signs (R's diagonal may be negative), so Q and
  R match numpy.linalg.qr and TensorFlow.

Errors are TensorFlow's, raised as `em.InvalidArgumentError` eagerly and by compiled code
(a run-time `ember.assert`): a zero pivot in `inv`/`solve`, a non-positive pivot in
`cholesky`.
"""

from __future__ import annotations

import builtins
import collections

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.effects import assert_true
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.while_loop import while_loop

NOT_INVERTIBLE = "Input is not invertible."
SOLVE_NOT_INVERTIBLE = "Input matrix is not invertible."
NOT_CHOLESKY = "Cholesky decomposition was not successful. The input might not be valid."

Qr = collections.namedtuple("Qr", ["q", "r"])
Slogdet = collections.namedtuple("Slogdet", ["sign", "log_abs_determinant"])
Lu = collections.namedtuple("Lu", ["lu", "p"])


def described(x) -> str:
    """A tensor as an error message names it: its dtype and shape, not its values."""
    shape = "unknown" if x.shape.rank is None else str(tuple(x.shape))
    article = "an" if x.dtype.name[0] in "aeio" else "a"
    return f"{article} {x.dtype.name} tensor of shape {shape}"


def _matrix(x, what: str, square: bool = True):
    """`x` as a float tensor of rank >= 2 with static matrix dims (rows, cols)."""
    x = convert_to_tensor(x)
    if x.dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"em.linalg.{what} supports float32 and float64, got "
                        f"{described(x)}; cast it with em.cast")
    if x.shape.rank is None or x.shape.rank < 2:
        raise ValueError(f"em.linalg.{what} needs a (batch of) matrices of rank >= 2, "
                         f"got {described(x)}")
    rows, cols = x.shape[-2], x.shape[-1]
    if rows is None or cols is None:
        raise ValueError(f"em.linalg.{what} needs the matrix dims of {described(x)} known while "
                         f"tracing (batch dims may be None in the input_signature)")
    if square and rows != cols:
        raise ValueError(f"em.linalg.{what} needs square matrices, got {described(x)}")
    return x, rows, cols


def _rhs(matrix, rhs, what: str):
    b = convert_to_tensor(rhs)
    if b.dtype != matrix.dtype:
        raise TypeError(f"em.linalg.{what}: rhs is {b.dtype.name} but matrix is "
                        f"{matrix.dtype.name}")
    if b.shape.rank is None or b.shape.rank < 2:
        raise ValueError(f"em.linalg.{what} needs rhs of rank >= 2 ([..., M, K]), got "
                         f"{described(b)}")
    if b.shape[-2] is not None and b.shape[-2] != matrix.shape[-1]:
        raise ValueError(f"em.linalg.{what}: rhs of shape {tuple(b.shape)} needs "
                         f"{matrix.shape[-1]} rows for a matrix of shape {tuple(matrix.shape)}")
    if b.shape[-2] is None:  # checked when the code runs: a `?` of 1 would broadcast
        assert_true(ops.equal(ops.shape(b)[-2], matrix.shape[-1]),
                    f"em.linalg.{what}: rhs needs {matrix.shape[-1]} rows for a matrix of "
                    f"{matrix.shape[-1]} columns")
    return b


def _swap_last(x):
    rank = x.shape.rank
    return ops.transpose(x, list(builtins.range(rank - 2)) + [rank - 1, rank - 2])


def _unit(size: int, k, dtype):
    """The one-hot vector e_k of length `size` (k a scalar int32 tensor)."""
    return ops.cast(ops.equal(ops.range(size), k), dtype)


def _column(x, k, cols: int):
    return ops.reduce_sum(x * _unit(cols, k, x.dtype), axis=-1)


def _row(x, k, rows: int):
    return ops.reduce_sum(x * ops.expand_dims(_unit(rows, k, x.dtype), -1), axis=-2)


def _row_times(v, x, transpose_x=False):
    """The row vector v (..., n) times the matrix x (..., n, m), or x^T: (..., m)."""
    return ops.squeeze(ops.matmul(ops.expand_dims(v, -2), x, transpose_b=transpose_x), [-2])


def _batch_zeros(x):
    """Zeros of x's batch shape with two size-1 matrix dims, for broadcasting batches."""
    return ops.zeros_like(ops.reduce_sum(x, axis=[-2, -1], keepdims=True))


def _loop(count: int, body, start: tuple) -> tuple:
    """`body` for k = 0 .. count-1 (k is start[0]), as an em.while_loop; with no
    iterations, `start` itself (the body's ops would not trace on size-0 matrices)."""
    if count == 0:
        return start
    return while_loop(lambda k, *_: k < count, body, start)


def _gauss_jordan(a, b, n: int):
    """Reduces A to I by row operations with partial pivoting, applying the same
    operations to B (which then holds A^-1 B; None for none). Returns the reduced B,
    whether every pivot was nonzero, and det(A) as (sign, log|det|)."""
    dtype = a.dtype
    batch = ops.reduce_sum(_batch_zeros(a), axis=[-2, -1])
    rows = ops.range(n)
    one, zero = ops.cast(1, dtype), ops.cast(0, dtype)

    def body(k, a, b, ok, sign, logabs):
        ek = _unit(n, k, dtype)
        col = _column(a, k, n)
        candidates = ops.where(rows >= k, ops.abs(col), ops.cast(-1, dtype))
        p = ops.argmax(candidates, axis=-1, output_type=dtypes.int32)
        ep = ops.one_hot(p, n, dtype=dtype)
        row_p = ops.reduce_sum(a * ops.expand_dims(ep, -1), axis=-2)
        pivot = ops.reduce_sum(row_p * ek, axis=-1)
        nonzero = ops.not_equal(pivot, 0)
        ok = ops.logical_and(ok, ops.reduce_all(nonzero))
        sign = sign * ops.where(ops.not_equal(p, k), -one, one) * ops.sign(pivot)
        logabs = logabs + ops.log(ops.where(nonzero, ops.abs(pivot), zero))
        scale = ops.expand_dims(ops.where(nonzero, pivot, one), -1)
        swap = ops.expand_dims(ek - ep, -1)
        # column k after rows k and p swap; the step is m -= (col - e_k) (row_p / pivot)
        factor = ops.expand_dims(col + (ek - ep) * ops.expand_dims(pivot - _dot(col, ek),
                                                                    -1) - ek, -1)

        def step(m):
            row_k = ops.reduce_sum(m * ops.expand_dims(ek, -1), axis=-2)
            row_pm = ops.reduce_sum(m * ops.expand_dims(ep, -1), axis=-2)
            m = m + swap * ops.expand_dims(row_pm - row_k, -2)
            return m - factor * ops.expand_dims(row_pm / scale, -2)
        return k + 1, step(a), step(b), ok, sign, logabs

    start = (ops.cast(0, dtypes.int32), a, a if b is None else b, ops.equal(0, 0),
             batch + 1, batch)
    _, _, b_out, ok, sign, logabs = _loop(n, body, start)
    return b_out, ok, sign, logabs


def _dot(x, y):
    return ops.reduce_sum(x * y, axis=-1)


def inv(input, adjoint=False, name=None):  # noqa: A002
    """The inverse of each square matrix in `input` (tf.linalg.inv).

    Raises `em.InvalidArgumentError` ("Input is not invertible.") when elimination meets a
    zero pivot, eagerly and when compiled code runs.

    Example:
      >>> import ember as em
      >>> em.linalg.inv(em.constant([[2.0, 0.0], [0.0, 4.0]])).numpy().tolist()
      [[0.5, 0.0], [0.0, 0.25]]
    """
    del name
    a, n, _ = _matrix(input, "inv")
    a = _swap_last(a) if adjoint else a
    eye = ops.cast(ops.equal(ops.expand_dims(ops.range(n), 1), ops.range(n)), a.dtype)
    x, ok, _, _ = _gauss_jordan(a, eye + _batch_zeros(a), n)
    assert_true(ok, NOT_INVERTIBLE)
    return x


def solve(matrix, rhs, adjoint=False, name=None):
    """X with `matrix @ X = rhs` (or `adjoint(matrix) @ X = rhs`) for each square matrix
    of the batch (tf.linalg.solve); `rhs` is [..., M, K], batch dims broadcast.

    Raises `em.InvalidArgumentError` ("Input matrix is not invertible.") on a zero pivot.

    Example:
      >>> import ember as em
      >>> em.linalg.solve(em.constant([[2.0, 0.0], [0.0, 4.0]]), em.constant([[1.0], [1.0]])
      ...                 ).numpy().tolist()
      [[0.5], [0.25]]
    """
    del name
    a, n, _ = _matrix(matrix, "solve")
    b = _rhs(a, rhs, "solve")
    a = _swap_last(a) if adjoint else a
    x, ok, _, _ = _gauss_jordan(a + _batch_zeros(b), b + _batch_zeros(a), n)
    assert_true(ok, SOLVE_NOT_INVERTIBLE)
    return x


def slogdet(input, name=None):  # noqa: A002
    """(sign, log |det|) of each square matrix (tf.linalg.slogdet); a singular matrix
    gives sign 0 and -inf.

    Example:
      >>> import ember as em
      >>> em.linalg.slogdet(em.constant([[-2.0, 0.0], [0.0, 1.0]])).sign.numpy()
      np.float32(-1.0)
    """
    del name
    a, n, _ = _matrix(input, "slogdet")
    _, _, sign, logabs = _gauss_jordan(a, None, n)
    return Slogdet(sign, logabs)


def det(input, name=None):  # noqa: A002
    """The determinant of each square matrix (tf.linalg.det); 0 for a singular one. As in
    TensorFlow it is sign * exp(log |det|), which does not overflow on the way.

    Example:
      >>> import ember as em
      >>> round(float(em.linalg.det(em.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()), 5)
      -2.0
    """
    del name
    sign, logabs = slogdet(input)
    return sign * ops.exp(logabs)


def lu(input, output_idx_type=dtypes.int32, name=None):  # noqa: A002
    """The LU decomposition with partial pivoting of each square matrix (tf.linalg.lu).

    Returns the namedtuple `(lu, p)`: `lu` holds the unit lower-triangular L below the
    diagonal and U on and above it, and `p` ([..., M], `output_idx_type`) the row
    permutation: row i of L @ U is row p[i] of `input`. Pivots are the first largest
    magnitude in the column, as LAPACK and Eigen pick them; a singular matrix is not an
    error (a zero pivot leaves its column of L zero, as Eigen does).

    Example:
      >>> import ember as em
      >>> em.linalg.lu(em.constant([[1.0, 2.0], [3.0, 4.0]])).p.numpy().tolist()
      [1, 0]
    """
    del name
    a, n, _ = _matrix(input, "lu")
    idx_type = dtypes.as_dtype(output_idx_type)
    if idx_type not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"em.linalg.lu: output_idx_type must be int32 or int64, got "
                        f"{idx_type.name}")
    dtype, rows = a.dtype, ops.range(n)
    zero, one = ops.cast(0, dtype), ops.cast(1, dtype)
    below = ops.expand_dims(rows, 1)

    def body(k, m, perm):
        ek, ek_int = _unit(n, k, dtype), ops.cast(ops.equal(rows, k), idx_type)
        col = _column(m, k, n)
        p = ops.argmax(ops.where(rows >= k, ops.abs(col), -one), axis=-1,
                       output_type=dtypes.int32)
        ep = ops.one_hot(p, n, dtype=dtype)
        swap = ops.expand_dims(ek - ep, -1)
        row_p = ops.reduce_sum(m * ops.expand_dims(ep, -1), axis=-2)
        m = m + swap * ops.expand_dims(row_p - _row(m, k, n), -2)
        perm = perm + (ek_int - ops.cast(ep, idx_type)) * ops.expand_dims(
            _dot(perm, ops.cast(ep, idx_type)) - _dot(perm, ek_int), -1)
        col, row_k = _column(m, k, n), _row(m, k, n)
        pivot = _dot(col, ek)
        multipliers = ops.where(rows > k, col / ops.expand_dims(
            ops.where(ops.equal(pivot, 0), one, pivot), -1), zero)
        m = m - ops.expand_dims(multipliers, -1) * ops.expand_dims(
            ops.where(rows > k, row_k, zero), -2)
        in_column = ops.logical_and(below > k, ops.equal(rows, k))
        return k + 1, ops.where(in_column, ops.expand_dims(multipliers, -1), m), perm

    start_perm = ops.cast(rows, idx_type) + ops.cast(ops.reduce_sum(_batch_zeros(a), -1),
                                                     idx_type)
    _, m, perm = _loop(n, body,
                            (ops.cast(0, dtypes.int32), a, start_perm))
    return Lu(m, perm)


def cholesky(input, name=None):  # noqa: A002
    """The lower-triangular L with L @ L^T = input, for each symmetric positive-definite
    matrix (tf.linalg.cholesky); only the lower triangle of `input` is read.

    Raises `em.InvalidArgumentError` ("Cholesky decomposition was not successful. ...")
    when a pivot is not positive (the matrix is not positive definite).

    Example:
      >>> import ember as em
      >>> em.linalg.cholesky(em.constant([[4.0, 2.0], [2.0, 2.0]])).numpy().tolist()
      [[2.0, 0.0], [1.0, 1.0]]
    """
    del name
    a, n, _ = _matrix(input, "cholesky")
    rows = ops.range(n)

    def body(k, low, ok):
        v = _column(a, k, n) - _row_times(_row(low, k, n), low, True)
        d = ops.reduce_sum(v * _unit(n, k, a.dtype), axis=-1)
        positive = ops.greater(d, 0)
        ok = ops.logical_and(ok, ops.reduce_all(positive))
        root = ops.sqrt(ops.where(positive, d, ops.cast(1, a.dtype)))
        new = ops.where(rows >= k, v / ops.expand_dims(root, -1), ops.cast(0, a.dtype))
        return k + 1, low + ops.expand_dims(new, -1) * _unit(n, k, a.dtype), ok

    start = (ops.cast(0, dtypes.int32), ops.zeros_like(a), ops.equal(0, 0))
    _, low, ok = _loop(n, body, start)
    assert_true(ok, NOT_CHOLESKY)
    return low


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """X with `matrix @ X = rhs` for lower (or upper) triangular matrices
    (tf.linalg.triangular_solve); the other triangle of `matrix` is not read. `adjoint`
    solves with the adjoint (for real dtypes, the transpose). Batch dims broadcast. As in
    TensorFlow, a zero on the diagonal is not checked (the result has inf/nan).

    Example:
      >>> import ember as em
      >>> em.linalg.triangular_solve(em.constant([[2.0, 0.0], [1.0, 1.0]]),
      ...                            em.constant([[2.0], [3.0]])).numpy().tolist()
      [[1.0], [2.0]]
    """
    del name
    a, n, _ = _matrix(matrix, "triangular_solve")
    b = _rhs(a, rhs, "triangular_solve")
    if adjoint:
        a, lower = _swap_last(a), not lower
    a, b = a + _batch_zeros(b), b + _batch_zeros(a)
    rows = ops.range(n)

    def body(step, x):
        k = step if lower else n - 1 - step
        row = _row(a, k, n)
        off = ops.where(rows < k if lower else rows > k, row, ops.cast(0, a.dtype))
        diagonal = ops.reduce_sum(row * _unit(n, k, a.dtype), axis=-1)
        xk = (_row(b, k, n) - _row_times(off, x)) / ops.expand_dims(diagonal, -1)
        return step + 1, x + ops.expand_dims(_unit(n, k, a.dtype), -1) * \
            ops.expand_dims(xk, -2)

    _, x = _loop(n, body, (ops.cast(0, dtypes.int32), ops.zeros_like(b)))
    return x


def qr(input, full_matrices=False, name=None):  # noqa: A002
    """The QR decomposition of each matrix (tf.linalg.qr) by Householder reflections, with
    LAPACK's (and TensorFlow's and numpy's) signs: R's diagonal is -sign(pivot column)*norm,
    so it may be negative. Returns the namedtuple `(q, r)`: q [..., M, P], r [..., P, N]
    with P = min(M, N), or q [..., M, M] and r [..., M, N] when `full_matrices`.

    Example:
      >>> import ember as em
      >>> em.linalg.qr(em.constant([[3.0], [4.0]])).r.numpy().tolist()
      [[-5.0]]
    """
    del name
    a, m, n = _matrix(input, "qr", square=False)
    dtype = a.dtype
    rows, zero = ops.range(m), ops.cast(0, dtype)
    eye = ops.cast(ops.equal(ops.expand_dims(rows, 1), rows), dtype)

    def body(k, q, r):
        ek = _unit(m, k, dtype)
        x = ops.where(rows >= k, _column(r, k, n), zero)
        alpha = ops.reduce_sum(x * ek, axis=-1)
        tail = x - ops.expand_dims(alpha, -1) * ek
        tail_sq = ops.reduce_sum(tail * tail, axis=-1)
        norm = ops.sqrt(alpha * alpha + tail_sq)
        beta = ops.where(alpha >= 0, -norm, norm)
        trivial = ops.equal(tail_sq, 0)
        safe_beta = ops.where(trivial, ops.cast(1, dtype), beta)
        tau = ops.where(trivial, zero, (beta - alpha) / safe_beta)
        scale = ops.where(trivial, zero, 1 / (alpha - safe_beta))
        v = ek + tail * ops.expand_dims(scale, -1)
        tv = ops.expand_dims(tau, -1) * v
        r = r - ops.expand_dims(tv, -1) * ops.expand_dims(_row_times(v, r), -2)
        qv = _row_times(v, q, True)
        q = q - ops.expand_dims(ops.expand_dims(tau, -1) * qv, -1) * ops.expand_dims(v, -2)
        return k + 1, q, r

    steps = min(m, n)
    start = (ops.cast(0, dtypes.int32), eye + _batch_zeros(a), a)
    _, q, r = _loop(steps, body, start)
    upper = ops.less_equal(ops.expand_dims(rows, 1), ops.range(n))
    r = ops.where(upper, r, zero)
    if full_matrices or m == n:
        return Qr(q, r)
    return Qr(q[..., :steps], r[..., :steps, :])
