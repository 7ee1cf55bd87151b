"""em.case (tf.case), from frontend/switch_case.py: the first pair whose predicate is true
runs, else the default, compared eagerly, on the trace's graph and compiled against Python's
if/elif/else; TensorFlow's rules without a default (the last pair runs, and an
InvalidArgumentError when no predicate holds), `exclusive`, `strict`, dicts; gradients;
and argument errors raised alike eagerly and inside em.function."""

import numpy as np
import pytest

import ember as em
from three_ways import STRUCTURES, assert_same, run_three_ways

X = np.array([0.5, -2.0, 3.0], np.float32)
PAIRS = [(a, b) for a in (-1.0, 0.0, 2.0) for b in (-1.0, 0.0, 2.0)]


def python_model(a, b, with_default):
    if a < b:
        return X + 1.0
    if a > b:
        return X * 2.0
    return X - 10.0 if with_default else X * 2.0  # the last pair: a > b (checked: raises)


@pytest.mark.parametrize("a,b", PAIRS)
def test_case_runs_the_first_true_predicate(a, b):
    def program(x, a, b):
        return em.case([(a < b, lambda: x + 1.0), (a > b, lambda: x * 2.0)],
                       default=lambda: x - 10.0)
    results = run_three_ways(program, X, np.float32(a), np.float32(b))
    assert_same(results)
    np.testing.assert_allclose(results[0].numpy(), python_model(a, b, True), rtol=1e-6)


def test_case_takes_the_first_of_several_true_predicates():
    def program(x, a):
        return em.case([(a > 2.0, lambda: x * 3.0), (a > 1.0, lambda: x * 2.0),
                        (a > 0.0, lambda: x + 1.0)], default=lambda: -x)
    for a, want in [(5.0, X * 3.0), (1.5, X * 2.0), (0.5, X + 1.0), (-1.0, -X)]:
        results = run_three_ways(program, X, np.float32(a))
        assert_same(results)
        np.testing.assert_allclose(results[0].numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("kind", sorted(STRUCTURES))
@pytest.mark.parametrize("a", [-1.0, 1.0, 3.0])
def test_case_returns_its_branches_structure(kind, a):
    make = STRUCTURES[kind]

    def program(x, a):
        return em.case([(a > 2.0, lambda: make(x, em.reduce_sum(x))),
                        (a > 0.0, lambda: make(x * 2.0, em.reduce_max(x)))],
                       default=lambda: make(-x, em.reduce_min(x)))
    assert_same(run_three_ways(program, X, np.float32(a)))


def _no_default(x, a, b):
    return em.case([(a < b, lambda: x + 1.0), (a > b, lambda: x * 2.0)])


@pytest.mark.parametrize("a,b", [(0.0, 1.0), (1.0, 0.0)])
def test_case_without_default_runs_the_last_pair_when_no_other_holds(a, b):
    results = run_three_ways(_no_default, X, np.float32(a), np.float32(b))
    assert_same(results)
    np.testing.assert_allclose(results[0].numpy(), python_model(a, b, False), rtol=1e-6)


def test_case_without_default_raises_when_no_predicate_holds_eager_and_compiled():
    match = "em.case: none of the 2 predicates is true and there is no default"
    with pytest.raises(em.InvalidArgumentError, match=match):
        _no_default(em.constant(X), em.constant(1.0), em.constant(1.0))
    f = em.function(_no_default)
    assert f(X, np.float32(0.0), np.float32(1.0)) is not None  # fine where one holds
    with pytest.raises(em.InvalidArgumentError, match=match):  # raised when it runs
        f(X, np.float32(1.0), np.float32(1.0))


def _exclusive(x, a):
    return em.case([(a > 0.0, lambda: x + 1.0), (a > 1.0, lambda: x * 2.0)],
                   default=lambda: -x, exclusive=True)


def test_case_exclusive_raises_when_two_predicates_hold_eager_and_compiled():
    match = "em.case: more than one predicate is true with exclusive=True"
    f = em.function(_exclusive)
    for run in (_exclusive, f):
        np.testing.assert_allclose(run(em.constant(X), em.constant(0.5)).numpy(), X + 1.0)
        np.testing.assert_allclose(run(em.constant(X), em.constant(-0.5)).numpy(), -X)
        with pytest.raises(em.InvalidArgumentError, match=match):
            run(em.constant(X), em.constant(2.0))


class _HashablePredicate:
    """Reads as a tensor and can key a dict (as TensorFlow 1's graph tensors could; a
    tensor and a Variable are unhashable, as in TensorFlow 2)."""

    def __init__(self, value):
        self._value = em.constant(value)

    def _as_tensor(self):
        return self._value


def test_case_dict_needs_exclusive():
    with pytest.raises(TypeError, match="Variable is unhashable"):
        {em.Variable(False): lambda: em.constant(1)}
    q = _HashablePredicate(False)
    with pytest.raises(ValueError, match="em.case: pred_fn_pairs is a dict"):
        em.case({q: lambda: em.constant(1)}, default=lambda: em.constant(0))
    assert int(em.case({q: lambda: em.constant(1)}, default=lambda: em.constant(0),
                       exclusive=True)) == 0


@pytest.mark.parametrize("strict", [False, True])
def test_case_strict_keeps_one_element_lists(strict):
    def program(x, a):
        return em.case([(a > 0.0, lambda: [x + 1.0])], default=lambda: [-x], strict=strict)
    for a in (1.0, -1.0):
        results = run_three_ways(program, X, np.float32(a))
        assert_same(results)
        assert isinstance(results[0], list) is strict


def test_case_gradient_eager_and_compiled():
    def grad(x, a):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = em.case([(a > 1.0, lambda: x * x), (a > 0.0, lambda: em.sin(x))],
                        default=lambda: x * 3.0)
        return tape.gradient(y, x)
    x = 0.75
    for a, want in [(2.0, 2 * x), (0.5, np.cos(x)), (-1.0, 3.0)]:
        for how, run in {"eager": grad, "compiled": em.function(grad)}.items():
            np.testing.assert_allclose(float(run(em.constant(x), em.constant(a))), want,
                                       rtol=1e-6, err_msg=f"{how} a={a}")


# -- errors ------------------------------------------------------------------------------

def _f():
    return em.constant(1.0)


CASE_ERRORS = [
    (lambda p: em.case(_f), TypeError, "pred_fn_pairs must be a list of"),
    (lambda p: em.case([]), ValueError, "pred_fn_pairs is empty"),
    (lambda p: em.case([[p, _f]]), TypeError,
     r"pred_fn_pairs\[0\] must be a \(predicate, callable\) tuple"),
    (lambda p: em.case([(p, _f), (True, _f)]), TypeError,
     r"the predicate of pred_fn_pairs\[1\] must be a scalar bool tensor, got bool True"),
    (lambda p: em.case([(em.cast(p, em.int32), _f)]), TypeError,
     r"the predicate of pred_fn_pairs\[0\] must be a bool tensor, got dtype int32"),
    (lambda p: em.case([(em.stack([p, p]), _f)]), ValueError,
     r"the predicate of pred_fn_pairs\[0\] must be a scalar, got shape \(2,\)"),
    (lambda p: em.case([(p, 1.0)]), TypeError,
     r"the function of pred_fn_pairs\[0\] must be a callable taking no arguments, got 1.0"),
    (lambda p: em.case([(p, _f)], default="x"), TypeError, "default must be a callable"),
]


@pytest.mark.parametrize("call,error,match", CASE_ERRORS)
def test_case_errors_are_the_same_eager_and_traced(call, error, match):
    with pytest.raises(error, match="em.case: " + match):
        call(em.constant(True))
    with pytest.raises(error, match="em.case: " + match):
        em.function(call)(em.constant(True))


def test_case_branches_that_do_not_fit_name_the_pairs():
    f = em.function(lambda p: em.case([(p, lambda: em.constant(1.0))],
                                      default=lambda: em.constant(1)))
    with pytest.raises(em.errors.ControlFlowError,
                       match=r"output 0 of em.case has dtype float32 in the function of "
                             r"pred_fn_pairs\[0\] and int32 in the default branch"):
        f(em.constant(True))
