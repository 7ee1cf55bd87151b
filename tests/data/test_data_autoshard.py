"""`auto_shard` against the distributed input guide's worker tables (section 分片: 2 workers
with 1 replica each, global batch 4) and tf.data's AutoShard rules."""

import numpy as np
import pytest

import ember as em
from ember.runtime.data.autoshard import (auto_shard, batch_sizes_for_worker,
                                          distribute_for_worker, rebatch_for_replicas)
from ember.runtime.data.combine import ShardDataset
from ember.runtime.data.transforms import PrefetchDataset

Dataset = em.data.Dataset
Policy = em.data.experimental.AutoShardPolicy


def ints(ds):
    return [[int(v) for v in np.asarray(batch).reshape(-1)] for batch in ds.as_numpy_iterator()]


def with_policy(ds, policy):
    options = em.data.Options()
    options.experimental_distribute.auto_shard_policy = policy
    return ds.with_options(options)


@pytest.fixture
def files(tmp_path):
    """file1: 0..5 and file2: 6..11 as text lines and as records; `one`: 0..11."""
    def text(name, numbers):
        (tmp_path / name).write_text("".join(f"{n}\n" for n in numbers))
        with em.data.RecordWriter(str(tmp_path / (name + ".rec"))) as writer:
            for n in numbers:
                writer.write(str(n))
    text("file1", range(6))
    text("file2", range(6, 12))
    (tmp_path / "one").mkdir()
    text("one/file", range(12))
    return tmp_path


def per_worker(ds, policy):
    return [ints(distribute_for_worker(with_policy(ds, policy), 2, w, 2)) for w in range(2)]


@pytest.mark.parametrize("reader", ["interleave", "text", "slices", "records"])
def test_file_policy_gives_the_guides_table(files, reader):
    names = Dataset.list_files(str(files / "file[12]"), shuffle=False)
    if reader == "interleave":
        ds = names.interleave(em.data.TextLineDataset, cycle_length=1)
    elif reader == "text":
        ds = em.data.TextLineDataset(names)
    elif reader == "slices":
        ds = Dataset.from_tensor_slices([str(files / "file1"), str(files / "file2")])
        ds = ds.interleave(lambda name: em.data.TextLineDataset(name).map(lambda s: s),
                           cycle_length=2, block_length=6)
    else:
        ds = em.data.RecordDataset(Dataset.list_files(str(files / "file[12].rec"),
                                                      shuffle=False))
    ds = ds.batch(4)
    table = [[[0, 1], [2, 3], [4], [5]], [[6, 7], [8, 9], [10], [11]]]
    assert per_worker(ds, Policy.FILE) == table
    assert per_worker(ds, Policy.AUTO) == table  # AUTO tries FILE first
    assert ints(ds) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]  # input unchanged


def test_data_and_off_policies_give_the_guides_tables(files):
    ds = em.data.TextLineDataset(str(files / "one" / "file")).batch(4)
    assert per_worker(ds, Policy.DATA) == [[[0, 1], [4, 5], [8, 9]],
                                           [[2, 3], [6, 7], [10, 11]]]
    everything = [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]]
    assert per_worker(ds, Policy.OFF) == [everything, everything]


def test_fewer_files_than_workers_tells_to_use_data(files):
    ds = em.data.TextLineDataset(str(files / "one" / "file")).batch(4)
    for policy in (Policy.FILE, Policy.AUTO):
        sharded = auto_shard(with_policy(ds, policy), 2, 1)  # raises when iterated
        with pytest.raises(em.errors.InvalidArgumentError,
                           match=r"only has 1 file\(s\), which is not enough for the required "
                                 r"2 shards/workers.*AutoShardPolicy.DATA"):
            ints(sharded)


def test_auto_falls_back_to_data_and_file_needs_files():
    ds = Dataset.range(8).batch(2)
    assert ints(auto_shard(ds, 2, 0)) == [[0, 1], [4, 5]]  # AUTO: not files, so DATA
    assert ints(auto_shard(ds, 2, 1)) == [[2, 3], [6, 7]]
    with pytest.raises(em.errors.NotFoundError, match="unshardable source dataset "
                                                      r"\(_Range.*DATA or OFF"):
        auto_shard(with_policy(ds, Policy.FILE), 2, 0)
    counted = em.data.TextLineDataset("x").enumerate()  # enumerate counts with a range
    with pytest.raises(em.errors.NotFoundError, match="EnumerateDataset"):
        auto_shard(with_policy(counted, Policy.FILE), 2, 0)


def test_data_shards_before_trailing_prefetch_and_after_the_replica_split():
    ds = Dataset.range(12).batch(4).prefetch(2)
    sharded = auto_shard(with_policy(ds, Policy.DATA), 2, 0)
    prefetch, = sharded._inputs()  # with_options(prefetch(shard(batch)))
    assert isinstance(prefetch, PrefetchDataset)
    assert isinstance(prefetch._inputs()[0], ShardDataset)
    assert ints(sharded) == [[0, 1, 2, 3], [8, 9, 10, 11]]
    # A tf.distribute-style rebatch(batch_sizes) is replaced by the per-replica split.
    v2 = Dataset.range(12).batch(4).rebatch(batch_sizes_for_worker(4, 2, 1, 0))
    assert ints(auto_shard(with_policy(v2, Policy.DATA), 2, 0, 2)) == [[0, 1], [4, 5], [8, 9]]


def test_file_sharding_through_zip_map_and_shuffle(files):
    text = em.data.TextLineDataset(Dataset.list_files(str(files / "file[12]"), seed=3))
    records = em.data.RecordDataset([str(files / "file1.rec"), str(files / "file2.rec")])
    ds = with_policy(Dataset.zip(text, records).map(lambda a, b: (a, b)).shuffle(2, seed=1),
                     Policy.FILE)
    seen = []
    for worker in range(2):
        pairs = list(auto_shard(ds, 2, worker).as_numpy_iterator())
        assert len(pairs) == 6
        seen.append(sorted(int(b) for _, b in pairs))
    assert seen == [list(range(6)), list(range(6, 12))]


def test_hint_fills_shard_placeholders():
    hint = em.data.experimental.SHARD_HINT
    ds = with_policy(Dataset.range(6).shard(hint, hint).map(lambda x: x * 10), Policy.HINT)
    assert ints(auto_shard(ds, 3, 1)) == [[10], [40]]
    assert ints(auto_shard(ds, 2, 0)) == [[0], [20], [40]]


def test_replica_split_and_batch_sizes_follow_tf():
    # The guide's rebatch tables.
    assert ints(rebatch_for_replicas(Dataset.range(6).batch(4), 2)) == [[0, 1], [2, 3], [4],
                                                                       [5]]
    assert ints(rebatch_for_replicas(Dataset.range(4).batch(4), 5)) == [[0], [1], [2], [3],
                                                                       []]
    assert ints(rebatch_for_replicas(Dataset.range(8).batch(4), 3)) == [
        [0, 1], [2, 3], [], [4, 5], [6, 7], []]
    # tf.data's batch_sizes_for_worker docstring: G=7, W=2, R=2.
    assert batch_sizes_for_worker(7, 2, 2, 0) == [2, 2, 2, 1]
    assert batch_sizes_for_worker(7, 2, 2, 1) == [2, 1, 2, 2]
    with pytest.raises(ValueError, match="worker_index"):
        auto_shard(Dataset.range(4), 2, 2)


def test_each_worker_gets_its_own_copy_of_the_pipeline(tmp_path):
    for i in range(4):
        (tmp_path / f"f{i}").write_text(f"{i}\n")
    names = Dataset.list_files(str(tmp_path / "f*"), seed=5)  # reshuffled each pass
    ds = with_policy(em.data.TextLineDataset(names), Policy.FILE)
    workers = [auto_shard(ds, 2, w) for w in range(2)]
    ints(ds)  # a pass over the original does not move the workers' shuffles on
    first = ints(workers[0])
    second = ints(workers[1])
    assert sorted(first + second) == [[0], [1], [2], [3]]
    cached = Dataset.range(3).cache()
    ints(cached)
    assert ints(cached._replace_inputs([Dataset.range(5, 7)])) == [[5], [6]]


def test_the_guides_options_snippet():
    dataset = Dataset.from_tensors(([1.0], [1.0])).repeat(64).batch(16)
    options = em.data.Options()
    options.experimental_distribute.auto_shard_policy = Policy.DATA
    dataset = dataset.with_options(options)
    assert dataset.options().experimental_distribute.auto_shard_policy == Policy.DATA
    worker = auto_shard(dataset, 2, 1)
    assert [x.shape for x, _ in worker.as_numpy_iterator()] == [(16, 1), (16, 1)]
