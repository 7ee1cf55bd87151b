"""An em.Variable in AutoGraph's conditions, loops and builtins is the tensor it holds, as
a tf.Variable is in TensorFlow's: inside em.function `if v:`, `while v:`, `for i in
range(v)` and `for x in v` read it when the function runs (not once, while tracing), and
give what the same code gives eagerly."""

import numpy as np
import pytest

import ember as em


def _eager_then_compiled(program, reset, *args):
    """[eager result, compiled result], each run from the state `reset()` sets."""
    reset()
    eager = program(*args)
    reset()
    compiled = em.function(program)(*args)
    return eager, compiled


def _same(eager, compiled):
    np.testing.assert_array_equal(np.asarray(compiled), np.asarray(eager))


@pytest.mark.parametrize("value", [True, False])
def test_if_on_a_bool_variable_reads_it(value):
    flag = em.Variable(value)

    def program():
        if flag:
            return em.constant(1)
        return em.constant(0)
    _same(*_eager_then_compiled(program, lambda: flag.assign(value)))
    f = em.function(program)
    flag.assign(not value)  # a later value: read when the function runs
    assert int(f()) == int(not value)
    assert f.experimental_get_tracing_count() == 1


def test_while_on_a_bool_variable_reads_it_in_each_iteration():
    flag = em.Variable(True)

    def program():
        count = 0
        while flag:
            count += 1
            if count >= 3:
                flag.assign(False)
        return count
    eager, compiled = _eager_then_compiled(program, lambda: flag.assign(True))
    assert eager == 3 and int(compiled) == 3
    assert not bool(flag)


def test_while_on_a_comparison_of_a_variable_it_changes():
    n = em.Variable(4)

    def program():
        steps = 0
        while n > 0:
            n.assign_sub(1)
            steps += 1
        return steps
    eager, compiled = _eager_then_compiled(program, lambda: n.assign(4))
    assert eager == 4 and int(compiled) == 4
    assert int(n) == 0


def test_while_a_variable_is_not_zero_stops_when_it_is():
    """`v != 0` is elementwise (a tensor), not Python's identity test, which is always true
    and made this loop trace forever."""
    v = em.Variable(3)
    bodies = []  # runs of the body eagerly, traces of it in a function: a few, not forever

    def count_body():
        bodies.append(1)
        if len(bodies) > 20:
            raise RuntimeError("`while v != 0` does not stop")

    def program():
        while v != 0:
            count_body()
            v.assign_sub(1)
        return v.read_value()
    eager, compiled = _eager_then_compiled(program, lambda: v.assign(3))
    assert int(eager) == 0 and int(compiled) == 0 and int(v) == 0
    f = em.function(program)
    v.assign(5)
    assert int(f()) == 0 and int(v) == 0
    assert "scf.while" in f.get_concrete_function().mlir("traced")


@pytest.mark.parametrize("value", [0, 2])
def test_if_a_variable_equals_is_staged_as_a_cond(value):
    v = em.Variable(value)

    def program():
        if v == 0:
            out = em.constant(10)
        else:
            out = em.constant(20)
        return out
    eager, compiled = _eager_then_compiled(program, lambda: v.assign(value))
    _same(eager, compiled)
    assert int(compiled) == (10 if value == 0 else 20)
    f = em.function(program)
    assert "scf.if" in f.get_concrete_function().mlir("traced")
    v.assign(2 - value)  # the other branch, from the same trace
    assert int(f()) == (20 if value == 0 else 10)
    assert f.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("count", [4, 0, -2])
def test_for_over_range_of_a_variable(count):
    n = em.Variable(count)

    def program():
        total = 0
        for i in range(n):
            total += i
        return total
    eager, compiled = _eager_then_compiled(program, lambda: n.assign(count))
    assert eager == sum(range(count)) and int(compiled) == eager
    f = em.function(program)
    f()
    n.assign(count + 3)  # the loop's length is the variable's value at each call
    assert int(f()) == sum(range(count + 3))
    assert f.experimental_get_tracing_count() == 1


def test_range_with_a_variable_as_start_and_step():
    start, step = em.Variable(2), em.Variable(3)

    def program():
        total = 0
        for i in range(start, 12, step):
            total += i
        return total
    eager, compiled = _eager_then_compiled(program, lambda: None)
    assert eager == sum(range(2, 12, 3)) and int(compiled) == eager


def test_for_over_a_variable_its_len_enumerate_and_zip():
    v = em.Variable([3.0, -1.0, 2.0])

    def program(w):
        total = em.constant(0.0)
        for x in v:
            total += x
        for i, x in enumerate(v):
            total += em.cast(i, em.float32) * x
        for a, b in zip(v, w):
            total += a * b
        return total, len(v)
    w = em.constant([1.0, 2.0, 4.0])
    (e_total, e_len), (c_total, c_len) = _eager_then_compiled(program, lambda: None, w)
    _same(e_total, c_total)
    assert e_len == 3 and int(c_len) == 3


@pytest.mark.parametrize("value", [True, False])
def test_not_and_or_and_conditional_expressions_read_a_variable(value):
    flag, n = em.Variable(value), em.Variable(3)

    def program():
        a = not flag
        b = flag and n > 2
        c = flag or n > 5
        d = 10 if flag else 20
        return a, b, c, d
    eager, compiled = _eager_then_compiled(program, lambda: flag.assign(value))
    for e, c in zip(eager, compiled):
        _same(e, c)


def test_assert_on_a_variable_is_checked_when_the_function_runs():
    ok = em.Variable(True)

    @em.function
    def f(x):
        assert ok, "not ok"
        return x + 1.0
    assert float(f(em.constant(1.0))) == 2.0
    ok.assign(False)
    with pytest.raises(em.errors.InvalidArgumentError, match="not ok"):
        f(em.constant(1.0))


def test_em_cond_on_a_variable_reads_it():
    flag = em.Variable(True)
    f = em.function(lambda x: em.cond(flag, lambda: x + 1.0, lambda: x - 1.0))
    assert float(f(em.constant(1.0))) == 2.0
    flag.assign(False)
    assert float(f(em.constant(1.0))) == 0.0
    assert float(em.cond(flag, lambda: 1.0, lambda: -1.0)) == -1.0  # eagerly: Python's


def test_a_condition_on_an_int_variable_must_be_compared_as_in_tensorflow():
    """TensorFlow's AutoGraph requires a bool condition ("condition of while loop expected
    to be `tf.bool` scalar"); the error says so, names the loop and how to fix it."""
    n = em.Variable(4)

    @em.function
    def f():
        count = 0
        while n:
            n.assign_sub(1)
            count += 1
        return count
    with pytest.raises(em.errors.ControlFlowError,
                       match=r"the condition of the while loop at .*test_variable_conditions"
                             r"\.py:\d+ must be a scalar bool tensor.*compare it"):
        f()


def test_variables_outside_a_trace_stay_variables():
    """Eager code reads a variable where Python needs a value; converted code outside a
    trace leaves it to Python the same way."""
    from ember.frontend.autograph import operators
    v = em.Variable(2)
    assert operators.tensor_of(v) is v
    assert operators.if_stmt(v, lambda: ("yes",), lambda: ("no",), (), (), 1) == ("yes",)
