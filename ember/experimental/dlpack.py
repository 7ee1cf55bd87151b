"""`em.experimental.dlpack`: zero-copy exchange with other array libraries, tf.experimental
.dlpack's names (the code is in `ember.frontend.dlpack`)."""

from ember.frontend.dlpack import from_dlpack, to_dlpack

__all__ = ["from_dlpack", "to_dlpack"]
