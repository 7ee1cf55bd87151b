"""em.random.set_seed against the examples of tf.random.set_seed's documentation
(https://www.tensorflow.org/api_docs/python/tf/random/set_seed), eagerly and inside
em.function, on compiled code (no interpreter fallback) and on the interpreter
(backend="interpreter"); ember.frontend.random_seed."""

import gc
import weakref

import numpy as np
import pytest

import ember as em
from ember.frontend import random_seed

BACKENDS = ["cpu", "interpreter"]


@pytest.fixture(autouse=True)
def no_fallback():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")  # compiled means compiled
    yield
    em.config.set_fallback(previous)


def values(out):
    """A result (a tensor or a tuple of them) as nested tuples of floats, to compare."""
    if isinstance(out, (tuple, list)):
        return tuple(values(t) for t in out)
    return tuple(np.asarray(out).ravel().tolist())


def eager_sequence(n, seed=None):
    """A1..An: `em.random.uniform([1])` called n times eagerly right after set_seed(1234)."""
    em.random.set_seed(1234)
    return [values(em.random.uniform([1], seed=seed)) for _ in range(n)]


def two_draws(seed=None):
    return em.random.uniform([1], seed=seed), em.random.uniform([1], seed=seed)


def test_eager_global_seed_repeats_after_set_seed():
    a1, a2 = eager_sequence(2)
    assert a1 != a2  # every call a new operation seed: a new number
    assert eager_sequence(2) == [a1, a2]  # the program re-run: the same sequence


def test_eager_op_seed_repeats_after_set_seed():
    a1, a2 = eager_sequence(2, seed=1)
    assert a1 != a2  # one kernel per op seed, its counter advancing
    assert eager_sequence(2, seed=1) == [a1, a2]  # "set_seed will reset any such counters"
    assert a1 != eager_sequence(1)[0]  # (global seed, op seed) is another sequence


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_function_draws_the_programs_sequence(backend):
    # print(f())  # prints '(A1, A2)'; print(g())  # prints '(A1, A2)'
    a1, a2, a3, a4 = eager_sequence(4)
    em.random.set_seed(1234)
    f = em.function(lambda: two_draws(), backend=backend)
    g = em.function(lambda: two_draws(), backend=backend)
    assert values(f()) == (a1, a2)
    assert values(g()) == (a1, a2)
    # print(bar())  # prints '(A1, A2)'; print(bar())  # prints '(A3, A4)'
    assert values(f()) == (a3, a4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_set_seed_restarts_functions_traced_before_it(backend):
    a1, a2 = eager_sequence(2)
    em.random.set_seed(1234)
    f = em.function(lambda: two_draws(), backend=backend)
    g = em.function(lambda: two_draws(), backend=backend)
    f(), f(), g()
    em.random.set_seed(1234)
    assert values(f()) == (a1, a2)
    assert values(g()) == (a1, a2)
    em.random.set_seed(99)  # another seed, then back: no trace remembers the first
    em.random.set_seed(1234)
    assert values(g()) == (a1, a2)
    assert f.experimental_get_tracing_count() == g.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_identical_op_seeded_ops_in_a_function_keep_counters_of_their_own(backend):
    # print(foo())  # prints '(A1, A1)'; print(foo())  # prints '(A2, A2)'
    a1, a2 = eager_sequence(2, seed=1)
    em.random.set_seed(1234)
    foo = em.function(lambda: two_draws(seed=1), backend=backend)
    assert values(foo()) == (a1, a1)
    assert values(foo()) == (a2, a2)
    em.random.set_seed(1234)
    assert values(foo()) == (a1, a1)
    assert foo.experimental_get_tracing_count() == 1


def test_set_seed_before_or_after_tracing_gives_the_same_numbers():
    em.random.set_seed(5)
    early = em.function(lambda: (em.random.normal([3]), em.random.uniform([2], seed=7)))
    first = values(early())
    em.random.set_seed(8)
    late = em.function(lambda: (em.random.normal([3]), em.random.uniform([2], seed=7)))
    late()
    em.random.set_seed(5)
    assert values(early()) == values(late()) == first


def test_compiled_and_interpreted_functions_agree_with_eager_call_after_call():
    # unseeded ops draw in program order from one sequence, as the eager calls do from the
    # global generator; an op seed's op from the op seed's sequence, as eagerly
    def body(x):
        return (x + em.random.normal([2, 3]), em.random.uniform([4], seed=3),
                em.nn.dropout(x, 0.5), em.random.truncated_normal([3], seed=4))
    x = em.ones([2, 3])
    runs = []
    for backend in BACKENDS + [None]:
        em.random.set_seed(42)
        f = body if backend is None else em.function(body, backend=backend)
        runs.append([values(f(x)) for _ in range(3)])
    compiled, interpreted, eager = runs
    assert compiled == interpreted == eager
    assert len(set(compiled)) == 3  # every call new numbers


def test_a_nested_function_draws_from_the_enclosing_functions_sequence():
    a1, a2 = eager_sequence(2)
    inner = em.function(lambda: em.random.uniform([1]))
    em.random.set_seed(1234)
    outer = em.function(lambda: (inner(), em.random.uniform([1])))
    assert values(outer()) == (a1, a2)  # as if inner's body were written in outer


def test_random_ops_in_loops_and_branches_are_restarted_too():
    @em.function
    def f(n):
        total = em.zeros([2])
        for _ in em.range(n):
            total += em.random.uniform([2], seed=3)
        if n > 1:
            total += em.random.uniform([2])
        return total
    em.random.set_seed(7)
    first = values(f(em.constant(3)))
    assert values(f(em.constant(3))) != first
    em.random.set_seed(7)
    assert values(f(em.constant(3))) == first
    em.random.set_seed(7)
    want = em.zeros([2])
    for _ in range(3):
        want += em.random.uniform([2], seed=3)
    want += em.random.uniform([2])
    np.testing.assert_allclose(first, want.numpy(), rtol=1e-6)


def test_functions_without_random_ops_capture_no_random_state():
    f = em.function(lambda x: x * 2.0)
    f(em.ones([2]))
    assert f.get_concrete_function(em.ones([2])).variables == ()


def test_the_states_of_a_dropped_function_are_forgotten():
    f = em.function(lambda: em.random.uniform([1]) + em.random.uniform([1], seed=2))
    f()
    states = f.get_concrete_function().variables
    assert len(states) == 2 and all(s in random_seed._traced_states for s in states)
    refs = [weakref.ref(s) for s in states]
    del f, states
    gc.collect()
    assert [r() for r in refs] == [None, None]  # so set_seed no longer resets them


def test_traced_random_state_is_not_a_distributed_variable():
    strategy = em.distribute.MirroredStrategy()
    with strategy.scope():
        f = em.function(lambda: em.random.uniform([1]))
        f()
    state, = f.get_concrete_function().variables
    assert type(state).__name__ == "_ProcessState"
