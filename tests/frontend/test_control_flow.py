"""frontend/control_flow.py: em.cond and em.while_loop with results and loop variables of
every structure, compared eagerly, on the trace's graph and compiled."""

import numpy as np
import pytest

import ember as em
from three_ways import STRUCTURES, assert_same, parts, run_three_ways

X = np.array([1.0, -2.0, 3.0], np.float32)
KINDS = sorted(STRUCTURES)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("flag", [True, False])
def test_cond_returns_its_branches_structure(kind, flag):
    make = STRUCTURES[kind]

    def program(x, p):
        return em.cond(p, lambda: make(x + 1.0, em.reduce_sum(x)),
                       lambda: make(x * 2.0, em.reduce_max(x)))
    assert_same(run_three_ways(program, X, np.bool_(flag)))


@pytest.mark.parametrize("kind", KINDS)
def test_cond_on_a_structure_argument(kind):
    make = STRUCTURES[kind]

    def program(s):
        a, b = parts(s)
        return em.cond(em.reduce_sum(a) > b, lambda: a - b, lambda: a + b)
    assert_same(run_three_ways(program, make(X, np.float32(1.0))))


@pytest.mark.parametrize("kind", KINDS)
def test_while_loop_carries_a_structure(kind):
    make = STRUCTURES[kind]

    def program(x):
        def body(state):
            a, b = parts(state)
            return make(a * 2.0, b + 1)
        return em.while_loop(lambda state: parts(state)[1] < 4, body, [make(x, 0)])[0]
    assert_same(run_three_ways(program, X))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("limit", [0, 2, 10])
def test_while_loop_maximum_iterations_bounds_a_structure_loop(kind, limit):
    make = STRUCTURES[kind]

    def program(x):
        def body(state):
            a, b = parts(state)
            return make(a + 1.0, b + 1)
        return em.while_loop(lambda state: em.constant(True), body, [make(x, 0)],
                             maximum_iterations=limit)[0]
    results = run_three_ways(program, X)
    assert_same(results)
    assert int(parts(results[2])[1]) == limit


def test_while_loop_shape_invariants_let_a_variable_grow():
    def program(x):
        _, y = em.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, em.concat([y, y], 0)),
                             (em.constant(0), x),
                             shape_invariants=(em.TensorShape([]), em.TensorShape([None])))
        return y
    results = run_three_ways(program, X)
    assert_same(results)
    assert results[2].shape == (24,)


def test_nested_cond_inside_a_loop():
    def program(x):
        def body(i, y):
            return i + 1, em.cond(i % 2 == 0, lambda: y * 2.0, lambda: y - 1.0)
        return em.while_loop(lambda i, y: i < 5, body, (em.constant(0), x))[1]
    assert_same(run_three_ways(program, X))


@pytest.mark.parametrize("jit", [True, False])
def test_a_predicate_of_unknown_rank_is_checked_to_be_a_scalar_when_it_runs(jit):
    """An input_signature of unknown shape: tf.cond's graph checks the predicate is a
    scalar at run time; here `em.ensure_shape` does, compiled or on the interpreter."""
    @em.function(input_signature=[em.TensorSpec(None, em.bool), em.TensorSpec(None, em.int32)],
                 jit_compile=jit)
    def f(p, n):
        picked = em.cond(p, lambda: em.constant(1.0), lambda: em.constant(2.0))
        count = em.while_loop(lambda i: i < n, lambda i: (i + 1,), (em.constant(0),))[0]
        return picked, count
    assert [t.numpy().item() for t in f(em.constant(True), em.constant(3))] == [1.0, 3]
    assert [t.numpy().item() for t in f(em.constant(False), em.constant(0))] == [2.0, 0]
    with pytest.raises(em.errors.InvalidArgumentError, match="expected shape"):
        f(em.constant([True, False]), em.constant(3))
