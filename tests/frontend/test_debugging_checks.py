"""em.debugging's checks of closeness, types, ranks and shapes (tf.debugging's assert_near,
assert_type, assert_integer, assert_scalar, assert_rank_at_least, assert_rank_in and
assert_shapes): what static types decide raises at once, the rest when compiled code runs."""

import numpy as np
import pytest

import ember as em

d = em.debugging
ANY2 = [em.TensorSpec([None, None], em.float32)] * 2


def test_assert_near_uses_ten_epsilons_and_raises_eagerly_and_compiled():
    d.assert_near(em.constant([1.0, 2.0]), [1.0, 2.000001])  # within 10 eps (1.2e-6)
    d.assert_near(em.constant([1.0]), [1.5], atol=0.6)
    with pytest.raises(em.errors.AssertionFailedError, match="not equal to tolerance"):
        d.assert_near(em.constant([1.0, 2.0]), [1.0, 2.001])
    f = em.function(lambda x, y: (d.assert_near(x, y, rtol=0.1, message="close"), x + 0)[1])
    f(em.constant([10.0]), em.constant([10.5]))
    with pytest.raises(em.errors.AssertionFailedError, match="close: x and y not equal"):
        f(em.constant([10.0]), em.constant([12.0]))
    with pytest.raises(TypeError, match="floating-point"):
        d.assert_near(em.constant([1]), [1])


def test_static_checks_of_type_integer_scalar_and_rank():
    x = em.zeros([2, 3])
    d.assert_type(x, em.float32)
    d.assert_integer(em.constant([1]))
    assert d.assert_scalar(em.constant(1.0)).shape == ()
    d.assert_rank_at_least(x, 2)
    d.assert_rank_in(x, [1, 2])
    with pytest.raises(TypeError, match="must be of type int32, got float32"):
        d.assert_type(x, em.int32)
    with pytest.raises(TypeError, match="expected an integer tensor"):
        d.assert_integer(x)
    with pytest.raises(ValueError, match=r"expected a scalar, got shape \(2, 3\)"):
        d.assert_scalar(x)
    with pytest.raises(ValueError, match="must have rank at least 3"):
        d.assert_rank_at_least(x, 3)
    with pytest.raises(ValueError, match=r"must have rank in \[0, 1\]"):
        d.assert_rank_in(x, [0, 1])


def test_a_rank_unknown_when_traced_is_checked_when_the_code_runs():
    f = em.function(lambda x: (d.assert_rank_in(x, [1, 2]), em.size(x))[1],
                    input_signature=[em.TensorSpec(None, em.float32)])
    assert int(f(em.ones([2, 2]))) == 4
    with pytest.raises(em.errors.AssertionFailedError, match=r"must have rank in \[1, 2\]"):
        f(em.ones([2, 2, 2]))


def test_assert_shapes_as_the_tensorflow_example():
    x, y = em.zeros([10, 3]), em.ones([10, 7])
    param, scalar = em.Variable([1.0, 2.0, 3.0]), 1.0
    d.assert_shapes([(x, ("N", "Q")), (y, ("N", "D")), (param, ("Q",)), (scalar, ())])
    d.assert_shapes([(x, (..., "Q")), (param, ("*", 3))])
    with pytest.raises(ValueError, match=r"tensor 1 \(shape \(10, 7\)\) dimension 1 must have "
                                         r"size 3, the size of tensor 0 .* \(symbol 'D'\); "
                                         r"it has 7"):
        d.assert_shapes([(x, ("N", "D")), (y, ("N", "D"))])
    with pytest.raises(ValueError, match="must have rank 3"):
        d.assert_shapes([(x, ("N", "Q", "R"))])
    with pytest.raises(ValueError, match="dimension 0 must have size 4; it has 10"):
        d.assert_shapes([(x, (4, None))])


def test_assert_shapes_checks_unknown_dims_when_the_code_runs():
    @em.function(input_signature=ANY2)
    def f(a, b):
        d.assert_shapes([(a, ("N", "Q")), (b, ("N", 2))])
        return a

    assert f(em.ones([3, 4]), em.ones([3, 2])).shape == (3, 4)
    with pytest.raises(em.errors.AssertionFailedError,
                       match=r"tensor 1 .* dimension 0 must have the size of tensor 0 .* "
                             r"\(symbol 'N'\)"):
        f(em.ones([3, 4]), em.ones([2, 2]))
    with pytest.raises(em.errors.AssertionFailedError, match="dimension 1 must have size 2"):
        f(em.ones([3, 4]), em.ones([3, 5]))


@pytest.mark.parametrize("bad, error", [([(np.ones(2),)], "pairs"),
                                        ([(np.ones(2), (1.5,))], "size entry")])
def test_assert_shapes_rejects_malformed_specs(bad, error):
    with pytest.raises(TypeError, match=error):
        d.assert_shapes(bad)
