"""A function whose body may run off its end returns None there in Python. Traced, a
tensor that decides between a `return` and running off is an error (as TensorFlow's
AutoGraph raises), never the placeholder zeros of the path that did not return; where
Python decides, the traced function returns None as Python does."""

import pytest

import ember as em


def returns_if_positive(x):
    if x > 0:
        return x * 10.0


def returns_inside_loop(n):
    i = 0
    while i < n:
        if i == 3:
            return i
        i += 1


def returns_on_every_path(x):
    if x > 0:
        return x * 10.0
    return x


def returns_if_asked(x, flag):
    if flag:
        return x * 2.0


def loops_until_it_returns(n):
    i = em.constant(0)
    while True:
        if i >= n:
            return i
        i += 1


def else_raises(x, flag):
    if flag:
        return x
    else:
        raise ValueError("no value for this flag")


@pytest.mark.parametrize("fn, arg", [(returns_if_positive, -1.0), (returns_inside_loop, 2)])
def test_a_tensor_deciding_to_run_off_the_end_is_an_error(fn, arg):
    assert fn(em.constant(arg)) is None  # eagerly, Python's None
    line = fn.__code__.co_firstlineno
    with pytest.raises(em.ControlFlowError,
                       match=rf"defined at .*test_return_fall_off.py:{line} returns a value "
                             r"on some paths and runs off its end .* Add a `return` at its end"):
        em.function(fn)(em.constant(arg))


def test_returns_on_every_path_are_unchanged():
    f = em.function(returns_on_every_path)
    assert f(em.constant(-1.0)).numpy() == -1.0
    assert f(em.constant(2.0)).numpy() == 20.0


def test_python_deciding_to_run_off_the_end_returns_none():
    f = em.function(returns_if_asked)
    assert f(em.constant(1.0), True).numpy() == 2.0
    assert f(em.constant(1.0), False) is None


def test_a_loop_left_only_by_return_does_not_run_off():
    assert em.function(loops_until_it_returns)(em.constant(3)).numpy() == 3


def test_a_raise_is_not_running_off_the_end():
    f = em.function(else_raises)
    assert f(em.constant(1.0), True).numpy() == 1.0
    with pytest.raises(ValueError, match="no value for this flag"):
        f(em.constant(1.0), False)
