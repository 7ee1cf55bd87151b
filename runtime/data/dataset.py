"""`em.data.Dataset`: tf.data's input pipelines, run eagerly in Python.

A dataset is a description; `iter(ds)` (or `for x in ds`) starts a fresh pass over it. Every
element is a nested structure (tuples, dicts) of eager `em.Tensor`s.
"""

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor, constant

from ember.runtime.data import structure

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _count(value, what: str, allow_tensor: bool = True) -> int:
    """A Python int from an int or a scalar integer tensor; TypeError otherwise."""
    if isinstance(value, Tensor) and allow_tensor and value.shape.rank == 0 \
            and value.dtype.is_integer:
        return int(value.numpy())
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}")
    return int(value)


class Dataset:
    """A sequence of elements, each a nested structure (tuples, dicts) of `em.Tensor`s.

    Build one with `from_tensors`, `from_tensor_slices` or `range`, chain transformations
    (`map`, `filter`, `batch`, `shuffle`, `repeat`, `take`, `skip`, `enumerate`, `cache`,
    `prefetch`) and iterate it with `for`, `iter()`/`next()` or `as_numpy_iterator()`.
    Everything runs eagerly in Python; inside `em.function`, `for x in ds` is one loop
    pulling each element from Python (runtime/data/staged.py).
    """

    def _iterate(self):  # pragma: no cover - every subclass defines it
        raise TypeError("em.data.Dataset is abstract: build one with Dataset.range, "
                        "from_tensors or from_tensor_slices")

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    @property
    def element_spec(self):
        """The `em.TensorSpec` structure of an element."""
        return self._spec

    def cardinality(self):
        """The number of elements as a scalar int64 tensor: `INFINITE_CARDINALITY` (-1) for
        an endless dataset, `UNKNOWN_CARDINALITY` (-2) when it cannot be known (filter)."""
        return constant(self._cardinality(), dtype=dtypes.int64)

    def __iter__(self):
        from ember.frontend.tracing import current_graph
        if current_graph() is not None:  # iter(ds) inside em.function: pulls when it runs
            from ember.runtime.data.staged import iterator_over
            return iterator_over(self)
        from ember.runtime.data.iterator import Iterator
        return Iterator(self)

    # em.function: traced by element_spec (TF's DatasetSpec), passed as an int64 handle;
    # `for` over it is one loop in the IR (runtime/data/staged.py)
    __ember_kind__ = "Dataset"

    def __tracing_type__(self, context):
        from ember.runtime.data.staged import trace_type
        return trace_type(self, "dataset")

    def __ember_components__(self):
        from ember.runtime.data.staged import handle_of
        return [handle_of(self)]

    def __ember_rebuild__(self, parts):
        from ember.runtime.data.staged import rebuild
        return rebuild("dataset", self.element_spec, parts)

    def __ember_staged_iter__(self):
        from ember.runtime.data.staged import iterator_over
        return iterator_over(self)

    def __len__(self):
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True

    def as_numpy_iterator(self):
        """Iterates the elements as numpy values (arrays for tensors, same structure)."""
        for element in self._iterate():
            yield structure.to_numpy(element)

    def __repr__(self):
        return f"<{type(self).__name__} element_spec={self.element_spec}>"

    # Sources -------------------------------------------------------------------------
    @staticmethod
    def from_tensors(tensors):
        """A dataset of one element, `tensors` (a nested structure of tensor-like values)."""
        return _FromTensors(structure.to_tensors(tensors, "Dataset.from_tensors"))

    @staticmethod
    def from_tensor_slices(tensors):
        """A dataset of the slices of `tensors` along their first dimension (every component
        must have the same first dimension)."""
        element = structure.to_tensors(tensors, "Dataset.from_tensor_slices")
        leaves = structure.flatten(element)
        for i, leaf in enumerate(leaves):
            if leaf.shape.rank == 0:
                raise ValueError(f"Dataset.from_tensor_slices: component {i} is a scalar "
                                 f"(shape ()); every component needs a first dimension to "
                                 "slice (use from_tensors for a single element)")
        sizes = [leaf.shape[0] for leaf in leaves]
        if len(set(sizes)) > 1:
            shown = ", ".join(f"component {i}: {n}" for i, n in enumerate(sizes))
            raise ValueError("Dataset.from_tensor_slices: all components must have the same "
                             f"first dimension, got {shown}")
        return _FromTensorSlices(element, sizes[0] if sizes else 0)

    @staticmethod
    def range(*args, dtype=dtypes.int64):
        """`range(stop)` or `range(start, stop[, step])`, as Python's, of int64 scalars."""
        if not 1 <= len(args) <= 3:
            raise TypeError(f"Dataset.range takes 1 to 3 arguments (start, stop, step), got "
                            f"{len(args)}")
        values = [_count(a, "Dataset.range's arguments") for a in args]
        if len(values) == 3 and values[2] == 0:
            raise ValueError("Dataset.range: step must not be zero")
        return _Range(range(*values), dtypes.as_dtype(dtype))

    # Transformations -----------------------------------------------------------------
    def batch(self, batch_size, drop_remainder: bool = False):
        """Stacks consecutive elements into batches of `batch_size` (the last one smaller
        unless `drop_remainder`)."""
        from ember.runtime.data.transforms import BatchDataset
        return BatchDataset(self, batch_size, drop_remainder)

    def repeat(self, count=None):
        """Repeats the dataset `count` times (forever for None or -1)."""
        from ember.runtime.data.transforms import RepeatDataset
        return RepeatDataset(self, count)

    def take(self, count):
        """The first `count` elements (all of them for -1)."""
        from ember.runtime.data.transforms import TakeDataset
        return TakeDataset(self, count)

    def skip(self, count):
        """All but the first `count` elements (none for -1)."""
        from ember.runtime.data.transforms import SkipDataset
        return SkipDataset(self, count)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration: bool = True):
        """Shuffles through a buffer of `buffer_size` elements, as tf.data: each output is a
        uniform pick from the buffer, whose slot the next input refills. A `seed` makes the
        order reproducible; `reshuffle_each_iteration` gives each pass a different order."""
        from ember.runtime.data.transforms import ShuffleDataset
        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def map(self, map_func, num_parallel_calls=None, deterministic=None):
        """Applies `map_func` to each element (a tuple's components as separate arguments,
        a dict or a tensor as one). It runs eagerly, in Python, one element at a time:
        `num_parallel_calls` (an int or `em.data.AUTOTUNE`) is accepted for tf.data
        compatibility and does not change the result."""
        from ember.runtime.data.transforms import MapDataset
        return MapDataset(self, map_func, num_parallel_calls)

    def filter(self, predicate):
        """The elements for which `predicate` (called as `map`'s function) returns a true
        scalar bool tensor."""
        from ember.runtime.data.transforms import FilterDataset
        return FilterDataset(self, predicate)

    def enumerate(self, start=0):
        """Pairs each element with its int64 index: `(i, element)`, from `start`."""
        from ember.runtime.data.transforms import EnumerateDataset
        return EnumerateDataset(self, start)

    def cache(self, filename: str = ""):
        """Keeps the elements in memory after the first complete pass (only the in-memory
        cache: `filename` must be empty)."""
        from ember.runtime.data.transforms import CacheDataset
        if filename:
            raise ValueError("Dataset.cache: only the in-memory cache is supported; call "
                             "cache() without a filename")
        return CacheDataset(self)

    def prefetch(self, buffer_size):
        """Produces up to `buffer_size` elements ahead in a background thread
        (`em.data.AUTOTUNE` picks the size)."""
        from ember.runtime.data.transforms import PrefetchDataset
        return PrefetchDataset(self, buffer_size)


class _FromTensors(Dataset):
    def __init__(self, element):
        self._element = element
        self._spec = structure.spec_of(element)

    def _iterate(self):
        yield self._element

    def _cardinality(self):
        return 1


class _FromTensorSlices(Dataset):
    def __init__(self, element, size):
        self._arrays = structure.map_structure(lambda t: np.asarray(t.numpy()), element)
        self._size = size
        self._spec = structure.map_structure(
            lambda t: TensorSpec(t.shape.dims[1:], t.dtype), element)

    def _iterate(self):
        for i in range(self._size):
            yield structure.map_structure(lambda a: constant(a[i]), self._arrays)

    def _cardinality(self):
        return self._size


class _Range(Dataset):
    def __init__(self, bounds, dtype):
        self._bounds = bounds
        self._dtype = dtype
        self._spec = TensorSpec([], dtype)

    def _iterate(self):
        for i in self._bounds:
            yield constant(i, dtype=self._dtype)

    def _cardinality(self):
        return len(self._bounds)
