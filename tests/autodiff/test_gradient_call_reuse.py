"""The gradient of a Function called under an eager tape is a second Function
(runtime/call_gradients.py). It is made once per trace and reused: made anew for each
recorded call, it traced and compiled the gradient again on every step of an eager training
loop (~60 ms a step for a 4x3 layer). Reuse must not mix up calls whose captures or
written Variables differ."""

import numpy as np

import ember as em

X = np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4)
W0 = np.linspace(0.1, 1.2, 12, dtype=np.float32).reshape(4, 3)


def expected(w):  # d/dw sum(tanh(x @ w))
    return X.T @ (1 - np.tanh(X @ w) ** 2)


def test_each_step_reuses_the_gradient_function_of_the_trace():
    w = em.Variable(W0)

    @em.function
    def loss(x):
        return em.reduce_sum(em.tanh(em.matmul(x, w)))

    seen = set()
    for _ in range(4):
        with em.GradientTape() as tape:
            y = loss(em.constant(X))
        g = tape.gradient(y, w)
        np.testing.assert_allclose(g.numpy(), expected(w.numpy()), rtol=1e-5, atol=1e-6)
        w.assign_sub(0.1 * g)
        concrete = loss.get_concrete_function(em.constant(X))
        seen.update(id(f) for f in concrete._call_gradients.values())
    assert len(seen) == 1
    gradient_function, = concrete._call_gradients.values()
    assert gradient_function.experimental_get_tracing_count() == 1
    assert loss.experimental_get_tracing_count() == 1


def test_a_variable_passed_or_captured_gets_its_own_gradient():
    w = em.Variable(W0)
    u = em.Variable(W0 * 2)

    @em.function
    def f(x, v):  # reads the global w, and v, both as Variables
        return em.reduce_sum(em.tanh(em.matmul(x, w)) + em.matmul(x, v))

    x = em.constant(X)
    for v in (w, u, w, u):
        with em.GradientTape() as tape:
            y = f(x, v)
        gw, gu = tape.gradient(y, [w, u])
        ones = X.T @ np.ones((2, 3), np.float32)
        want_w = expected(W0) + (ones if v is w else 0)
        np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-5, atol=1e-6)
        if v is u:
            np.testing.assert_allclose(gu.numpy(), ones, rtol=1e-6)
        else:
            assert gu is None


def test_a_variable_made_by_the_first_call_is_replayed_on_later_calls():
    state = []

    @em.function
    def f(x):
        if not state:
            state.append(em.Variable(np.zeros(4, np.float32)))
        state[0].assign_add(x[0])
        return em.reduce_sum(state[0] * x)

    x = em.constant(X)
    for step in range(3):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x).numpy()
        s = X[0] * (step + 1)  # the Variable after this call's write (no gradient
        np.testing.assert_allclose(g, np.stack([s, s]), rtol=1e-5, atol=1e-6)  # through it)
