"""`em.data.Dataset`: tf.data's input pipelines, run eagerly in Python.

A dataset is a description; `iter(ds)` (or `for x in ds`) starts a fresh pass over it. Every
element is a nested structure (tuples, dicts) of eager `em.Tensor`s.

A pipeline is a chain (a DAG, for `zip` and `concatenate`) of Dataset nodes, each holding the
datasets it reads from. Every node exposes them uniformly, so rewrites such as
`autoshard.auto_shard` walk and rebuild a chain without knowing each node's attributes:

- `ds._inputs()`: the input datasets, in order (`()` for a source such as `range`);
- `ds._replace_inputs(inputs)`: a shallow copy of `ds` reading from `inputs` instead, with
  its per-pass state (a cache, a shuffle's pass count) reset by `_fresh_state()`.

A node names the attributes holding its inputs in `_input_attrs` (`("_source",)` for a
transformation of one dataset); a node whose inputs are not plain attributes (`zip`'s nested
structure) overrides both methods. The methods that build nodes live here; the nodes live in
transforms.py, mapping.py, combine.py, batching.py, sources.py, readers.py (with
compression.py) and options.py.
"""

import copy

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor, constant

from ember.runtime.data import errors as _errors, structure

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _count(value, what: str, allow_tensor: bool = True) -> int:
    """A Python int from an int or a scalar integer tensor; TypeError otherwise."""
    if isinstance(value, Tensor) and value._value is None:  # symbolic: in em.function
        raise _errors.symbolic_argument(what, value)
    if isinstance(value, Tensor) and allow_tensor and value.shape.rank == 0 \
            and value.dtype.is_integer:
        return int(value.numpy())
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {type(value).__name__} {value!r}")
    return int(value)


class Dataset:
    """A sequence of elements, each a nested structure (tuples, dicts) of `em.Tensor`s.

    Build one with `from_tensors`, `from_tensor_slices`, `range`, `from_generator`,
    `list_files` or a file reader (`em.data.TextLineDataset`, `em.data.RecordDataset`),
    chain transformations (`map`, `filter`, `batch`, `padded_batch`, `unbatch`, `rebatch`,
    `shuffle`, `repeat`, `take`, `skip`, `shard`, `enumerate`, `interleave`, `zip`,
    `concatenate`, `cache`, `prefetch`, `with_options`; `scan`, `flat_map`, `reduce`...:
    folds.py, selection.py) and iterate it with `for`, `iter()`/`next()` or
    `as_numpy_iterator()`. The pipeline runs in Python, `map`'s function
    compiled, batches sliced and elementwise maps run per batch where sound (optimize.py,
    `_optimizations()`). Inside `em.function`, `for x in ds` is one loop (staged.py).
    """

    _input_attrs: tuple = ()

    def _inputs(self) -> tuple:
        """The datasets this one reads from, in order (see the module docstring)."""
        return tuple(getattr(self, name) for name in self._input_attrs)

    def _replace_inputs(self, inputs):
        """A shallow copy of this node reading from `inputs` (as many as `_inputs()`)."""
        inputs = tuple(inputs)
        if len(inputs) != len(self._input_attrs):
            raise ValueError(f"{type(self).__name__} reads {len(self._input_attrs)} "
                             f"dataset(s), got {len(inputs)}")
        clone = copy.copy(self)
        for name, dataset in zip(self._input_attrs, inputs):
            setattr(clone, name, dataset)
        clone._fresh_state()
        return clone

    def _fresh_state(self) -> None:
        """Resets what a node remembers across passes (a cache, a shuffle's pass count):
        a copy made by `_replace_inputs` starts anew."""

    def _iterate(self):  # pragma: no cover - every subclass defines it
        raise TypeError("em.data.Dataset is abstract: build one with Dataset.range, "
                        "from_tensors or from_tensor_slices")

    def _cardinality(self) -> int:
        return UNKNOWN_CARDINALITY

    def _rows(self):
        """(source, rows) when the elements are the rows `rows` (a `range`) of a source that
        cuts batches as slices (`_slice_rows`), else None (runtime/data/optimize.py)."""
        return None

    def _optimizations(self) -> list:
        """What iterating this dataset optimises, and why not, one line each (optimize.py)."""
        from ember.runtime.data.optimize import describe
        return describe(self)

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
        from ember.runtime.data.iterator import Iterator
        for element in Iterator(self):
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

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None):
        """A dataset of the elements `generator(*args)` yields (called anew on each pass),
        converted to and checked against `output_signature` (an `em.TensorSpec` structure;
        or the older `output_types` and `output_shapes`)."""
        from ember.runtime.data.sources import GeneratorDataset
        return GeneratorDataset(generator, output_types, output_shapes, args,
                                output_signature)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The file names matching the glob `file_pattern` (a string or a list of them), as
        string scalars: sorted when `shuffle=False`, else shuffled (by `seed`, each pass
        anew). `em.errors.InvalidArgumentError` when nothing matches."""
        from ember.runtime.data.sources import list_files
        return list_files(file_pattern, shuffle, seed)

    @staticmethod
    def zip(*datasets):
        """Pairs up the elements of `datasets` (given as arguments or as one nested
        structure of datasets), stopping at the shortest."""
        from ember.runtime.data.combine import ZipDataset
        if len(datasets) == 1:
            datasets = datasets[0]
        return ZipDataset(datasets)

    # Transformations -----------------------------------------------------------------
    def concatenate(self, dataset):
        """This dataset's elements, then `dataset`'s (their element specs must agree)."""
        from ember.runtime.data.combine import ConcatenateDataset
        return ConcatenateDataset(self, dataset)

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None):
        """Maps each element to a dataset (`map_func`) and interleaves them as tf.data:
        `cycle_length` of them open at once (default: the CPU count), `block_length`
        (default 1) elements from each in turn. `num_parallel_calls` reads the open
        datasets ahead in background threads; the order stays the same."""
        from ember.runtime.data.combine import InterleaveDataset
        return InterleaveDataset(self, map_func, cycle_length, block_length,
                                 num_parallel_calls)

    def shard(self, num_shards, index):
        """Every `num_shards`-th element, from the `index`-th."""
        from ember.runtime.data.combine import ShardDataset
        return ShardDataset(self, num_shards, index)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder: bool = False):
        """`batch`, padding each component to `padded_shapes` (None or -1 dimensions: to
        the longest in the batch) with `padding_values` (default 0, or b"" for strings)."""
        from ember.runtime.data.batching import PaddedBatchDataset
        return PaddedBatchDataset(self, batch_size, padded_shapes, padding_values,
                                  drop_remainder)

    def unbatch(self):
        """Splits each element along its first dimension into that many elements."""
        from ember.runtime.data.batching import UnbatchDataset
        return UnbatchDataset(self)

    def rebatch(self, batch_size, drop_remainder: bool = False):
        """Re-batches batched elements to `batch_size` (a list cycles through its sizes):
        as `unbatch().batch(batch_size)`, in one step (tf.data's `Dataset.rebatch`)."""
        from ember.runtime.data.batching import RebatchDataset
        return RebatchDataset(self, batch_size, drop_remainder)

    def with_options(self, options):
        """This dataset with `options` (an `em.data.Options`) set on the whole pipeline."""
        from ember.runtime.data.options import OptionsDataset
        return OptionsDataset(self, options)

    def options(self):
        """The `em.data.Options` of the pipeline: those set by `with_options` anywhere in
        it, merged (the outermost setting of a field wins)."""
        from ember.runtime.data.options import merged_options
        return merged_options(self)

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
        uniform pick from the buffer, whose slot the next input refills. A `seed` or an earlier
        `em.random.set_seed` fixes the orders; `reshuffle_each_iteration`: one per pass."""
        from ember.runtime.data.transforms import ShuffleDataset
        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def map(self, map_func, num_parallel_calls=None, deterministic=None):
        """Applies `map_func` to each element (a tuple's components as separate arguments,
        a dict or a tensor as one). As tf.data, the function is traced once with the
        element_spec and compiled (`em.function`); Python side effects run only while
        tracing (use `em.py_function` for Python per element). `num_parallel_calls` (an int
        or `em.data.AUTOTUNE`) runs that many calls at once on a thread pool; the output
        keeps the input's order (`deterministic=False` allows but never causes reordering)."""
        from ember.runtime.data.mapping import MapDataset
        return MapDataset(self, map_func, num_parallel_calls)

    def filter(self, predicate):
        """The elements for which `predicate` (called as `map`'s function, and traced and
        compiled as it is) returns a true scalar bool tensor."""
        from ember.runtime.data.mapping import FilterDataset
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
        self._arrays = structure.map_structure(lambda t: np.array(t._numpy_array()), element)
        self._size = size
        self._spec = structure.map_structure(
            lambda t: TensorSpec(t.shape.dims[1:], t.dtype), element)

    def _iterate(self):
        # Row views of arrays this dataset owns: no copy per element (tensors are immutable);
        # a row of a C-contiguous array of the dtype needs none of Tensor()'s checks.
        from ember.runtime.data.fastcall import packer
        flat = [(a, s.dtype, s.dtype.is_string) for a, s in
                zip(structure.flatten(self._arrays), structure.flatten(self._spec))]
        pack, wrap = packer(self._spec), Tensor._of_output
        for i in range(self._size):
            yield pack([Tensor(a[i, ...], d) if string else wrap(a[i, ...], d)
                        for a, d, string in flat])

    def _cardinality(self):
        return self._size

    def _rows(self):
        return self, range(self._size)

    def _slice_rows(self, rows):  # one batch: a copy of the rows
        return structure.pack_as(self._arrays, [
            Tensor(np.array(a[rows.start:rows.stop:rows.step]), s.dtype) for a, s in
            zip(structure.flatten(self._arrays), structure.flatten(self._spec))])


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

    def _rows(self):
        from ember.runtime.data.optimize import range_sliceable
        return (self, range(len(self._bounds))) if range_sliceable(self._bounds, self._dtype) \
            else None

    def _slice_rows(self, rows):
        values = self._bounds[rows.start:rows.stop:rows.step]
        return Tensor(np.arange(values.start, values.stop, values.step, dtype=np.int64)
                      .astype(self._dtype.np_dtype), self._dtype)
