"""Gradients through staged loops whose loop variables mix static and `?` dims (an
input_signature of [None, 2], a shape invariant), compiled against the eager tape.

Was: ControlFlowError compiled, naming the gradient's own reverse loop ("loop variable 1 of
em.while_loop ... has shape (None, 2) ... but shape (None, None) after one iteration"): the
reverse loop read each iteration's value back from a ragged stack with every dim `?`, so
the loop variable's cotangent lost the static dims the loop carried it with.
"""

import numpy as np
import pytest

import ember as em

RNG = np.random.default_rng(7)


def _loop(kind: str, body, y, n):
    """`body` applied n times to y by a staged loop of the given kind."""
    if kind == "for":
        for _ in em.range(n):
            y = body(y)
        return y
    if kind == "while":
        i = em.constant(0)
        while i < n:
            y = body(y)
            i += 1
        return y
    return em.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, body(v)),
                         (em.constant(0), y))[1]


def _grads(kind: str):
    def grads(x, w, n):
        with em.GradientTape() as tape:
            tape.watch([x, w])
            y = _loop(kind, lambda v: v * w + em.sin(v), x, n)
            loss = em.reduce_sum(y * y)
        return tape.gradient(loss, [x, w], unconnected_gradients=em.UnconnectedGradients.ZERO)
    return grads


def _same_as_eager(fn, signature, *args):
    """fn compiled for `signature` gives what it gives eagerly."""
    args = [em.constant(a) for a in args]
    eager = [np.asarray(g) for g in em.nest.flatten(fn(*args))]
    compiled = em.function(fn, input_signature=signature)
    got = [np.asarray(g) for g in em.nest.flatten(compiled(*args))]
    assert len(got) == len(eager)
    for g, e in zip(got, eager):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["for", "while", "em.while_loop"])
@pytest.mark.parametrize("spec,value", [
    ([None, 2], (3, 2)), ([2, None], (2, 3)), ([None, None, 3], (2, 2, 3)),
    ([3, 2], (3, 2)), ([None, None], (3, 2))])  # the last two worked before
def test_loop_gradient_with_static_and_unknown_dims(kind, spec, value):
    x = RNG.standard_normal(value).astype(np.float32)
    w = np.linspace(0.5, 1.5, value[-1]).astype(np.float32)
    signature = [em.TensorSpec(spec, em.float32), em.TensorSpec([value[-1]], em.float32),
                 em.TensorSpec([], em.int32)]
    for n in (0, 1, 3):
        _same_as_eager(_grads(kind), signature, x, w, np.int32(n))


def _invariant_loop(grow: bool):
    """An em.while_loop whose loop variable has the shape invariant [None, 2]: one that
    appends a row each iteration, or one that keeps its shape."""
    def step(v, w):
        return em.concat([v, v[-1:] * w], 0) if grow else em.sin(v) * w

    def grads(x, w, n):
        with em.GradientTape() as tape:
            tape.watch([x, w])
            _, y = em.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, step(v, w)),
                                 (em.constant(0), x),
                                 shape_invariants=(em.TensorShape([]),
                                                   em.TensorShape([None, 2])))
            loss = em.reduce_sum(y * y)
        return tape.gradient(loss, [x, w])
    return grads


@pytest.mark.parametrize("grow", [False, True])
@pytest.mark.parametrize("spec", [[3, 2], [None, 2]])
def test_loop_gradient_under_a_mixed_shape_invariant(grow, spec):
    x = RNG.standard_normal((3, 2)).astype(np.float32)
    w = np.array([0.5, -1.5], np.float32)
    signature = [em.TensorSpec(spec, em.float32), em.TensorSpec([2], em.float32),
                 em.TensorSpec([], em.int32)]
    _same_as_eager(_invariant_loop(grow), signature, x, w, np.int32(3))


def test_loop_gradient_under_set_loop_options_shape_invariants():
    def grads(x, n):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in em.range(n):
                em.autograph.experimental.set_loop_options(
                    shape_invariants=[(y, em.TensorShape([None, 2]))])
                y = em.concat([y, em.sin(y[-1:])], 0)
            loss = em.reduce_sum(y * y)
        return tape.gradient(loss, x)
    x = RNG.standard_normal((3, 2)).astype(np.float32)
    for spec in ([3, 2], [None, 2]):
        _same_as_eager(grads, [em.TensorSpec(spec, em.float32), em.TensorSpec([], em.int32)],
                       x, np.int32(3))


@em.custom_gradient
def _doubled(y):
    def grad(dy):  # right values, but its static shape says less than y's: (None, None)
        rows = em.shape(dy)[0]
        return em.reshape(dy * 2.0, em.stack([rows, em.size(dy) // rows]))
    return y * 2.0, grad


def _loop_of(step):
    """The gradient of sum(y * y) for y = sin(step(y)) n times from x, by a staged loop."""
    def grads(x, n):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in em.range(n):
                y = em.sin(step(y))
            loss = em.reduce_sum(y * y)
        return tape.gradient(loss, x)
    return grads


@pytest.mark.parametrize("spec", [[3, 2], [None, 2]])
def test_loop_gradient_when_a_gradient_function_knows_less_of_the_shape(spec):
    # was: ControlFlowError compiled, even for a static shape: the reverse loop carried the
    # loop variable's cotangent at (3, 2) and got back (3, None) from the custom gradient
    x = RNG.standard_normal((3, 2)).astype(np.float32)
    _same_as_eager(_loop_of(_doubled),
                   [em.TensorSpec(spec, em.float32), em.TensorSpec([], em.int32)], x, np.int32(3))


@em.custom_gradient
def _wrong_gradient(y):
    def grad(dy):
        return em.reduce_sum(dy, axis=1)  # drops a dim: not y's shape
    return y * 2.0, grad


def test_a_gradient_of_the_wrong_shape_in_a_loop_names_the_loop_variable():
    grads = em.function(_loop_of(_wrong_gradient), input_signature=[
        em.TensorSpec([None, 2], em.float32), em.TensorSpec([], em.int32)])
    with pytest.raises(em.ControlFlowError,
                       match=r"gradient with respect to loop variable 'y' of the for loop at "
                             r".*test_gradient_loop_shapes\.py:\d+ has shape \(None,\), but "
                             r"the loop variable has shape \(None, 2\).*em\.custom_gradient"):
        grads(em.constant(np.ones((3, 2), np.float32)), em.constant(2))
