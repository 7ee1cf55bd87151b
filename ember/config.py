"""`em.config`: process-wide settings (TensorFlow's tf.config names)."""

from ember.runtime.config import (functions_run_eagerly, run_functions_eagerly,
                                  set_pass_verification, verify_passes)

__all__ = ["functions_run_eagerly", "run_functions_eagerly", "set_pass_verification",
           "verify_passes"]
