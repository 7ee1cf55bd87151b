"""`auto_shard`: the rewrite tf.distribute applies to a dataset on each of several workers
(tf.data's AutoShard graph rewrite), chosen by `options().experimental_distribute.
auto_shard_policy` (`em.data.experimental.AutoShardPolicy`):

- FILE: shard the file names feeding the file readers. Walking from the end of the pipeline
  through transformations that pass elements along (batch, map, shuffle, repeat, ...):
  a reader (`TextLineDataset`, `RecordDataset`) gets `shard(num_workers, worker_index)`
  between it and its file names; an `interleave` whose function builds a reader gets it on
  its input; `zip`/`concatenate` shard each input. A source that is not files (`range`,
  `from_tensors`, `from_generator`, `from_tensor_slices` of data, `enumerate`'s counter) means
  FILE cannot apply. Each worker then reads whole files: fewer files than workers raises
  `em.errors.InvalidArgumentError` when the dataset is iterated, telling the user to set
  AutoShardPolicy.DATA.
- DATA: every worker reads everything and keeps every `num_workers`-th element, from its
  index: `shard` at the end of the pipeline, before any trailing `prefetch`/`with_options`, and
  after the per-replica split of the global batch (a `rebatch` there is replaced by that
  split, as TF rewrites RebatchDatasetV2 to the legacy RebatchDataset).
- AUTO (the default): FILE, or DATA when FILE cannot apply. OFF: nothing.
- HINT: each `shard(SHARD_HINT, SHARD_HINT)` in the pipeline becomes
  `shard(num_workers, worker_index)`.

How the distribute layer composes them (tf.distribute's input_lib, for worker w of W with R
replicas in sync): `distribute_for_worker(dataset, W, w, R)`, i.e. first cut each global batch
into R per-replica slices (`rebatch_for_replicas`), then `auto_shard(..., R)`. The worker's
R / W replicas take consecutive slices. For the distributed input guide's example (files
[0..5] and [6..11], global batch 4, 2 workers with 1 replica each) worker 0 gets [0, 1],
[2, 3], [4], [5] under FILE; [0, 1], [4, 5], [8, 9] under DATA (one file [0..11]); all six
batches [0, 1] .. [10, 11] under OFF.
"""

from ember.runtime.data.batching import LegacyRebatchDataset, RebatchDataset, UnbatchDataset
from ember.runtime.data.combine import (SHARD_HINT, ConcatenateDataset, InterleaveDataset,
                                        ShardDataset, ZipDataset)
from ember.runtime.data.dataset import _count
from ember.runtime.data.errors import NotFoundError
from ember.runtime.data.mapping import FilterDataset, MapDataset
from ember.runtime.data.options import AutoShardPolicy, OptionsDataset
from ember.runtime.data.readers import FileReaderDataset
from ember.runtime.data.transforms import (BatchDataset, CacheDataset, PrefetchDataset,
                                           RepeatDataset, ShuffleDataset, SkipDataset,
                                           TakeDataset)

# Transformations FILE sharding looks through (TF's kPassThroughOps, plus unbatch).
_PASS_THROUGH = (BatchDataset, CacheDataset, FilterDataset, LegacyRebatchDataset, MapDataset,
                 OptionsDataset, PrefetchDataset, RebatchDataset, RepeatDataset, ShardDataset,
                 ShuffleDataset, SkipDataset, TakeDataset, UnbatchDataset)


class _NoFiles(Exception):
    """FILE sharding found a source that is not a file reader."""


def _reads_files(dataset) -> bool:
    return isinstance(dataset, FileReaderDataset) or any(
        _reads_files(d) for d in dataset._inputs())


def _shard_files(node, num_workers, index):
    def shard(files):
        return ShardDataset(files, num_workers, index, require_non_empty=True)

    if isinstance(node, FileReaderDataset):
        return node._replace_inputs([shard(node._files)])
    if isinstance(node, InterleaveDataset) and _reads_files(node.sample_dataset()):
        return node._replace_inputs([shard(node._source)])
    if isinstance(node, (ZipDataset, ConcatenateDataset)):
        return node._replace_inputs([_shard_files(d, num_workers, index)
                                     for d in node._inputs()])
    if isinstance(node, _PASS_THROUGH + (InterleaveDataset,)):
        return node._replace_inputs([_shard_files(node._source, num_workers, index)])
    raise _NoFiles(f"found an unshardable source dataset ({type(node).__name__}, "
                   f"element_spec {node.element_spec}); FILE sharding needs every source to "
                   "be a file reader (em.data.TextLineDataset, em.data.RecordDataset)")


def _shard_data(dataset, num_workers, index, num_replicas):
    trailing, node = [], dataset
    while isinstance(node, (PrefetchDataset, OptionsDataset)):
        trailing.append(node)
        node = node._source
    if isinstance(node, RebatchDataset):
        node = LegacyRebatchDataset(node._source, num_replicas)
    sharded = ShardDataset(node, num_workers, index)
    for outer in reversed(trailing):
        sharded = outer._replace_inputs([sharded])
    return sharded


def _fill_hints(node, num_workers, index):
    inputs = node._inputs()
    rebuilt = [_fill_hints(d, num_workers, index) for d in inputs]
    if any(new is not old for new, old in zip(rebuilt, inputs)):
        node = node._replace_inputs(rebuilt)
    if isinstance(node, ShardDataset) and node._shards == SHARD_HINT:
        return ShardDataset(node._source, num_workers, index)
    return node


def _cloned(node, memo):
    """A copy of the whole pipeline with fresh per-pass state, as tf.distribute clones the
    dataset for each worker (a shuffle's pass count is then the same on every worker)."""
    if id(node) not in memo:
        memo[id(node)] = node._replace_inputs([_cloned(d, memo) for d in node._inputs()])
    return memo[id(node)]


def auto_shard(dataset, num_workers, worker_index, num_replicas_in_sync=1):
    """A copy of `dataset` rewritten for worker `worker_index` of `num_workers` by its
    auto-shard policy (the module docstring says how); `dataset` itself is not changed.

    Raises:
      ValueError: for a bad `num_workers` or `worker_index`.
      em.errors.NotFoundError: the policy is FILE but the pipeline does not read files.
    """
    workers = _count(num_workers, "auto_shard: num_workers")
    index = _count(worker_index, "auto_shard: worker_index")
    replicas = _count(num_replicas_in_sync, "auto_shard: num_replicas_in_sync")
    if workers <= 0 or not 0 <= index < workers or replicas <= 0:
        raise ValueError(f"auto_shard: need num_workers > 0, 0 <= worker_index < num_workers "
                         f"and num_replicas_in_sync > 0, got {workers}, {index}, {replicas}")
    policy = dataset.options().experimental_distribute.auto_shard_policy
    dataset = _cloned(dataset, {})
    if policy == AutoShardPolicy.OFF:
        return dataset
    if policy == AutoShardPolicy.HINT:
        return _fill_hints(dataset, workers, index)
    if policy == AutoShardPolicy.DATA:
        return _shard_data(dataset, workers, index, replicas)
    try:
        return _shard_files(dataset, workers, index)
    except _NoFiles as e:
        if policy == AutoShardPolicy.FILE:
            raise NotFoundError("AutoShardDataset", f"Could not apply FILE based sharding: "
                                f"{e}. Set the auto_shard_policy to DATA or OFF in "
                                "em.data.Options().experimental_distribute.") from None
        return _shard_data(dataset, workers, index, replicas)


def rebatch_for_replicas(dataset, num_replicas_in_sync):
    """Each global batch of `dataset` cut into `num_replicas_in_sync` per-replica slices of
    ceil(B / R) rows, the last shorter or empty (the guide's rebatch tables)."""
    return LegacyRebatchDataset(dataset, num_replicas_in_sync)


def distribute_for_worker(dataset, num_workers, worker_index, num_replicas_in_sync):
    """The per-replica batches worker `worker_index` reads, in order (its replicas take
    consecutive ones): `rebatch_for_replicas`, then `auto_shard`."""
    return auto_shard(rebatch_for_replicas(dataset, num_replicas_in_sync), num_workers,
                      worker_index, num_replicas_in_sync)


def batch_sizes_for_worker(global_batch_size, num_workers, num_replicas_per_worker,
                           worker_index):
    """tf.data's `batch_sizes_for_worker`: the W * R sizes (summing to the global batch,
    differing by at most one, rotated by the worker's first replica) to `rebatch` a worker's
    global batches into, so that each step's replicas together take one global batch."""
    slices = num_workers * num_replicas_per_worker
    floor, ceil_count = divmod(global_batch_size, slices)
    sizes = [floor + 1] * ceil_count + [floor] * (slices - ceil_count)
    offset = worker_index * num_replicas_per_worker
    return sizes[offset:] + sizes[:offset]
