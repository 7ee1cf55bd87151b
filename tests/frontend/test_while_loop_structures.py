"""em.while_loop states of any structure (lists, nested lists, Python numbers mixed with
tensors, dicts, namedtuples) run compiled and agree with eager; a body that returns another
structure is a ControlFlowError saying both structures, never a bare StopIteration."""

import collections
import warnings

import numpy as np
import pytest

import ember as em
from ember.frontend import nest

State = collections.namedtuple("State", "i s")
X = np.array([1.0, 2.0], np.float32)


def _list_state(x):
    return em.while_loop(lambda i, s: i < 3, lambda i, s: [i + 1, s * 2.0], [0, x])


def _list_state_tuple_body(x):
    return em.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2.0), [0, x])


def _nested_list(x):
    return em.while_loop(lambda a: a[0] < 3, lambda a: [a[0] + 1, [a[1][0] * 2.0]],
                         [[em.constant(0), [x]]])


def _list_in_tuple(x):
    return em.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, [s[0] * 2.0, s[1] + 1.0]),
                         (em.constant(0), [x, x]))


def _mixed_numbers(x):
    return em.while_loop(lambda i, f, s: i < 3, lambda i, f, s: [i + 1, f * 1.5, s + f],
                         [0, 1.0, x])


def _dict_state(x):
    return em.while_loop(lambda d: d["i"] < 3,
                         lambda d: {"i": d["i"] + 1, "s": [d["s"][0] * 2.0]},
                         {"i": 0, "s": [x]})


def _namedtuple_state(x):
    return em.while_loop(lambda st: st.i < 3, lambda st: State(st.i + 1, st.s * 2.0),
                         State(em.constant(0), x))


def _namedtuple_in_list(x):
    return em.while_loop(lambda st, n: n < 2,
                         lambda st, n: [State(st.i + 1, st.s - 1.0), n + 1],
                         [State(0, x), 0], maximum_iterations=5)


def _single_list_bare_body(x):
    return em.while_loop(lambda s: em.reduce_sum(s) < 30.0, lambda s: s * 2.0, [x])


PROGRAMS = [_list_state, _list_state_tuple_body, _nested_list, _list_in_tuple, _mixed_numbers,
            _dict_state, _namedtuple_state, _namedtuple_in_list, _single_list_bare_body]


def _flatten(out):
    return nest.flatten(out)


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_loop_state_structure_compiles_and_matches_eager(program):
    expected = program(em.constant(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no InterpreterFallbackWarning
        got = em.function(program)(em.constant(X))
    assert type(got) is type(expected)
    assert nest.structure(got) == nest.structure(expected)
    for g, e in zip(_flatten(got), _flatten(expected)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("body,loop_vars,match", [
    (lambda i, s: (i + 1,), (0, X),
     r"1 value\(s\) structured as \((int|int32 tensor),\), but the loop has 2 loop "
     r"variable\(s\) structured as \((int|int32 tensor), (ndarray|float32 tensor)\)"),
    (lambda i, s: [i + 1, s, s], [0, X], r"3 value\(s\).* has 2 loop variable"),
    (lambda i, s: None, (0, X), r"1 value\(s\) structured as NoneType"),
    (lambda i, s: (i + 1, s[0], s[1]), (0, [X, X]),
     r"3 value\(s\) structured as \((int|int32 tensor), (ndarray|float32 tensor), "
     r"(ndarray|float32 tensor)\), but the loop has 3 loop variable\(s\) structured as "
     r"\((int|int32 tensor), \[.*, .*\]\)"),
    (lambda d: {"j": d["i"] + 1}, {"i": 0},
     r"1 value\(s\) structured as \{'j': (int|int32 tensor)\}, but the loop has 1 loop "
     r"variable\(s\) structured as \{'i': (int|int32 tensor)\}"),
])
def test_body_of_the_wrong_structure_is_a_control_flow_error(body, loop_vars, match, traced):
    def run(x):
        return em.while_loop(lambda *a: em.constant(True) if not traced else x > 0, body,
                             loop_vars, maximum_iterations=1)
    fn = em.function(run) if traced else run
    with pytest.raises(em.errors.ControlFlowError,
                       match=r"the body of em.while_loop at .*test_while_loop_structures"
                             r".py:\d+ returned " + match):
        fn(em.constant(1))
