"""Source batching (runtime/data/optimize.py): `batch` over `from_tensor_slices` and `range`,
through `take`/`skip`/`shard`, cut as one slice per batch, giving exactly the batches of the
element-by-element path."""

import numpy as np
import pytest

import ember as em
from optimized_batches import assert_same_batches, unoptimized

Dataset = em.data.Dataset


def chains(rng, ds, n):
    """A few random take/skip/shard chains over `ds` (n elements)."""
    yield ds
    yield ds.take(int(rng.integers(-1, n + 2)))
    yield ds.skip(int(rng.integers(-1, n + 2)))
    shards = int(rng.integers(1, 4))
    yield ds.skip(int(rng.integers(0, 3))).shard(shards, int(rng.integers(0, shards)))
    yield ds.shard(2, 1).take(int(rng.integers(0, n + 1))).skip(1)


@pytest.mark.parametrize("seed", range(4))
def test_data_random_slices_match_the_per_element_path(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 20))
    shape = tuple(int(d) for d in rng.integers(1, 4, int(rng.integers(0, 3))))
    images = rng.standard_normal((n,) + shape).astype(np.float32)
    labels = rng.integers(-5, 5, n).astype(np.int64)
    flags = rng.integers(0, 2, (n, 2)).astype(bool)
    source = Dataset.from_tensor_slices((images, {"label": labels, "flag": flags}))
    for ds in chains(rng, source, n):
        for size in (1, 3, 7):
            for drop in (False, True):
                batched = ds.batch(size, drop_remainder=drop)
                assert any("source_batching" in line for line in batched._optimizations())
                assert_same_batches(batched)


@pytest.mark.parametrize("bounds,dtype", [((10,), em.int64), ((3, 20, 4), em.int32),
                                          ((9, -4, -2), em.int64), ((0,), em.int64),
                                          ((1, 12), em.float32), ((5, 1, -1), em.uint8)])
def test_data_range_batches(bounds, dtype):
    rng = np.random.default_rng(len(bounds))
    source = Dataset.range(*bounds, dtype=dtype)
    for ds in chains(rng, source, len(range(*bounds))):
        assert_same_batches(ds.batch(3))
        assert_same_batches(ds.batch(2, drop_remainder=True))


def test_data_range_values_the_dtype_cannot_hold_stay_per_element():
    ds = Dataset.range(250, 260, dtype=em.uint8).batch(4)
    assert not any("source_batching" in line for line in ds._optimizations())


def test_data_batches_are_copies():
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    ds = Dataset.from_tensor_slices(data)
    batch = next(iter(ds.batch(4)))
    assert not np.shares_memory(batch.numpy(), ds._arrays)
    data[:] = -1  # the caller's array: from_tensor_slices took its own copy
    np.testing.assert_array_equal(next(iter(ds.batch(4))).numpy(), np.arange(8).reshape(4, 2))


def test_data_strings_slice_too():
    ds = Dataset.from_tensor_slices(np.array([b"a", b"bc", b"", b"d"], dtype=object)).batch(3)
    assert_same_batches(ds)
    assert [list(b) for b in ds.as_numpy_iterator()] == [[b"a", b"bc", b""], [b"d"]]


def test_data_padded_batch_and_hint_shards_keep_their_path():
    ds = Dataset.range(5).padded_batch(2)
    assert ds._optimizations() == []
    assert [b.tolist() for b in ds.as_numpy_iterator()] == [[0, 1], [2, 3], [4]]
    hint = em.data.experimental.SHARD_HINT
    with pytest.raises(em.errors.InvalidArgumentError, match="placeholder"):
        list(Dataset.range(5).shard(hint, hint).batch(2))


def test_data_options_switch_source_batching_off():
    ds = Dataset.range(7).batch(3)
    assert ds._optimizations() == ["source_batching: batch(3) slices Range"]
    assert unoptimized(ds)._optimizations() == []
    options = em.data.Options()
    with pytest.raises(TypeError, match="must be a bool"):
        options.experimental_optimization.source_batching = "no"
