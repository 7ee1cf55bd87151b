"""em.linalg's spectral factorisations, `eigh`, `eigvalsh` and `svd`, with TensorFlow's
closed-form gradients (linalg_grad.py: SelfAdjointEigV2Grad and SvdGrad) through
`em.custom_gradient`; the factorisations are the Jacobi loops of linalg_jacobi.py.

As in TensorFlow the gradients are infinite-like (1/(x^2 + 1e-20) terms) where eigenvalues
or singular values repeat: the vectors are then defined only up to a rotation.
"""

from __future__ import annotations

from ember.frontend import linalg_jacobi as J
from ember.frontend import ops
from ember.frontend.autodiff.custom import custom_gradient
from ember.frontend.autodiff.registry import NoGradientError
from ember.frontend.linalg_solvers import _matrix, _swap_last, qr

__all__ = ["eigh", "eigvalsh", "svd"]


def _eye(n: int, dtype):
    return J._eye(n, dtype)


def _diag(v):
    """The diagonal matrices (..., n, n) of the vectors v (..., n)."""
    return ops.expand_dims(v, -1) * _eye(v.shape[-1], v.dtype)


def _safe_reciprocal(x, epsilon=1e-20):
    return x / (x * x + epsilon)


def _off_diagonal_reciprocals(values):
    """f[i, j] = 1 / (values[j] - values[i]) off the diagonal, 0 on it (safely)."""
    n = values.shape[-1]
    gaps = ops.expand_dims(values, -2) - ops.expand_dims(values, -1)
    return _safe_reciprocal(gaps) * (1 - _eye(n, values.dtype))


def _lower_symmetric(a):
    """The symmetric matrices whose lower triangles are a's (eigh reads only those)."""
    n = a.shape[-1]
    lower = ops.greater_equal(ops.expand_dims(ops.range(n), 1), ops.range(n))
    return ops.where(lower, a, _swap_last(a))


def _symmetric_gradient(grad_a):
    """TensorFlow's last step: the forward op reads the lower triangle only."""
    n = grad_a.shape[-1]
    lower = ops.greater_equal(ops.expand_dims(ops.range(n), 1), ops.range(n))
    g = ops.where(lower, grad_a + _swap_last(grad_a), ops.zeros_like(grad_a))
    return g - 0.5 * g * _eye(n, grad_a.dtype)


def eigh(tensor, name=None):
    """The eigenvalues (ascending) and eigenvectors (columns) of each self-adjoint matrix
    (tf.linalg.eigh), by cyclic Jacobi rotations; only the lower triangle is read.

    Returns the tuple `(e, v)`: e [..., N], v [..., N, N] with `tensor @ v = v * e`; each
    eigenvector's sign (within a repeated eigenvalue, the basis) is not specified, as in
    TensorFlow. float32 and float64; the matrix dims must be known while tracing.

    Example:
      >>> import ember as em
      >>> e, v = em.linalg.eigh(em.constant([[2.0, 1.0], [1.0, 2.0]]))
      >>> e.numpy().round(5).tolist()
      [1.0, 3.0]
    """
    del name
    a, _, _ = _matrix(tensor, "eigh")

    @custom_gradient
    def forward(x):
        e, v = J.symmetric_eigen(_lower_symmetric(x), vectors=True)

        def grad(ct_e, ct_v):
            inner = _diag(ct_e) + _off_diagonal_reciprocals(e) * ops.matmul(
                v, ct_v, transpose_a=True)
            return _symmetric_gradient(ops.matmul(v, ops.matmul(inner, v, transpose_b=True)))
        return (e, v), grad
    return forward(a)


def eigvalsh(tensor, name=None):
    """The eigenvalues (ascending) of each self-adjoint matrix (tf.linalg.eigvalsh); only
    the lower triangle is read. Its gradient is v diag(ct) v^T, as TensorFlow's.

    Example:
      >>> import ember as em
      >>> em.linalg.eigvalsh(em.constant([[2.0, 0.0], [0.0, -1.0]])).numpy().tolist()
      [-1.0, 2.0]
    """
    del name
    a, _, _ = _matrix(tensor, "eigvalsh")

    @custom_gradient
    def forward(x):
        e, _ = J.symmetric_eigen(_lower_symmetric(x), vectors=False)

        def grad(ct):
            _, v = J.symmetric_eigen(_lower_symmetric(x), vectors=True)
            return _symmetric_gradient(ops.matmul(v, ops.matmul(_diag(ct), v,
                                                                transpose_b=True)))
        return e, grad
    return forward(a)


def _orthonormal(u, full: bool):
    """u (..., m, k), orthonormal columns then zero ones (s = 0), as an exactly orthonormal
    basis: Householder QR keeps the columns (up to R's signs, undone here) and completes
    the zero ones, and all m columns when `full`."""
    m, k = u.shape[-2], u.shape[-1]
    q, r = qr(u, full_matrices=full)
    diagonal = ops.reduce_sum(r[..., :k, :k] * _eye(k, u.dtype), axis=-1)
    signs = ops.where(ops.less(diagonal, 0), -ops.ones_like(diagonal),
                      ops.ones_like(diagonal))
    if full and m > k:
        signs = ops.concat([signs, ops.ones_like(q[..., 0, k:])], axis=-1)
    return q * ops.expand_dims(signs, -2)


def _svd(a, full: bool, vectors: bool):
    """(s, u, v) of a (..., m, n), u and v None unless `vectors`."""
    m, n = a.shape[-2], a.shape[-1]
    if m >= n:
        s, u, v = J.one_sided_svd(a, vectors)
    else:
        s, v, u = J.one_sided_svd(_swap_last(a), vectors)
    if not vectors:
        return s, None, None
    if m >= n:
        return s, _orthonormal(u, full), v
    return s, u, _orthonormal(v, full)


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """The singular value decomposition of each matrix (tf.linalg.svd), by one-sided
    Jacobi rotations: `tensor = u @ diag(s) @ adjoint(v)`.

    Args:
      tensor: [..., M, N] float32 or float64 (matrix dims known while tracing).
      full_matrices: u is [..., M, M] and v [..., N, N]; else [..., M, P] and [..., N, P]
        with P = min(M, N).
      compute_uv: when False only s is computed and returned.

    Returns:
      s [..., P] in descending order, or the tuple `(s, u, v)` in TensorFlow's order
      (note: v, not its adjoint). Singular vectors' signs are not specified.

    Raises:
      em.errors.NoGradientError: differentiating u or v with `full_matrices=True` and |M - N| > 1
        (TensorFlow has no formula either); use full_matrices=False.

    Example:
      >>> import ember as em
      >>> em.linalg.svd(em.constant([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False
      ...               ).numpy().tolist()
      [4.0, 3.0]
    """
    del name
    a, m, n = _matrix(tensor, "svd", square=False)
    if not compute_uv:
        @custom_gradient
        def values(x):
            s, _, _ = _svd(x, full=False, vectors=False)

            def grad(ct):
                _, u, v = _svd(x, full=False, vectors=True)
                return ops.matmul(u, ops.matmul(_diag(ct), v, transpose_b=True))
            return s, grad
        return values(a)

    @custom_gradient
    def forward(x):
        s, u, v = _svd(x, full=bool(full_matrices), vectors=True)

        def grad(ct_s, ct_u, ct_v):
            if full_matrices and abs(m - n) > 1:
                raise NoGradientError(
                    f"em.linalg.svd: no gradient of u and v with full_matrices=True for "
                    f"{m}x{n} matrices (dims differing by more than 1; TensorFlow has none "
                    f"either): call em.linalg.svd(x, full_matrices=False)")
            return _svd_gradient(s, u, v, ct_s, ct_u, ct_v, m, n, bool(full_matrices))
        return (s, u, v), grad
    return forward(a)


def _svd_gradient(s, u, v, grad_s, grad_u, grad_v, m: int, n: int, full: bool):
    """TensorFlow's SvdGrad for real matrices (Giles 2008; Townsend 2016 for the thin
    case), written for m <= n: taller matrices use that of the adjoint."""
    transposed = m > n
    if transposed:
        m, n, u, v, grad_u, grad_v = n, m, v, u, grad_v, grad_u
    s_mat = _diag(s)
    f = _off_diagonal_reciprocals(s * s)
    v1, grad_v1 = v[..., :, :m], grad_v[..., :, :m]
    f_u = f * ops.matmul(u, grad_u, transpose_a=True)
    f_v = f * ops.matmul(v1, grad_v1, transpose_a=True)
    term1_nouv = _diag(grad_s) + ops.matmul(f_u + _swap_last(f_u), s_mat) + \
        ops.matmul(s_mat, f_v + _swap_last(f_v))
    grad_a = ops.matmul(u, ops.matmul(term1_nouv, v1, transpose_b=True))
    if m != n:
        gv1t = _swap_last(grad_v1)
        term2_nous = gv1t - ops.matmul(ops.matmul(gv1t, v1), v1, transpose_b=True)
        if full:
            v2, grad_v2 = v[..., :, m:n], grad_v[..., :, m:n]
            term2_nous = term2_nous - ops.matmul(ops.matmul(v1, grad_v2, transpose_a=True),
                                                 v2, transpose_b=True)
        u_s_inv = ops.matmul(u, _diag(_safe_reciprocal(s)))
        grad_a = grad_a + ops.matmul(u_s_inv, term2_nous)
    return _swap_last(grad_a) if transposed else grad_a

