"""`em.debugging`: checks with tf.debugging's names, raising eagerly at once and in compiled
code when it runs (`ember.assert` ops; the functions are in `ember.frontend`)."""

from ember.frontend.effects import assert_true
from ember.frontend.math_composites import (assert_all_finite, assert_equal, assert_less,
                                            check_numerics)

__all__ = ["assert_all_finite", "assert_equal", "assert_less", "assert_true",
           "check_numerics"]
