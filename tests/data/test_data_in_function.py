"""`em.data` datasets and iterators inside `em.function`: one loop in the IR whatever the
data size (the tf.function guide's `measure_graph_size`), trace types by element_spec,
loops with break/continue/return, iterators, and errors. Results are checked against the
same Python function run eagerly and against values by hand."""

import collections

import numpy as np
import pytest

import ember as em

Dataset = em.data.Dataset


def measure_graph_size(f, *args):
    g = f.get_concrete_function(*args).graph
    return len(g.as_graph_def().node)


def train(dataset):  # the guide's example
    loss = em.constant(0)
    for x, y in dataset:
        loss += em.abs(y - x)  # Some dummy computation.
    return loss


def both(fn, *args):
    """`fn` through em.function and run eagerly: the two results, as numpy."""
    compiled = em.function(fn)(*args)
    em.config.run_functions_eagerly(True)
    try:
        eager = em.function(fn)(*args)
    finally:
        em.config.run_functions_eagerly(False)
    as_np = lambda r: [np.asarray(t) for t in (r if isinstance(r, tuple) else (r,))]
    return as_np(compiled), as_np(eager)


def test_graph_size_grows_with_python_data_but_not_with_datasets():
    f = em.function(train)
    small_data = [(1, 1)] * 3
    big_data = [(1, 1)] * 10
    small_list, big_list = measure_graph_size(f, small_data), measure_graph_size(f, big_data)
    assert small_list < big_list  # the Python loop unrolls
    small = Dataset.from_tensor_slices(tuple(np.array(small_data, np.int32).T))
    big = Dataset.from_tensor_slices(tuple(np.array(big_data, np.int32).T))
    assert measure_graph_size(f, small) == measure_graph_size(f, big)
    ranged = em.function(train)
    pairs = lambda n: Dataset.range(n, dtype=em.int32).map(lambda i: (i, 2 * i))
    assert measure_graph_size(ranged, pairs(3)) == measure_graph_size(ranged, pairs(1000))


class _PythonData(Dataset):
    """Python data behind a dataset of unknown shapes, as the guide's
    `Dataset.from_generator(lambda: data, (tf.int32, tf.int32))`."""

    def __init__(self, data):
        self._data = data
        self._spec = (em.TensorSpec(None, em.int32), em.TensorSpec(None, em.int32))

    def _iterate(self):
        for x, y in self._data:
            yield em.constant(x, dtype=em.int32), em.constant(y, dtype=em.int32)


def test_graph_size_of_python_data_behind_a_dataset_of_unknown_shapes():
    f = em.function(train)
    small, big = _PythonData([(1, 1)] * 3), _PythonData([(1, 1)] * 10)
    assert measure_graph_size(f, small) == measure_graph_size(f, big)
    assert f.experimental_get_tracing_count() == 1
    assert f(_PythonData([(1, 2), (5, 3), ([1, 1], [4, 4])])).numpy().tolist() == [6, 6]


def test_dataset_loop_is_one_while_with_host_pulls():
    ds = Dataset.from_tensor_slices(([1, 2, 3], [3, 5, 7]))
    text = em.function(train).get_concrete_function(ds).mlir("traced")
    assert text.count("scf.while") == 1
    assert text.count("call @__dataset_next_") == 1
    assert text.count("call @__dataset_iter_") == 1
    assert text.count("call @__dataset_release_") == 1


def test_guide_example_values_compiled_and_eager():
    ds = Dataset.from_tensor_slices(([1, 2, 3], [3, 5, 7]))
    compiled, eager = both(train, ds)
    assert compiled[0].item() == eager[0].item() == 9
    assert em.function(train)(Dataset.from_tensor_slices(([1], [1]))).numpy() == 0


def sum_all(ds):
    total = em.constant(0.0)
    count = em.constant(0)
    for x in ds:
        total += em.reduce_sum(em.cast(x, em.float32))
        count += 1
    return total, count


@pytest.mark.parametrize("make, expected", [
    (lambda: Dataset.range(5), (10.0, 5)),
    (lambda: Dataset.range(0), (0.0, 0)),
    (lambda: Dataset.from_tensor_slices(np.arange(12.0).reshape(4, 3)), (66.0, 4)),
    (lambda: Dataset.range(7).batch(3), (21.0, 3)),  # a partial last batch: (None,)
    (lambda: Dataset.range(7).batch(3, drop_remainder=True), (15.0, 2)),
    (lambda: Dataset.range(6).map(lambda x: x * x), (55.0, 6)),
    (lambda: Dataset.range(10).filter(lambda x: x % 3 == 0).prefetch(2), (18.0, 4)),
    (lambda: Dataset.range(3).repeat(2).shuffle(4, seed=1), (6.0, 6)),
])
def test_sums_over_datasets_agree_with_eager(make, expected):
    compiled, eager = both(sum_all, make())
    assert [c.item() for c in compiled] == [e.item() for e in eager] == list(expected)


def test_partial_batch_shapes_reach_the_body():
    @em.function
    def rows(ds):
        n = em.constant(0)
        for batch in ds:
            n += em.shape(batch)[0]
        return n
    ds = Dataset.from_tensor_slices(np.ones((7, 2), np.float32)).batch(3)
    assert ds.element_spec == em.TensorSpec([None, 2], em.float32)
    assert rows(ds).numpy() == 7
    assert "tensor<?x2xf32>" in rows.get_concrete_function(ds).mlir("traced")


def loop_with_break_continue(ds):
    total = em.constant(0, dtype=em.int64)
    for x in ds:
        if x % 2 == 0:
            continue
        if x > 7:
            break
        total += x
    return total


def test_break_and_continue_agree_with_eager():
    compiled, eager = both(loop_with_break_continue, Dataset.range(20))
    assert compiled[0].item() == eager[0].item() == 1 + 3 + 5 + 7


def first_over(ds, limit):
    for x in ds:
        if x > limit:
            return x
    return em.constant(-1, dtype=em.int64)


def test_return_inside_the_loop():
    f = em.function(first_over)
    assert f(Dataset.range(10), 4).numpy() == 5
    assert f(Dataset.range(3), 4).numpy() == -1


def test_dict_and_namedtuple_elements():
    Pair = collections.namedtuple("Pair", "a b")
    ds = Dataset.from_tensor_slices({"x": [1.0, 2.0], "y": [10.0, 20.0]})
    nt = Dataset.from_tensor_slices(Pair([1, 2], [3, 4]))

    @em.function
    def dot(ds):
        s = em.constant(0.0)
        for e in ds:
            s += e["x"] * e["y"]
        return s

    @em.function
    def diff(ds):
        s = em.constant(0)
        for p in ds:
            s += p.b - p.a
        return s
    assert dot(ds).numpy() == 50.0
    assert diff(nt).numpy() == 4


def test_same_element_spec_shares_a_trace_and_another_retraces():
    f = em.function(sum_all)
    f(Dataset.range(3))
    f(Dataset.range(100).map(lambda x: x + 1))
    assert f.experimental_get_tracing_count() == 1
    f(Dataset.range(3, dtype=em.int32))  # another dtype
    assert f.experimental_get_tracing_count() == 2
    f(Dataset.range(6).batch(2, drop_remainder=True))  # shape (2,)
    f(Dataset.range(6).batch(3, drop_remainder=True))  # shape (3,)
    assert f.experimental_get_tracing_count() == 4
    f(Dataset.range(6).batch(3))  # shape (None,): its own trace
    assert f.experimental_get_tracing_count() == 5
    f(Dataset.range(6).batch(3, drop_remainder=True))  # (3,) keeps its exact trace
    assert f.experimental_get_tracing_count() == 5
    assert "DatasetSpec" in f.pretty_printed_concrete_signatures()


def test_reduce_retracing_relaxes_the_element_shape():
    f = em.function(sum_all, reduce_retracing=True)
    f(Dataset.range(6).batch(2, drop_remainder=True))
    result = f(Dataset.range(6).batch(3, drop_remainder=True))
    assert [np.asarray(r).item() for r in result] == [15.0, 2]
    assert f.experimental_get_tracing_count() == 2
    f(Dataset.range(8).batch(4, drop_remainder=True))  # served by the relaxed (None,) trace
    assert f.experimental_get_tracing_count() == 2


def test_a_captured_dataset_is_iterated_on_every_call():
    data = Dataset.range(5)

    @em.function
    def f():
        return loop_with_break_continue(data)
    assert f().numpy() == 4 and f().numpy() == 4
    assert f.experimental_get_tracing_count() == 1


def test_iter_next_and_optional_inside_the_function():
    @em.function
    def two(ds):
        it = iter(ds)
        first = next(it)
        second = it.get_next()
        return first + second, it.get_next_as_optional().has_value()
    s, has = two(Dataset.range(3, 10))
    assert (s.numpy(), has.numpy()) == (7, True)
    s, has = two(Dataset.range(2))
    assert (s.numpy(), has.numpy()) == (1, False)
    with pytest.raises(em.errors.OutOfRangeError):
        two(Dataset.range(1))


def test_empty_optional_get_value_raises_when_the_function_runs():
    @em.function
    def value(ds):
        it = iter(ds)
        it.get_next()
        return it.get_next_as_optional().get_value()
    assert value(Dataset.range(4, 6)).numpy() == 5
    with pytest.raises(em.errors.InvalidArgumentError, match="no value"):
        value(Dataset.range(1))


def test_an_iterator_argument_keeps_its_position_across_calls():
    @em.function
    def step(it):
        return next(it) * 10

    it = iter(Dataset.range(3))
    assert [step(it).numpy() for _ in range(3)] == [0, 10, 20]
    with pytest.raises(em.errors.OutOfRangeError):
        step(it)
    assert step.experimental_get_tracing_count() == 1
    other = iter(Dataset.range(7, 9))
    assert step(other).numpy() == 70 and step.experimental_get_tracing_count() == 1
    assert next(other).numpy() == 8  # eagerly, where the function left it


def test_for_over_an_iterator_argument_leaves_it_after_break():
    @em.function
    def upto(it, stop):
        total = em.constant(0, dtype=em.int64)
        for x in it:
            total += x
            if x >= stop:
                break
        return total
    it = iter(Dataset.range(10))
    assert upto(it, 2).numpy() == 3
    assert next(it).numpy() == 3  # the loop pulled nothing beyond the element it broke on


def test_nested_function_passes_the_dataset_on():
    inner = em.function(sum_all)

    @em.function
    def outer(ds):
        total, count = inner(ds)
        return total / em.cast(count, em.float32)
    assert outer(Dataset.range(5)).numpy() == 2.0


def test_nested_loops_over_datasets():
    @em.function
    def table(rows, cols):
        s = em.constant(0, dtype=em.int64)
        for r in rows:
            for c in cols:
                s += r * c
        return s
    assert table(Dataset.range(1, 4), Dataset.range(1, 3)).numpy() == (1 + 2 + 3) * (1 + 2)


def test_runs_under_the_error_fallback_policy():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        assert em.function(train)(Dataset.from_tensor_slices(([1], [4]))).numpy() == 3
    finally:
        em.config.set_fallback(previous)


class _Lying(Dataset):
    """A dataset whose elements do not match its element_spec."""

    def __init__(self, spec, elements):
        self._spec, self._elements = spec, elements

    def _iterate(self):
        yield from self._elements


def test_an_element_that_breaks_the_element_spec_is_an_error():
    lying = _Lying(em.TensorSpec([2], em.float32),
                   [em.constant([1.0, 2.0]), em.constant([1.0, 2.0, 3.0])])
    with pytest.raises(em.errors.InvalidArgumentError, match="component 0 .* element_spec"):
        em.function(sum_all)(lying)
    wrong_dtype = _Lying(em.TensorSpec([], em.float32), [em.constant(1)])
    with pytest.raises(em.errors.InvalidArgumentError, match="does not match"):
        em.function(sum_all)(wrong_dtype)


def test_transforming_a_dataset_argument_inside_is_a_clear_error():
    @em.function
    def f(ds):
        return sum_all(ds.batch(2))
    with pytest.raises(TypeError, match=r"Dataset.batch .* apply \.batch\(\.\.\.\) before"):
        f(Dataset.range(4))


def test_iterating_without_autograph_is_a_clear_error():
    f = em.function(sum_all, autograph=False)
    with pytest.raises(TypeError, match="AutoGraph converts"):
        f(Dataset.range(3))


def test_a_traced_dataset_call_needs_a_dataset_of_its_spec():
    cf = em.function(sum_all).get_concrete_function(Dataset.range(3))
    assert [np.asarray(r).item() for r in cf(Dataset.range(4))] == [6.0, 4]
    with pytest.raises(TypeError, match="structure"):
        cf(em.constant([1, 2]))


def test_a_training_loop_over_a_dataset_inside_the_function():
    w = em.Variable(0.0)

    @em.function
    def fit(ds):
        for x, y in ds:
            with em.GradientTape() as tape:
                loss = (w * x - y) ** 2
            w.assign_sub(0.1 * tape.gradient(loss, w))
        return w.read_value()
    xs = np.array([1.0, 2.0, 3.0], np.float32)
    expected = np.float32(0.0)
    for x in xs:
        expected -= np.float32(0.1) * 2 * (expected * x - 2 * x) * x
    assert np.isclose(fit(Dataset.from_tensor_slices((xs, 2 * xs))).numpy(), expected)


def test_a_gradient_through_the_loop_is_a_clear_error():
    v = em.Variable(1.0)

    @em.function
    def total(ds):
        s = em.constant(0.0)
        for x in ds:
            s += x * v
        return s
    with em.GradientTape() as tape:
        out = total(Dataset.from_tensor_slices(np.array([1.0, 2.0], np.float32)))
    assert out.numpy() == 3.0
    with pytest.raises(TypeError, match="GradientTape in the body"):
        tape.gradient(out, v)


def test_enumerate_over_a_dataset_counts_in_the_loop():
    def weighted(ds):
        s = em.constant(0, dtype=em.int64)
        for i, x in enumerate(ds, 1):
            s += i * x
        return s
    compiled, eager = both(weighted, Dataset.range(10, 13))
    assert compiled[0].item() == eager[0].item() == 10 + 2 * 11 + 3 * 12
    text = em.function(weighted).get_concrete_function(Dataset.range(3)).mlir("traced")
    assert text.count("scf.while") == 1


def test_threads_iterate_their_own_datasets_through_one_trace():
    import threading
    f = em.function(sum_all)
    f(Dataset.range(1))
    results, errors = {}, []

    def work(n):
        try:
            for _ in range(5):
                total, count = f(Dataset.range(n).prefetch(1))
                results.setdefault(n, set()).add((total.numpy().item(), count.numpy().item()))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(n,)) for n in (10, 20, 30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == {n: {(float(n * (n - 1) // 2), n)} for n in (10, 20, 30)}
    assert f.experimental_get_tracing_count() == 1


def test_zip_of_datasets_ends_with_the_shortest():
    def pairs(a, b):
        s = em.constant(0, dtype=em.int64)
        for x, (y, z) in zip(a, b):
            s += x * 100 + y * 10 + z
        return s
    compiled, eager = both(pairs, Dataset.range(1, 4),
                           Dataset.from_tensor_slices((np.arange(2), np.arange(5, 7))))
    assert compiled[0].item() == eager[0].item() == (100 + 0 + 5) + (200 + 10 + 6)


def test_a_captured_iterator_is_pulled_from_on_every_call():
    it = iter(Dataset.range(5))

    @em.function
    def take_two():
        return next(it) + next(it)
    assert take_two().numpy() == 1 and take_two().numpy() == 5
    assert next(it).numpy() == 4


class _Doubled:
    """Another iterable taking part in the loop protocol (as a distributed dataset does):
    its optional has no `_value`, so the loop calls get_value() where has_value() holds."""

    def __init__(self, ds):
        self.ds = ds

    def __ember_staged_iter__(self):
        return _DoubledIterator(iter(self.ds))


class _DoubledIterator:
    def __init__(self, inner):
        self.inner = inner

    def get_next_as_optional(self):
        return _DoubledOptional(self.inner.get_next_as_optional())

    def close(self):
        self.inner.close()


class _DoubledOptional:
    def __init__(self, inner):
        self.inner = inner

    def has_value(self):
        return self.inner.has_value()

    def get_value(self):
        return self.inner.get_value() * 2


def test_the_loop_protocol_serves_other_iterables():
    @em.function
    def total(ds):
        s = em.constant(0, dtype=em.int64)
        for x in _Doubled(ds):
            s += x
        return s
    assert total(Dataset.range(4)).numpy() == 12
    text = total.get_concrete_function(Dataset.range(4)).mlir("traced")
    assert text.count("scf.while") == 1 and "ember.assert" in text
