"""`em.experimental`: TensorFlow's tf.experimental names (this package only re-exports)."""

from ember.experimental import dlpack

__all__ = ["dlpack"]
