"""em.py_function results have exactly Tout's dtypes: a value Tout cannot hold exactly, a
tensor of another dtype or a wrong number of results is an InvalidArgumentError (as in
TensorFlow), never a silent truncation; eagerly and inside a Function alike."""

import numpy as np
import pytest

import ember as em

X = em.constant(1)


def _call(fn, tout, traced: bool):
    if traced:
        return em.function(lambda x: em.py_function(fn, [x], tout))(X)
    return em.py_function(fn, [X], tout)


MODES = pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])


@MODES
@pytest.mark.parametrize("fn,tout,match", [
    (lambda x: np.float64(1.5), em.int32,
     r"returned np.float64\(1.5\) \(float64\), which int32 \(its Tout\) cannot hold exactly"),
    (lambda x: 1.5, em.int32, r"returned 1.5 \(float64\), which int32"),
    (lambda x: np.array([300]), em.uint8, r"which uint8 \(its Tout\) cannot hold exactly"),
    (lambda x: np.array([-1]), em.uint8, r"which uint8"),
    (lambda x: np.float32(np.nan), em.int32, r"which int32"),
    (lambda x: np.float64(1e10), em.int32, r"which int32"),
    (lambda x: np.float64(1e300), em.float32, r"which float32"),
    (lambda x: np.array([True]), em.int32, r"\(bool\), which int32"),
    (lambda x: "s", em.int32, r"which int32"),
    (lambda x: em.constant(1.5), em.int32,
     r"returned a tensor of dtype float32, but Tout says int32; return em.cast"),
    (lambda x: x, em.int64, r"a tensor of dtype int32, but Tout says int64"),
    (lambda x: (x, x), [em.int32], r"returned 2 value\(s\), but Tout lists 1: \[int32\]"),
    (lambda x: x, [em.int32, em.int32], r"returned 1 value\(s\), but Tout lists 2"),
    (lambda x: None, em.int32, r"returned None, which is not a tensor value of dtype int32"),
])
def test_results_tout_cannot_hold_are_invalid_argument_errors(fn, tout, match, traced):
    with pytest.raises(em.errors.InvalidArgumentError, match=r"'py_function' op .*" + match):
        _call(fn, tout, traced)


@MODES
@pytest.mark.parametrize("fn,tout,value", [
    (lambda x: np.float64(2.0), em.int32, 2),
    (lambda x: np.float64(0.1), em.float32, np.float32(0.1)),
    (lambda x: 0.1, em.float64, 0.1),                    # not through float32
    (lambda x: 3, em.float32, 3.0),
    (lambda x: np.int64(7), em.int8, 7),
    (lambda x: 2 ** 40, em.int64, 2 ** 40),
    (lambda x: [1, 2.0], em.int32, [1, 2]),
    (lambda x: np.float64(np.inf), em.float32, np.inf),
])
def test_results_that_convert_exactly_take_touts_dtype(fn, tout, value, traced):
    out = _call(fn, tout, traced)
    assert out.dtype is tout and out.numpy().dtype == tout.np_dtype
    np.testing.assert_array_equal(out.numpy(), value)


@MODES
def test_several_results_each_take_their_tout(traced):
    outs = (em.function(lambda x: em.py_function(lambda v: (1, 2.5, [True]), [x],
                                                 [em.int64, em.float64, em.bool]))(X)
            if traced else em.py_function(lambda v: (1, 2.5, [True]), [X],
                                          [em.int64, em.float64, em.bool]))
    assert [o.dtype for o in outs] == [em.int64, em.float64, em.bool]
    assert [o.numpy().tolist() for o in outs] == [1, 2.5, [True]]


@pytest.mark.parametrize("compiled", [False, True])
def test_py_function_is_differentiable_through_its_python_code(compiled):
    """As TensorFlow's: the backward runs the callable again eagerly under a tape."""
    def f(x, k):
        with em.GradientTape() as tape:
            tape.watch(x)
            y, z = em.py_function(lambda a, n: [a * a, em.sin(a) * em.cast(n, em.float32)],
                                  [x, k], [em.float32, em.float32])
            loss = em.reduce_sum(y) + 2.0 * em.reduce_sum(z)
        return tape.gradient(loss, x)
    x = np.array([1.0, 2.0], np.float32)
    got = (em.function(f) if compiled else f)(em.constant(x), em.constant(3))
    np.testing.assert_allclose(got.numpy(), 2 * x + 6 * np.cos(x), rtol=1e-6)
    assert got.shape == (2,)
