"""The gradient of a branch or loop body traces it again (a replay): its Variable reads must
see the values the forward's reads saw. A random op reads and advances its generator's
state Variable, so a replay reading the Variable itself drew other numbers: dropout's
gradient had another mask than its output. Each case checks the gradient against the
output it came with (y is linear in x, so dy/dx = y/x), compiled; Variables the region
writes are checked against the eager tape."""

import numpy as np
import pytest

import ember as em

X = np.linspace(0.5, 1.2, 8).astype(np.float32)


def keep(rate, seed=None):
    return em.cast(em.random.uniform([8], seed=seed) > rate, em.float32)


def dropout_in_if(x, n):
    y = x
    if n > 0:
        y = x * keep(0.5) * 2.0
    return y


def dropout_in_for(x, n):
    y = x
    for _ in em.range(n):
        y = y * keep(0.3) + 0.1 * y
    return y


def seeded_dropout_in_if(x, n):  # an op seed: the op has a generator of its own
    y = x
    if n > 0:
        y = x * keep(0.5, seed=3) * 2.0
    return y


def seeded_dropout_in_for(x, n):
    y = x
    for _ in em.range(n):
        y = y * keep(0.3, seed=3) + 0.1 * y
    return y


def dropout_in_while_loop(x, n):
    return em.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * keep(0.3)), (0, x))[1]


def dropout_in_scan(x, n):
    del n
    return em.scan(lambda a, e: a * keep(0.3) * e, em.constant([1.0, 2.0]), initializer=x)[-1]


def dropout_with_generator(x, n):
    y = x
    for _ in em.range(n):
        y = y * em.cast(GENERATOR.uniform([8]) > 0.3, em.float32)
    return y


def dropout_in_nested_loops(x, n):  # the inner loop is traced again in the outer's replay
    y = x
    for _ in em.range(n):
        for _ in em.range(n):
            y = y * keep(0.3) + 0.1 * y
    return y


def dropout_in_if_in_loop(x, n):
    y = x
    for i in em.range(n + 1):
        if i % 2 == 0:
            y = y * keep(0.3) * 2.0
        else:
            y = y * 1.5
        y = y * keep(0.2)
    return y


def dropout_in_loop_in_if(x, n):
    if n > 0:
        y = x
        for _ in em.range(n):
            y = y * keep(0.3) + 0.5 * y
    else:
        y = x * 2.0
    return y


GENERATOR = em.random.Generator.from_seed(7)
CASES = [dropout_in_if, dropout_in_for, seeded_dropout_in_if, seeded_dropout_in_for,
         dropout_in_while_loop, dropout_in_scan,
         dropout_with_generator, dropout_in_nested_loops, dropout_in_if_in_loop,
         dropout_in_loop_in_if]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_through_random_ops_uses_the_forward_numbers(f):
    @em.function
    def step(x, n):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = f(x, n)
            s = em.reduce_sum(y * y)
        return y, tape.gradient(s, x)
    em.random.set_seed(1234)
    for _ in range(2):  # (the second call draws other numbers)
        y, dx = step(em.constant(X), em.constant(2))
        y = y.numpy()
        assert len(np.unique(np.round(y / X, 4))) > 1, y  # the masks differ by element
        np.testing.assert_allclose(dx.numpy(), 2 * y * y / X, rtol=1e-5, atol=1e-6)


def test_second_derivative_through_random_ops_uses_the_forward_numbers():
    @em.function
    def derivatives(x, n):
        with em.GradientTape() as outer:
            outer.watch(x)
            with em.GradientTape() as inner:
                inner.watch(x)
                y = x
                for _ in em.range(n):
                    y = y * x * keep(0.3)
                s = em.reduce_sum(y)
            g = inner.gradient(s, x)
        return y, g, outer.gradient(g, x)
    em.random.set_seed(1234)
    y, g, g2 = (t.numpy() for t in derivatives(em.constant(X), em.constant(2)))
    kept = y / X ** 3  # y = x**3 * the product of the masks
    assert 0 < np.count_nonzero(kept) < kept.size
    np.testing.assert_allclose(g, 3 * X ** 2 * kept, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g2, 6 * X * kept, rtol=1e-5, atol=1e-6)


V = em.Variable(1.3)


def written_in_loop(x):
    y = x
    for _ in em.range(em.constant(3)):
        y = em.sin(y) * V
        V.assign(V * 0.5)
    return y


def written_in_if(x):
    if x > 0:
        V.assign(V * 2.0)
        y = x * V
    else:
        y = x
    return y * V


def written_after_if(x):
    if x > 0:
        y = x * V
    else:
        y = x
    V.assign(5.0)
    return y


def written_in_nested_loop(x):
    y = x
    for _ in em.range(em.constant(2)):
        for _ in em.range(em.constant(2)):
            y = em.sin(y) * V
            V.assign(V * 0.5)
        y = y * V
    return y


@pytest.mark.parametrize("f", [written_in_loop, written_in_if, written_after_if,
                               written_in_nested_loop], ids=lambda f: f.__name__)
def test_gradient_through_region_that_writes_a_variable_matches_eager(f):
    def step(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return [y] + tape.gradient(y, [x, V])
    V.assign(1.3)
    eager = [t.numpy() for t in step(em.constant(0.7))]
    V.assign(1.3)
    compiled = [t.numpy() for t in em.function(step)(em.constant(0.7))]
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)


def test_second_derivative_with_a_variable_written_in_the_loop_matches_eager():
    def step(x):
        with em.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with em.GradientTape() as inner:
                inner.watch(x)
                y = x
                for _ in em.range(em.constant(3)):
                    y = em.sin(y) * V * x
                    V.assign(V * 0.5)
            g = inner.gradient(y, [x, V])
        return [y] + g + outer.gradient(g[0], [x, V]) + outer.gradient(g[1], [x, V])
    V.assign(1.3)
    eager = [t.numpy() for t in step(em.constant(0.7))]
    V.assign(1.3)
    compiled = [t.numpy() for t in em.function(step)(em.constant(0.7))]
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)
