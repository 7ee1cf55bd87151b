"""Gradients through staged control flow (scf.if, scf.while, for loops), nested Functions
(func.call) and Variables, compiled, against analytic values and the eager tape."""

import numpy as np
import pytest

import ember as em


def close(a, b, rtol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=1e-6)


@em.function
def power(x, n):
    with em.GradientTape() as tape:
        tape.watch(x)
        r = em.constant(1.0)
        i = 0
        while i < n:  # x**n by repeated multiplication, a staged while loop
            r = r * x
            i += 1
    return r, tape.gradient(r, x)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 9])
def test_while_loop_power(n):
    r, g = power(em.constant(1.5), em.constant(n))
    close(r, 1.5 ** n)
    close(g, n * 1.5 ** (n - 1) if n else 0.0)
    assert power.experimental_get_tracing_count() == 1


@em.function
def branchy(x):
    with em.GradientTape() as tape:
        tape.watch(x)
        if x > 0:
            y = x * x * 3.0
        else:
            y = em.sin(x)
    return tape.gradient(y, x)


@pytest.mark.parametrize("x", [2.0, -0.5])
def test_if(x):
    close(branchy(em.constant(x)), 6 * x if x > 0 else np.cos(x))


def _unrolled(x):
    with em.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in range(3):
            y = em.sin(y) * x
            if em.reduce_sum(y) > 0.5:
                y = y * 2.0
    return tape.gradient(y, x)


def test_for_loop_with_if_and_captures_matches_eager():
    @em.function
    def staged(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in em.range(3):  # a staged for loop whose body holds a staged if
                y = em.sin(y) * x
                if em.reduce_sum(y) > 0.5:
                    y = y * 2.0
        return tape.gradient(y, x)
    for value in ([0.3, 0.7], [0.1, 0.05]):
        x = em.constant(value)
        close(staged(x), _unrolled(x))


def test_while_loop_with_maximum_iterations_and_dynamic_shape():
    @em.function(input_signature=[em.TensorSpec([None], em.float32)])
    def f(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            (y,) = em.while_loop(lambda y: em.reduce_sum(y) < 100.0, lambda y: (y * x,),
                                 (x,), maximum_iterations=3)
        return tape.gradient(y, x)
    x = np.array([1.5, 2.0], np.float32)
    close(f(em.constant(x)), 4 * x ** 3)  # three iterations: y = x**4
    close(f(em.constant(np.array([50.0, 60.0], np.float32))), [1.0, 1.0])


def test_variables_read_in_loop_and_branch():
    w = em.Variable(2.0)

    @em.function
    def f(x):
        with em.GradientTape() as tape:
            y = x
            for _ in em.range(2):
                y = y * w
            if y > 0:
                y = y + w * w
        return tape.gradient(y, w)
    close(f(em.constant(3.0)), 2 * 3.0 * 2.0 + 2 * 2.0)


def test_nested_function_call():
    scale = em.Variable(3.0)

    @em.function
    def inner(x):
        return em.tanh(x) * scale

    @em.function
    def outer(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = inner(x) * 2.0
        return tape.gradient(y, [x, scale])
    x = np.array([0.5, -0.25], np.float32)
    gx, gs = outer(em.constant(x))
    t = np.tanh(x)
    close(gx, 2 * 3.0 * (1 - t * t))
    close(gs, 2 * t.sum())


def test_eager_tape_over_a_compiled_function_with_loop():
    @em.function
    def f(x):
        r = x
        for _ in em.range(4):
            r = r * x
        return r
    x = em.constant(1.1)
    with em.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    close(tape.gradient(y, x), 5 * 1.1 ** 4)


def test_tensor_array_in_loop():
    @em.function
    def f(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            ta = em.TensorArray(em.float32, size=3)
            y = x
            for i in em.range(3):
                y = y * x
                ta = ta.write(i, y)
            total = em.reduce_sum(ta.stack())
        return tape.gradient(total, x)
    close(f(em.constant(2.0)), 2 * 2.0 + 3 * 4.0 + 4 * 8.0)


def test_gradient_ir_is_in_the_same_function_and_optimised_with_it():
    cf = branchy.get_concrete_function(em.constant(1.0))
    assert cf.mlir("traced").count("scf.if") == 2  # the forward and the backward `if`
    assert cf.mlir().count("scf.if") == 1  # the forward's result is unused: removed


def test_forward_and_backward_are_optimised_together():
    @em.function
    def f(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = em.sin(x) * em.sin(x)
        return tape.gradient(y, x)
    cf = f.get_concrete_function(em.TensorSpec([4], em.float32))
    traced, optimized = cf.mlir("traced"), cf.mlir()
    assert traced.count("ember.sin") == 2 and traced.count("ember.cos") == 2
    assert optimized.count("ember.sin") == 1 and optimized.count("ember.cos") == 1  # CSE
    x = np.array([0.1, 0.5, 1.0, 2.0], np.float32)
    close(f(em.constant(x)), 2 * np.sin(x) * np.cos(x))


def test_calls_of_a_function_and_of_its_concrete_function_are_recorded_once():
    @em.function
    def f(x, n=2):
        r = x
        for _ in range(n):
            r = r * x
        return r
    x = em.constant(2.0)
    with em.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y3 = f(x, n=3)
        y2 = f.get_concrete_function(em.TensorSpec([], em.float32))(x)
    close(tape.gradient(y3, x), 4 * 2.0 ** 3)
    close(tape.gradient(y2, x), 3 * 2.0 ** 2)


def test_a_tape_inside_a_staged_loop():  # an epoch of train steps in one function
    w = em.Variable(1.0)

    @em.function
    def epoch(n):
        total = em.constant(0.0)
        for _ in em.range(n):
            with em.GradientTape() as tape:
                loss = w * w
            w.assign_sub(0.25 * tape.gradient(loss, w))
            total += loss
        return total
    close(epoch(em.constant(3)), 1.0 + 0.25 + 0.0625)
    close(w.numpy(), 0.125)


def test_loop_variables_whose_shape_changes_keep_each_iterations_value():
    """The gradient's stack of a loop variable with `?` dims holds each iteration's value
    at its own shape: a TensorArray that grows (dynamic_size) and a shape invariant that
    lets a tensor grow."""
    @em.function
    def growing_array(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            ta = em.TensorArray(em.float32, size=0, dynamic_size=True)
            for i in em.range(5):
                ta = ta.write(i, x * em.cast(i, em.float32))
            y = em.reduce_sum(ta.stack() ** 2)
        return y, tape.gradient(y, x)

    @em.function
    def growing_tensor(x, n):
        with em.GradientTape() as tape:
            tape.watch(x)
            acc = em.reshape(x, [1])
            for _ in em.range(n):
                em.autograph.experimental.set_loop_options(
                    shape_invariants=[(acc, em.TensorShape([None]))])
                acc = em.concat([acc, em.reshape(acc[-1] * x, [1])], 0)
            y = em.reduce_sum(acc)
        return y, tape.gradient(y, x)
    x = em.constant(2.0)
    for run in (growing_array, growing_array.python_function):
        y, g = run(x)
        close(y, 120.0)
        close(g, 120.0)  # d/dx sum (i x)^2 = 2 x sum i^2
    for n, want in ((0, (2.0, 1.0)), (1, (6.0, 5.0)), (3, (30.0, 49.0))):
        y, g = growing_tensor(x, em.constant(n))
        close(y, want[0])
        close(g, want[1])


W = em.Variable(0.8)


@em.custom_gradient
def _scaled(x):  # reads W: its grad_fn gives W's gradient too
    def grad(dy, variables=None):
        return dy * W * 3.0, [dy * x * 3.0]
    return x * W, grad


def _custom_in_loop(x):
    y = x
    for _ in em.range(em.constant(2)):
        y = em.sin(_scaled(y))
    return y


def _custom_in_branch(x):
    if x > 0:
        return em.sin(_scaled(x))
    return x


@pytest.mark.parametrize("f", [_custom_in_loop, _custom_in_branch])
def test_custom_gradient_reading_a_variable_in_a_loop_or_branch_gives_its_gradient(f):
    # the custom_gradient's forward runs with the tape paused: the tape must still see
    # it read W, or the loop or branch around it had no input W (its gradient was None)
    def grads(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, [x, W])
    eager = grads(em.constant(0.7))
    compiled = em.function(grads)(em.constant(0.7))
    assert all(g is not None for g in compiled)
    close([g.numpy() for g in compiled], [g.numpy() for g in eager])
