"""A numpy array on the left of an operator with an Ember tensor or Variable gives an Ember
tensor (numpy defers to the reflected operator), eagerly and inside a compiled function."""

import operator
import warnings

import numpy as np
import pytest

import ember as em

A = np.array([[1, 2], [3, 4]], np.int32)
B = np.array([[2, 1], [1, 2]], np.int32)
P = np.array([[True, False], [True, True]])
Q = np.array([[True, True], [False, True]])

NUMERIC = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
           operator.pow, operator.matmul, operator.lt, operator.le, operator.gt, operator.ge]
LOGICAL = [operator.and_, operator.or_, operator.xor]


def _cases():
    for op in NUMERIC:
        yield op, A, B
    yield operator.truediv, A.astype(np.float32), B.astype(np.float32)
    for op in LOGICAL:
        yield op, P, Q


CASES = list(_cases())
IDS = [op.__name__ for op, _, _ in CASES]


@pytest.mark.parametrize("wrap", [em.constant, em.Variable], ids=["Tensor", "Variable"])
@pytest.mark.parametrize("op,left,right", CASES, ids=IDS)
def test_ndarray_on_the_left_gives_an_ember_tensor_eagerly(op, left, right, wrap):
    out = op(left, wrap(right))
    assert isinstance(out, em.Tensor)
    np.testing.assert_array_equal(out.numpy(), op(left, right))


@pytest.mark.parametrize("op,left,right", CASES, ids=IDS)
def test_ndarray_on_the_left_of_a_variable_compiles(op, left, right):
    v = em.Variable(right)

    @em.function
    def f(x):
        return op(left, v), op(x, v), op(left, x)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outs = f(em.constant(left))
    for out in outs:
        assert isinstance(out, em.Tensor)
        np.testing.assert_array_equal(out.numpy(), op(left, right) if out is not outs[2]
                                      else op(left, left))


@pytest.mark.parametrize("wrap", [em.constant, em.Variable], ids=["Tensor", "Variable"])
def test_xor_of_tensors_is_logical_xor(wrap):
    out = wrap(P) ^ Q
    assert isinstance(out, em.Tensor)
    np.testing.assert_array_equal(out.numpy(), P ^ Q)
    np.testing.assert_array_equal(em.logical_xor(P, wrap(Q)).numpy(), P ^ Q)
    with pytest.raises(em.errors.OpTypeError, match="logical_"):
        em.constant([1, 2]) ^ em.constant([3, 4])
