"""`em.TensorShape` and `em.TensorSpec`: partially known shapes and typed placeholders.

They behave as `tf.TensorShape` / `tf.TensorSpec`: a dim is an int or None (unknown), a shape
may be of unknown rank, shapes compare equal to tuples and lists of the same dims.
"""

from __future__ import annotations

from typing import Iterable, Optional

from ember.dialects.ember import dtypes
from ember.dialects.ember.types import ShapeError, TensorType, shapes_compatible


class TensorShape:
    """A possibly partial shape, e.g. `TensorShape([None, 3])`; `TensorShape(None)` has
    unknown rank.

    Example:
      >>> s = TensorShape([None, 3])
      >>> s.rank, s.as_list(), s == [None, 3], s.is_fully_defined()
      (2, [None, 3], True, False)
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: Optional[Iterable] = None):
        if isinstance(dims, TensorShape):
            self._dims = dims._dims
            return
        if dims is None:
            self._dims = None
            return
        if isinstance(dims, int):
            dims = (dims,)
        out = []
        for d in dims:
            if d is None or d == -1:
                out.append(None)
                continue
            if isinstance(d, bool) or not hasattr(d, "__index__") or int(d) < 0:
                raise TypeError(f"dimension {d!r} in shape {dims!r} must be a non-negative "
                                "int or None")
            out.append(int(d))
        self._dims = tuple(out)

    @property
    def rank(self) -> Optional[int]:
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self) -> Optional[tuple]:
        return self._dims

    def as_list(self) -> list:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape")
        return list(self._dims)

    def concatenate(self, other) -> "TensorShape":
        """This shape's dims followed by `other`'s (unknown rank if either's is), as
        `tf.TensorShape.concatenate`; `a + b` is the same.

        Example:
          >>> TensorShape([None]).concatenate([3, 4])
          TensorShape([None, 3, 4])
        """
        other = TensorShape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __add__(self, other) -> "TensorShape":
        return self.concatenate(other)

    def __radd__(self, other) -> "TensorShape":
        return TensorShape(other).concatenate(self)

    def is_fully_defined(self) -> bool:
        return self._dims is not None and None not in self._dims

    def is_compatible_with(self, other) -> bool:
        return shapes_compatible(self._dims, TensorShape(other)._dims)

    def merge_with(self, other) -> "TensorShape":
        """The shape that both shapes describe, knowing what either knows (ValueError if they
        are incompatible), as `tf.TensorShape.merge_with`.

        Example:
          >>> TensorShape([None, 3]).merge_with([2, None])
          TensorShape([2, 3])
        """
        other = TensorShape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"shapes {self} and {other} are not compatible")
        if self._dims is None or other._dims is None:
            return TensorShape(other._dims if self._dims is None else self._dims)
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def num_elements(self) -> Optional[int]:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("cannot take the length of a shape with unknown rank")
        return len(self._dims)

    def __bool__(self) -> bool:
        """Whether the shape has dims: False for an unknown rank (which has no length)."""
        return bool(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("cannot iterate over a shape with unknown rank")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other) -> bool:
        try:
            other = TensorShape(other)
        except TypeError:
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("None" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"


class TensorSpec:
    """Describes a tensor argument: shape (dims may be None), dtype and an optional name.

    Example:
      >>> import ember as em
      >>> em.TensorSpec(shape=[None], dtype=em.float32)
      TensorSpec(shape=(None,), dtype=em.float32, name=None)
    """

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape=None, dtype=dtypes.float32, name: Optional[str] = None):
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name
        try:
            TensorType(self.dtype, self.shape.dims)  # no tensor of this spec could exist
        except ShapeError as e:
            raise ShapeError(f"TensorSpec(shape={list(self.shape.dims)}, "
                             f"dtype={self.dtype!r}): {e}") from None

    @classmethod
    def from_tensor(cls, tensor, name: Optional[str] = None) -> "TensorSpec":
        return cls(tensor.shape, tensor.dtype, name)

    @property
    def tensor_type(self) -> TensorType:
        return TensorType(self.dtype, self.shape.dims)

    def is_compatible_with(self, value) -> bool:
        """Whether a tensor (or spec) has this dtype and a compatible shape."""
        return value.dtype is self.dtype and self.shape.is_compatible_with(value.shape)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype is other.dtype and self.name == other.name)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype.name, self.name))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"
