"""em.debugging's comparisons, signs and rank (tf.debugging's names): raised eagerly at
once, and by compiled code when it runs, with the same message."""

import numpy as np
import pytest

import ember as em

d = em.debugging
X, Y = np.array([1, 2], np.int32), np.array([2, 3], np.int32)

PASSING = [(d.assert_greater, (Y, X)), (d.assert_greater_equal, (X, X)),
           (d.assert_less, (X, Y)), (d.assert_less_equal, (X, X)),
           (d.assert_equal, (X, X)), (d.assert_none_equal, (X, Y)),
           (d.assert_positive, (X,)), (d.assert_negative, (-X,)),
           (d.assert_non_negative, (X - 1,)), (d.assert_non_positive, (1 - X,))]
FAILING = [(d.assert_greater, (X, Y), "x > y"), (d.assert_greater_equal, (X, Y), "x >= y"),
           (d.assert_less, (Y, X), "x < y"), (d.assert_less_equal, (Y, X), "x <= y"),
           (d.assert_equal, (X, Y), "x == y"), (d.assert_none_equal, (X, X), "x != y"),
           (d.assert_positive, (X - 1,), "x > 0"), (d.assert_negative, (X,), "x < 0"),
           (d.assert_non_negative, (-X,), "x >= 0"), (d.assert_non_positive, (X,), "x <= 0")]


@pytest.mark.parametrize("check, args", PASSING, ids=lambda v: getattr(v, "__name__", ""))
def test_what_holds_passes_eagerly_and_compiled(check, args):
    check(*args)
    f = em.function(lambda *a: (check(*a), a[0] + 0)[1])
    np.testing.assert_array_equal(f(*args).numpy(), args[0])


@pytest.mark.parametrize("check, args, text", FAILING, ids=lambda v: getattr(v, "__name__", ""))
def test_what_does_not_hold_raises_eagerly_and_compiled(check, args, text):
    with pytest.raises(em.errors.AssertionFailedError, match=f"checked: {text} did not hold"):
        check(*args, message="checked")
    f = em.function(lambda *a: (check(*a, message="checked"), a[0] + 0)[1])
    with pytest.raises(em.errors.AssertionFailedError, match=f"checked: {text} did not hold"):
        f(*args)


def test_rank_is_checked_at_once_where_known_and_at_run_time_where_not():
    d.assert_rank(X, 1)
    with pytest.raises(ValueError, match=r"must have rank 2, but its shape is \(2,\) "
                                         r"\(rank 1\)"):
        d.assert_rank(X, 2)

    @em.function(input_signature=[em.TensorSpec(None, em.int32)])
    def f(v):
        d.assert_rank(v, 1, "a vector")
        return v + 1
    np.testing.assert_array_equal(f(X).numpy(), X + 1)
    with pytest.raises(em.errors.AssertionFailedError, match="a vector: the tensor must "
                                                             "have rank 1"):
        f(np.ones((1, 1), np.int32))
    with pytest.raises(TypeError, match="rank must be a Python int"):
        d.assert_rank(X, 1.0)
