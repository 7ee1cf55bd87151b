"""em.is_tensor (tf.is_tensor): True for tensors, eager and symbolic, and for Variables; False
for what ops would convert first (numpy arrays, Python numbers, lists); the same answers
eagerly and while em.function traces."""

import numpy as np
import pytest

import ember as em
from ember.frontend.autograph.undefined import Undefined


class _TensorLike:
    is_tensor_like = True  # TensorFlow's opt-in for other classes


VALUES = {
    "eager tensor": lambda: em.constant([1.0, 2.0]),
    "scalar tensor": lambda: em.constant(3),
    "variable": lambda: em.Variable([1.0, 2.0]),
    "is_tensor_like object": _TensorLike,
    "numpy array": lambda: np.ones(2, np.float32),
    "numpy scalar": lambda: np.float32(1.0),
    "python float": lambda: 1.0,
    "python int": lambda: 3,
    "python bool": lambda: True,
    "list of tensors": lambda: [em.constant(1.0)],
    "none": lambda: None,
    "string": lambda: "x",
    "tensor spec": lambda: em.TensorSpec([2], em.float32),
    "tensor array": lambda: em.TensorArray(em.float32, size=2),
}
TENSORS = {"eager tensor", "scalar tensor", "variable", "is_tensor_like object"}


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_is_tensor_eagerly(kind):
    assert em.is_tensor(VALUES[kind]()) is (kind in TENSORS)


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_is_tensor_of_a_captured_value_agrees_with_eager(kind):
    value = VALUES[kind]()
    seen = []

    @em.function
    def f(x):
        seen.append(em.is_tensor(value))
        return x + 1.0
    f(em.constant(1.0))
    assert seen == [em.is_tensor(value)] == [kind in TENSORS]


def test_is_tensor_of_traced_values():
    seen = {}
    v = em.Variable(2.0)

    @em.function
    def f(x, n, a):
        y = x * 2.0
        seen.update(arg=em.is_tensor(x), computed=em.is_tensor(y), python=em.is_tensor(n),
                    numpy_arg=em.is_tensor(a), read=em.is_tensor(v.read_value()),
                    variable=em.is_tensor(v))
        return y
    f(em.constant([1.0]), 3, np.ones(2, np.float32))
    # numpy arguments enter a traced function as tensors, Python scalars by value (as in
    # tf.function)
    assert seen == dict(arg=True, computed=True, python=False, numpy_arg=True, read=True,
                        variable=True)


def test_is_tensor_picks_the_branch_in_autograph_code():
    @em.function
    def f(x):
        if em.is_tensor(x):  # a Python bool: a Python `if`, not a staged one
            return x + 1
        return x

    assert int(f(em.constant(1))) == 2
    assert f(5) == 5


def test_is_tensor_of_an_unassigned_name_raises_as_reading_it_would():
    with pytest.raises(UnboundLocalError, match="local variable 'y'"):
        em.is_tensor(Undefined("y"))
