"""Gradient bugs found by the gradient fuzz (tests/fuzz/grad_fuzz.py), each reduced to a
minimal program: compiled must agree with eager (and with the analytic value)."""

import numpy as np

import ember as em

ZERO = em.UnconnectedGradients.ZERO


def both(f, *args):
    """f's results eagerly and compiled, as numpy (each a list of arrays)."""
    def run(fn):
        return [np.asarray(v) for v in _flatten(fn(*[em.constant(a) for a in args]))]
    return run(f), run(em.function(f))


def _flatten(value):
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def _early_return(x):
    if em.reduce_sum(x) > 0.5:
        return x * 2.0
    return x  # the second staged `if` of the return returns x with no op on it


def early_return_gradient(x):
    with em.GradientTape() as tape:
        tape.watch(x)
        out = _early_return(x)
    return tape.gradient(out, x, unconnected_gradients=ZERO)


def test_if_branch_returning_an_outside_value_passes_its_gradient():
    # was: compiled gave zeros (the scf.if whose branches only pass x through was not
    # recorded: no op in it read x)
    for x, want in (([1.0, 2.0], [2.0, 2.0]), ([0.1, 0.2], [1.0, 1.0])):
        eager, compiled = both(early_return_gradient, x)
        np.testing.assert_array_equal(eager[0], want)
        np.testing.assert_array_equal(compiled[0], want)


def _assign_in_loop(x, y, n):
    for _ in range(n):
        x = y  # the loop body returns the outside y as it is
    return x


def loop_pass_through_gradient(x, y, n):
    with em.GradientTape() as tape:
        tape.watch([x, y])
        out = _assign_in_loop(x, y, n)
    return tape.gradient(out, [x, y], unconnected_gradients=ZERO)


def test_loop_body_returning_an_outside_value_passes_its_gradient():
    for n, want in ((2, ([0.0, 0.0], [1.0, 1.0])), (0, ([1.0, 1.0], [0.0, 0.0]))):
        for got in both(loop_pass_through_gradient, [1.0, 2.0], [3.0, 4.0], n):
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])


def _rebound_after_if(b, x):
    y = em.sin(x)
    if b < 3:
        return x * 2.0, y
    y = em.sin(y)  # rebinds the y the first `if`'s branch reads: its gradient must not
    return x, y


def rebound_after_if_gradient(b, x):
    with em.GradientTape() as tape:
        tape.watch(x)
        outs = _rebound_after_if(b, x)
    return tape.gradient(outs, x)


def test_if_gradient_uses_the_values_the_branch_closed_over_when_traced():
    # was: compiled 2.0 (the gradient re-traced the branch with the later y, sin(sin(x)))
    for b, want in ((1, 2 + np.cos(0.5)), (5, 1 + np.cos(np.sin(0.5)) * np.cos(0.5))):
        for got in both(rebound_after_if_gradient, b, np.float32(0.5)):
            np.testing.assert_allclose(got[0], want, rtol=1e-6)


def _rebound_after_loop(x, n):
    y = em.sin(x)
    z = x
    for _ in range(n):
        z = z * y
    y = em.cos(x)  # rebinds the y the loop body reads
    return z, y


def rebound_after_loop_gradient(x, n):
    with em.GradientTape() as tape:
        tape.watch(x)
        outs = _rebound_after_loop(x, n)
    return tape.gradient(outs, x)


def test_loop_gradient_uses_the_values_the_body_closed_over_when_traced():
    # was: compiled 0.2907 for n = 2 (the reverse loop re-traced the body with y = cos(x))
    x = 0.5
    for n in (0, 2, 3):
        want = np.sin(x) ** n + n * x * np.sin(x) ** (n - 1) * np.cos(x) - np.sin(x)
        for got in both(rebound_after_loop_gradient, np.float32(x), n):
            np.testing.assert_allclose(got[0], want, rtol=1e-5)


def _return_in_else(a, x, y):
    if a > 13:
        y = em.tanh(y * x + x)
        x = x + 0.25 * em.tanh(y)
    else:
        if a > 1:
            return x * 2.0, y  # the then-branch leaves the return value undefined
    return x, y


def return_in_else_gradient(a, x, y):
    with em.GradientTape() as tape:
        tape.watch([x, y])
        outs = _return_in_else(a, x, y)
    return tape.gradient(outs, [x, y])


def test_if_gradient_with_a_return_value_one_branch_leaves_undefined():
    # was: compiled 0.0033 instead of 1.0037 (the branch's outputs, re-traced without
    # AutoGraph's placeholders for the undefined return value, were paired with the wrong
    # results)
    x, y = 1.57, 1.56
    t = np.tanh(y * x + x)
    dt = 1 - t * t
    want_x = 1 + 0.25 * (1 - np.tanh(t) ** 2) * dt * (y + 1) + dt * (y + 1)
    want_y = 0.25 * (1 - np.tanh(t) ** 2) * dt * x + dt * x
    for got in both(return_in_else_gradient, 61, np.float32(x), np.float32(y)):
        np.testing.assert_allclose(got, [want_x, want_y], rtol=1e-4)
    for got in both(return_in_else_gradient, 5, np.float32(x), np.float32(y)):
        np.testing.assert_allclose(got, [2.0, 1.0], rtol=1e-6)


def test_the_gradient_of_an_if_or_loop_does_not_write_its_variables_again():
    # was: compiled counted 2 per call (the backward re-traced the branch, assign and all)
    count = em.Variable(0.0)

    def step(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            if em.reduce_sum(x) > 0:
                count.assign_add(1.0)
                y = x * 3.0
            else:
                y = x
            for _ in range(2):
                count.assign_add(10.0)
                y = y * 2.0
        return tape.gradient(y, x)
    for fn in (step, em.function(step)):
        count.assign(0.0)
        np.testing.assert_array_equal(fn(em.constant([1.0, 2.0])), [12.0, 12.0])
        np.testing.assert_array_equal(fn(em.constant([-1.0, -2.0])), [4.0, 4.0])
        assert float(count.numpy()) == 41.0


def test_loop_gradient_when_the_cotangent_knows_less_of_the_shape_than_the_loop():
    # was: ControlFlowError compiled (the reverse loop's invariant was the loop variable's
    # (3,); its cotangent, the seed of the if's (None,) result, entered as (None,))
    v = em.Variable([1.0, 2.0, 3.0])

    def grad(x, n):
        with em.GradientTape() as tape:
            tape.watch(x)
            if em.reduce_sum(x) > 0:
                y = x * v  # (3,), merged with the else branch's (None,)
                for _ in range(n):  # a staged loop
                    y = y * 2.0
                z = y
            else:
                z = x
        return tape.gradient(z, x)
    compiled = em.function(grad, input_signature=[em.TensorSpec([None], em.float32),
                                                  em.TensorSpec([], em.int32)])
    for fn in (grad, compiled):
        two = em.constant(2)
        np.testing.assert_array_equal(fn(em.constant([1.0, 1.0, 1.0]), two), [4.0, 8.0, 12.0])
        np.testing.assert_array_equal(fn(em.constant([-1.0, -1.0, -1.0]), two), [1.0, 1.0, 1.0])


def test_reduction_gradients_over_negative_axes():
    # was: OpShapeError eagerly (the cotangent expanded at -2 then -1 of a rank-1 value:
    # 1x2x1), and compiled with `?` dims a gather of the shape at index -1 out of range
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)

    def grad(x):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = em.reduce_sum(em.reduce_mean(x, axis=[-2, -1]) * em.constant([1.0, 2.0])) \
                + em.reduce_sum(em.math.reduce_std(x, axis=-1))
        return tape.gradient(y, x)
    std = (x - x.mean(-1, keepdims=True)) / (4 * x.std(-1, keepdims=True))
    want = np.array([1.0, 2.0]).reshape(2, 1, 1) / 12 + std
    compiled = em.function(grad, input_signature=[em.TensorSpec([None] * 3, em.float32)])
    for fn in (grad, compiled, em.function(grad)):
        np.testing.assert_allclose(fn(em.constant(x)), want, rtol=1e-5)


def test_iterating_a_watched_tensor_eagerly_is_recorded():
    """Found by a differential fuzz campaign: `for e in w` under an eager tape made rows
    the tape never saw (the gradient was None; partial where w also reached the loss
    another way), while compiled code gave the right one. Rows are now w[i], recorded, as
    TensorFlow's __iter__ does."""
    def f(x, w):
        with em.GradientTape() as tape:
            tape.watch(w)
            h = x
            for e in w:
                h = h * e
            loss = em.reduce_sum(h) + em.reduce_sum(w * w)
        return tape.gradient(loss, w)
    x, w = em.constant([1.0, 2.0]), em.constant([2.0, 3.0, 5.0])
    expected = np.array([15.0, 10.0, 6.0]) * 3.0 + 2 * w.numpy()
    np.testing.assert_allclose(f(x, w).numpy(), expected)
    np.testing.assert_allclose(em.function(f)(x, w).numpy(), expected)
    assert [r.numpy().tolist() for r in w] == [2.0, 3.0, 5.0]  # no tape: the plain rows
