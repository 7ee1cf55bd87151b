"""Python-side value types of the ember dialect: `TensorType` and `ResourceType`.

Type inference runs on these small frozen objects instead of MLIR types so that eager mode,
the tracer and the verifier share it without a context. They print as MLIR does
(`tensor<2x?xf32>`, `tensor<*xf32>`, `!ember.resource<tensor<2xf32>>`) and parse back.
A dimension is an `int`, or `None` for a dynamic (`?`) one; `shape is None` means unranked.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Optional, Union

from ember.dialects.ember import dtypes
from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.errors import EmberError

Dim = Optional[int]
Shape = Optional[tuple]

MAX_BYTES = 2**63 - 1  # numpy's limit, and the largest byte count compiled code computes


class ShapeError(EmberError, ValueError):
    """A shape no tensor can have: a negative dim, or more bytes than an int64 can count.

    Raised before the shape reaches MLIR, whose type code asserts ("integer overflow in size
    computation") instead of reporting; type inference re-raises it naming the op.
    """


@dataclasses.dataclass(frozen=True)
class TensorType:
    """A tensor type: dtype plus shape (`None` dims are dynamic; `shape=None` is unranked).

    Raises:
      ShapeError: for a negative dim, or static dims whose elements take more than
        `MAX_BYTES` bytes (the size numpy reports as "array is too big").
    """

    dtype: DType
    shape: Shape

    def __post_init__(self):
        shape = self.shape
        if shape is None:
            return
        if type(shape) is not tuple:
            shape = tuple(shape)
            object.__setattr__(self, "shape", shape)
        size = self.dtype.np_dtype.itemsize or 1
        for d in shape:
            if type(d) is not int:
                if d is None:
                    continue
                shape = tuple(_dim(d, shape) for d in shape)  # numpy ints: Python ints
                object.__setattr__(self, "shape", shape)
                self.__post_init__()
                return
            if d > 1:
                size *= d
            elif d < 0:
                raise ShapeError(f"shape {_listed(shape)} has a negative dimension")
        if size > MAX_BYTES:  # zero dims are skipped, as numpy and MLIR's strides do
            raise ShapeError(
                f"shape {_listed(shape)} of {self.dtype.name} is too large: its elements "
                f"would take {size} bytes, more than the {MAX_BYTES} (2**63 - 1) that an "
                "int64 can count")

    @property
    def rank(self) -> Optional[int]:
        return None if self.shape is None else len(self.shape)

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(d is not None for d in self.shape)

    @property
    def num_elements(self) -> Optional[int]:
        if not self.is_static:
            return None
        n = 1
        for d in self.shape:
            n *= d
        return n

    def with_shape(self, shape: Shape) -> "TensorType":
        return TensorType(self.dtype, shape)

    def with_dtype(self, dtype: DType) -> "TensorType":
        return TensorType(dtype, self.shape)

    def __str__(self) -> str:
        if self.shape is None:
            return f"tensor<*x{self.dtype.mlir}>"
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{self.dtype.mlir}>"


def _dim(d, shape) -> Dim:
    if d is None:
        return None
    if isinstance(d, bool) or not hasattr(d, "__index__"):
        raise ShapeError(f"dimension {d!r} in shape {shape!r} must be an int or None")
    return d.__index__()


def _listed(shape: tuple) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


@dataclasses.dataclass(frozen=True)
class ResourceType:
    """The type of a variable handle: `!ember.resource<tensor<...>>`."""

    value: TensorType

    def __str__(self) -> str:
        return f"!ember.resource<{self.value}>"


IRType = Union[TensorType, ResourceType]


@functools.lru_cache(maxsize=4096)
def parse_type(text: str) -> IRType:
    """Parses the MLIR spelling of an ember value type.

    Raises:
      TypeError: if `text` is not a tensor of an ember dtype or an ember resource.
    """
    text = text.strip()
    if text.startswith("!ember.resource<") and text.endswith(">"):
        inner = text[len("!ember.resource<"):-1].strip()
        if not inner.startswith("tensor<"):  # checked first: no recursion on nested input
            raise TypeError(f"expected a tensor type, got {inner}")
        return ResourceType(parse_type(inner))
    if not (text.startswith("tensor<") and text.endswith(">")):
        raise TypeError(f"expected a tensor type, got {text}")
    body = text[len("tensor<"):-1].replace(" ", "")
    if body.startswith("*x"):
        return TensorType(dtypes.from_mlir(body[2:]), None)
    match = _DIMS.match(body)
    dims = match.group(0)
    element = dtypes.from_mlir(body[len(dims):])
    shape = tuple(None if d == "?" else int(d) for d in dims.split("x")[:-1])
    return TensorType(element, shape)


_DIMS = re.compile(r"(?:(?:\d+|\?)x)*")


def broadcast_dims(a: Dim, b: Dim) -> tuple[bool, Dim]:
    """Broadcasts one dimension pair; returns (ok, result)."""
    if a == 1:
        return True, b
    if b == 1:
        return True, a
    if a is None:
        return True, b
    if b is None:
        return True, a
    return a == b, a


def broadcast_shapes(*shapes: Shape) -> tuple[bool, Shape]:
    """Numpy/TensorFlow broadcasting over possibly dynamic shapes; returns (ok, shape)."""
    if any(s is None for s in shapes):
        return True, None
    rank = max((len(s) for s in shapes), default=0)
    out: list = [1] * rank
    for s in shapes:
        padded = (1,) * (rank - len(s)) + tuple(s)
        for i, d in enumerate(padded):
            ok, out[i] = broadcast_dims(out[i], d)
            if not ok:
                return False, None
    return True, tuple(out)


def shapes_compatible(a: Shape, b: Shape) -> bool:
    """MLIR's compatible-shape rule: equal rank and each dim pair equal or dynamic."""
    if a is None or b is None:
        return True
    if len(a) != len(b):
        return False
    return all(x is None or y is None or x == y for x, y in zip(a, b))


def types_compatible(declared: IRType, inferred: IRType) -> bool:
    """Whether a declared result type refines (or equals) the inferred one."""
    if isinstance(declared, ResourceType) or isinstance(inferred, ResourceType):
        return declared == inferred
    return declared.dtype is inferred.dtype and shapes_compatible(declared.shape, inferred.shape)
