"""Element types of ember tensors: one `DType` per dtype, tied to numpy and to MLIR.

The names and the promotion-free rules follow TensorFlow (`tf.float32`, ...). Each dtype knows
its numpy dtype (bfloat16's from `ml_dtypes`, imported when first asked for) and the MLIR
element type it prints as, so the registry, the eager runtime and the IR agree on one table.
Strings are host-only and spelled `!ember.string` in IR; eagerly they are numpy object arrays
of Python `str`.
Complex dtypes (`complex64` = `complex<f32>`, `complex128` = `complex<f64>`) are their own
kind: neither floating nor "numeric", so an op accepts them only where it lists `COMPLEX`.
"""

from __future__ import annotations

import numpy as np


_DEFERRED = object()  # bfloat16's numpy dtype, until it is first asked for


class DType:
    """An ember element type, e.g. `float32` (IR `f32`).

    There is exactly one DType object per dtype, so `is` and `==` agree: copying, pickling
    and tracing hand back the same object, and a constructor call naming a known dtype
    returns that dtype (the Python argument of a traced function stays `em.int64`).
    """

    __slots__ = ("name", "np_dtype", "mlir", "kind", "bits", "__weakref__")
    _registry: dict = {}

    def __new__(cls, name: str, np_dtype: np.dtype, mlir: str, kind: str, bits: int):
        known = cls._registry.get(name)
        if known is not None:
            if (known.np_dtype, known.mlir, known.kind, known.bits) != (
                    np.dtype(np_dtype), mlir, kind, bits):
                raise ValueError(f"dtype {name!r} already exists with other properties; "
                                 f"use em.as_dtype({name!r})")
            return known
        self = super().__new__(cls)
        for field, value in (("name", name), ("np_dtype", np_dtype), ("mlir", mlir),
                             ("kind", kind), ("bits", bits)):
            if value is not _DEFERRED:
                object.__setattr__(self, field, np.dtype(value) if field == "np_dtype" else value)
        cls._registry[name] = self
        return self

    def __getattr__(self, name):
        """Only reached for an unset slot: bfloat16's `np_dtype`, made on first use (importing
        ml_dtypes, ~7 ms, which only bfloat16 needs)."""
        if name == "np_dtype" and self.name == "bfloat16":
            import ml_dtypes
            value = np.dtype(ml_dtypes.bfloat16)
            object.__setattr__(self, "np_dtype", value)
            _BY_NUMPY[value] = self
            return value
        raise AttributeError(f"'DType' object has no attribute {name!r}")

    def __setattr__(self, name, value):
        raise AttributeError(f"DType is immutable: cannot set {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"DType is immutable: cannot delete {name!r}")

    def __copy__(self) -> "DType":
        return self

    def __deepcopy__(self, memo) -> "DType":
        return self

    @property
    def is_floating(self) -> bool:
        return self.kind == "float"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    @property
    def is_string(self) -> bool:
        return self.kind == "string"

    @property
    def is_complex(self) -> bool:
        return self.kind == "complex"

    @property
    def is_numeric(self) -> bool:
        """Integer or floating point (complex is not: most ops reject it, as TF's kernels)."""
        return self.kind in ("int", "uint", "float")

    @property
    def real_dtype(self) -> "DType":
        """The dtype of the real and imaginary parts (`complex64` -> `float32`); a real
        dtype is its own, as `tf.DType.real_dtype`."""
        return _REAL_PART.get(self.name, self)

    @property
    def as_numpy_dtype(self) -> type:
        """The numpy scalar type, as `tf.DType.as_numpy_dtype` (public API users call).

        Example:
          >>> import ember as em
          >>> em.float32.as_numpy_dtype
          <class 'numpy.float32'>
        """
        return self.np_dtype.type

    @property
    def min(self):
        return _limits(self).min

    @property
    def max(self):
        return _limits(self).max

    def __repr__(self) -> str:
        return f"em.{self.name}"

    def __reduce__(self):
        return (as_dtype, (self.name,))


def _limits(dt: DType):
    if dt.is_floating:
        import ml_dtypes
        return ml_dtypes.finfo(dt.np_dtype)
    if dt.is_integer:
        return np.iinfo(dt.np_dtype)
    raise TypeError(f"{dt.name} has no numeric limits")


bool_ = DType("bool", np.dtype(np.bool_), "i1", "bool", 1)
int8 = DType("int8", np.dtype(np.int8), "i8", "int", 8)
int16 = DType("int16", np.dtype(np.int16), "i16", "int", 16)
int32 = DType("int32", np.dtype(np.int32), "i32", "int", 32)
int64 = DType("int64", np.dtype(np.int64), "i64", "int", 64)
uint8 = DType("uint8", np.dtype(np.uint8), "ui8", "uint", 8)
float16 = DType("float16", np.dtype(np.float16), "f16", "float", 16)
bfloat16 = DType("bfloat16", _DEFERRED, "bf16", "float", 16)
float32 = DType("float32", np.dtype(np.float32), "f32", "float", 32)
float64 = DType("float64", np.dtype(np.float64), "f64", "float", 64)
string = DType("string", np.dtype(object), "!ember.string", "string", 0)
complex64 = DType("complex64", np.dtype(np.complex64), "complex<f32>", "complex", 64)
complex128 = DType("complex128", np.dtype(np.complex128), "complex<f64>", "complex", 128)

ALL = (bool_, int8, int16, int32, int64, uint8, float16, bfloat16, float32, float64, string,
       complex64, complex128)
FLOATS = (float16, bfloat16, float32, float64)
INTEGERS = (int8, int16, int32, int64, uint8)
NUMERIC = INTEGERS + FLOATS
COMPLEX = (complex64, complex128)
_REAL_PART = {"complex64": float32, "complex128": float64}
_COMPLEX_OF = {float32: complex64, float64: complex128}


def complex_of(real: DType) -> DType:
    """The complex dtype whose parts are `real` (float32 -> complex64, float64 ->
    complex128), or TypeError: TF has no complex type over other floats."""
    if real in _COMPLEX_OF:
        return _COMPLEX_OF[real]
    raise TypeError(f"there is no complex dtype with {real.name} parts; use float32 "
                    "(complex64) or float64 (complex128)")

_BY_NAME = {d.name: d for d in ALL} | {"bool_": bool_, "half": float16, "double": float64}
_BY_MLIR = {d.mlir: d for d in ALL}
_BY_NUMPY = {d.np_dtype: d for d in ALL if d not in (string, bfloat16)}  # (+ bf16 when made)


def as_dtype(value) -> DType:
    """Returns the DType for a DType, a name (`"float32"`), a numpy dtype or a Python type.

    Raises:
      TypeError: if `value` names no ember dtype.
    """
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        if value in _BY_NAME:
            return _BY_NAME[value]
        raise TypeError(f"unknown dtype name {value!r}; expected one of "
                        f"{', '.join(d.name for d in ALL)}")
    if value is bool:
        return bool_
    if value is int:
        return int32
    if value is float:
        return float32
    if value is complex:
        return complex128
    if value is str or value is bytes:
        return string
    try:
        npd = np.dtype(value)
    except TypeError:
        raise TypeError(f"cannot interpret {value!r} as an ember dtype") from None
    if npd.kind in ("U", "S", "O"):
        return string
    if npd in _BY_NUMPY or npd == bfloat16.np_dtype:  # (an ml_dtypes dtype: bfloat16's is made)
        return _BY_NUMPY[npd]
    raise TypeError(f"numpy dtype {npd} has no ember equivalent; supported: "
                    f"{', '.join(d.name for d in ALL)}")


def from_mlir(text: str) -> DType:
    """Returns the DType printed as `text` in MLIR (`"f32"`), or raises TypeError."""
    try:
        return _BY_MLIR[text]
    except KeyError:
        raise TypeError(f"element type {text} is not an ember dtype; expected one of "
                        f"{', '.join(d.mlir for d in ALL)}") from None
