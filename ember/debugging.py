"""`em.debugging`: checks with tf.debugging's names, raising eagerly at once and in compiled
code when it runs (`ember.assert` ops; the functions are in `ember.frontend`), and the switch
for dropping Ember's frames from tracebacks (runtime/traceback_filter.py)."""

from ember.frontend.debugging_checks import (
    assert_integer, assert_near, assert_rank_at_least, assert_rank_in, assert_scalar,
    assert_shapes, assert_type)
from ember.frontend.effects import assert_true
from ember.frontend.math_composites import (
    assert_all_finite, assert_equal, assert_greater, assert_greater_equal, assert_less,
    assert_less_equal, assert_negative, assert_non_negative, assert_non_positive,
    assert_none_equal, assert_positive, assert_rank, check_numerics)
from ember.runtime.traceback_filter import (disable_traceback_filtering,
                                            enable_traceback_filtering,
                                            is_traceback_filtering_enabled)

__all__ = ["assert_all_finite", "assert_equal", "assert_greater", "assert_greater_equal",
           "assert_integer", "assert_less", "assert_less_equal", "assert_near",
           "assert_negative", "assert_non_negative", "assert_non_positive", "assert_none_equal",
           "assert_positive", "assert_rank", "assert_rank_at_least", "assert_rank_in",
           "assert_scalar", "assert_shapes", "assert_true", "assert_type", "check_numerics",
           "disable_traceback_filtering", "enable_traceback_filtering",
           "is_traceback_filtering_enabled"]
