"""The transformations of `em.data.Dataset` (each a dataset wrapping its input); `map` and
`filter`, whose functions are traced, are in mapping.py."""

import itertools
import threading

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import random_seed
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor, constant

from ember.runtime.data import structure
from ember.runtime.data.dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY,
                                        Dataset, _count)


def seeds_of(seed, where: str) -> list:
    """The words seeding a random transformation made now with `seed` (or None), under
    em.random.set_seed's rules (TF's `random_seed.get_seed`): a global seed set before
    makes them the same in every run; with neither seed, entropy drawn now. Each pass
    seeds a generator with these words plus its pass number."""
    if seed is not None:
        seed = _count(seed, f"{where}: seed")
    glob, op = random_seed.get_seed(seed)
    if glob is None:
        return [int(np.random.SeedSequence().entropy % 2**63)]
    return [glob & (2**64 - 1), op & (2**64 - 1)]


class _Unary(Dataset):
    _input_attrs = ("_source",)

    def __init__(self, source):
        self._source = source

    @property
    def element_spec(self):
        return self._source.element_spec

    def _cardinality(self):
        return self._source._cardinality()


class BatchDataset(_Unary):
    def __init__(self, source, batch_size, drop_remainder):
        super().__init__(source)
        self._size = _count(batch_size, "Dataset.batch: batch_size")
        if self._size <= 0:
            raise ValueError(f"Dataset.batch: batch_size must be positive, got {self._size}")
        self._drop = bool(drop_remainder)

    @property
    def element_spec(self):
        outer = self._size if self._drop else None
        return structure.map_structure(lambda s: structure.with_outer(s, outer),
                                       self._source.element_spec)

    def _iterate(self):
        if type(self) is BatchDataset:  # padded_batch and the like stack their own way
            from ember.runtime.data.optimize import input_batches
            return input_batches(self._source, self._size, self._drop)
        return self._iterate_elementwise()

    def _iterate_elementwise(self):
        iterator = self._source._iterate()
        while True:
            elements = list(itertools.islice(iterator, self._size))
            if not elements or (self._drop and len(elements) < self._size):
                return
            yield self._stack(elements)

    def _stack(self, elements):
        columns = [structure.flatten(e) for e in elements]
        stacked = []
        for i, parts in enumerate(zip(*columns)):
            arrays = [p._numpy_array() for p in parts]
            shapes = {a.shape for a in arrays}
            if len(shapes) > 1:
                raise ValueError(f"Dataset.batch: cannot batch tensors of different shapes in "
                                 f"component {i}: {sorted(shapes)}; pad them to one shape "
                                 "or map them to one shape before batching")
            stacked.append(Tensor(np.stack(arrays), parts[0].dtype))
        return structure.pack_as(elements[0], stacked)

    def _cardinality(self):
        n = self._source._cardinality()
        if n < 0:
            return n
        return n // self._size if self._drop else -(-n // self._size)


class RepeatDataset(_Unary):
    def __init__(self, source, count):
        super().__init__(source)
        self._count = -1 if count is None else _count(count, "Dataset.repeat: count")

    def _iterate(self):
        passes = itertools.count() if self._count < 0 else range(self._count)
        for _ in passes:
            empty = True
            for element in self._source._iterate():
                empty = False
                yield element
            if empty:
                return

    def _cardinality(self):
        n = self._source._cardinality()
        if self._count == 0 or n == 0:
            return 0
        if n < 0:
            return n
        return INFINITE_CARDINALITY if self._count < 0 else n * self._count


class TakeDataset(_Unary):
    def __init__(self, source, count):
        super().__init__(source)
        self._count = _count(count, "Dataset.take: count")

    def _iterate(self):
        iterator = self._source._iterate()
        return iterator if self._count < 0 else itertools.islice(iterator, self._count)

    def _rows(self):
        plan = self._source._rows()
        if plan is None or self._count < 0:
            return plan
        return plan[0], plan[1][:self._count]

    def _cardinality(self):
        n = self._source._cardinality()
        if self._count < 0:
            return n
        if n == INFINITE_CARDINALITY:
            return self._count
        return n if n == UNKNOWN_CARDINALITY else min(n, self._count)


class SkipDataset(_Unary):
    def __init__(self, source, count):
        super().__init__(source)
        self._count = _count(count, "Dataset.skip: count")

    def _iterate(self):
        if self._count < 0:
            return iter(())
        return itertools.islice(self._source._iterate(), self._count, None)

    def _rows(self):
        plan = self._source._rows()
        if plan is None:
            return None
        return plan[0], plan[1][len(plan[1]):] if self._count < 0 else plan[1][self._count:]

    def _cardinality(self):
        n = self._source._cardinality()
        if self._count < 0:
            return 0 if n != INFINITE_CARDINALITY else n
        return n if n < 0 else max(0, n - self._count)


class ShuffleDataset(_Unary):
    def __init__(self, source, buffer_size, seed, reshuffle_each_iteration):
        super().__init__(source)
        self._buffer = _count(buffer_size, "Dataset.shuffle: buffer_size")
        if self._buffer <= 0:
            raise ValueError(f"Dataset.shuffle: buffer_size must be positive, got "
                             f"{self._buffer}")
        self._seeds = seeds_of(seed, "Dataset.shuffle")
        self._reshuffle = bool(reshuffle_each_iteration)
        self._fresh_state()

    def _fresh_state(self):
        self._passes = itertools.count()
        self._lock = threading.Lock()

    def _iterate(self):
        with self._lock:
            epoch = next(self._passes) if self._reshuffle else 0
        rng = np.random.default_rng(self._seeds + [epoch])
        buffer = []
        for element in self._source._iterate():
            if len(buffer) < self._buffer:
                buffer.append(element)
                continue
            i = int(rng.integers(len(buffer)))
            yield buffer[i]
            buffer[i] = element
        while buffer:
            i = int(rng.integers(len(buffer)))
            buffer[i], buffer[-1] = buffer[-1], buffer[i]
            yield buffer.pop()


class EnumerateDataset(_Unary):
    def __init__(self, source, start):
        super().__init__(source)
        self._start = _count(start, "Dataset.enumerate: start")

    @property
    def element_spec(self):
        return TensorSpec([], dtypes.int64), self._source.element_spec

    def _iterate(self):
        for i, element in enumerate(self._source._iterate(), self._start):
            yield constant(i, dtype=dtypes.int64), element


class CacheDataset(_Unary):
    def __init__(self, source):
        super().__init__(source)
        self._fresh_state()

    def _fresh_state(self):
        self._cached = None

    def _iterate(self):
        if self._cached is not None:
            yield from self._cached
            return
        seen = []
        for element in self._source._iterate():
            seen.append(element)
            yield element
        self._cached = seen


class PrefetchDataset(_Unary):
    def __init__(self, source, buffer_size):
        super().__init__(source)
        size = _count(buffer_size, "Dataset.prefetch: buffer_size")
        if size < 0 and size != AUTOTUNE:
            raise ValueError(f"Dataset.prefetch: buffer_size must be >= 0 or "
                             f"em.data.AUTOTUNE, got {size}")
        self._size = 2 if size == AUTOTUNE else size

    def _iterate(self):
        from ember.runtime.data.prefetch import prefetched
        if self._size == 0:
            return self._source._iterate()
        return prefetched(self._source._iterate(), self._size)
