"""Shape errors that only the call's static shapes reveal raise eager's error, when the op runs.

A trace with `?` dims accepts `x[-1]` and an argmax over a dim that may be empty; compiled
for a call where that dim has size 0, the op is invalid. Eager raises its type inference's
error (OpShapeError) when it reaches the op, so compiled code (and the interpreter) must
raise that error at that op: not another class, not an interpreter fallback, not at compile
time (the op may sit in a branch that does not run).
"""

import warnings

import numpy as np
import pytest

import ember as em

VECTOR = [em.TensorSpec([None], em.float32)]
MATRIX = [em.TensorSpec([None, 3], em.int32)]
EMPTY_ROWS = np.zeros((0, 3), np.int32)

# id -> (function, input_signature, argument, eager's message)
CASES = {
    "negative_index_into_empty_dim": (
        lambda x: (x + 1)[-1], MATRIX, EMPTY_ROWS,
        "'ember.strided_slice' op index -1 is out of bounds for dim 0 of size 0 in "
        "tensor<0x3xi32>"),
    "index_past_the_end": (
        lambda x: x[2], MATRIX, np.ones((2, 3), np.int32),
        "'ember.strided_slice' op index 2 is out of bounds for dim 0 of size 2 in "
        "tensor<2x3xi32>"),
    "argmax_over_empty_dim": (
        lambda x: em.argmax(x * 2.0, axis=0), VECTOR, np.zeros(0, np.float32),
        "'ember.argmax' op cannot reduce empty dimension 0 of tensor<0xf32>"),
}


def _raised(fn, arg):
    with pytest.raises(em.OpShapeError) as info:
        fn(em.constant(arg))
    return str(info.value)


@pytest.mark.parametrize("jit", [True, False], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_static_shape_error_of_a_call_raises_eagers_error(case, jit):
    fn, signature, arg, message = case
    eager = _raised(fn, arg)
    assert eager.startswith(message + " (at ")  # the lambda's line, eagerly as compiled
    f = em.function(fn, input_signature=signature, jit_compile=jit)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an interpreter fallback would fail the test
        assert _raised(f, arg) == eager


def test_invalid_op_in_a_branch_not_taken_does_not_raise():
    def fn(x, take):
        return em.cond(take, lambda: x[-1] + 1, lambda: em.constant([0, 0, 0]))

    f = em.function(fn, input_signature=MATRIX + [em.TensorSpec([], em.bool)])
    empty = em.constant(EMPTY_ROWS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(empty, em.constant(False)).numpy().tolist() == [0, 0, 0]
        with pytest.raises(em.OpShapeError, match="index -1 is out of bounds for dim 0"):
            f(empty, em.constant(True))
        assert f(em.constant(np.ones((1, 3), np.int32)), em.constant(True)).numpy().tolist() \
            == [2, 2, 2]
