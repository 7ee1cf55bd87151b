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


def test_variable_write_inside_a_loop_falls_back_to_the_interpreter():
    total = em.Variable(0)

    def body(i):
        total.assign_add(1)
        return (i + 1,)

    @em.function
    def count(n):
        em.while_loop(lambda i: i < n, body, (em.constant(0),))
        return total.read_value()

    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert int(count(em.constant(4))) == 4
    assert int(total.numpy()) == 4
    assert any("runs on the interpreter" in str(w.message) for w in caught)
