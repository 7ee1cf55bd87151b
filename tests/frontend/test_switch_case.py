"""frontend/switch_case.py: em.switch_case and em.case (tf.switch_case, tf.case), compared
eagerly, on the trace's graph and compiled, against a Python model of TensorFlow's rules
(an out-of-range index runs the default or the last branch; case runs the first true
predicate); results of every structure and of differing shapes; gradients through
em.GradientTape; and argument errors raised alike eagerly and inside em.function."""

import numpy as np
import pytest

import ember as em
from three_ways import STRUCTURES, assert_same, parts, run_three_ways

X = np.array([0.5, -2.0, 3.0], np.float32)
KINDS = sorted(STRUCTURES)


def branches(x):
    return [lambda: x + 1.0, lambda: x * 2.0, lambda: em.sin(x)]


def expected(index, with_default):
    values = [X + 1.0, X * 2.0, np.sin(X)] + ([X - 10.0] if with_default else [])
    return values[index if 0 <= index < len(values) else -1]


FORMS = {
    "list": lambda fns: fns,
    "tuple": lambda fns: tuple(fns),
    "pairs": lambda fns: list(reversed(list(enumerate(fns)))),  # any order of keys
    "dict": lambda fns: dict(enumerate(fns)),
}


@pytest.mark.parametrize("index", [-4, -1, 0, 1, 2, 3, 9])
@pytest.mark.parametrize("with_default", [False, True])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_switch_case_runs_the_indexed_branch(index, with_default, form):
    def program(x, i):
        default = (lambda: x - 10.0) if with_default else None
        return em.switch_case(i, FORMS[form](branches(x)), default=default)
    results = run_three_ways(program, X, np.int32(index))
    assert_same(results)
    np.testing.assert_allclose(results[0].numpy(), expected(index, with_default), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int64, np.uint8, np.int8])
def test_switch_case_takes_any_integer_index(dtype):
    for index in (0, 2, 200 if dtype == np.uint8 else -1):
        def program(x, i):
            return em.switch_case(i, branches(x))
        results = run_three_ways(program, X, dtype(index))
        assert_same(results)
        np.testing.assert_allclose(results[0].numpy(), expected(int(index), False), rtol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("index", [0, 1, 5])
def test_switch_case_returns_its_branches_structure(kind, index):
    make = STRUCTURES[kind]

    def program(x, i):
        return em.switch_case(i, [lambda: make(x + 1.0, em.reduce_sum(x)),
                                  lambda: make(x * 2.0, em.reduce_max(x))],
                              default=lambda: make(-x, em.reduce_min(x)))
    assert_same(run_three_ways(program, X, np.int32(index)))


@pytest.mark.parametrize("index", [0, 1, 2])
def test_switch_case_branches_of_different_shapes(index):
    def program(x, i):
        return em.switch_case(i, [lambda: x[:1], lambda: x[:2], lambda: x])
    results = run_three_ways(program, X, np.int32(index))
    assert_same(results)
    assert results[0].shape == (index + 1,)
    shape = em.function(program).get_concrete_function(X, np.int32(index)) \
        .structured_outputs.shape
    assert shape.as_list() == [None]  # the branches' common shape


def test_switch_case_with_one_branch():
    def program(x, i):
        return em.switch_case(i, [lambda: x * 3.0])
    for index in (0, 4, -1):
        results = run_three_ways(program, X, np.int32(index))
        assert_same(results)
        np.testing.assert_allclose(results[0].numpy(), X * 3.0)


def test_switch_case_reads_a_variable_index():
    i = em.Variable(1)
    fns = [lambda: em.constant(10), lambda: em.constant(20)]
    f = em.function(lambda: em.switch_case(i, fns))
    assert int(em.switch_case(i, fns)) == int(f()) == 20
    i.assign(0)
    assert int(em.switch_case(i, fns)) == int(f()) == 10


def test_switch_case_runs_only_the_chosen_branch_eagerly_and_traces_each_once():
    calls = []

    def branch(k):
        return lambda: (calls.append(k), em.constant(k))[1]
    fns = [branch(0), branch(1), branch(2)]
    assert int(em.switch_case(em.constant(1), fns)) == 1
    assert calls == [1]
    calls.clear()
    f = em.function(lambda i: em.switch_case(i, fns))
    assert [int(f(em.constant(k))) for k in (2, 0, 7)] == [2, 0, 2]
    assert sorted(calls) == [0, 1, 2]  # each branch traced once, then run compiled


def test_switch_case_branches_are_converted_by_autograph():
    def relu_branch(x):
        if em.reduce_sum(x) > 0:  # Python `if` on a tensor: staged
            return x
        return -x

    @em.function
    def f(x, i):
        return em.switch_case(i, [lambda: relu_branch(x), lambda: x * 0.0])
    np.testing.assert_allclose(f(X, np.int32(0)).numpy(), X)
    np.testing.assert_allclose(f(-X, np.int32(0)).numpy(), X)


# -- gradients ---------------------------------------------------------------------------

def _switch_gradient(x, i):
    with em.GradientTape() as tape:
        tape.watch(x)
        y = em.switch_case(i, [lambda: x * x, lambda: em.sin(x), lambda: x * 3.0],
                           default=lambda: em.exp(x))
    return y, tape.gradient(y, x)


@pytest.mark.parametrize("index", [-1, 0, 1, 2, 3, 8])
def test_switch_case_gradient_eager_and_compiled(index):
    x = 0.75
    want = {0: (x * x, 2 * x), 1: (np.sin(x), np.cos(x)), 2: (3 * x, 3.0)}.get(
        index, (np.exp(x), np.exp(x)))
    for how, run in {"eager": _switch_gradient, "compiled": em.function(_switch_gradient)}.items():
        y, g = run(em.constant(x), em.constant(index))
        np.testing.assert_allclose([float(y), float(g)], want, rtol=1e-6, err_msg=how)


def test_switch_case_gradient_of_a_variable():
    w = em.Variable([1.0, 2.0])

    def step(i):
        with em.GradientTape() as tape:
            loss = em.switch_case(i, [lambda: em.reduce_sum(w * w), lambda: em.reduce_sum(w)])
        return tape.gradient(loss, w)
    compiled = em.function(step)
    for index, want in [(0, [2.0, 4.0]), (1, [1.0, 1.0]), (5, [1.0, 1.0])]:
        np.testing.assert_allclose(step(em.constant(index)).numpy(), want)
        np.testing.assert_allclose(compiled(em.constant(index)).numpy(), want)


# -- errors ------------------------------------------------------------------------------

def _f():
    return em.constant(1.0)


SWITCH_ERRORS = [
    (lambda i: em.switch_case(1, [_f]), TypeError,
     "branch_index must be a scalar integer tensor, got int 1; wrap it in em.constant"),
    (lambda i: em.switch_case(em.cast(i, em.float32), [_f]), TypeError,
     "branch_index must be an integer tensor, got dtype float32"),
    (lambda i: em.switch_case(em.stack([i, i]), [_f]), ValueError,
     r"branch_index must be a scalar, got shape \(2,\)"),
    (lambda i: em.switch_case(i, []), ValueError, "branch_fns is empty"),
    (lambda i: em.switch_case(i, _f), TypeError, "branch_fns must be a list of callables"),
    (lambda i: em.switch_case(i, [_f, 3]), TypeError,
     r"branch_fns\[1\] is 3, neither a callable taking no arguments nor an \(int, callable\)"),
    (lambda i: em.switch_case(i, [_f, (1, _f)]), TypeError,
     "branch_fns mixes callables and"),
    (lambda i: em.switch_case(i, {0: _f, 1: "g"}), TypeError,
     "the branch for key 1 must be a callable taking no arguments, got 'g'"),
    (lambda i: em.switch_case(i, {0: _f, 2: _f}), ValueError,
     r"the branch keys must be 0 to 1, each once, got \{0, 2\}"),
    (lambda i: em.switch_case(i, [("0", _f)]), TypeError, "branch key '0' must be a Python int"),
    (lambda i: em.switch_case(i, [_f], default=2.0), TypeError,
     "default must be a callable taking no arguments, got 2.0"),
]


@pytest.mark.parametrize("call,error,match", SWITCH_ERRORS)
def test_switch_case_errors_are_the_same_eager_and_traced(call, error, match):
    with pytest.raises(error, match="em.switch_case: " + match):
        call(em.constant(0))
    with pytest.raises(error, match="em.switch_case: " + match):
        em.function(call)(em.constant(0))


def test_switch_case_branches_that_do_not_fit_name_the_branches():
    f = em.function(lambda i: em.switch_case(i, [lambda: em.constant(1.0),
                                                 lambda: em.constant(1),
                                                 lambda: em.constant(2)]))
    with pytest.raises(em.errors.ControlFlowError,
                       match="output 0 of em.switch_case has dtype float32 in branch 0 and "
                             "int32 in the branches after it"):
        f(em.constant(0))
    g = em.function(lambda i: em.switch_case(i, [lambda: em.constant(1.0)],
                                             default=lambda: (em.constant(1.0),)))
    with pytest.raises(em.errors.ControlFlowError,
                       match="em.switch_case branches must return the same structure; branch 0 "
                             "returned .*, the default branch"):
        g(em.constant(0))


def test_switch_case_converts_python_numbers_as_em_cond_does():
    f = em.function(lambda i: em.switch_case(i, [lambda: 1, lambda: (2, np.float32(0.5))[0]]))
    for i, want in [(0, 1), (1, 2), (7, 2)]:
        out = f(em.constant(i))
        assert isinstance(out, em.Tensor) and out.dtype == em.int32 and int(out) == want
    g = em.function(lambda x: em.case([(x > 0, lambda: [1.5])], default=lambda: [-1.0]))
    assert float(g(em.constant(2.0))) == 1.5 and float(g(em.constant(-2.0))) == -1.0
    known = em.function(lambda: em.switch_case(em.constant(1), [lambda: 1, lambda: 2]))
    assert isinstance(known(), em.Tensor) and int(known()) == 2
    assert em.switch_case(em.constant(1), [lambda: 1, lambda: 2]) == 2  # eagerly: Python


def test_switch_case_branches_returning_different_python_values_name_them():
    f = em.function(lambda i: em.switch_case(i, [lambda: "a", lambda: "b"]))
    with pytest.raises(em.errors.ControlFlowError,
                       match=r"em.switch_case branches return different Python values 'a' "
                             r"\(branch 0\) and 'b' \(branch 1\) at output 0; return tensors"):
        f(em.constant(0))