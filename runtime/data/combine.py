"""Datasets built from several: `zip`, `concatenate`, `interleave`, and `shard` (one in n).

`interleave` follows tf.data's InterleaveDataset step by step: `cycle_length` slots, each
holding a dataset made by `map_func` from one input element; take up to `block_length`
elements from the current slot, then move to the next slot; a slot whose dataset is exhausted
is emptied and the cycle moves on; an empty slot is refilled from the next input element when
the cycle reaches it. With `num_parallel_calls`, each open dataset is read ahead in its own
background thread (prefetch.py): the output order is the same.
"""

import copy
import itertools

import numpy as np

from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend.shape import TensorShape, TensorSpec
from ember.frontend.tensor import constant

from ember.runtime.data import structure
from ember.runtime.data.dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY,
                                        Dataset, _count)
from ember.runtime.data.mapping import _call, _name, cpu_count, parallelism
from ember.runtime.data.transforms import _Unary

SHARD_HINT = -1  # tf.data.experimental.SHARD_HINT: filled in by AutoShardPolicy.HINT

_END = object()


def _check_datasets(datasets, where):
    for d in structure.flatten(datasets):
        if not isinstance(d, Dataset):
            raise TypeError(f"{where}: expected em.data.Dataset objects (or a tuple or dict "
                            f"of them), found {type(d).__name__} {d!r}")


class ZipDataset(Dataset):
    def __init__(self, datasets):
        if isinstance(datasets, list):
            datasets = tuple(datasets)
        _check_datasets(datasets, "Dataset.zip")
        self._structure = datasets
        self._datasets = structure.flatten(datasets)
        if not self._datasets:
            raise ValueError("Dataset.zip: give at least one dataset, as arguments or as a "
                             "tuple or dict of datasets")

    def _inputs(self):
        return tuple(self._datasets)

    def _replace_inputs(self, inputs):
        clone = copy.copy(self)
        clone._datasets = list(inputs)
        clone._fresh_state()
        return clone

    @property
    def element_spec(self):
        return structure.pack_as(self._structure, [d.element_spec for d in self._datasets])

    def _iterate(self):
        iterators = [d._iterate() for d in self._datasets]
        try:
            while True:
                items = [next(it, _END) for it in iterators]
                if any(item is _END for item in items):
                    return
                yield structure.pack_as(self._structure, items)
        finally:
            for it in iterators:
                getattr(it, "close", lambda: None)()

    def _cardinality(self):
        counts = [d._cardinality() for d in self._datasets]
        if UNKNOWN_CARDINALITY in counts:
            return UNKNOWN_CARDINALITY
        finite = [n for n in counts if n >= 0]
        return min(finite) if finite else INFINITE_CARDINALITY


def _skeleton(spec):
    return structure.map_structure(lambda s: s.dtype, spec)


def _common_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


class ConcatenateDataset(Dataset):
    _input_attrs = ("_first", "_second")

    def __init__(self, first, second):
        _check_datasets(second, "Dataset.concatenate")
        a, b = first.element_spec, second.element_spec
        if type(a) is not type(b) or _skeleton(a) != _skeleton(b):
            raise TypeError(f"Incompatible dataset elements:\n  {a} vs.\n  {b}")
        self._first, self._second = first, second

    @property
    def element_spec(self):
        a = structure.flatten(self._first.element_spec)
        b = structure.flatten(self._second.element_spec)
        return structure.pack_as(self._first.element_spec,
                                 [TensorSpec(_common_shape(x.shape, y.shape), x.dtype)
                                  for x, y in zip(a, b)])

    def _iterate(self):
        yield from self._first._iterate()
        yield from self._second._iterate()

    def _cardinality(self):
        counts = (self._first._cardinality(), self._second._cardinality())
        if INFINITE_CARDINALITY in counts:
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in counts else sum(counts)


def _probe(spec):
    """An element of `spec` made of zeros (empty strings), unknown dims as 0."""
    def zeros(s):
        if not isinstance(s, TensorSpec):  # a window's DatasetSpec (windows.py)
            from ember.runtime.data.windows import empty_window
            return empty_window(s)
        shape = [0 if d is None else d for d in (s.shape.dims or ())]
        return constant(np.full(shape, b"" if s.dtype.is_string else 0,
                                dtype=s.dtype.np_dtype), dtype=s.dtype)
    return structure.map_structure(zeros, spec)


class InterleaveDataset(_Unary):
    def __init__(self, source, fn, cycle_length, block_length, num_parallel_calls):
        super().__init__(source)
        if not callable(fn):
            raise TypeError(f"Dataset.interleave: map_func must be callable, got "
                            f"{type(fn).__name__}")
        self._fn = fn
        cycle = AUTOTUNE if cycle_length is None else _count(cycle_length,
                                                             "Dataset.interleave: cycle_length")
        if cycle <= 0 and cycle != AUTOTUNE:
            raise ValueError(f"Dataset.interleave: cycle_length must be positive or "
                             f"em.data.AUTOTUNE, got {cycle}")
        self._cycle = cpu_count() if cycle == AUTOTUNE else cycle
        self._block = 1 if block_length is None else _count(block_length,
                                                            "Dataset.interleave: block_length")
        if self._block <= 0:
            raise ValueError(f"Dataset.interleave: block_length must be positive, got "
                             f"{self._block}")
        self._parallel = 0 if num_parallel_calls is None else parallelism(
            num_parallel_calls, "Dataset.interleave")
        self._fresh_state()

    def _fresh_state(self):
        self._sample = None

    def _dataset_for(self, element):
        return self._checked(_call(self._fn, element))

    def _checked(self, dataset):
        if not isinstance(dataset, Dataset):
            raise TypeError(f"Dataset.interleave: `map_func` ({_name(self._fn)}) must return "
                            f"a `Dataset` object. Got {type(dataset).__name__}.")
        return dataset

    def sample_dataset(self):
        """The dataset `map_func` makes from an element of zeros (empty strings) shaped as the
        input's element_spec, as tf.data traces it with the spec: its element_spec is the
        output's, and auto_shard looks in it for file readers. A function that fails on that
        element is given the first input element instead."""
        if self._sample is None:
            try:
                dataset = _call(self._fn, _probe(self._source.element_spec))
            except Exception:  # noqa: BLE001 - values the function rejects: use real ones
                first = next(iter(self._source._iterate()), _END)
                if first is _END:
                    raise
                dataset = _call(self._fn, first)
            self._sample = self._checked(dataset)
        return self._sample

    @property
    def element_spec(self):
        return self.sample_dataset().element_spec

    def _open(self, element):
        dataset = self._dataset_for(element)
        if _skeleton(dataset.element_spec) != _skeleton(self.element_spec):
            raise TypeError(f"Dataset.interleave: `map_func` ({_name(self._fn)}) returned a "
                            f"dataset of {dataset.element_spec}, but its datasets have "
                            f"{self.element_spec} (structure and dtypes must agree)")
        elements = dataset._iterate()
        if self._parallel:
            from ember.runtime.data.prefetch import prefetched
            elements = prefetched(elements, self._block)
        return elements

    def _iterate(self):
        inputs = self._source._iterate()
        slots = [None] * self._cycle
        end_of_input, open_count, index, taken = False, 0, 0, 0
        try:
            while not end_of_input or open_count:
                if slots[index] is not None:
                    element = next(slots[index], _END)
                    if element is not _END:
                        taken += 1
                        if taken == self._block:
                            index, taken = (index + 1) % self._cycle, 0
                        yield element
                        continue
                    slots[index], open_count = None, open_count - 1
                elif not end_of_input:
                    element = next(inputs, _END)
                    end_of_input = element is _END
                    if not end_of_input:
                        slots[index], open_count = self._open(element), open_count + 1
                    continue
                index, taken = (index + 1) % self._cycle, 0
        finally:
            for slot in slots:
                getattr(slot, "close", lambda: None)()

    def _cardinality(self):
        return UNKNOWN_CARDINALITY


_TOO_FEW_FILES = (
    "Could not apply FILE based sharding: the dataset only has {n} file(s), which is not "
    "enough for the required {shards} shards/workers. If you are using datasets with "
    "distribution strategy, consider setting the auto sharding policy to either DATA or OFF "
    "using the `experimental_distribute.auto_shard_policy` option of `em.data.Options()`: "
    "options.experimental_distribute.auto_shard_policy = "
    "em.data.experimental.AutoShardPolicy.DATA. Or, split your input files into a larger "
    "number of small files such that number of files is greater than number of "
    "shards/workers.")


class ShardDataset(_Unary):
    def __init__(self, source, num_shards, index, require_non_empty: bool = False):
        super().__init__(source)
        self._shards = _count(num_shards, "Dataset.shard: num_shards")
        self._index = _count(index, "Dataset.shard: index")
        self._require_non_empty = require_non_empty
        if self._shards == SHARD_HINT:
            return
        if self._shards <= 0:
            raise InvalidArgumentError("ShardDataset", "Number of shards must be greater than "
                                       f"zero (currently num_shards = {self._shards}).")
        if not 0 <= self._index < self._shards:
            raise InvalidArgumentError("ShardDataset", f"Index must be between 0 and "
                                       f"{self._shards - 1} (currently index = {self._index}).")

    def _iterate(self):
        if self._shards == SHARD_HINT:
            raise InvalidArgumentError(
                "ShardDataset", "shard(SHARD_HINT, SHARD_HINT) is a placeholder that "
                "AutoShardPolicy.HINT fills in when the dataset is distributed; it cannot be "
                "iterated as it is")
        elements = self._source._iterate()
        first = list(itertools.islice(elements, self._shards))
        if self._require_non_empty and len(first) < self._shards:
            raise InvalidArgumentError("ShardDataset", _TOO_FEW_FILES.format(
                n=len(first), shards=self._shards))
        if len(first) > self._index:
            yield first[self._index]
        for i, element in enumerate(elements, self._shards):
            if i % self._shards == self._index:
                yield element

    def _rows(self):
        plan = self._source._rows()
        if plan is None or self._shards == SHARD_HINT or self._require_non_empty:
            return None
        return plan[0], plan[1][self._index::self._shards]

    def _cardinality(self):
        n = self._source._cardinality()
        if n < 0 or self._shards == SHARD_HINT:
            return n
        return n // self._shards + (self._index < n % self._shards)
