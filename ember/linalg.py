"""`em.linalg`: linear algebra with tf.linalg's names and signatures (the functions are in
`ember.frontend`; this module only re-exports)."""

from ember.frontend.array_composites import (band_part, diag, diag_part, eye, matvec, norm,
                                             trace)
from ember.frontend.ops import matmul, transpose

__all__ = ["band_part", "diag", "diag_part", "eye", "matmul", "matvec", "norm", "trace",
           "transpose"]
