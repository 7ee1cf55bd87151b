"""`em.math` functions, clipping and `em.debugging` checks that are compositions of other
ops, as in TensorFlow's Python layer. The checks are `ember.assert` ops: eagerly they raise
at once, compiled they raise the same error when the code runs."""

from __future__ import annotations

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.effects import assert_true
from ember.frontend.tensor import convert_to_tensor


def squared_difference(x, y, name=None):
    """(x - y) ** 2 elementwise."""
    return ops.square(ops.subtract(x, y))


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x), axis)), computed around the maximum (no overflow)."""
    x = convert_to_tensor(input_tensor)
    top = ops.reduce_max(x, axis=axis, keepdims=True)
    top = ops.where(ops.is_finite(top), top, ops.zeros_like(top))
    out = ops.log(ops.reduce_sum(ops.exp(x - top), axis=axis, keepdims=True)) + top
    if keepdims:
        return out
    return ops.reshape(out, ops.shape(ops.reduce_sum(x, axis=axis)))


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """The variance over `axis` (the mean of squared deviations, as tf.math)."""
    x = convert_to_tensor(input_tensor)
    mean = ops.reduce_mean(x, axis=axis, keepdims=True)
    return ops.reduce_mean(ops.square(x - mean), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """The standard deviation over `axis`."""
    return ops.sqrt(reduce_variance(input_tensor, axis, keepdims))


def count_nonzero(input, axis=None, keepdims=False, dtype=dtypes.int64, name=None):  # noqa: A002
    """How many elements are not zero (not False, not "")."""
    x = convert_to_tensor(input)
    nonzero = ops.not_equal(x, ops.zeros_like(x))
    return ops.reduce_sum(ops.cast(nonzero, dtype), axis=axis, keepdims=keepdims)


def xlogy(x, y, name=None):
    """x * log(y), and 0 where x is 0 (whatever y)."""
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    zero = ops.zeros_like(x * y)
    return ops.where(ops.equal(x, zero), zero, x * ops.log(y))


def is_inf(x, name=None):
    """Whether each element is +inf or -inf."""
    x = convert_to_tensor(x)
    return ops.logical_and(ops.logical_not(ops.is_finite(x)),
                           ops.logical_not(ops.is_nan(x)))


def truncatediv(x, y, name=None):
    """Integer division rounding toward zero (C's), for integer tensors; / for floats."""
    x, y = convert_to_tensor(x), convert_to_tensor(y)
    if not x.dtype.is_integer:
        return ops.truediv(x, y)
    q = ops.floordiv(x, y)
    inexact = ops.not_equal(q * y, x)
    signs_differ = ops.not_equal(x < ops.zeros_like(x), y < ops.zeros_like(y))
    return ops.where(ops.logical_and(inexact, signs_differ), q + ops.ones_like(q), q)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """min(max(t, clip_value_min), clip_value_max)."""
    t = convert_to_tensor(t)
    low = convert_to_tensor(clip_value_min, dtype=t.dtype)
    high = convert_to_tensor(clip_value_max, dtype=t.dtype)
    return ops.minimum(ops.maximum(t, low), high)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t scaled so that its L2 norm over `axes` is at most clip_norm."""
    t = convert_to_tensor(t)
    norm = ops.sqrt(ops.reduce_sum(ops.square(t), axis=axes, keepdims=True))
    clip = convert_to_tensor(clip_norm, dtype=t.dtype)
    return t * clip / ops.maximum(norm, clip)


# -- em.debugging ----------------------------------------------------------------------------


def _message(message, default: str) -> str:
    return default if message is None else f"{message}: {default}"


def _comparison(name: str, compare, relation: str):
    """tf.debugging's `assert_<name>(x, y)`: raises (eagerly at once, in compiled code when
    it runs) unless `x <relation> y` holds everywhere (broadcasting)."""
    def check(x, y, message=None, summarize=None, name=None):
        assert_true(ops.reduce_all(compare(x, y)),
                    _message(message, f"x {relation} y did not hold"))
    check.__name__ = check.__qualname__ = f"assert_{name}"
    check.__doc__ = f"Raises (at run time in compiled code) unless x {relation} y everywhere."
    return check


def _sign(name: str, compare, relation: str):
    """tf.debugging's `assert_<name>(x)`: `x <relation> 0` everywhere."""
    def check(x, message=None, summarize=None, name=None):
        x = convert_to_tensor(x)
        assert_true(ops.reduce_all(compare(x, ops.zeros_like(x))),
                    _message(message, f"x {relation} 0 did not hold"))
    check.__name__ = check.__qualname__ = f"assert_{name}"
    check.__doc__ = f"Raises (at run time in compiled code) unless x {relation} 0 everywhere."
    return check


assert_equal = _comparison("equal", ops.equal, "==")
assert_none_equal = _comparison("none_equal", ops.not_equal, "!=")
assert_less = _comparison("less", ops.less, "<")
assert_less_equal = _comparison("less_equal", ops.less_equal, "<=")
assert_greater = _comparison("greater", ops.greater, ">")
assert_greater_equal = _comparison("greater_equal", ops.greater_equal, ">=")
assert_positive = _sign("positive", ops.greater, ">")
assert_negative = _sign("negative", ops.less, "<")
assert_non_negative = _sign("non_negative", ops.greater_equal, ">=")
assert_non_positive = _sign("non_positive", ops.less_equal, "<=")


def assert_rank(x, rank, message=None, name=None):
    """tf.debugging.assert_rank: ValueError at once where `x`'s rank is known and is not
    `rank`; else raises (at run time in compiled code) unless it is."""
    x = convert_to_tensor(x)
    if isinstance(rank, bool) or not isinstance(rank, int):
        raise TypeError(f"em.debugging.assert_rank: rank must be a Python int, got {rank!r}")
    known = x.shape.rank
    if known is not None:
        if known != rank:
            raise ValueError(_message(message, f"the tensor must have rank {rank}, but its "
                                               f"shape is {x.shape} (rank {known})"))
        return
    assert_true(ops.equal(ops.rank(x), rank),
                _message(message, f"the tensor must have rank {rank}"))


def assert_all_finite(t, message, name=None):
    """`t`, after checking that it holds no NaN or infinity."""
    t = convert_to_tensor(t)
    assert_true(ops.reduce_all(ops.is_finite(t)), _message(message, "Tensor had Inf or NaN "
                                                                     "values"))
    return t


def check_numerics(tensor, message, name=None):
    """`tensor`, after checking that it holds no NaN or infinity (tf.debugging's)."""
    return assert_all_finite(tensor, message)
