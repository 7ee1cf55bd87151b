"""Variable partitioners as tf.distribute.experimental.partitioners: given a variable's
shape and dtype, how many shards along axis 0 `ParameterServerStrategy` splits it into (a
list with one entry per dimension, 1 everywhere but axis 0). TF's rules:

- `FixedShardsPartitioner(num_shards)`: min(num_shards, rows);
- `MinSizePartitioner(min_shard_bytes=256 KiB, max_shards=1)`: ceil(bytes / min_shard_bytes)
  shards, at most `max_shards` and at most one per row (at least 1);
- `MaxSizePartitioner(max_shard_bytes, max_shards=None)`: as few shards as keep each at most
  `max_shard_bytes` (whole rows, at least one row per shard), at most `max_shards`.
"""

from __future__ import annotations

import math

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend.shape import TensorShape


def _positive_int(where: str, what: str, value, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{where}: {what} must be an integer >= 1, got {value!r}")
    return int(value)


class Partitioner:
    """The base class: `partitioner(shape, dtype, axis=0)` -> the number of shards per
    dimension (a list)."""

    def __call__(self, shape, dtype, axis: int = 0) -> list:
        where = type(self).__name__
        dims = TensorShape(shape).as_list()
        if dims is None or None in dims:
            raise ValueError(f"{where}: cannot partition a variable of unknown shape {shape}")
        if not dims:
            return []
        if axis != 0:
            raise ValueError(f"{where}: Ember shards variables along axis 0 only, got axis "
                             f"{axis}")
        partitions = [1] * len(dims)
        if dims[0] > 0:
            row_bytes = _itemsize(dtype, self._bytes_per_string) * int(np.prod(dims[1:]))
            partitions[0] = max(1, min(dims[0], self._shards(dims[0], row_bytes)))
        return partitions

    _bytes_per_string = 16

    def _shards(self, rows: int, row_bytes: int) -> int:
        raise TypeError(f"{type(self).__name__} subclasses Partitioner without defining "
                        "_shards(rows, row_bytes)")


def _itemsize(dtype, bytes_per_string: int) -> int:
    dtype = dtypes.as_dtype(dtype)
    if dtype.np_dtype.kind in "OSU":
        return bytes_per_string
    return dtype.np_dtype.itemsize


class FixedShardsPartitioner(Partitioner):
    """`num_shards` shards (fewer if the variable has fewer rows).

    Example:
      >>> import ember as em
      >>> em.distribute.experimental.partitioners.FixedShardsPartitioner(2)([10, 4], "float32")
      [2, 1]
    """

    def __init__(self, num_shards: int):
        self._num_shards = _positive_int("FixedShardsPartitioner", "num_shards", num_shards)

    def _shards(self, rows: int, row_bytes: int) -> int:
        return self._num_shards


class MinSizePartitioner(Partitioner):
    """Shards of at least `min_shard_bytes` each, at most `max_shards` of them.

    Example:
      >>> import ember as em
      >>> p = em.distribute.experimental.partitioners.MinSizePartitioner(
      ...     min_shard_bytes=64, max_shards=4)
      >>> p([16, 2], "float32")  # 128 bytes: 2 shards of 64
      [2, 1]
    """

    def __init__(self, min_shard_bytes: int = 256 << 10, max_shards: int = 1,
                 bytes_per_string: int = 16):
        where = "MinSizePartitioner"
        self._min_shard_bytes = _positive_int(where, "min_shard_bytes", min_shard_bytes)
        self._max_shards = _positive_int(where, "max_shards", max_shards)
        self._bytes_per_string = _positive_int(where, "bytes_per_string", bytes_per_string)

    def _shards(self, rows: int, row_bytes: int) -> int:
        wanted = math.ceil(rows * row_bytes / self._min_shard_bytes)
        return min(self._max_shards, wanted)


class MaxSizePartitioner(Partitioner):
    """As few shards as keep each at most `max_shard_bytes` (a shard holds at least one
    row), at most `max_shards` of them.

    Example:
      >>> import ember as em
      >>> p = em.distribute.experimental.partitioners.MaxSizePartitioner(max_shard_bytes=32)
      >>> p([10, 2], "float32")  # 4 rows of 8 bytes per shard
      [3, 1]
    """

    def __init__(self, max_shard_bytes: int, max_shards=None, bytes_per_string: int = 16):
        where = "MaxSizePartitioner"
        self._max_shard_bytes = _positive_int(where, "max_shard_bytes", max_shard_bytes)
        self._max_shards = _positive_int(where, "max_shards", max_shards, allow_none=True)
        self._bytes_per_string = _positive_int(where, "bytes_per_string", bytes_per_string)

    def _shards(self, rows: int, row_bytes: int) -> int:
        rows_per_shard = max(1, self._max_shard_bytes // max(row_bytes, 1))
        shards = math.ceil(rows / rows_per_shard)
        return shards if self._max_shards is None else min(self._max_shards, shards)
