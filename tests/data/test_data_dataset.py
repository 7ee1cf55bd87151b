"""`em.data.Dataset` against tf.data's documented behaviour (expected values by hand)."""

import collections
import gc
import threading

import numpy as np
import pytest

import ember as em

Dataset = em.data.Dataset


def values(ds):
    return [np.asarray(x).tolist() for x in ds.as_numpy_iterator()]


def card(ds):
    return int(ds.cardinality().numpy())


def test_range_forms_and_dtype():
    assert values(Dataset.range(5)) == [0, 1, 2, 3, 4]
    assert values(Dataset.range(2, 5)) == [2, 3, 4]
    assert values(Dataset.range(1, 5, 2)) == [1, 3]
    assert values(Dataset.range(5, 1, -2)) == [5, 3]
    assert values(Dataset.range(0)) == []
    x = next(iter(Dataset.range(3)))
    assert isinstance(x, em.Tensor) and x.dtype == em.int64
    assert Dataset.range(3).element_spec == em.TensorSpec([], em.int64)
    assert card(Dataset.range(1, 10, 3)) == 3


def test_from_tensor_slices_structures_and_dtypes():
    ds = Dataset.from_tensor_slices(([1, 2, 3], np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])))
    first = next(iter(ds))
    assert first[0].dtype == em.int32 and first[1].dtype == em.float64
    assert [(a.tolist(), b.tolist()) for a, b in ds.as_numpy_iterator()] == [
        (1, [1.0, 2.0]), (2, [3.0, 4.0]), (3, [5.0, 6.0])]
    assert ds.element_spec == (em.TensorSpec([], em.int32), em.TensorSpec([2], em.float64))
    dicts = Dataset.from_tensor_slices({"x": em.constant([1.0, 2.0]), "y": [[1], [2]]})
    assert [{k: v.tolist() for k, v in d.items()} for d in dicts.as_numpy_iterator()] == [
        {"x": 1.0, "y": [1]}, {"x": 2.0, "y": [2]}]
    assert card(dicts) == 2
    Point = collections.namedtuple("Point", "a b")
    p = next(iter(Dataset.from_tensor_slices(Point([1, 2], [3, 4]))))
    assert isinstance(p, Point) and int(p.b.numpy()) == 3


def test_from_tensors_is_one_element():
    ds = Dataset.from_tensors(([1, 2, 3], 4.0))
    assert card(ds) == 1
    assert ds.element_spec == (em.TensorSpec([3], em.int32), em.TensorSpec([], em.float32))
    (a, b), = list(ds.as_numpy_iterator())
    assert a.tolist() == [1, 2, 3] and b == 4.0


def test_batch_and_drop_remainder():
    assert values(Dataset.range(10).batch(4)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert values(Dataset.range(10).batch(4, drop_remainder=True)) == [[0, 1, 2, 3],
                                                                         [4, 5, 6, 7]]
    assert Dataset.range(10).batch(4).element_spec.shape.dims == (None,)
    assert Dataset.range(10).batch(4, True).element_spec.shape.dims == (4,)
    assert card(Dataset.range(10).batch(4)) == 3
    assert card(Dataset.range(10).batch(4, drop_remainder=True)) == 2
    pairs = Dataset.from_tensor_slices((np.arange(6).reshape(3, 2), [1, 2, 3])).batch(2)
    assert pairs.element_spec == (em.TensorSpec([None, 2], em.int64),
                                  em.TensorSpec([None], em.int32))
    (a, b), _ = list(pairs.as_numpy_iterator())
    assert a.tolist() == [[0, 1], [2, 3]] and b.tolist() == [1, 2]


def test_repeat_take_skip_and_crossing_epochs():
    assert values(Dataset.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert values(Dataset.range(3).repeat(2).batch(4)) == [[0, 1, 2, 0], [1, 2]]
    assert values(Dataset.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert values(Dataset.range(5).skip(2)) == [2, 3, 4]
    assert values(Dataset.range(5).take(-1)) == [0, 1, 2, 3, 4]
    assert values(Dataset.range(5).skip(-1)) == []
    assert values(Dataset.range(0).repeat()) == []
    assert card(Dataset.range(3).repeat()) == em.data.INFINITE_CARDINALITY == -1
    assert card(Dataset.range(3).repeat(2)) == 6
    assert card(Dataset.range(3).repeat().take(7)) == 7
    assert card(Dataset.range(5).take(9)) == 5
    assert card(Dataset.range(5).skip(2)) == 3 and card(Dataset.range(5).skip(9)) == 0
    assert card(Dataset.range(3).repeat().skip(2)) == -1


def test_shuffle_seeded_is_a_reproducible_permutation():
    ds = Dataset.range(20).shuffle(5, seed=7)
    first = values(ds)
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert values(Dataset.range(20).shuffle(5, seed=7)) == first
    # Buffer semantics: the k-th output is one of the first buffer_size + k inputs.
    assert all(x < 5 + k for k, x in enumerate(first))
    assert values(Dataset.range(5).shuffle(1, seed=3)) == [0, 1, 2, 3, 4]
    assert card(ds) == 20


def test_reshuffle_each_iteration():
    ds = Dataset.range(30).shuffle(30, seed=1)
    epoch1, epoch2 = values(ds), values(ds)
    assert sorted(epoch1) == sorted(epoch2) == list(range(30)) and epoch1 != epoch2
    fixed = Dataset.range(30).shuffle(30, seed=1, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)
    both = values(Dataset.range(30).shuffle(30, seed=1).repeat(2))
    assert both[:30] != both[30:] and sorted(both[30:]) == list(range(30))


def test_map_filter_enumerate():
    ds = Dataset.from_tensor_slices(([1, 2, 3], [10, 20, 30]))
    ds = ds.map(lambda x, y: x + y, num_parallel_calls=em.data.AUTOTUNE)
    assert values(ds) == [11, 22, 33]
    assert ds.element_spec == em.TensorSpec([], em.int32)
    d = Dataset.from_tensor_slices({"a": [1.0, 2.0]}).map(lambda e: {"b": e["a"] * 2.0})
    assert [v["b"] for v in d.as_numpy_iterator()] == [2.0, 4.0]
    assert d.element_spec == {"b": em.TensorSpec([], em.float32)}
    # Traced with the input's spec, as tf.data: the batch dimension stays unknown.
    doubled = Dataset.range(6).batch(4).map(lambda x: x * 2)
    assert doubled.element_spec == em.TensorSpec([None], em.int64)
    assert values(doubled) == [[0, 2, 4, 6], [8, 10]]
    # As tf.data, the function is traced when map is called: needing a value fails then.
    with pytest.raises(em.errors.SymbolicValueError, match="numpy") as info:
        Dataset.range(3).map(lambda x: int(x.numpy()) * 3)
    assert "em.py_function" in "".join(info.value.__notes__)
    host = Dataset.range(3).map(
        lambda x: em.py_function(lambda v: int(v.numpy()) * 3, [x], em.int32))
    assert values(host) == [0, 3, 6]
    assert host.element_spec.dtype == em.int32
    evens = Dataset.range(10).filter(lambda x: x % 2 == 0)
    assert values(evens) == [0, 2, 4, 6, 8]
    assert card(evens) == em.data.UNKNOWN_CARDINALITY == -2
    pairs = list(Dataset.from_tensor_slices([7, 8]).enumerate(start=5).as_numpy_iterator())
    assert pairs == [(5, 7), (6, 8)]
    assert Dataset.range(2).enumerate().element_spec[0] == em.TensorSpec([], em.int64)


def test_cache_runs_the_pipeline_once():
    calls = []

    def record(x):
        calls.append(int(x.numpy()))
        return x

    def traced(x):
        return em.py_function(record, [x], em.int64)

    ds = Dataset.range(3).map(traced).cache()
    assert calls == []  # tracing does not run the Python function
    assert values(ds) == values(ds) == [0, 1, 2]
    assert calls == [0, 1, 2]
    assert ds.element_spec.dtype == em.int64
    assert card(ds) == 3


def test_iteration_protocols_and_optional():
    it = iter(Dataset.range(2))
    assert int(next(it).numpy()) == 0 and int(it.get_next().numpy()) == 1
    with pytest.raises(em.errors.OutOfRangeError):
        it.get_next()
    with pytest.raises(StopIteration):
        next(it)
    it = iter(Dataset.range(1))
    opt = it.get_next_as_optional()
    assert bool(opt.has_value().numpy()) and int(opt.get_value().numpy()) == 0
    empty = it.get_next_as_optional()
    assert not bool(empty.has_value().numpy())
    with pytest.raises(em.errors.InvalidArgumentError, match="has_value"):
        empty.get_value()
    assert [int(x.numpy()) for x in Dataset.range(3)] == [0, 1, 2]
    assert len(Dataset.range(4)) == 4


def _prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "ember-data-prefetch"]


def test_prefetch_order_thread_end_and_errors():
    before = len(_prefetch_threads())
    assert values(Dataset.range(10).prefetch(2)) == list(range(10))
    assert values(Dataset.range(4).prefetch(em.data.AUTOTUNE).batch(3)) == [[0, 1, 2], [3]]
    it = iter(Dataset.range(1000).prefetch(3))
    next(it)
    assert len(_prefetch_threads()) == before + 1
    del it
    gc.collect()
    assert len(_prefetch_threads()) == before

    def bad(x):
        if int(x.numpy()) == 2:
            raise KeyError("boom at 2")
        return x

    def traced(x):
        return em.py_function(bad, [x], em.int64)

    it = iter(Dataset.range(5).map(traced).prefetch(2))
    assert [int(next(it).numpy()) for _ in range(2)] == [0, 1]
    with pytest.raises(KeyError, match="boom at 2"):
        next(it)
    assert len(_prefetch_threads()) == before


@pytest.mark.parametrize("make, error, match", [
    (lambda: Dataset.from_tensor_slices(([1, 2, 3], [1, 2])), ValueError,
     "component 0: 3, component 1: 2"),
    (lambda: Dataset.from_tensor_slices(5), ValueError, "scalar"),
    (lambda: Dataset.range(10).batch(0), ValueError, "batch_size must be positive"),
    (lambda: Dataset.range(10).take(2.5), TypeError, "take: count must be an integer"),
    (lambda: Dataset.range(10).shuffle(0), ValueError, "buffer_size must be positive"),
    (lambda: Dataset.range(10).map(3), TypeError, "callable"),
    (lambda: Dataset.range(10).map(lambda x: x, num_parallel_calls=0), ValueError,
     "num_parallel_calls"),
    (lambda: Dataset.range(10).prefetch(-5), ValueError, "AUTOTUNE"),
    (lambda: Dataset.range(1, 5, 0), ValueError, "step must not be zero"),
    (lambda: Dataset.range(10).cache("/tmp/x"), ValueError, "in-memory"),
    (lambda: values(Dataset.range(3).map(lambda x: None)), TypeError,
     "returned: NoneType None is not a tensor"),
    (lambda: values(Dataset.range(3).map(lambda x: object())), TypeError,
     "cannot convert object"),
    (lambda: Dataset.range(3).filter(lambda x: x), ValueError,
     "must return a scalar bool tensor, but its return type is TensorSpec"),
    (lambda: Dataset.range(3).filter(5), TypeError, "predicate must be callable"),
    (lambda: values(Dataset.from_tensor_slices([1, 2, 3]).map(em.range).batch(2)),
     ValueError, "different shapes in component 0"),
    (lambda: len(Dataset.range(3).repeat()), TypeError, "infinite"),
])
def test_bad_input_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_experimental_aliases_of_the_constants():
    # tf.data.experimental keeps the older spellings of AUTOTUNE and the cardinalities
    assert em.data.experimental.AUTOTUNE == em.data.AUTOTUNE == -1
    assert em.data.experimental.INFINITE_CARDINALITY == em.data.INFINITE_CARDINALITY == -1
    assert em.data.experimental.UNKNOWN_CARDINALITY == em.data.UNKNOWN_CARDINALITY == -2
    ds = Dataset.range(4).map(lambda x: x * 2, num_parallel_calls=em.data.experimental.AUTOTUNE)
    assert values(ds.prefetch(em.data.experimental.AUTOTUNE)) == [0, 2, 4, 6]
