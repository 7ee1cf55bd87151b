"""`em.experimental.dlpack`: zero-copy exchange with other array libraries, tf.experimental
.dlpack's names (the code is in `ember.frontend.dlpack`, and for CUDA buffers in
`ember.runtime.dlpack_cuda`)."""

from ember.frontend.dlpack import to_dlpack
from ember.runtime.dlpack_cuda import from_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
