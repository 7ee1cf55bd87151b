"""AutoGraph's errors name the variable and the user's line, and tracebacks point at the
user's source, never at generated code."""

import traceback

import numpy as np

import pytest

import ember as em
from ember.frontend.control_flow import ControlFlowError

HERE = __file__


def _line_of(fn, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def defined_in_one_branch(x):
    if x > 0:
        y = x * 2
    return y


def test_a_variable_defined_in_one_branch_only_names_it_and_the_if():
    line = _line_of(defined_in_one_branch, "if x > 0")
    with pytest.raises(ControlFlowError) as e:
        em.function(defined_in_one_branch)(em.constant(1))
    message = str(e.value)
    assert "'y' is assigned only in the true branch of the `if`" in message
    assert f"{HERE}:{line}" in message
    assert defined_in_one_branch(1) == 2  # plain Python is unaffected


def two_dtypes(x):
    if x > 0:
        y = x
    else:
        y = 2.5
    return y


def returns_two_dtypes(x):
    if x > 0:
        return x
    return 1.5


def test_a_variable_of_two_dtypes_names_it_and_the_if():
    line = _line_of(two_dtypes, "if x > 0")
    with pytest.raises(ControlFlowError) as e:
        em.function(two_dtypes)(em.constant(1))
    assert str(e.value).startswith(
        f"'y' is int32 in the true branch of the `if` at {HERE}:{line} and float32 in the "
        "false branch; both branches are traced, so 'y' must have one dtype: cast one")


def test_returns_of_two_dtypes_say_so_and_where():
    line = _line_of(returns_two_dtypes, "return 1.5")
    with pytest.raises(ControlFlowError) as e:
        em.function(returns_two_dtypes)(em.constant(1))
    message = str(e.value)
    assert message.startswith("the function returns float32 on one path and int32 on "
                              "another")
    assert f"{HERE}:{line}" in message and "em.cast" in message


def used_in_an_expression(x):
    if x > 0:
        pass
    else:
        z = x
    return z + 1


def test_using_it_in_an_expression_is_the_same_error():
    line = _line_of(used_in_an_expression, "if x > 0")
    with pytest.raises(ControlFlowError, match=rf"'z' is assigned only in the false branch "
                                               rf".*{line}"):
        em.function(used_in_an_expression)(em.constant(1))


def dtype_changes(n):
    x = 0
    i = 0
    while i < n:
        x = em.cast(x, em.float32) + 0.5
        i += 1
    return x


def test_a_loop_variable_that_changes_dtype_names_it_and_the_loop():
    line = _line_of(dtype_changes, "while i < n")
    with pytest.raises(ControlFlowError) as e:
        em.function(dtype_changes)(em.constant(3))
    message = str(e.value)
    assert f"loop variable 'x' of the while loop at {HERE}:{line} enters as int32 and " \
           "leaves the body as float32" in message


def python_int_then_float(n):
    i = 0
    while i < n:
        i = i + 0.5
    return i


def python_int_summing_floats(x):
    r = 0
    for v in x:
        r += v
    return r


@pytest.mark.parametrize("fn,where,arg", [
    (python_int_then_float, "while i < n", em.constant(3)),
    (python_int_summing_floats, "for v in x", em.constant([1.0, 2.0])),
])
def test_a_python_int_loop_variable_meeting_floats_is_named(fn, where, arg):
    """Found by a new-user trial: the add's dtype error named neither the variable nor
    the loop."""
    name = "i" if fn is python_int_then_float else "r"
    with pytest.raises(em.OpTypeError) as e:
        em.function(fn)(arg)
    assert f"'{name}' was the Python int 0 before the {where.split()[0]} loop at " \
           f"{HERE}:{_line_of(fn, where)}, so the loop carries it as an int32 tensor" \
           in str(e.value)


def shape_changes(n):
    x = em.zeros([1])
    for i in em.range(n):
        x = em.concat([x, x], 0)
    return x


def shape_relaxed(n):
    x = em.zeros([1])
    for i in em.range(n):
        em.autograph.experimental.set_loop_options(shape_invariants=[(x, em.TensorShape([None]))])
        x = em.concat([x, x], 0)
    return x


def test_a_shape_that_changes_says_how_to_relax_it():
    with pytest.raises(ControlFlowError, match=r"loop variable 'x' of the for loop .*"
                                               r"set_loop_options\(shape_invariants=\[\(x, "
                                               r"em.TensorShape\(\[None\]\)\)\]\)"):
        em.function(shape_changes)(em.constant(3))
    assert em.function(shape_relaxed)(em.constant(3)).shape == (8,)


def invariant_rejects_the_entering_shape(x):
    v = x
    for i in em.range(3):
        em.autograph.experimental.set_loop_options(
            shape_invariants=[(v, em.TensorShape([None, 2]))])
        v = em.concat([v, v], 0)
    return v


def test_an_invariant_that_rejects_the_entering_shape_names_the_variable_and_the_loop():
    """A value of shape (None, None) under set_loop_options' (None, 2): the error named
    "loop variable 1 of em.while_loop", neither the variable nor the user's line."""
    line = _line_of(invariant_rejects_the_entering_shape, "for i in em.range(3)")
    f = em.function(invariant_rejects_the_entering_shape,
                    input_signature=[em.TensorSpec([None, None])])
    with pytest.raises(ControlFlowError, match=rf"loop variable 'v' of the for loop at "
                                               rf"{HERE}:{line} enters the loop with shape "
                                               rf"\(None, None\), which its shape invariant "
                                               rf"\(None, 2\) does not allow"):
        f(np.ones((1, 2), np.float32))
    ok = em.function(invariant_rejects_the_entering_shape,
                     input_signature=[em.TensorSpec([None, 2])])
    assert ok(np.ones((1, 2), np.float32)).shape == (8, 2)


def undefined_before_loop(n):
    i = 0
    while i < n:
        last = i
        i += 1
    return last


def test_a_loop_variable_with_no_value_before_the_loop_is_named():
    line = _line_of(undefined_before_loop, "while i < n")
    with pytest.raises(ControlFlowError, match=rf"'last' is assigned in the while loop at "
                                               rf"{HERE}:{line}.*before the loop"):
        em.function(undefined_before_loop)(em.constant(3))


def _numbers(n):
    i = 0
    while i < n:
        yield i
        i += 1


def yield_in_loop(n):
    total = 0
    for v in _numbers(n):
        total += v
    return total


def try_in_loop(n):
    i = 0
    while i < n:
        try:
            i += 1
        except ValueError:
            pass
    return i


def walrus_in_test(n):  # the name bound in the test is read after the loop
    s = 0
    while (y := n * 2) > s:
        s += 5
    return s, y


@pytest.mark.parametrize("fn,where,what", [
    (yield_in_loop, (_numbers, "while i < n"), "`yield`"),
    (try_in_loop, (try_in_loop, "while i < n"), "a `try` statement"),
    (walrus_in_test, (walrus_in_test, "while (y := n * 2)"), "`:=`"),  # was a NameError
])
def test_yield_or_try_in_a_staged_loop_names_the_line(fn, where, what):
    line = _line_of(*where)
    with pytest.raises(ControlFlowError) as e:
        em.function(fn)(em.constant(3))
    assert f"{HERE}:{line}" in str(e.value) and what in str(e.value)
    got, expected = em.function(fn)(3), fn(3)  # on Python numbers it runs as Python
    assert (tuple(map(int, got)) if isinstance(expected, tuple) else got) == expected


def fails_inside(x):
    if x > 0:
        y = em.reshape(x, [2, 3])  # a shape error, at trace time
    else:
        y = x
    return y


def test_tracebacks_point_at_the_users_lines():
    with pytest.raises(Exception) as e:
        em.function(fails_inside)(em.constant(1))
    frames = traceback.extract_tb(e.value.__traceback__)
    mine = [f for f in frames if f.filename == HERE]
    assert any(f.lineno == _line_of(fails_inside, "y = em.reshape") for f in mine)
    assert all(f.line for f in mine)  # every frame in this file shows a source line


def checked(x):
    assert x > 0, "x must be positive"
    return x * 2


def test_assert_on_a_tensor_is_checked_when_the_compiled_code_runs():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        f = em.function(checked)
        assert f(em.constant(3)).numpy() == 6
        with pytest.raises(em.errors.AssertionFailedError, match="x must be positive") as e:
            f(em.constant(-3))
        # as Python raises for the same `assert`, and as TensorFlow does for a tensor's
        assert isinstance(e.value, AssertionError)
        assert isinstance(e.value, em.errors.InvalidArgumentError)
        assert f.experimental_get_tracing_count() == 1
    finally:
        em.config.set_fallback(previous)
    with pytest.raises(AssertionError, match="x must be positive"):
        checked(em.constant(-3))  # eagerly: Python's assert
    with pytest.raises(AssertionError, match="x must be positive"):
        em.function(checked)(-3)  # a Python number: raised while tracing


def test_assert_on_the_interpreter_raises_the_same_error():
    with pytest.raises(em.errors.AssertionFailedError, match="x must be positive"):
        em.function(checked, jit_compile=False)(em.constant(-3))


def appends_in_a_staged_loop(x):
    out = []
    for v in x:
        out.append(v * 2)
    return em.stack(out)


def test_a_list_appended_in_a_staged_loop_says_to_use_a_tensor_array():
    line = _line_of(appends_in_a_staged_loop, "for v in x")
    with pytest.raises(em.errors.OutOfScopeError) as e:
        em.function(appends_in_a_staged_loop)(em.constant([1, 2, 3]))
    assert f"the body of the for loop at {HERE}:{line}" in str(e.value)
    assert "em.TensorArray" in str(e.value)


def early_return_in_an_if(x, n):
    if n > 2:
        return x
    x = x + 1.0
    return x


@pytest.mark.parametrize("dims", [[None], [None, 2], [2]])
def test_an_early_return_of_unknown_shape_in_an_if_compiles(dims):
    """Found by a differential fuzz campaign: with a `?` dim, the branch that does not
    return needed zeros of the returned value's shape and raised "a `return` inside a
    staged loop returns a value of unknown shape" (there was no loop). A placeholder
    that is never returned has size 0 in that dim."""
    x = np.arange(2, dtype=np.float32).reshape([2] if len(dims) == 1 else [1, 2])
    f = em.function(early_return_in_an_if, input_signature=[
        em.TensorSpec([d if d is None else x.shape[i] for i, d in enumerate(dims)]),
        em.TensorSpec([], em.int32)])
    for n in (1, 3):
        want = early_return_in_an_if(em.constant(x), em.constant(n)).numpy()
        np.testing.assert_array_equal(f(x, np.int32(n)).numpy(), want)
