"""Second and third derivatives (tapes inside tapes) through staged loops: AutoGraph `for`
and `while` over tensors, em.while_loop, em.scan, em.foldl/foldr, TensorArray loops, nested
loops and branches in loops, inside em.function and under eager tapes around one, against
the eager tape and float64 central differences.

The gradient of a loop is itself a loop, reading the forward loop's stacks of per-iteration
values: a tape around that gradient must see those stacks depend on the loop's inputs."""

import numpy as np
import pytest

import ember as em


def _for(x):
    y = x
    for _ in em.range(em.constant(2)):
        y = em.sin(y) * x
    return y


def _while(x):
    y = x
    i = em.constant(0)
    while i < 2:
        y = em.sin(y) * x
        i += 1
    return y


def _while_loop(x):
    return em.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, em.sin(y) * x),
                         (em.constant(0), x))[1]


def _while_loop_no_capture(x):  # x reaches the body only as the initial loop variable
    return em.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, em.sin(y) * y),
                         (em.constant(0), x))[1]


def _scan(x):
    ys = em.scan(lambda a, e: em.sin(a) * x * e, em.stack([x, x + 1.0]), initializer=x)
    return em.reduce_sum(ys)


def _foldl(x):
    return em.foldl(lambda a, e: em.sin(a) * e, em.stack([x, x * 2.0]), initializer=x)


def _foldr(x):
    return em.foldr(lambda a, e: em.sin(a) * e, em.stack([x, x * 2.0]), initializer=x)


def _tensor_array(x):
    ta = em.TensorArray(x.dtype, size=2)
    y = x
    for i in em.range(2):
        y = em.sin(y) * x
        ta = ta.write(i, y)
    return em.reduce_sum(ta.stack())


def _tensor_array_dynamic(x):  # its buffer grows in the loop: a ragged stack
    ta = em.TensorArray(x.dtype, size=0, dynamic_size=True, element_shape=[None])
    y = em.stack([x, x * 2.0])
    for i in em.range(em.constant(2)):
        y = em.sin(y) * x
        ta = ta.write(i, y)
    return em.reduce_sum(ta.concat())


def _nested(x):
    y = x
    for _ in em.range(em.constant(2)):
        for _ in em.range(em.constant(2)):
            y = em.sin(y) * x
    return y


def _branch_in_loop(x):
    y = x
    for i in em.range(em.constant(3)):
        if i > 0:
            y = em.sin(y) * x
        else:
            y = y * y
    return y


FORMS = [_for, _while, _while_loop, _while_loop_no_capture, _scan, _foldl, _foldr,
         _tensor_array, _tensor_array_dynamic, _nested, _branch_in_loop]


def derivatives(f, x, order: int) -> list:
    """[f', f'', ...] at x, up to `order`, by `order` nested tapes."""
    tapes = [em.GradientTape() for _ in range(order)]
    for tape in tapes:
        tape.__enter__()
        tape.watch(x)
    value = f(x)
    out = []
    for tape in reversed(tapes):
        tape.__exit__(None, None, None)
        value = tape.gradient(value, x)
        out.append(value)
    return out


def finite_difference(f, x: float, order: int, h: float) -> float:
    """The order-th derivative of f at x by central differences in float64."""
    if order == 0:
        return float(f(em.constant(x, dtype=em.float64)))
    return (finite_difference(f, x + h, order - 1, h) -
            finite_difference(f, x - h, order - 1, h)) / (2 * h)


def values(ds) -> list:
    assert all(d is not None for d in ds), ds  # a None here was a silent missing gradient
    return [float(d) for d in ds]


@pytest.mark.parametrize("f", FORMS, ids=lambda f: f.__name__.strip("_"))
def test_second_derivative_through_loop_compiled_matches_eager_and_differences(f):
    x = em.constant(0.7)
    eager = values(derivatives(f, x, 2))
    compiled = values(em.function(lambda x: derivatives(f, x, 2))(x))
    np.testing.assert_allclose(compiled, eager, rtol=1e-4)
    fd = [finite_difference(f, 0.7, k, 1e-3) for k in (1, 2)]
    np.testing.assert_allclose(compiled, fd, rtol=2e-3, atol=1e-4)


@pytest.mark.parametrize("f", [_for, _while_loop, _scan], ids=lambda f: f.__name__.strip("_"))
def test_eager_tapes_around_a_function_with_a_loop_give_its_second_derivative(f):
    # the call's gradient is a Function with the reverse loop: the outer tape records it
    x = em.constant(0.7)
    eager = values(derivatives(f, x, 2))
    np.testing.assert_allclose(values(derivatives(em.function(f), x, 2)), eager, rtol=1e-4)


@pytest.mark.parametrize("f", [_for, _while_loop], ids=lambda f: f.__name__.strip("_"))
def test_third_derivative_through_loop(f):
    x = em.constant(0.7)
    eager = values(derivatives(f, x, 3))
    np.testing.assert_allclose(values(em.function(lambda x: derivatives(f, x, 3))(x)), eager,
                               rtol=1e-4)
    np.testing.assert_allclose(eager[2], finite_difference(f, 0.7, 3, 1e-2), rtol=1e-2)


def test_hessian_by_jacobian_of_gradient_through_loop():
    def hessian(x):
        with em.GradientTape() as outer:
            outer.watch(x)
            with em.GradientTape() as inner:
                inner.watch(x)
                y = x
                for _ in em.range(2):
                    y = em.sin(y) * x
                s = em.reduce_sum(y)
            g = inner.gradient(s, x)
        return outer.jacobian(g, x)
    x = em.constant([0.7, 1.1])
    eager = hessian(x).numpy()
    fd = [finite_difference(lambda v: em.reduce_sum(_for(v)), float(v), 2, 1e-3)
          for v in x.numpy()]
    np.testing.assert_allclose(eager, np.diag(fd), rtol=2e-3, atol=1e-4)
    np.testing.assert_allclose(em.function(hessian)(x).numpy(), eager, rtol=1e-4, atol=1e-6)


def test_second_derivative_with_respect_to_a_variable_read_in_the_loop():
    v = em.Variable(0.9)

    def grads(x):
        with em.GradientTape(persistent=True) as outer:
            with em.GradientTape() as inner:
                inner.watch(x)
                y = x
                for _ in em.range(2):
                    y = em.sin(y) * v
            dx, dv = inner.gradient(y, [x, v])
        return dx, dv, outer.gradient(dx, v), outer.gradient(dv, v)
    x = em.constant(0.7)
    eager = values(grads(x))
    np.testing.assert_allclose(values(em.function(grads)(x)), eager, rtol=1e-4)
    f = lambda w: _for_with(x, w)  # noqa: E731
    np.testing.assert_allclose(eager[3], finite_difference(f, 0.9, 2, 1e-3), rtol=2e-3)


def _for_with(x, w):
    y = em.cast(x, w.dtype)
    for _ in range(2):
        y = em.sin(y) * w
    return y
