"""`em.linalg`: linear algebra with tf.linalg's names and signatures (the functions are in
`ember.frontend`; this module only re-exports)."""

from ember.frontend.array_composites import eye
from ember.frontend.linalg_composites import (band_part, cross, diag, diag_part, logdet, matvec,
                                             trace)
from ember.frontend.ops import matmul, transpose
from ember.frontend.einsum import einsum, tensordot
from ember.frontend.linalg_solvers import lu, qr
from ember.frontend.linalg_gradients import (cholesky, det, inv, slogdet, solve,
                                             triangular_solve)
from ember.frontend.linalg_least_squares import lstsq, matrix_rank, pinv
from ember.frontend.linalg_spectral import eigh, eigvalsh, svd
from ember.frontend.norms import norm
from ember.frontend.misc_composites import adjoint, global_norm, matrix_transpose

__all__ = ["band_part", "diag", "diag_part", "eye", "matmul", "matvec", "norm", "trace",
           "transpose",
           "einsum", "tensordot", "cholesky", "det", "inv", "lu", "qr", "slogdet", "solve",
           "triangular_solve"]
__all__ += ["adjoint", "matrix_transpose"]
__all__ += ["cross", "logdet"]
__all__ += ["global_norm"]
__all__ += ["eigh", "eigvalsh", "svd", "pinv", "lstsq", "matrix_rank"]
