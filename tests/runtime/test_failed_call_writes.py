"""A call that raises leaves its variables as eager execution does: written by the ops before
the failing one (TensorFlow's automatic control dependencies run them in program order).
Compiled code returns its writes, so the executor runs a failed call again on the interpreter,
prints muted, where the trace calls nothing else out of Ember (runtime/executor.py)."""

import io
import sys

import numpy as np
import pytest

import ember as em


@pytest.fixture(params=["compiled", "eager"])
def mode(request):
    em.config.run_functions_eagerly(request.param == "eager")
    yield request.param
    em.config.run_functions_eagerly(False)


def _compiled(fn, *args) -> bool:
    executor = fn.get_concrete_function(*args)._executor
    return executor.fallback_reason is None and bool(executor.compiled_shapes)


def test_an_assert_that_fails_keeps_the_writes_before_it(mode, capsys):
    v = em.Variable([1, 2])

    @em.function
    def step(x):
        v.assign_add([1, 1])
        em.print("added", v, output_stream=sys.stdout)
        em.debugging.assert_positive(x, message="x must be positive")
        v.assign_add([10, 10])
        return x

    step(em.constant([1.0]))
    with pytest.raises(em.errors.InvalidArgumentError, match="x must be positive"):
        step(em.constant([-1.0]))
    np.testing.assert_array_equal(v.numpy(), [13, 14])
    assert capsys.readouterr().out == "added [2 3]\nadded [13 14]\n"  # each print once
    if mode == "compiled":
        assert _compiled(step, em.constant([1.0]))


def test_an_index_error_in_a_loop_keeps_the_iterations_before_it(mode):
    total = em.Variable(0.0)
    table = em.constant([1.0, 2.0, 4.0])

    @em.function
    def accumulate(n):
        def body(i):
            total.assign_add(em.gather(table, i))
            return (i + 1,)
        em.while_loop(lambda i: i < n, body, (em.constant(0),))
        return total.read_value()

    with pytest.raises(em.errors.InvalidArgumentError):
        accumulate(em.constant(5))  # index 3 is out of range: iterations 0-2 ran
    assert float(total.numpy()) == 7.0
    if mode == "compiled":
        assert _compiled(accumulate, em.constant(5))


def test_a_print_to_a_python_stream_is_not_printed_again(mode):
    stream = io.StringIO()
    v = em.Variable(0)

    @em.function
    def step(x):
        v.assign_add(1)
        em.print("v is", v, output_stream=stream)
        em.debugging.assert_equal(x, 0)
        return x

    with pytest.raises(em.errors.InvalidArgumentError):
        step(em.constant(1))
    assert int(v.numpy()) == 1 and stream.getvalue() == "v is 1\n"


def test_a_compiled_trace_calling_python_is_not_run_again():
    calls = []
    v = em.Variable(0)

    @em.function
    def step(x):
        v.assign_add(1)
        em.py_function(lambda t: calls.append(int(t)), [x], [])
        em.debugging.assert_equal(x, 0)
        return x

    step(em.constant(0))
    assert _compiled(step, em.constant(0)) and calls == [0]
    with pytest.raises(em.errors.InvalidArgumentError):
        step(em.constant(1))
    assert calls == [0, 1]  # Python ran once: this call's writes are not recovered
    assert int(v.numpy()) == 1


def test_writes_are_undone_where_the_interpreter_does_not_fail_the_same_way(monkeypatch):
    v = em.Variable(0)

    @em.function
    def step(x):
        v.assign_add(1)
        em.debugging.assert_equal(x, 0)
        return x

    step(em.constant(0))
    executor = step.get_concrete_function(em.constant(0))._executor
    replay = executor._replayer()
    monkeypatch.setattr(replay, "call", lambda symbol, args: args[-1].__setattr__("value", 7))
    with pytest.raises(em.errors.InvalidArgumentError):
        step(em.constant(1))
    assert int(v.numpy()) == 1  # the replay's write (7) was put back


def test_the_calls_error_is_raised_where_no_interpreter_can_run_it_again(monkeypatch):
    v = em.Variable(0)

    @em.function
    def step(x):
        v.assign_add(1)
        em.debugging.assert_equal(x, 0, message="x is not 0")
        return x

    step(em.constant(0))
    executor = step.get_concrete_function(em.constant(0))._executor

    def no_interpreter():
        raise RuntimeError("no interpreter")
    monkeypatch.setattr(executor, "_interpreter", no_interpreter)
    with pytest.raises(em.errors.InvalidArgumentError, match="x is not 0"):
        step(em.constant(1))
    assert int(v.numpy()) == 1  # as the compiled call left it
