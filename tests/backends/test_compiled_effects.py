"""Variables and em.print in compiled code: variables are passed in and written back,
prints call back into Python; results equal the interpreter's."""

import sys

import numpy as np

import ember as em


def test_variables_update_through_compiled_code(capsys):
    v = em.Variable(np.zeros(3, np.float32))

    @em.function
    def step(x):
        em.print("before", v, output_stream=sys.stdout)
        v.assign_add(x)
        em.print("after", v.read_value() * 2, output_stream=sys.stdout)
        return v.read_value() + 1

    outs = [step(em.constant([1.0, 2.0, 3.0])).numpy() for _ in range(3)]
    cf = step.get_concrete_function(em.constant([1.0, 2.0, 3.0]))
    assert cf._executor.compiled_shapes and cf._executor.fallback_reason is None
    np.testing.assert_array_equal(v.numpy(), [3, 6, 9])
    np.testing.assert_array_equal(outs[-1], [4, 7, 10])
    assert capsys.readouterr().out == ("before [0 0 0]\nafter [2 4 6]\n"
                                       "before [1 2 3]\nafter [4 8 12]\n"
                                       "before [2 4 6]\nafter [6 12 18]\n")


def test_print_of_integer_and_bool_tensors_from_compiled_code(capsys):
    @em.function
    def show(x):
        em.print("x =", x, "positive:", x > 0)
        return x * 2

    show(em.constant([[-1, 2], [3, -4]], dtype=em.int32))
    assert capsys.readouterr().err == "x = [[-1 2]\n [3 -4]] positive: [[0 1]\n [1 0]]\n"
    cf = show.get_concrete_function(em.constant([[-1, 2], [3, -4]], dtype=em.int32))
    assert cf._executor.fallback_reason is None


def _compiled(fn, *args) -> bool:
    concrete = fn.get_concrete_function(*args)
    return concrete._executor.fallback_reason is None and \
        bool(concrete._executor.compiled_shapes)


def test_variable_writes_inside_a_loop_are_compiled():
    total = em.Variable(0)
    scale = em.Variable(1.0)

    def body(i):
        total.assign_add(1)
        scale.assign(scale.read_value() * 2.0)
        return (i + 1,)

    @em.function
    def count(n):
        em.while_loop(lambda i: i < n, body, (em.constant(0),))
        return total.read_value() + 10

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(count(em.constant(4))) == 14
        assert int(count(em.constant(3))) == 17  # the value carried over from the last call
    assert int(total.numpy()) == 7 and float(scale.numpy()) == 2.0 ** 7
    assert _compiled(count, em.constant(4))


def test_variable_writes_in_branches_nested_in_a_loop():
    evens, odds = em.Variable(0), em.Variable(0)
    last = em.Variable(-1)

    @em.function
    def tally(n):
        def add_to(variable, i):
            def branch():
                variable.assign_add(i)
                return i
            return branch

        def remember():
            last.assign(n)
            return n

        def body(i):
            em.cond(i % 2 == 0, add_to(evens, i), add_to(odds, i))
            return (i + 1,)
        em.while_loop(lambda i: i < n, body, (em.constant(0),))
        em.cond(n > 3, remember, lambda: n)  # no write in the else branch
        return evens.read_value() - odds.read_value()

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(tally(em.constant(6))) == (0 + 2 + 4) - (1 + 3 + 5)
        assert int(tally(em.constant(2))) == (6 + 0) - (9 + 1)
    assert (int(evens.numpy()), int(odds.numpy()), int(last.numpy())) == (6, 10, 6)
    assert _compiled(tally, em.constant(6))
