"""A Function called under a tape is one recorded op whose gradient is a second Function
that traces the Python function again (runtime/call_gradients.py). That replay must draw
the random numbers the call drew and must not write the call's Variables again: it drew
from another generator (dropout's gradient with another mask) and ran every write twice.
Checked eagerly around a Function, with tapes inside a Function around a nested one, in
loops and branches, for op-seeded and unseeded random ops, to the second order."""

import numpy as np
import pytest

import ember as em

X = np.linspace(0.5, 1.2, 8).astype(np.float32)


def keep(rate, seed=None):
    return em.cast(em.random.uniform([8], seed=seed) > rate, em.float32)


@em.function
def layer(y):
    return y * keep(0.3) + 0.1 * y


@em.function
def seeded_layer(y):
    return y * keep(0.3, seed=4) + 0.1 * y


def eagerly(f):
    def step(x, n):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = f(f(x))
            s = em.reduce_sum(y * y)
        return y, tape.gradient(s, x)
    return step


def in_a_loop(f):
    @em.function
    def step(x, n):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in em.range(n):
                y = f(y)
            s = em.reduce_sum(y * y)
        return y, tape.gradient(s, x)
    return step


def in_a_branch(f):
    @em.function
    def step(x, n):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = f(f(x)) if n > 0 else x
            s = em.reduce_sum(y * y)
        return y, tape.gradient(s, x)
    return step


def through_a_nested_function(f):
    @em.function
    def twice(x):
        return f(f(x))

    def step(x, n):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = twice(x)
            s = em.reduce_sum(y * y)
        return y, tape.gradient(s, x)
    return step


@pytest.mark.parametrize("f", [layer, seeded_layer], ids=["unseeded", "seeded"])
@pytest.mark.parametrize("how", [eagerly, in_a_loop, in_a_branch, through_a_nested_function])
def test_gradient_of_a_call_uses_the_random_numbers_the_call_drew(how, f):
    step = how(f)
    f(em.constant(X))  # a call without a tape first: the gradient's draws fell out of step
    em.random.set_seed(99)
    for _ in range(2):
        y, dx = step(em.constant(X), em.constant(2))
        y = y.numpy()
        assert len(np.unique(np.round(y / X, 4))) > 1, y  # the masks differ by element
        np.testing.assert_allclose(dx.numpy(), 2 * y * y / X, rtol=1e-5, atol=1e-6)


def test_second_derivative_of_a_call_with_dropout_under_eager_tapes():
    @em.function
    def cube(x):
        y = x
        for _ in em.range(2):
            y = y * x * keep(0.3)
        return y
    em.random.set_seed(99)
    for _ in range(2):
        x = em.constant(X)
        with em.GradientTape() as outer:
            outer.watch(x)
            with em.GradientTape() as inner:
                inner.watch(x)
                y = cube(x)
            g = inner.gradient(y, x)
        g2 = outer.gradient(g, x)
        kept = y.numpy() / X ** 3  # y = x**3 * the product of the masks
        np.testing.assert_allclose(g.numpy(), 3 * X ** 2 * kept, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g2.numpy(), 6 * X * kept, rtol=1e-5, atol=1e-5)


V = em.Variable(1.3)


def halves(x):
    y = em.sin(x) * V * x
    V.assign(V * 0.5)
    return y * V


def test_gradient_of_a_call_that_writes_a_variable_writes_it_once_and_matches_eager():
    def derivatives(f):
        V.assign(1.3)
        x = em.constant(0.7)
        with em.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with em.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, [x, V])
        out = [y] + g + outer.gradient(g[0], [x, V]) + outer.gradient(g[1], [x, V])
        return [float(t) for t in out] + [float(V.numpy())]
    eager = derivatives(halves)
    assert eager[-1] == pytest.approx(0.65)
    np.testing.assert_allclose(derivatives(em.function(halves)), eager, rtol=1e-5)


def test_gradient_of_a_call_that_pulls_from_an_iterator_says_it_would_pull_again():
    # the replay would pull the next element: it took the gradient at [3, 4] for [1, 2]
    it = iter(em.data.Dataset.from_tensor_slices(em.constant([[1.0, 2.0], [3.0, 4.0]])))
    w = em.Variable([1.0, 1.0])

    @em.function
    def loss(it):
        return em.reduce_sum(next(it) * w)
    with em.GradientTape() as tape:
        value = loss(it)
    assert float(value) == 3.0
    with pytest.raises(em.errors.ControlFlowError, match="em.function call that pulls from"):
        tape.gradient(value, w)


def test_first_call_under_a_tape_of_a_function_that_creates_its_variable():
    # the call writes the Variable it creates, which has no value to keep before the call
    class Scale:
        def __init__(self):
            self.w = None

        @em.function
        def __call__(self, x):
            if self.w is None:
                self.w = em.Variable(em.ones([2]) * 2.0)
            return x * self.w
    scale, x = Scale(), em.constant([1.0, 3.0])
    with em.GradientTape() as tape:
        tape.watch(x)
        y = scale(x)
    dx, dw = tape.gradient(y, [x, scale.w])
    np.testing.assert_allclose(dx.numpy(), [2.0, 2.0])
    np.testing.assert_allclose(dw.numpy(), [1.0, 3.0])
