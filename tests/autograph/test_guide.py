"""The tf.function guide's AutoGraph examples, written with `em.`, give the guide's output
(../shared/guides/tf-function-guide.zh.txt: AutoGraph 转换, 条件语句, 循环; the tf.wiki
page's square_if_positive), compiled: a fallback to the interpreter is an error. The
guide's `train(num_steps)` (retracing for Python ints, not for tensors) is in
tests/runtime/test_guide_examples.py with the guide's other tracing examples."""

import re

import numpy as np

import ember as em


@em.function
def tanh_loop(x):
    while em.reduce_sum(x) > 1:
        em.print(x)
        x = em.tanh(x)
    return x


def test_the_tanh_while_loop_runs_until_the_sum_is_at_most_one(capfd):
    x = np.array([0.682211161, 0.396621943, 0.451262951, 0.643357158, 0.87304759], np.float32)
    got = tanh_loop(em.constant(x)).numpy()
    expected, printed = x, []
    while expected.sum() > 1:
        printed.append(expected)
        expected = np.tanh(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    lines = [line for line in capfd.readouterr().err.splitlines() if line.startswith("[")]
    assert len(lines) == len(printed)  # one run-time print per iteration, as the guide's
    first = [float(v) for v in lines[0].strip("[]").split()]
    np.testing.assert_allclose(first, printed[0], rtol=1e-6)
    assert tanh_loop.experimental_get_tracing_count() == 1


def test_to_code_shows_the_loop_as_functions_of_its_state():
    code = em.autograph.to_code(tanh_loop.python_function)
    assert "def loop_test(x):" in code and "def loop_body(x):" in code
    assert "x, = ag__.while_stmt(loop_test, loop_body, ag__.ld(locals(), ('x',)), ('x',)" \
        in code
    assert "ag__.converted_call(em.tanh, x)" in code
    compile(code, "<to_code>", "exec")  # readable, and valid Python


@em.function
def fizzbuzz(n):
    for i in em.range(1, n + 1):
        print('Tracing for loop')
        if i % 15 == 0:
            print('Tracing fizzbuzz branch')
            em.print('fizzbuzz')
        elif i % 3 == 0:
            print('Tracing fizz branch')
            em.print('fizz')
        elif i % 5 == 0:
            print('Tracing buzz branch')
            em.print('buzz')
        else:
            print('Tracing default branch')
            em.print(i)


def test_fizzbuzz_traces_each_branch_once_and_prints_at_run_time(capfd):
    fizzbuzz(em.constant(5))
    fizzbuzz(em.constant(20))
    out, err = capfd.readouterr()
    assert out.split("\n")[:5] == ["Tracing for loop", "Tracing fizzbuzz branch",
                                   "Tracing fizz branch", "Tracing buzz branch",
                                   "Tracing default branch"]
    assert out.count("Tracing") == 5  # the second call reuses the trace
    assert err.split() == ("1 2 fizz 4 buzz 1 2 fizz 4 buzz fizz 7 8 fizz buzz 11 fizz 13 "
                           "14 fizzbuzz 16 17 fizz 19 buzz").split()


@em.function
def square_if_positive(x):
    if x > 0:
        x = x * x
    else:
        x = 0
    return x


def test_square_if_positive():
    a, b = square_if_positive(em.constant(1)), square_if_positive(em.constant(-1))
    assert (a.numpy(), b.numpy()) == (1, 0) and a.dtype == em.int32
    assert square_if_positive(em.constant(3)).numpy() == 9
    assert square_if_positive.experimental_get_tracing_count() == 1
    code = em.autograph.to_code(square_if_positive.python_function)
    assert re.search(r"x, = ag__\.if_stmt\(x > 0, if_body, else_body, ", code)


@em.function
def sum_until_negative(x):
    total = 0.0
    for v in x:
        if v < 0:
            break
        total += v
    return total


@em.function
def first_index_above(x, threshold):
    i = 0
    for v in x:
        if v > threshold:
            return i
        i += 1
    return -1


def test_break_and_return_inside_staged_loops():
    x = em.constant([1.0, 2.5, -1.0, 4.0])
    assert sum_until_negative(x).numpy() == 3.5
    assert sum_until_negative(em.constant([1.0, 2.0])).numpy() == 3.0
    assert first_index_above(em.constant([1, 5, 9]), em.constant(4)).numpy() == 1
    assert first_index_above(em.constant([1, 2, 3]), em.constant(4)).numpy() == -1
    assert first_index_above.experimental_get_tracing_count() == 1
