"""Batching beyond `batch`: `padded_batch`, `unbatch`, `rebatch`, and the per-replica split
of a global batch that tf.distribute applies (`LegacyRebatchDataset`).

`rebatch(sizes)` is tf.data's RebatchDatasetV2: the batches' rows re-cut into batches of the
given sizes (cycling through a list), slices taken across input batches. The legacy split
cuts each batch on its own into `num_replicas` slices of ceil(B / num_replicas) rows, the
last ones shorter or empty: `range(6).batch(4)` over 2 replicas is [0, 1], [2, 3], [4], [5],
the distributed input guide's tables.
"""

import numpy as np

from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend.shape import TensorShape, TensorSpec
from ember.frontend.tensor import Tensor, constant

from ember.runtime.data import structure
from ember.runtime.data.dataset import UNKNOWN_CARDINALITY, _count
from ember.runtime.data.sources import flatten_up_to
from ember.runtime.data.transforms import BatchDataset, _Unary


def _arrays(element):
    return [t._numpy_array() for t in structure.flatten(element)]


def _batched_spec(spec, first_dim):
    return structure.map_structure(lambda s: structure.without_outer(s, (first_dim,)), spec)


def _batched_arrays(element, op):
    """`_arrays(element)`, each checked to have a first dimension: an element_spec of
    unknown rank lets a scalar through to here (tf.data's kernels check it the same way)."""
    arrays = _arrays(element)
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise InvalidArgumentError(op, "Input element must have a non-scalar value in "
                                       f"each component, but component {i} is a scalar")
    return arrays


def _require_batched(spec, where):
    for i, s in enumerate(structure.flatten(spec)):
        if s.shape.rank == 0:
            raise ValueError(f"{where}: expected a dataset whose elements have rank >= 1 but "
                             f"component {i} is a scalar; batch the dataset first (add the "
                             "`batch` transformation)")


class PaddedBatchDataset(BatchDataset):
    def __init__(self, source, batch_size, padded_shapes, padding_values, drop_remainder):
        super().__init__(source, batch_size, drop_remainder)
        specs = structure.flatten(source.element_spec)
        if padded_shapes is None:
            shapes = [s.shape for s in specs]
        else:
            shapes = self._flat_like(padded_shapes, "padded_shapes")
            shapes = [TensorShape(list(np.asarray(s.numpy()).reshape(-1)) if isinstance(
                s, Tensor) else s) for s in shapes]
        for i, (shape, spec) in enumerate(zip(shapes, specs)):
            if shape.rank is None:
                raise ValueError(f"Dataset.padded_batch: component {i} has an unknown rank; "
                                 "give its shape in padded_shapes")
            if not _can_pad(spec.shape, shape):
                raise ValueError(f"Dataset.padded_batch: the padded shape {shape} is not "
                                 f"compatible with the shape {spec.shape} of the "
                                 f"corresponding input component ({i})")
        self._shapes = shapes
        if padding_values is None or not isinstance(padding_values, (tuple, dict, list)):
            values = [padding_values] * len(specs)
        else:
            values = self._flat_like(padding_values, "padding_values")
        self._pads = [self._pad_value(v, s, i) for i, (v, s) in enumerate(zip(values, specs))]

    def _flat_like(self, value, what):
        """`value`'s leaves, one per component (structured as the elements)."""
        spec = self._source.element_spec
        flat = flatten_up_to(spec, value)
        if flat is None:
            raise ValueError(f"Dataset.padded_batch: {what} {value!r} does not match the "
                             f"structure of the elements {spec}")
        return flat

    @staticmethod
    def _pad_value(value, spec, i):
        if value is None:
            return b"" if spec.dtype.is_string else spec.dtype.np_dtype.type(0)
        if spec.dtype.is_string and isinstance(value, (bytes, str)):  # (np.asarray: 'S',
            return value.encode() if isinstance(value, str) else value  # no trailing NULs)
        array = np.asarray(value._numpy_array() if isinstance(value, Tensor) else value)
        fits = (array.dtype.kind in "SUO") if spec.dtype.is_string else (
            array.dtype.kind not in "SUO" and np.can_cast(array.dtype, spec.dtype.np_dtype,
                                                          casting="same_kind"))
        if array.ndim != 0 or not fits:
            raise TypeError(f"Dataset.padded_batch: padding value {value!r} for component {i} "
                            f"must be a scalar of dtype {spec.dtype.name}")
        return array[()] if spec.dtype.is_string else array.astype(spec.dtype.np_dtype)[()]

    @property
    def element_spec(self):
        outer = self._size if self._drop else None
        specs = structure.flatten(self._source.element_spec)
        return structure.pack_as(self._source.element_spec,
                                 [TensorSpec((outer,) + tuple(shape.dims), s.dtype)
                                  for shape, s in zip(self._shapes, specs)])

    def _stack(self, elements):
        columns = list(zip(*[_arrays(e) for e in elements]))
        specs = structure.flatten(self._source.element_spec)
        out = []
        for i, parts in enumerate(columns):
            rank = self._shapes[i].rank
            for part in parts:  # an element_spec of unknown rank checks only here
                if part.ndim != rank:
                    raise InvalidArgumentError(
                        "PaddedBatchDataset", "All elements in a batch must have the same "
                        f"rank as the padded shape for component {i}: expected rank {rank} "
                        f"but got element with rank {part.ndim}")
            target = [d if d is not None else max(p.shape[k] for p in parts)
                      for k, d in enumerate(self._shapes[i].dims)]
            batch = np.empty([len(parts)] + target, dtype=specs[i].dtype.np_dtype)
            batch.fill(self._pads[i])  # (np.full casts bytes via 'S': drops trailing NULs)
            for row, part in enumerate(parts):
                if any(n > t for n, t in zip(part.shape, target)):
                    raise InvalidArgumentError(
                        "PaddedBatchDataset", "Attempted to pad to a smaller size than the "
                        f"input element (component {i}: shape {list(part.shape)}, padded "
                        f"shape {target})")
                batch[(row,) + tuple(slice(0, n) for n in part.shape)] = part
            out.append(constant(batch, dtype=specs[i].dtype))
        return structure.pack_as(elements[0], out)


def _can_pad(shape, padded):
    """Whether elements of `shape` can be padded to `padded` (TF's rule)."""
    if shape.rank is None:
        return True
    return shape.rank == padded.rank and all(
        p is None or d is None or p >= d for p, d in zip(padded.dims, shape.dims))


class UnbatchDataset(_Unary):
    def __init__(self, source):
        super().__init__(source)
        _require_batched(source.element_spec, "Dataset.unbatch")

    @property
    def element_spec(self):
        return structure.map_structure(structure.without_outer, self._source.element_spec)

    def _iterate(self):
        specs = structure.flatten(self._source.element_spec)
        for element in self._source._iterate():
            arrays = _batched_arrays(element, "UnbatchDataset")
            sizes = {a.shape[0] for a in arrays}
            if len(sizes) > 1:
                sizes = [a.shape[0] for a in arrays]
                raise InvalidArgumentError("UnbatchDataset", "Input element tensors must have "
                                           f"the same batch size, got {sizes}")
            for row in range(sizes.pop() if sizes else 0):
                yield structure.pack_as(element, [constant(a[row], dtype=s.dtype)
                                                  for a, s in zip(arrays, specs)])

    def _cardinality(self):
        return UNKNOWN_CARDINALITY


def _batch_sizes(batch_size):
    if isinstance(batch_size, Tensor) and batch_size.shape.rank == 1:
        batch_size = np.asarray(batch_size.numpy()).tolist()
    if isinstance(batch_size, (list, tuple, np.ndarray)):
        sizes = [_count(b, "Dataset.rebatch: batch_size") for b in batch_size]
    else:
        sizes = [_count(batch_size, "Dataset.rebatch: batch_size")]
    if not sizes or any(b < 0 for b in sizes) or not any(sizes):
        raise ValueError(f"Dataset.rebatch: batch_size must be a non-negative size or a "
                         f"non-empty list of them with one positive, got {batch_size!r}")
    return sizes


class RebatchDataset(_Unary):
    def __init__(self, source, batch_size, drop_remainder):
        super().__init__(source)
        _require_batched(source.element_spec, "Dataset.rebatch")
        self._sizes = _batch_sizes(batch_size)
        self._drop = bool(drop_remainder)

    @property
    def element_spec(self):
        fixed = len(self._sizes) == 1 and self._drop
        return _batched_spec(self._source.element_spec, self._sizes[0] if fixed else None)

    def _iterate(self):
        inputs = self._source._iterate()
        arrays, offset, which, spent = None, 0, 0, False
        while not spent:
            want, have, pieces = self._sizes[which], 0, []
            while have < want:
                if arrays is None:
                    element = next(inputs, None)
                    if element is None:
                        spent = True
                        break
                    arrays, offset = _batched_arrays(element, "RebatchDataset"), 0
                end = min(offset + want - have, arrays[0].shape[0])
                pieces.append([a[offset:end] for a in arrays])
                have, offset = have + end - offset, end
                if offset == arrays[0].shape[0]:
                    arrays = None
            which = (which + 1) % len(self._sizes)
            if (spent and have == 0 and want > 0) or (self._drop and have < want):
                return
            yield structure.pack_as(self._source.element_spec, [
                constant(np.concatenate([p[i] for p in pieces]) if pieces else np.zeros(
                    [0] + [d or 0 for d in (s.shape.dims or ())[1:]], s.dtype.np_dtype),
                    dtype=s.dtype)
                for i, s in enumerate(structure.flatten(self._source.element_spec))])


class LegacyRebatchDataset(_Unary):
    """Each batch cut into `num_replicas` slices of ceil(B / num_replicas) rows (tf.data's
    `_LegacyRebatchDataset`, what tf.distribute's DATA sharding uses)."""

    def __init__(self, source, num_replicas: int):
        super().__init__(source)
        _require_batched(source.element_spec, "rebatch for replicas")
        self._replicas = _count(num_replicas, "num_replicas")
        if self._replicas <= 0:
            raise ValueError(f"num_replicas must be positive, got {self._replicas}")

    @property
    def element_spec(self):
        return _batched_spec(self._source.element_spec, None)

    def _iterate(self):
        specs = structure.flatten(self._source.element_spec)
        for element in self._source._iterate():
            arrays = _batched_arrays(element, "RebatchDataset")
            for k in range(self._replicas):
                parts = []
                for a in arrays:
                    step = -(-a.shape[0] // self._replicas)
                    start = min(a.shape[0], k * step)
                    parts.append(a[start:min(start + step, a.shape[0])])
                yield structure.pack_as(element, [constant(p, dtype=s.dtype)
                                                  for p, s in zip(parts, specs)])

    def _cardinality(self):
        n = self._source._cardinality()
        return n if n < 0 else n * self._replicas
