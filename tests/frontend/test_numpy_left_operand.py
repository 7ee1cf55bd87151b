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
def test_xor_of_bool_tensors_is_logical_xor(wrap):
    out = wrap(P) ^ Q
    assert isinstance(out, em.Tensor)
    np.testing.assert_array_equal(out.numpy(), P ^ Q)
    np.testing.assert_array_equal(em.logical_xor(P, wrap(Q)).numpy(), P ^ Q)
    # integers' ^ is their bits' (as tf.Tensor's); floats have neither
    assert (em.constant([1, 2]) ^ em.constant([3, 4])).numpy().tolist() == [2, 6]
    with pytest.raises(em.errors.OpTypeError, match="must have integer"):
        em.constant([1.0, 2.0]) ^ em.constant([3.0, 4.0])


NUMPY_MEETS = [  # (tensor, numpy value, the result's dtype or the error's words)
    (em.ones([2]), np.sqrt(2.0), "float32"),
    (em.ones([2]), np.array([1.0, 2.0]), "float32"),
    (em.ones([2]), np.int64(3), "float32"),
    (em.ones([2], em.float64), np.float32(0.5), "float64"),
    (em.constant([1, 2]), np.int64(7), "int32"),
    (em.constant([1, 2]), np.int64(2 ** 40), "different element types"),  # would overflow
    (em.constant([1, 2]), np.float32(2.0), "different element types"),  # float to int
    (em.ones([2]), np.complex128(1), "different element types"),  # would drop imag
]


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("tensor,value,want", NUMPY_MEETS)
def test_a_numpy_value_takes_the_tensors_dtype_where_it_can_hold_it(tensor, value, want,
                                                                     compiled):
    for fn in (lambda t: t + value, lambda t: value * t):
        run = em.function(fn) if compiled else fn
        if want.startswith("float") or want.startswith("int"):
            got = run(tensor)
            assert got.dtype.name == want
            np.testing.assert_allclose(got.numpy(), fn(tensor.numpy()).astype(want))
        else:
            with pytest.raises(em.errors.OpTypeError, match=want):
                run(tensor)
