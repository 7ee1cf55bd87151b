"""tf.data's transformations that pick elements from several datasets: `Dataset.flat_map`,
`Dataset.choose_from_datasets` and `Dataset.sample_from_datasets`; attached to `Dataset`
here (dataset.py holds the others)."""

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor

from ember.runtime.data import structure
from ember.runtime.data.combine import _END, InterleaveDataset, _common_shape, _skeleton
from ember.runtime.data.dataset import (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset)
from ember.runtime.data.mapping import _name
from ember.runtime.data.transforms import seeds_of


class FlatMapDataset(InterleaveDataset):
    """`interleave` with one dataset open at a time: tf.data's flat_map."""

    def __init__(self, source, map_func):
        super().__init__(source, map_func, 1, 1, None)
        self.sample_dataset()  # as tf.data traces map_func here: its mistakes raise now

    def _checked(self, dataset):
        if not isinstance(dataset, Dataset):
            raise TypeError(f"Dataset.flat_map: `map_func` ({_name(self._fn)}) must return a "
                            f"`Dataset` object. Got {type(dataset).__name__}.")
        return dataset


def flat_map(self, map_func, name=None):
    """Maps each element to a dataset (`map_func`) and flattens them, in order.

    Example:
      >>> import ember as em
      >>> ds = em.data.Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
      >>> ds = ds.flat_map(em.data.Dataset.from_tensor_slices)
      >>> [int(x) for x in ds.as_numpy_iterator()]
      [1, 2, 3, 4, 5, 6, 7, 8, 9]
    """
    del name
    return FlatMapDataset(self, map_func)


def _common_spec(datasets, where):
    if not isinstance(datasets, (list, tuple)) or not datasets:
        raise ValueError(f"{where}: Invalid `datasets`. `datasets` should be a non-empty list "
                         f"of em.data.Dataset objects, got {datasets!r}")
    for i, d in enumerate(datasets):
        if not isinstance(d, Dataset):
            raise TypeError(f"{where}: Invalid `datasets`. datasets[{i}] is a "
                            f"{type(d).__name__}, not an em.data.Dataset")
    spec = datasets[0].element_spec
    for i, d in enumerate(datasets[1:], 1):
        if _skeleton(d.element_spec) != _skeleton(spec):
            raise TypeError(f"{where}: Invalid `datasets`. The elements of all datasets must "
                            f"have the same structure and dtypes: datasets[0] has {spec}, "
                            f"datasets[{i}] has {d.element_spec}")
        spec = structure.pack_as(spec, [
            TensorSpec(_common_shape(a.shape, b.shape), a.dtype) for a, b in
            zip(structure.flatten(spec), structure.flatten(d.element_spec))])
    return spec


class _Selected(Dataset):
    """Elements of `datasets`, the next one taken from the input `_pick` names each time."""

    def __init__(self, datasets, stop_on_empty, where):
        self._datasets = tuple(datasets)
        self._spec = _common_spec(list(datasets), where)
        self._stop = bool(stop_on_empty)

    def _inputs(self):
        return self._datasets

    def _replace_inputs(self, inputs):
        import copy
        clone = copy.copy(self)
        clone._datasets = tuple(inputs)
        clone._fresh_state()
        return clone

    _choosers = 0  # trailing inputs that choose the next source rather than supply elements

    def _iterate(self):
        sources = self._datasets[:len(self._datasets) - self._choosers]
        iterators = [d._iterate() for d in sources]
        live = [True] * len(iterators)
        for index in self._picks(live):
            element = next(iterators[index], _END)
            if element is not _END:
                yield element
                continue
            if self._stop:
                return
            live[index] = False
            if not any(live):
                return

    def _cardinality(self):
        counts = [d._cardinality() for d in self._inputs()]
        return INFINITE_CARDINALITY if all(n == INFINITE_CARDINALITY for n in counts) \
            else UNKNOWN_CARDINALITY


class ChooseDataset(_Selected):
    def __init__(self, datasets, choice_dataset, stop_on_empty):
        where = "Dataset.choose_from_datasets"
        super().__init__(datasets, stop_on_empty, where)
        if not isinstance(choice_dataset, Dataset) or \
                choice_dataset.element_spec != TensorSpec([], dtypes.int64):
            got = choice_dataset.element_spec if isinstance(choice_dataset, Dataset) else \
                type(choice_dataset).__name__
            raise TypeError(f"{where}: Invalid `choice_dataset`. Elements of `choice_dataset` "
                            f"must be scalar of `em.int64` type, got {got}")
        self._n = len(self._datasets)
        self._datasets += (choice_dataset,)

    _choosers = 1  # the choice dataset, the last input

    def _picks(self, live):
        for choice in self._datasets[-1]._iterate():
            index = int(choice.numpy())
            if not 0 <= index < self._n:
                raise InvalidArgumentError("DirectedInterleave", f"Selector index out of "
                                           f"range: {index} not in [0, {self._n})")
            if live[index]:
                yield index


class SampleDataset(_Selected):
    def __init__(self, datasets, weights, seed, stop_on_empty, rerandomize):
        where = "Dataset.sample_from_datasets"
        super().__init__(datasets, stop_on_empty, where)
        n = len(self._datasets)
        if weights is None:
            weights = [1.0 / n] * n
        elif isinstance(weights, Dataset):
            raise TypeError(f"{where}: weights given as a Dataset are not supported; give a "
                            "list of floats (or a 1-D tensor)")
        weights = np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights,
                             dtype=np.float64)
        if weights.shape != (n,) or not np.all(np.isfinite(weights)) or \
                np.any(weights < 0) or not np.any(weights > 0):
            raise ValueError(f"{where}: Invalid `weights`: {weights.tolist()}; give "
                             f"{n} non-negative finite floats, one per dataset, not all zero")
        self._weights = weights
        self._seeds = seeds_of(seed, where)
        self._rerandomize = bool(rerandomize)
        self._fresh_state()

    def _fresh_state(self):
        self._passes = 0

    def _picks(self, live):
        rng = np.random.default_rng(self._seeds + [self._passes if self._rerandomize else 0])
        self._passes += 1
        while True:
            weights = np.where(live, self._weights, 0.0)
            if not weights.any():
                return
            yield int(rng.choice(len(weights), p=weights / weights.sum()))


@staticmethod
def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    """The elements of `datasets` in the order `choice_dataset` (int64 scalars, indices
    into `datasets`) picks them. `stop_on_empty_dataset`: stop at the first choice of an
    exhausted dataset (default), or skip such choices.

    Example:
      >>> import ember as em
      >>> datasets = [em.data.Dataset.from_tensors("foo").repeat(),
      ...             em.data.Dataset.from_tensors("bar").repeat(),
      ...             em.data.Dataset.from_tensors("baz").repeat()]
      >>> choice_dataset = em.data.Dataset.range(3).repeat(3)
      >>> result = em.data.Dataset.choose_from_datasets(datasets, choice_dataset)
      >>> [x.decode() for x in result.as_numpy_iterator()]
      ['foo', 'bar', 'baz', 'foo', 'bar', 'baz', 'foo', 'bar', 'baz']
    """
    return ChooseDataset(datasets, choice_dataset, stop_on_empty_dataset)


@staticmethod
def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    """Elements picked at random from `datasets`, dataset i with probability
    `weights[i]` (default: uniform) among those not yet exhausted. A `seed` makes the order
    reproducible (the same each pass unless `rerandomize_each_iteration`); the order is
    numpy's, not TensorFlow's. `stop_on_empty_dataset` stops at the first exhausted dataset
    picked instead of dropping it.

    Example:
      >>> import ember as em
      >>> ds = em.data.Dataset.sample_from_datasets(
      ...     [em.data.Dataset.range(0, 3), em.data.Dataset.range(100, 103)],
      ...     weights=[0.5, 0.5], seed=7)
      >>> sorted(int(x) for x in ds.as_numpy_iterator())
      [0, 1, 2, 100, 101, 102]
    """
    return SampleDataset(datasets, weights, seed, stop_on_empty_dataset,
                         rerandomize_each_iteration)


Dataset.flat_map = flat_map
Dataset.choose_from_datasets = choose_from_datasets
Dataset.sample_from_datasets = sample_from_datasets
