"""em.optimizers against Keras 3's update formulas written out in numpy, over several steps,
eagerly and inside a compiled em.function (no interpreter fallback)."""

import math
import warnings

import numpy as np
import pytest

import ember as em

W0 = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
GRADS = [np.array([[0.5, -1.0], [2.0, 0.1]], np.float32),
         np.array([[-0.3, 0.2], [1.0, -4.0]], np.float32),
         np.array([[0.0, 0.7], [-1.5, 0.25]], np.float32)]
GRADS64 = [g.astype(np.float64) for g in GRADS]  # numpy keeps `float * float32` in float32


def ref_sgd(lr, momentum=0.0, nesterov=False):
    lr = float(np.float32(lr))  # the optimizer keeps it in a float32 Variable
    w, m = W0.astype(np.float64), np.zeros_like(W0, np.float64)
    for g in GRADS64:
        if not momentum:
            w = w - lr * g
            continue
        m = momentum * m - lr * g
        w = w + (momentum * m - lr * g if nesterov else m)
    return w


def ref_adam(lr, b1=0.9, b2=0.999, eps=1e-7, amsgrad=False, wd=None):
    lr = float(np.float32(lr))  # the optimizer keeps it in a float32 Variable
    w = W0.astype(np.float64)
    m, v, vhat = (np.zeros_like(w) for _ in range(3))
    for t, g in enumerate(GRADS64, start=1):
        if wd:
            w = w - w * wd * lr
        alpha = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        vhat = np.maximum(vhat, v)
        w = w - m * alpha / (np.sqrt(vhat if amsgrad else v) + eps)
    return w


def ref_rmsprop(lr, rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    lr = float(np.float32(lr))  # the optimizer keeps it in a float32 Variable
    w = W0.astype(np.float64)
    vel, mom, avg = (np.zeros_like(w) for _ in range(3))
    for g in GRADS64:
        vel = rho * vel + (1 - rho) * g * g
        avg = rho * avg + (1 - rho) * g
        denom = vel - avg * avg + eps if centered else vel + eps
        inc = lr * g / np.sqrt(denom)
        if momentum:
            mom = momentum * mom + inc
            w = w - mom
        else:
            w = w - inc
    return w


def ref_adagrad(lr, init=0.1, eps=1e-7):
    lr = float(np.float32(lr))  # the optimizer keeps it in a float32 Variable
    w, acc = W0.astype(np.float64), np.full(W0.shape, init)
    for g in GRADS64:
        acc = acc + g * g
        w = w - lr * g / np.sqrt(acc + eps)
    return w


CASES = {
    "sgd": (lambda: em.optimizers.SGD(0.1), ref_sgd(0.1)),
    "sgd-momentum": (lambda: em.optimizers.SGD(0.1, momentum=0.9), ref_sgd(0.1, 0.9)),
    "sgd-nesterov": (lambda: em.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
                     ref_sgd(0.1, 0.9, True)),
    "adam": (lambda: em.optimizers.Adam(0.1), ref_adam(0.1)),
    "adam-amsgrad": (lambda: em.optimizers.Adam(0.1, 0.8, 0.9, 1e-3, amsgrad=True),
                     ref_adam(0.1, 0.8, 0.9, 1e-3, amsgrad=True)),
    "adamw": (lambda: em.optimizers.AdamW(0.1, weight_decay=0.2), ref_adam(0.1, wd=0.2)),
    "rmsprop": (lambda: em.optimizers.RMSprop(0.1), ref_rmsprop(0.1)),
    "rmsprop-centered-momentum": (
        lambda: em.optimizers.RMSprop(0.05, rho=0.8, momentum=0.5, centered=True),
        ref_rmsprop(0.05, 0.8, 0.5, centered=True)),
    "adagrad": (lambda: em.optimizers.Adagrad(0.1, initial_accumulator_value=0.2),
                ref_adagrad(0.1, 0.2)),
}


@pytest.fixture(autouse=True)
def no_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        yield


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_updates_match_keras_formulas(case, compiled):
    make, want = CASES[case]
    opt, w = make(), em.Variable(W0)

    def step(g):
        opt.apply_gradients([(g, w)])
    if compiled:
        step = em.function(step)
    for g in GRADS:
        step(em.constant(g))
    np.testing.assert_allclose(w.numpy(), want, rtol=2e-5, atol=1e-6)
    assert int(opt.iterations.numpy()) == len(GRADS)
    if compiled:
        assert step.experimental_get_tracing_count() == 1


def test_slots_are_variables_created_on_first_apply():
    opt, w = em.optimizers.Adam(), em.Variable(W0, name="w")
    assert opt.variables[0] is opt.iterations and len(opt.variables) == 2  # + learning rate
    opt.apply_gradients([(GRADS[0], w)])
    assert opt.get_slot(w, "momentum").shape == w.shape
    assert sorted(v.name for v in opt.variables[2:]) == ["w/momentum:0", "w/velocity:0"]
    with pytest.raises(KeyError, match="velocity_hat"):
        opt.get_slot(w, "velocity_hat")


def test_second_optimizer_in_traced_function_raises_as_the_guide_shows():
    opt1, opt2 = em.optimizers.Adam(1e-2), em.optimizers.Adam(1e-3)

    @em.function
    def train_step(w, x, y, optimizer):
        with em.GradientTape() as tape:
            loss = em.reduce_sum(em.square(w * x - y))
        gradients = tape.gradient(loss, [w])
        optimizer.apply_gradients(zip(gradients, [w]))

    w, x, y = em.Variable(2.0), em.constant([-1.0]), em.constant([2.0])
    train_step(w, x, y, opt1)
    with pytest.raises(ValueError, match="tried to create variables on non-first call"):
        train_step(w, x, y, opt2)
    # the guide's workaround: one Function per optimizer
    step_1, step_2 = em.function(train_step.python_function), \
        em.function(train_step.python_function)
    for i in range(4):
        (step_1 if i % 2 == 0 else step_2)(w, x, y, opt1 if i % 2 == 0 else opt2)
    assert int(opt2.iterations.numpy()) == 2


def test_none_gradients_are_skipped_with_a_warning():
    opt = em.optimizers.SGD(1.0)
    a, b = em.Variable(1.0, name="a"), em.Variable(1.0, name="b")
    with pytest.warns(UserWarning, match=r"Gradients do not exist for variables \['b:0'\]"):
        opt.apply_gradients([(em.constant(0.5), a), (None, b)])
    assert (a.numpy(), b.numpy()) == (0.5, 1.0)
    with pytest.raises(ValueError, match="no gradients provided for any variable"):
        opt.apply_gradients([(None, a)])


def test_the_none_gradient_warning_names_the_users_line_inside_a_function():
    opt = em.optimizers.SGD(1.0)
    a, b = em.Variable(1.0, name="a"), em.Variable(1.0, name="b")

    @em.function
    def step():
        with em.GradientTape() as tape:
            loss = a * 3.0
        opt.apply_gradients(zip(tape.gradient(loss, [a, b]), [a, b]))  # through AutoGraph

    with pytest.warns(UserWarning, match="Gradients do not exist") as caught:
        step()
    assert [(w.filename, w.lineno) for w in caught] == [
        (__file__, step.python_function.__code__.co_firstlineno + 4)]


@pytest.mark.parametrize("pairs, error, match", [
    ([(np.ones(3, np.float32), "w")], TypeError, "updates em.Variables"),
    ([(np.ones(3, np.float32),)], TypeError, r"\(gradient, variable\) pairs"),
])
def test_bad_pairs_raise(pairs, error, match):
    with pytest.raises(error, match=match):
        em.optimizers.SGD().apply_gradients(pairs)


def test_gradient_shape_mismatch_names_the_variable():
    w = em.Variable(W0, name="kernel")
    with pytest.raises(ValueError, match=r"gradient of kernel:0 has shape \(3,\)"):
        em.optimizers.Adam().apply_gradients([(np.ones(3, np.float32), w)])


def test_integer_variable_is_rejected():
    with pytest.raises(TypeError, match="only floating-point"):
        em.optimizers.SGD().apply_gradients([(1, em.Variable(1))])


@pytest.mark.parametrize("make, match", [
    (lambda: em.optimizers.SGD(momentum=1.5), "momentum"),
    (lambda: em.optimizers.Adam(beta_1=1.0), "beta_1"),
    (lambda: em.optimizers.RMSprop(epsilon=-1.0), "epsilon"),
    (lambda: em.optimizers.AdamW(weight_decay=None), "weight_decay"),
    (lambda: em.optimizers.Adagrad(initial_accumulator_value=-0.1), "initial_accumulator"),
    (lambda: em.optimizers.SGD(learning_rate="fast"), "learning_rate"),
])
def test_bad_hyperparameters_raise(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_learning_rate_can_change_between_compiled_calls():
    opt, w = em.optimizers.SGD(1.0), em.Variable(0.0)
    step = em.function(lambda: opt.apply_gradients([(em.constant(1.0), w)]))
    step()
    opt.learning_rate = 0.5
    step()
    assert w.numpy() == -1.5 and step.experimental_get_tracing_count() == 1
    opt.learning_rate.assign(0.25)  # the Variable itself, as Keras 3's
    step()
    assert w.numpy() == -1.75 and step.experimental_get_tracing_count() == 1


def test_schedule_is_evaluated_on_iterations_in_a_compiled_step():
    schedule = em.optimizers.schedules.PiecewiseConstantDecay([1], [1.0, 0.25])
    opt, w = em.optimizers.SGD(schedule), em.Variable(0.0)
    step = em.function(lambda: opt.apply_gradients([(em.constant(1.0), w)]))
    for _ in range(3):
        step()
    assert w.numpy() == -(1.0 + 1.0 + 0.25)  # steps 0 and 1 are <= the boundary
    assert float(opt.learning_rate) == 0.25


@pytest.mark.parametrize("schedule, ref", [
    (em.optimizers.schedules.ExponentialDecay(0.1, 4, 0.5),
     lambda s: 0.1 * 0.5 ** (s / 4)),
    (em.optimizers.schedules.ExponentialDecay(0.1, 4, 0.5, staircase=True),
     lambda s: 0.1 * 0.5 ** (s // 4)),
    (em.optimizers.schedules.PiecewiseConstantDecay([2, 5], [1.0, 0.5, 0.1]),
     lambda s: 1.0 if s <= 2 else 0.5 if s <= 5 else 0.1),
    (em.optimizers.schedules.CosineDecay(0.2, 8, alpha=0.1),
     lambda s: 0.2 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(s, 8) / 8)) + 0.1)),
    (em.optimizers.schedules.CosineDecay(0.0, 8, warmup_target=1.0, warmup_steps=4),
     lambda s: s / 4 if s < 4 else 0.5 * (1 + math.cos(math.pi * min(s - 4, 8) / 8))),
    (em.optimizers.schedules.InverseTimeDecay(0.1, 4, 0.5),
     lambda s: 0.1 / (1 + 0.5 * s / 4)),
    (em.optimizers.schedules.InverseTimeDecay(0.1, 4, 0.5, staircase=True),
     lambda s: 0.1 / (1 + 0.5 * (s // 4))),
    (em.optimizers.schedules.PolynomialDecay(0.5, 6, end_learning_rate=0.1, power=2.0),
     lambda s: 0.4 * (1 - min(s, 6) / 6) ** 2 + 0.1),
    (em.optimizers.schedules.PolynomialDecay(0.5, 4, end_learning_rate=0.1, cycle=True),
     lambda s: 0.4 * (1 - s / (4 * max(1, math.ceil(s / 4)))) + 0.1),
])
def test_schedules_match_keras_formulas_eager_and_compiled(schedule, ref):
    steps = np.arange(15, dtype=np.int64)
    want = [ref(int(s)) for s in steps]
    eager = [float(schedule(em.constant(s))) for s in steps]
    compiled = em.function(lambda s: schedule(s))
    np.testing.assert_allclose(eager, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose([float(compiled(em.constant(s))) for s in steps], eager,
                               rtol=1e-6, atol=1e-7)


def test_schedule_arguments_are_checked():
    with pytest.raises(ValueError, match="decay_steps"):
        em.optimizers.schedules.ExponentialDecay(0.1, 0, 0.5)
    for schedule in (em.optimizers.schedules.InverseTimeDecay,
                     em.optimizers.schedules.PolynomialDecay):
        with pytest.raises(ValueError, match=f"{schedule.__name__}: `decay_steps`"):
            schedule(0.1, -1, 0.5)
    with pytest.raises(ValueError, match="1 less than the length of values"):
        em.optimizers.schedules.PiecewiseConstantDecay([1, 2], [1.0])


def test_minimize_with_a_callable_and_with_a_tape():
    w = em.Variable(10.0)
    em.optimizers.RMSprop(0.1).minimize(lambda: w * w / 2.0, [w])
    assert w.numpy() == pytest.approx(9.683772)  # Keras's RMSprop docstring value
    v = em.Variable(1.0)
    with em.GradientTape() as tape:
        loss = 3.0 * v
    em.optimizers.SGD(0.1).minimize(loss, [v], tape=tape)
    assert v.numpy() == pytest.approx(0.7)
    with pytest.raises(ValueError, match="`tape` is required"):
        em.optimizers.SGD().minimize(loss, [v])


@pytest.mark.parametrize("dtype", [np.float64, np.float16, em.bfloat16.np_dtype],
                         ids=["float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", ["sgd-nesterov", "adam", "rmsprop-centered-momentum",
                                  "adagrad"])
def test_other_float_dtypes_compiled_agrees_with_eager(case, dtype):
    make, want = CASES[case]
    runs = []
    for compiled in (False, True):
        opt, w = make(), em.Variable(W0.astype(dtype))

        def step(g):
            opt.apply_gradients([(g, w)])
        if compiled:
            step = em.function(step)
        for g in GRADS:
            step(em.constant(g.astype(dtype)))
        assert w.dtype == em.as_dtype(dtype)
        runs.append(w.numpy().astype(np.float64))
    np.testing.assert_array_equal(runs[0], runs[1])
    if dtype == np.float64:
        np.testing.assert_allclose(runs[0], want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("option, expected_w, expected_v", [
    ({"clipnorm": 1.0}, [2.4, 3.2], [-1.0]),
    ({"clipvalue": 0.5}, [2.5, 3.5], [-0.5]),
    ({"global_clipnorm": 1.0}, [3 - 3 / 13, 4 - 4 / 13], [-12 / 13]),
])
def test_keras_gradient_clipping_options(compiled, option, expected_w, expected_v):
    w, v = em.Variable([3.0, 4.0]), em.Variable([0.0])
    opt = em.optimizers.SGD(1.0, **option)

    def step():
        opt.apply_gradients([(em.constant([3.0, 4.0]), w), (em.constant([12.0]), v)])
    (em.function(step) if compiled else step)()
    np.testing.assert_allclose(w.numpy(), expected_w, rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), expected_v, rtol=1e-6)


def test_clipping_options_are_checked():
    with pytest.raises(ValueError, match="only one of clipnorm and global_clipnorm"):
        em.optimizers.Adam(clipnorm=1.0, global_clipnorm=1.0)
    with pytest.raises(ValueError, match="clipvalue must be a float > 0"):
        em.optimizers.RMSprop(clipvalue=-1.0)
