"""Functions with host calls (dataset loops, em.py_function, printing to a Python stream)
run as compiled CPU code that calls back into Python (backends/cpu/host_calls.py): each
test checks the function took the compiled path and agrees with eager; host calls whose
results have unknown rank stay on the interpreter, quietly."""

import io
import warnings

import numpy as np
import pytest

import ember as em

Dataset = em.data.Dataset


def executor_of(fn, *args):
    return fn.get_concrete_function(*args)._executor


def assert_compiled(fn, *args):
    executor = executor_of(fn, *args)
    assert executor.fallback_reason is None and executor.compiled_shapes, \
        executor.fallback_reason


def eager(fn, *args):
    em.config.run_functions_eagerly(True)
    try:
        return em.function(fn)(*args)
    finally:
        em.config.run_functions_eagerly(False)


def sum_all(ds):
    total = em.constant(0.0)
    count = em.constant(0)
    for x in ds:
        total += em.reduce_sum(em.cast(x, em.float32))
        count += 1
    return total, count


@pytest.mark.parametrize("make, expected", [
    (lambda: Dataset.range(10), (45.0, 10)),
    (lambda: Dataset.range(0), (0.0, 0)),
    (lambda: Dataset.from_tensor_slices(np.arange(12.0).reshape(4, 3)), (66.0, 4)),
    (lambda: Dataset.range(7).batch(3), (21.0, 3)),  # a partial last batch
    (lambda: Dataset.from_tensor_slices(np.ones((5, 2, 3), np.int32)).batch(2), (30.0, 3)),
])
def test_dataset_sums_run_compiled_and_agree_with_eager(make, expected):
    f = em.function(sum_all)
    total, count = f(make())
    assert_compiled(f, make())
    want = eager(sum_all, make())
    assert (total.numpy(), count.numpy()) == (want[0].numpy(), want[1].numpy())
    assert (total.numpy(), count.numpy()) == expected


def test_partial_batches_reach_the_body_with_their_rows():
    @em.function
    def rows(ds):
        seen = em.constant(0)
        last = em.constant(0)
        for batch in ds:
            seen += em.shape(batch)[0]
            last = em.shape(batch)[0]
        return seen, last
    ds = Dataset.from_tensor_slices(np.ones((7, 2), np.float32)).batch(3)
    assert [t.numpy() for t in rows(ds)] == [7, 1]
    assert_compiled(rows, ds)


def test_break_in_a_compiled_dataset_loop():
    def upto(ds):
        total = em.constant(0, dtype=em.int64)
        for x in ds:
            if x % 2 == 0:
                continue
            if x > 7:
                break
            total += x
        return total
    f = em.function(upto)
    assert f(Dataset.range(20)).numpy() == eager(upto, Dataset.range(20)).numpy() == 16
    assert_compiled(f, Dataset.range(20))


def test_a_training_loop_over_batches_with_a_gradient_tape():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(10, 3)).astype(np.float32)
    ys = xs @ np.array([1.0, -2.0, 0.5], np.float32) + 0.25

    def make_fit(w, b):
        def fit(ds):
            loss = em.constant(0.0)
            for x, y in ds:
                with em.GradientTape() as tape:
                    pred = em.reduce_sum(x * w.read_value(), axis=1) + b.read_value()
                    loss = em.reduce_mean((pred - y) ** 2)
                gw, gb = tape.gradient(loss, [w, b])
                w.assign_sub(0.1 * gw)
                b.assign_sub(0.1 * gb)
            return loss
        return fit

    ds = Dataset.from_tensor_slices((xs, ys)).batch(4)  # batches of 4, 4 and 2
    w_c, b_c = em.Variable(np.zeros(3, np.float32)), em.Variable(0.0)
    fit = em.function(make_fit(w_c, b_c))
    w_e, b_e = em.Variable(np.zeros(3, np.float32)), em.Variable(0.0)
    for _ in range(3):  # three epochs
        loss_c = fit(ds)
        loss_e = eager(make_fit(w_e, b_e), ds)
    assert_compiled(fit, ds)
    np.testing.assert_allclose(w_c.numpy(), w_e.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose([loss_c.numpy(), b_c.numpy()], [loss_e.numpy(), b_e.numpy()],
                               rtol=1e-5, atol=1e-6)
    assert loss_c.numpy() < 0.5


def test_py_function_without_results_and_print_to_a_stream_run_compiled():
    seen = []
    out = io.StringIO()

    def record(x):
        seen.append(x.numpy().tolist())

    @em.function
    def f(x):
        y = x * 2
        em.py_function(record, [y], [])
        em.print("y =", y, output_stream=out)
        return y + 1
    x = em.constant([1.0, 2.0])
    assert f(x).numpy().tolist() == [3.0, 5.0]
    assert_compiled(f, x)
    f(em.constant([0.5, 0.0]))
    assert seen == [[2.0, 4.0], [1.0, 0.0]]
    assert out.getvalue() == "y = [2 4]\ny = [1 0]\n"


def test_py_function_results_of_unknown_rank_run_on_the_interpreter_quietly():
    @em.function
    def f(x):
        return em.py_function(lambda t: t * 3, [x], em.float32) + 1
    x = em.constant([1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(x).numpy().tolist() == [4.0, 7.0]
    assert "unknown rank" in executor_of(f, x).fallback_reason


def test_a_dataset_of_unknown_rank_runs_on_the_interpreter_quietly():
    class Ragged(Dataset):  # elements of any rank, as from_generator without shapes
        _spec = em.TensorSpec(None, em.float32)

        def _iterate(self):
            yield from (em.ones([2]), em.ones([3]))
    gen = Ragged()
    f = em.function(sum_all)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [t.numpy() for t in f(gen)] == [5.0, 2]
    assert "unknown rank" in executor_of(f, gen).fallback_reason


# -- errors raised in callbacks ---------------------------------------------------------------

def test_out_of_range_from_get_next_is_raised_by_compiled_code():
    @em.function
    def two(ds):
        it = iter(ds)
        return it.get_next() + it.get_next()
    assert two(Dataset.range(3, 10)).numpy() == 7
    assert_compiled(two, Dataset.range(3, 10))
    for _ in range(3):  # and the function keeps working after each error
        with pytest.raises(em.errors.OutOfRangeError):
            two(Dataset.range(1))
        assert two(Dataset.range(5, 7)).numpy() == 11


def test_a_py_function_error_is_the_same_exception_as_eagerly():
    class Boom(ValueError):
        pass

    def check(x):
        if x.numpy().sum() > 10:
            raise Boom(f"too big: {x.numpy().sum()}")

    def f(x):
        em.py_function(check, [x], [])
        return x * 2
    compiled = em.function(f)
    assert compiled(em.constant([1.0])).numpy().tolist() == [2.0]
    assert_compiled(compiled, em.constant([1.0]))
    with pytest.raises(Boom, match="too big: 20.0"):
        eager(f, em.constant([20.0]))
    with pytest.raises(Boom, match="too big: 20.0"):
        compiled(em.constant([20.0]))
    assert compiled(em.constant([3.0])).numpy().tolist() == [6.0]


def test_an_element_that_breaks_the_spec_is_an_invalid_argument_compiled():
    class Lying(Dataset):
        def __init__(self, spec, elements):
            self._spec, self._elements = spec, elements

        def _iterate(self):
            yield from self._elements
    lying = Lying(em.TensorSpec([2], em.float32),
                  [em.constant([1.0, 2.0]), em.constant([1.0, 2.0, 3.0])])
    f = em.function(sum_all)
    with pytest.raises(em.errors.InvalidArgumentError, match="component 0 .* element_spec"):
        f(lying)
    assert_compiled(f, lying)


def test_a_callback_result_of_the_wrong_dtype_or_shape_is_an_invalid_argument():
    @em.function
    def f(ds):
        return sum_all(ds)[0]
    ds = Dataset.range(3)
    cf = f.get_concrete_function(ds)
    name = next(n for n in cf._graph.callbacks if n.startswith("__dataset_next"))
    cf._graph.callbacks[name] = lambda t: (np.asarray(True), np.asarray(1.5))  # float64
    with pytest.raises(em.errors.InvalidArgumentError, match=r"dtype float64 .* tensor<i64>"):
        f(ds)
    cf._graph.callbacks[name] = lambda t: (np.asarray(True), np.arange(2))  # rank 1
    with pytest.raises(em.errors.InvalidArgumentError,
                       match=r"shape \(2,\), but its call expects tensor<i64>"):
        f(ds)
    cf._graph.callbacks[name] = lambda t: (np.asarray(True),)  # one result too few
    with pytest.raises(em.errors.InvalidArgumentError, match="returned 1 value"):
        f(ds)
    assert_compiled(f, ds)


def test_strided_bool_and_dynamic_arguments_reach_the_callable_as_eagerly():
    seen = []

    def record(column, positive, rows):
        seen.append((column.numpy().tolist(), positive.numpy().tolist(),
                     rows.numpy().tolist()))

    def f(x, n):
        em.py_function(record, [x[:, 1], x > 0, em.range(n)], [])
        return em.reduce_sum(x)
    x = em.constant([[1.0, -2.0, 3.0], [-4.0, 5.0, 6.0]])
    compiled = em.function(f)
    assert compiled(x, em.constant(3)).numpy() == 9.0
    assert_compiled(compiled, x, em.constant(3))
    eager(f, x, em.constant(3))
    assert seen[0] == seen[1] == ([-2.0, 5.0], [[True, False, True], [False, True, True]],
                                  [0, 1, 2])


def test_an_element_returned_from_the_function_is_handed_over_once():
    @em.function
    def first(ds):
        return next(iter(ds))
    ds = Dataset.from_tensor_slices(np.arange(14.0, dtype=np.float32).reshape(7, 2)).batch(3)
    for _ in range(200):
        out = first(ds)
    assert out.numpy().tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert_compiled(first, ds)


def test_a_callback_that_calls_another_compiled_function_with_host_calls():
    inner_log = []

    @em.function
    def inner(v):
        em.py_function(lambda t: inner_log.append(t.numpy().item()), [v], [])
        if v > 100:
            em.py_function(lambda t: (_ for _ in ()).throw(KeyError("inner")), [v], [])
        return v + 1

    def call_inner(t):
        inner(t)  # compiled code, entered from a callback of compiled code

    @em.function
    def outer(x):
        em.py_function(call_inner, [x], [])
        return x * 2
    assert outer(em.constant(3.0)).numpy() == 6.0
    assert_compiled(outer, em.constant(3.0))
    assert_compiled(inner, em.constant(3.0))
    with pytest.raises(KeyError, match="inner"):
        outer(em.constant(500.0))
    assert outer(em.constant(4.0)).numpy() == 8.0
    assert inner_log == [3.0, 500.0, 4.0]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "complex64", "int8", "bool",
                                   "float64", "uint8"])
def test_arguments_of_every_dtype_reach_the_callable(dtype):
    seen = []

    @em.function
    def f(x):
        em.py_function(lambda t: seen.append(t.numpy()), [x], [])
        return x
    x = em.cast(em.constant([1, 0, 3]), getattr(em, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(x)
    assert seen[0].dtype == x.numpy().dtype and seen[0].tolist() == x.numpy().tolist()
    reason = executor_of(f, x).fallback_reason
    if dtype == "uint8":  # unsigned host calls stay on the interpreter, quietly
        assert "unsigned" in reason
    else:
        assert reason is None
