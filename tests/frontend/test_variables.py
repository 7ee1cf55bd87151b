"""frontend/variables.py: em.Variable read, assigned and updated inside functions, held in
structures of every kind; the same updates eagerly, on the trace's graph and compiled; and
TensorFlow's rule that only a Function's first trace may create variables."""

import numpy as np
import pytest

import ember as em
from three_ways import STRUCTURES, parts

X = np.array([1.0, 2.0, 3.0], np.float32)
KINDS = sorted(STRUCTURES)
MODES = ["eager", "traced", "compiled"]


@pytest.fixture(autouse=True)
def compiled_means_compiled():
    """A compiled run that falls back to the interpreter is an error here."""
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    yield
    em.config.set_fallback(previous)


def _caller(mode, fn):
    if mode == "eager":
        return fn
    return em.function(fn, jit_compile=(mode == "compiled"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_variables_in_a_structure_are_read_and_updated(kind, mode):
    make = STRUCTURES[kind]
    state = make(em.Variable(X), em.Variable(0))

    def step(x):
        a, b = parts(state)
        a.assign_add(x)
        b.assign(b + 1)
        return make(a.read_value() * 2.0, b.read_value())

    call = _caller(mode, step)
    for _ in range(3):
        out = call(em.constant(X))
    a, b = parts(state)
    np.testing.assert_array_equal(a.numpy(), X * 4)
    assert int(b.numpy()) == 3
    np.testing.assert_array_equal(parts(out)[0].numpy(), X * 8)
    assert type(out) is type(make(0, 0))


@pytest.mark.parametrize("mode", MODES)
def test_writes_inside_a_loop_and_a_branch_are_seen_after_them(mode):
    total = em.Variable(0.0)

    def accumulate(x, n):
        def body(i):
            em.cond(i % 2 == 0, lambda: total.assign_add(em.reduce_sum(x)),
                    lambda: total.assign_sub(1.0))
            return (i + 1,)
        em.while_loop(lambda i: i < n, body, (em.constant(0),))
        return total.read_value()

    got = _caller(mode, accumulate)(em.constant(X), em.constant(5))
    assert float(got.numpy()) == 3 * 6.0 - 2 * 1.0
    assert float(total.numpy()) == 16.0


@pytest.mark.parametrize("mode", ["traced", "compiled"])
def test_only_the_first_trace_may_create_variables(mode):
    made = []

    def make_once(x):
        if not made:
            made.append(em.Variable(1.0))
        return x * made[0]

    call = _caller(mode, make_once)
    assert float(call(em.constant(2.0)).numpy()) == 2.0
    assert float(call(em.constant([1.0, 2.0])).numpy()[1]) == 2.0  # a retrace, none made

    def make_always(x):
        return x * em.Variable(1.0)

    with pytest.raises(ValueError, match="variable"):
        _caller(mode, make_always)(em.constant(2.0))


def test_a_variable_captured_by_a_function_keeps_its_value_between_calls():
    counter = em.Variable(0)
    bump = em.function(lambda: counter.assign_add(1))
    for _ in range(4):
        bump()
    assert int(counter.numpy()) == 4


SLICE_KEYS = [1, -1, (0, 2), (slice(None), 0), (slice(1, None), slice(None, None, -2)),
              (Ellipsis, 1), (slice(None, None, 2), None, slice(3, 0, -1)),
              (slice(5, 9),), (-2, slice(None, None, -1))]


@pytest.mark.parametrize("compiled", [False, True])
def test_assigning_a_slice_writes_those_elements_as_numpy_would(compiled):
    start = np.arange(12.0).reshape(3, 4)
    v = em.Variable(start)
    for i, key in enumerate(SLICE_KEYS):
        want = start.copy()
        value = -np.arange(np.asarray(want[key]).size, dtype=np.float64).reshape(
            np.shape(want[key])) - 100 * i
        want[key] = value

        def write(value, key=key):
            v[key].assign(value)
            return v.read_value()
        v.assign(start)
        got = (em.function(write) if compiled else write)(em.constant(value))
        np.testing.assert_array_equal(got.numpy(), want, err_msg=repr(key))
    v.assign(start)
    v[1:, 2:].assign(7.0)  # a scalar, broadcast
    assert v.numpy()[1:, 2:].tolist() == [[7.0, 7.0], [7.0, 7.0]]


def test_slice_assignment_errors_and_reads_stay_differentiable():
    v = em.Variable([1.0, 2.0, 3.0])
    with pytest.raises(em.OpTypeError, match="dtype int32 assigned to a slice of variable"):
        v[:2].assign(em.constant([1, 2]))
    with pytest.raises(em.OpShapeError, match="broadcast"):
        v[:2].assign([1.0, 2.0, 3.0])
    with pytest.raises(AttributeError):
        em.constant([1.0]).assign(2.0)  # only a variable's slices
    with em.GradientTape() as tape:
        y = v[1] * 3.0 + em.reduce_sum(v[::2])
    assert tape.gradient(y, v).numpy().tolist() == [1.0, 3.0, 1.0]


@pytest.mark.parametrize("compiled", [False, True])
def test_scatter_nd_methods_of_a_variable(compiled):
    v = em.Variable(np.zeros((3, 2), np.int32))
    indices, updates = np.array([[0], [2], [0]]), np.array([[1, 2], [3, 4], [5, 6]], np.int32)

    def run(how):
        v.assign(np.full((3, 2), 4, np.int32))
        getattr(v, f"scatter_nd_{how}")(indices, updates)
        return v.read_value()
    for how, want in (("add", [[10, 12], [4, 4], [7, 8]]), ("sub", [[-2, -4], [4, 4], [1, 0]]),
                      ("max", [[5, 6], [4, 4], [4, 4]]), ("min", [[1, 2], [4, 4], [3, 4]])):
        got = (em.function(lambda how=how: run(how)) if compiled else lambda: run(how))()
        assert got.numpy().tolist() == want, how
    v.scatter_nd_update([[1]], [[9, 9]])
    assert v.numpy().tolist()[1] == [9, 9]
