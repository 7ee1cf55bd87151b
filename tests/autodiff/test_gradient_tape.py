"""em.GradientTape's API, eagerly and inside em.function: watching, persistence, structures,
unconnected gradients, stop_gradient, custom_gradient, recompute_grad, jacobians."""

import numpy as np
import pytest

import ember as em


def close(a, b, rtol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-6)


def test_guide_gradient_of_a_function_call():
    @em.function
    def add(a, b):
        return a + b
    v = em.Variable(1.0)
    with em.GradientTape() as tape:
        result = add(v, 1.0)
    assert float(tape.gradient(result, v)) == 1.0


@pytest.mark.parametrize("compiled", [False, True])
def test_watch_and_structures(compiled):
    def f(x, y):
        with em.GradientTape() as tape:
            tape.watch({"a": x, "b": [y]})
            z = x * x * y + em.sin(y)
        return tape.gradient(z, {"a": x, "b": [y]})
    x, y = em.constant([1.0, 2.0]), em.constant([3.0, 0.5])
    g = (em.function(f) if compiled else f)(x, y)
    close(g["a"], 2 * np.array([1.0, 2.0]) * [3.0, 0.5])
    close(g["b"][0], np.array([1.0, 4.0]) + np.cos([3.0, 0.5]))


@pytest.mark.parametrize("compiled", [False, True])
def test_unconnected_and_integer_sources(compiled):
    def f(x, y, k):
        with em.GradientTape(persistent=True) as tape:
            tape.watch([x, y, k])
            z = x * 2.0
        none = tape.gradient(z, [y, k])
        zero = tape.gradient(z, y, unconnected_gradients=em.UnconnectedGradients.ZERO)
        return none, zero
    with pytest.warns(UserWarning, match="has dtype int32, which has no gradient"):
        none, zero = (em.function(f) if compiled else f)(
            em.constant(1.0), em.constant([1.0, 2.0]), em.constant(3))
    assert none == [None, None]
    close(zero, [0.0, 0.0])


def test_non_persistent_tape_is_used_once():
    x = em.constant(2.0)
    with em.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        tape.gradient(y, x)


def test_persistent_tape_and_reset_and_stop_recording():
    x = em.constant(3.0)
    with em.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        with tape.stop_recording():
            z = y * x  # not recorded
        w = y * 2.0
    assert float(tape.gradient(y, x)) == 6.0
    assert float(tape.gradient(w, x)) == 12.0
    assert tape.gradient(z, x) is None
    tape.reset()
    assert tape.gradient(y, x) is None


def test_variables_are_watched_when_read_unless_told_not_to():
    v = em.Variable(2.0)
    frozen = em.Variable(5.0, trainable=False)
    with em.GradientTape() as tape:
        y = v * frozen
    assert tape.watched_variables() == (v,)
    assert float(tape.gradient(y, v)) == 5.0
    with em.GradientTape(watch_accessed_variables=False) as tape:
        y = v * v
    assert tape.gradient(y, v) is None


@pytest.mark.parametrize("compiled", [False, True])
def test_output_gradients_weight_the_targets(compiled):
    def f(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        return tape.gradient(y, x, output_gradients=em.constant([1.0, 10.0]))
    close((em.function(f) if compiled else f)(em.constant([1.0, 2.0])), [2.0, 40.0])


@pytest.mark.parametrize("compiled", [False, True])
def test_stop_gradient(compiled):
    def f(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = x * em.stop_gradient(x * x)
        return tape.gradient(y, x)
    close((em.function(f) if compiled else f)(em.constant(3.0)), 9.0)


@pytest.mark.parametrize("compiled", [False, True])
def test_custom_gradient(compiled):
    @em.custom_gradient
    def log1pexp(x):
        e = em.exp(x)
        return em.math.log(1 + e), lambda dy: dy * (1 - 1 / (1 + e))

    def f(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = log1pexp(x)
        return tape.gradient(y, x)
    close((em.function(f) if compiled else f)(em.constant(100.0)), 1.0)


def test_custom_gradient_with_variables():
    v = em.Variable(3.0)

    @em.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            return dy * v, [dy * x * 100.0]
        return x * v, grad
    x = em.constant(2.0)
    with em.GradientTape() as tape:
        tape.watch(x)
        y = scale(x)
    gx, gv = tape.gradient(y, [x, v])
    assert float(gx) == 3.0 and float(gv) == 200.0


@pytest.mark.parametrize("compiled", [False, True])
def test_custom_gradient_of_a_variable_argument(compiled):
    # an argument is an input, whose gradient grad_fn returns; not one of `variables=`
    @em.custom_gradient
    def clip_grad(x):
        return em.identity(x), lambda dy: em.clip_by_value(dy, -0.1, 0.1)
    v = em.Variable(1.0)

    def f():
        with em.GradientTape() as tape:
            y = clip_grad(v) * 5.0
        return tape.gradient(y, v)
    close((em.function(f) if compiled else f)(), 0.1)


@pytest.mark.parametrize("compiled", [False, True])
def test_recompute_grad(compiled):
    block = em.recompute_grad(lambda x: em.tanh(x) * x)

    def f(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = block(x)
        return tape.gradient(y, x)
    x = np.array([0.3, -1.2], np.float32)
    t = np.tanh(x)
    close((em.function(f) if compiled else f)(em.constant(x)), (1 - t * t) * x + t)


@pytest.mark.parametrize("compiled", [False, True])
def test_jacobian_and_batch_jacobian(compiled):
    a = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], np.float32)

    def f(x):
        with em.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = em.matmul(x, em.constant(a.T))  # [b, 2]
        return tape.jacobian(y, x), tape.batch_jacobian(y, x)
    x = em.constant(np.ones((4, 3), np.float32))
    jac, batch = (em.function(f) if compiled else f)(x)
    expected = np.zeros((4, 2, 4, 3), np.float32)
    for b in range(4):
        expected[b, :, b, :] = a
    close(jac, expected)
    close(batch, np.broadcast_to(a, (4, 2, 3)))


def test_a_jacobian_over_a_dim_that_is_0_when_the_code_runs_is_empty_as_eagerly():
    """Found by a new-user trial: compiled, map_fn over zero rows could not know the `?`
    dim of a row and raised; eagerly the result is empty, as TensorFlow's."""
    def jac(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = em.tanh(x) * 2.0
        return tape.jacobian(y, x)
    f = em.function(jac, input_signature=[em.TensorSpec([None, 3], em.float32)])
    assert jac(em.zeros([0, 3])).shape == (0, 3, 0, 3)
    assert f(np.zeros((0, 3), np.float32)).shape == (0, 3, 0, 3)
    x = np.random.default_rng(0).random((2, 3)).astype(np.float32)
    close(f(x), jac(em.constant(x)))


@pytest.mark.parametrize("compiled", [False, True])
def test_second_order_elementwise_and_matmul(compiled):
    def f(x, m):
        with em.GradientTape(persistent=True) as outer:
            outer.watch([x, m])
            with em.GradientTape(persistent=True) as inner:
                inner.watch([x, m])
                y = x * x * x
                p = em.reduce_sum(em.matmul(m, m) * m)
            dy = inner.gradient(y, x)
            dm = inner.gradient(p, m)
        return outer.gradient(dy, x), outer.gradient(dm, m)
    m = np.array([[1.0, 2.0], [3.0, 4.0]], np.float64)
    d2y, d2m = (em.function(f) if compiled else f)(em.constant(2.0, em.float64), em.constant(m))
    close(d2y, 12.0)

    def first_derivative(mv):  # d/dm sum((m @ m) * m), by the tape, eagerly
        with em.GradientTape() as t:
            x = em.constant(mv)
            t.watch(x)
            q = em.reduce_sum(em.matmul(x, x) * x)
        return t.gradient(q, x).numpy()
    fd = np.zeros_like(m)  # d/dm of sum(first_derivative(m)), by central differences
    for i in range(2):
        for j in range(2):
            e = np.zeros_like(m)
            e[i, j] = 1e-6
            fd[i, j] = ((first_derivative(m + e) - first_derivative(m - e)) / 2e-6).sum()
    close(d2m, fd, rtol=1e-5)


def test_errors_are_clear():
    x = em.constant(1.0)
    with em.GradientTape() as tape:
        with pytest.raises(ValueError, match="tensors and Variables"):
            tape.watch("x")
    with pytest.raises(ValueError, match="source must be a tensor or a Variable"):
        tape.gradient(x, "x")


def test_broadcasting_of_unknown_dims_is_summed_when_it_happens():
    spec = em.TensorSpec([None], em.float32)

    @em.function(input_signature=[spec, spec])
    def f(x, y):
        with em.GradientTape() as tape:
            tape.watch([x, y])
            z = x * y
        return tape.gradient(z, [x, y])
    gx, gy = f(em.constant([2.0]), em.constant([1.0, 2.0, 3.0]))  # x broadcast at run time
    close(gx, [6.0])
    close(gy, [2.0, 2.0, 2.0])
    gx, gy = f(em.constant([2.0, 5.0]), em.constant([1.0, 3.0]))
    close(gx, [1.0, 3.0])
    close(gy, [2.0, 5.0])

    @em.function(input_signature=[em.TensorSpec([None, 3], em.float32),
                                  em.TensorSpec([3], em.float32)])
    def bias(x, b):
        with em.GradientTape() as tape:
            tape.watch([x, b])
            z = x + b  # x's `?` dim meets no dim of b: no run-time check is needed
        return tape.gradient(z, [x, b])
    assert "scf.if" not in bias.get_concrete_function().mlir()
    gx, gb = bias(em.ones([4, 3]), em.ones([3]))
    close(gx, np.ones((4, 3)))
    close(gb, [4.0, 4.0, 4.0])
