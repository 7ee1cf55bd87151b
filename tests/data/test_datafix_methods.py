"""tf.data methods added after the trial (issue 18): reduce, get_single_element, scan,
flat_map, choose_from_datasets, sample_from_datasets; the docstring examples run in
test_data_doctests.py."""

import numpy as np
import pytest

import ember as em

D = em.data.Dataset


def test_reduce_as_tf_data():
    assert D.range(5).reduce(np.int64(0), lambda x, _: x + 1).numpy() == 5
    assert D.range(5).reduce(np.int64(0), lambda x, y: x + y).numpy() == 10
    total, count = D.from_tensor_slices(([1.0, 2.0], [3.0, 4.0])).reduce(
        (np.float32(0), np.int64(0)), lambda s, e: (s[0] + e[0] * e[1], s[1] + 1))
    assert (total.numpy(), count.numpy()) == (11.0, 2)
    assert D.range(0).reduce(np.int64(7), lambda s, x: s + x).numpy() == 7


def test_reduce_relaxes_a_growing_state_and_checks_dtypes():
    grown = D.range(3).reduce(em.zeros([0], em.int64),
                              lambda s, x: em.concat([s, em.reshape(x, [1])], 0))
    assert grown.numpy().tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="structure and dtypes must match"):
        D.range(3).reduce(np.int64(0), lambda s, x: em.cast(s, em.float32))
    with pytest.raises(TypeError, match="reduce_func must be callable"):
        D.range(3).reduce(np.int64(0), 3)


def test_reduce_converts_control_flow():
    def count_big(state, x):
        if x > 2:
            state += 1
        return state
    assert D.range(6).reduce(np.int64(0), count_big).numpy() == 3


def test_reduce_inside_a_function_says_to_loop_instead():
    ds = D.range(3)

    @em.function
    def f():
        return ds.reduce(np.int64(0), lambda s, x: s + x)
    with pytest.raises(TypeError, match="runs eagerly, not inside em.function"):
        f()


def test_get_single_element():
    assert D.from_tensors(([1, 2], 3)).get_single_element()[1].numpy() == 3
    with pytest.raises(em.errors.InvalidArgumentError, match="Dataset was empty."):
        D.range(0).get_single_element()
    with pytest.raises(em.errors.InvalidArgumentError,
                       match="Dataset had more than one element."):
        D.range(2).get_single_element()


def test_scan():
    ds = D.range(10).scan(em.constant(0, dtype=em.int64), lambda s, i: (s + i, s + i))
    assert list(ds.as_numpy_iterator()) == [0, 1, 3, 6, 10, 15, 21, 28, 36, 45]
    assert list(ds.as_numpy_iterator()) == [0, 1, 3, 6, 10, 15, 21, 28, 36, 45]  # anew
    pairs = D.range(3).scan(np.int64(1), lambda s, x: (s * 2, (x, em.cast(s, em.float32))))
    assert pairs.element_spec[1] == em.TensorSpec([], em.float32)
    assert [(int(a), float(b)) for a, b in pairs.as_numpy_iterator()] == \
        [(0, 1.0), (1, 2.0), (2, 4.0)]
    assert pairs.cardinality().numpy() == 3
    with pytest.raises(TypeError, match=r"must return a pair \(new_state, output_element\)"):
        D.range(3).scan(np.int64(0), lambda s, x: s + x)


def test_flat_map():
    ds = D.from_tensor_slices([[1, 2, 3], [4, 5, 6], [7, 8, 9]]).flat_map(
        D.from_tensor_slices)
    assert list(ds.as_numpy_iterator()) == list(range(1, 10))
    assert list(D.range(1, 4).flat_map(lambda n: D.from_tensors(n).repeat(n))
                .as_numpy_iterator()) == [1, 2, 2, 3, 3, 3]
    with pytest.raises(TypeError, match="Dataset.flat_map: `map_func` .* must return a "
                                        "`Dataset` object"):
        D.range(3).flat_map(lambda x: x)


def test_choose_from_datasets():
    datasets = [D.from_tensors("foo").repeat(), D.from_tensors("bar").repeat(),
                D.from_tensors("baz").repeat()]
    result = D.choose_from_datasets(datasets, D.range(3).repeat(3))
    assert [x.decode() for x in result.as_numpy_iterator()] == ["foo", "bar", "baz"] * 3
    short = [D.range(2), D.range(10, 13)]
    choice = D.from_tensor_slices(np.array([0, 0, 0, 1, 1], np.int64))
    assert list(D.choose_from_datasets(short, choice).as_numpy_iterator()) == [0, 1]
    assert list(D.choose_from_datasets(short, choice, stop_on_empty_dataset=False)
                .as_numpy_iterator()) == [0, 1, 10, 11]
    with pytest.raises(em.errors.InvalidArgumentError, match="Selector index out of range"):
        list(D.choose_from_datasets(short, D.range(5)))
    with pytest.raises(TypeError, match="must be scalar of `em.int64` type"):
        D.choose_from_datasets(short, D.range(3, dtype=em.int32))
    with pytest.raises(TypeError, match="same structure and dtypes"):
        D.choose_from_datasets([D.range(2), D.from_tensors(1.0)], D.range(1))


def test_sample_from_datasets():
    inputs = [D.range(0, 3), D.range(100, 103)]
    ds = D.sample_from_datasets(inputs, weights=[0.5, 0.5], seed=7)
    first = list(ds.as_numpy_iterator())
    assert sorted(first) == [0, 1, 2, 100, 101, 102]
    assert list(ds.as_numpy_iterator()) == first  # seeded: the same each pass
    assert [int(x) % 100 for x in first if x >= 100] == [0, 1, 2]  # each input in order
    assert list(D.sample_from_datasets(inputs, weights=[1.0, 0.0], seed=1)
                .as_numpy_iterator()) == [0, 1, 2]
    long = D.sample_from_datasets([D.range(100), D.range(100, 200)], seed=3,
                                  rerandomize_each_iteration=True)
    assert list(long.as_numpy_iterator()) != list(long.as_numpy_iterator())
    with pytest.raises(ValueError, match="Invalid `weights`"):
        D.sample_from_datasets(inputs, weights=[1.0])
    with pytest.raises(ValueError, match="should be a non-empty list"):
        D.sample_from_datasets([])


@pytest.mark.parametrize("args, windows", [
    (dict(size=3), [[0, 1, 2], [3, 4, 5], [6]]),
    (dict(size=3, shift=1), [[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6], [5, 6],
                             [6]]),
    (dict(size=3, shift=1, drop_remainder=True), [[0, 1, 2], [1, 2, 3], [2, 3, 4],
                                                  [3, 4, 5], [4, 5, 6]]),
    (dict(size=3, stride=2), [[0, 2, 4], [3, 5], [6]]),
    (dict(size=2, shift=4), [[0, 1], [4, 5]]),
])
def test_window_as_tf_data(args, windows):
    ds = D.range(7).window(**args)
    assert [[int(x) for x in w] for w in ds] == windows
    assert ds.cardinality().numpy() == len(windows)
    assert ds.element_spec == em.data.DatasetSpec(em.TensorSpec([], em.int64))


def test_window_of_tuples_and_through_flat_map():
    ds = D.from_tensor_slices(([1, 2, 3], [4.0, 5.0, 6.0])).window(2)
    assert [(list(a.as_numpy_iterator()), list(b.as_numpy_iterator())) for a, b in ds] == \
        [([1, 2], [4.0, 5.0]), ([3], [6.0])]
    zipped = ds.flat_map(lambda a, b: D.zip((a, b)).batch(2))
    assert [(a.tolist(), b.tolist()) for a, b in zipped.as_numpy_iterator()] == \
        [([1, 2], [4.0, 5.0]), ([3], [6.0])]
    assert list(D.range(0).window(2).flat_map(lambda w: w.batch(2))) == []
    assert D.range(3).repeat().window(2).cardinality().numpy() == em.data.INFINITE_CARDINALITY
    with pytest.raises(TypeError, match="elements hold datasets .* read the windows with "
                                        "flat_map"):
        D.range(4).window(2).map(lambda w: w)
    with pytest.raises(ValueError, match="Dataset.window: shift must be positive"):
        D.range(4).window(2, shift=0)
