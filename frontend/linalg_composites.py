"""em.linalg's compositions of other ops, as in TensorFlow's Python layer: `matvec`, `diag`,
`diag_part`, `trace`, `band_part`, `logdet`, `cross` (`norm` is in norms.py). `diag` and
`diag_part` take `?` dims; the rank must be known while tracing."""

from __future__ import annotations

from ember.frontend import ops
from ember.frontend.array_composites import _rank, eye, size_of
from ember.frontend.linalg_solvers import described
from ember.frontend.tensor import convert_to_tensor



def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    """a @ b for a (batch of) matrices and vectors."""
    product = ops.matmul(a, ops.expand_dims(b, -1), transpose_a=transpose_a or adjoint_a)
    return ops.squeeze(product, [-1])


def diag(diagonal, name=None):
    """The square matrix with `diagonal` on its diagonal (batched over leading dims; the
    size may be a `?` dim)."""
    d = convert_to_tensor(diagonal)
    if _rank(d, "linalg.diag") < 1:
        raise ValueError(f"em.linalg.diag needs a tensor of rank >= 1, got {described(d)}")
    return ops.expand_dims(d, -1) * eye(size_of(d, -1), dtype=d.dtype)


def diag_part(input, name=None):  # noqa: A002
    """The main diagonal of a (batch of) matrices (their sizes may be `?` dims)."""
    x = convert_to_tensor(input)
    if _rank(x, "linalg.diag_part") < 2:
        raise ValueError(f"em.linalg.diag_part needs a tensor of rank >= 2, got "
                         f"{described(x)}")
    rows, cols = size_of(x, -2), size_of(x, -1)
    if isinstance(rows, int) and isinstance(cols, int):
        k = min(rows, cols)
        square = x[..., :k, :k] if (rows, cols) != (k, k) else x
    else:
        k = ops.minimum(rows, cols)
        square = x[..., :k, :k]
    return ops.reduce_sum(square * eye(k, dtype=x.dtype), axis=-1)


def trace(x, name=None):
    """The sum of the main diagonal of a (batch of) matrices."""
    return ops.reduce_sum(diag_part(x), axis=-1)


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002
    """Keeps the elements within `num_lower` below and `num_upper` above the diagonal
    (negative: all of them)."""
    x = convert_to_tensor(input)
    rows = ops.expand_dims(ops.range(ops.shape(x)[-2]), 1)
    cols = ops.range(ops.shape(x)[-1])
    keep = ops.logical_and(
        (rows - cols <= num_lower) if num_lower >= 0 else ops.equal(rows, rows),
        (cols - rows <= num_upper) if num_upper >= 0 else ops.equal(cols, cols))
    return ops.where(keep, x, ops.zeros_like(x))



def logdet(matrix, name=None):
    """log(det(matrix)) of a (batch of) Hermitian positive-definite matrices, as twice the
    sum of the logs of its Cholesky factor's diagonal (no overflow where det would)."""
    from ember.frontend.linalg_gradients import cholesky
    factor = cholesky(matrix)
    return 2.0 * ops.reduce_sum(ops.log(diag_part(factor)), axis=-1)


def cross(a, b, name=None):
    """The cross product of (batches of) 3-vectors, along the last dim (broadcasting the
    others)."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    for v in (a, b):
        if v.shape.rank is not None and v.shape[-1] not in (3, None) or v.shape.rank == 0:
            raise ValueError(f"em.linalg.cross takes vectors of 3 along the last dim, got "
                             f"shape {v.shape}")
    a0, a1, a2 = (a[..., i] for i in (0, 1, 2))
    b0, b1, b2 = (b[..., i] for i in (0, 1, 2))
    return ops.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
