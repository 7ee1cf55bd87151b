"""`em.math`: math ops with tf.math's names and signatures (the ops are in
`ember.frontend`; this module only re-exports)."""

from ember.frontend.math_composites import (count_nonzero, is_inf, reduce_logsumexp,
                                            reduce_std, reduce_variance, squared_difference,
                                            truncatediv, xlogy)
from ember.frontend.nn_composites import log_sigmoid, softplus
from ember.frontend.segment_ops import (bincount, segment_max, segment_mean, segment_min,
                                       segment_prod, segment_sum, unsorted_segment_max,
                                       unsorted_segment_mean, unsorted_segment_min,
                                       unsorted_segment_prod, unsorted_segment_sum)
from ember.frontend.scan_ops import cumprod, cumsum, digamma, lgamma
from ember.frontend.sort_ops import top_k
from ember.frontend.complex_ops import angle, conj, imag, real
from ember.frontend.ops import (abs, add, ceil, cos, divide, equal, erf, erfc, exp, expm1, floor,
                                floordiv, floormod, greater, greater_equal, is_finite, is_nan, less,
                                less_equal, log, log1p, log_softmax, logical_and, logical_not,
                                logical_or, logical_xor, maximum, minimum, multiply, negative,
                                not_equal, pow, reduce_all, reduce_any, reduce_max,
                                reduce_mean, reduce_min, reduce_prod, reduce_sum, round, rsqrt,
                                sigmoid, sign, sin, sqrt, square, subtract, tanh, truediv)

from ember.frontend.ops import acos, acosh, asin, asinh, atan, atan2, atanh, cosh, sinh, tan
from ember.frontend.norms import reduce_euclidean_norm
from ember.frontend.misc_composites import add_n, cumulative_logsumexp
from ember.frontend.math_extras import (confusion_matrix, divide_no_nan, in_top_k,
                                        invert_permutation, polyval, reciprocal, xlog1py)

__all__ = ["abs", "add", "ceil", "cos", "count_nonzero", "divide", "equal", "erf", "erfc", "exp",
           "expm1",
           "floor", "floordiv", "floormod", "greater", "greater_equal", "is_finite", "is_inf",
           "is_nan", "less", "less_equal", "log", "log1p", "log_sigmoid", "log_softmax",
           "logical_and",
           "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply",
           "negative", "not_equal", "pow", "reduce_all", "reduce_any", "reduce_logsumexp",
           "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_std",
           "reduce_sum", "reduce_variance", "round", "rsqrt", "sigmoid", "sign", "sin",
           "softplus", "sqrt", "square", "squared_difference", "subtract", "tanh", "truediv",
           "truncatediv", "xlogy"]
__all__ += ["bincount", "segment_max", "segment_mean", "segment_min", "segment_prod",
            "segment_sum", "unsorted_segment_max", "unsorted_segment_mean",
            "unsorted_segment_min", "unsorted_segment_prod", "unsorted_segment_sum"]
__all__ += ["cumprod", "cumsum", "digamma", "lgamma"]
__all__ += ["top_k"]
__all__ += ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cosh", "sinh", "tan"]
__all__ += ["angle", "conj", "imag", "real"]
__all__ += ["add_n", "cumulative_logsumexp", "reduce_euclidean_norm"]
__all__ += ["confusion_matrix", "divide_no_nan", "in_top_k", "invert_permutation", "polyval",
            "reciprocal", "xlog1py"]
