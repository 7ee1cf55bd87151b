"""`em.Tensor` (eager, numpy-backed on the CPU), `em.constant` and `em.convert_to_tensor`.

Conversion follows TensorFlow: Python ints become int32 (int64 when they do not fit), floats
float32, bools bool, strings string; numpy arrays keep their dtype. A Python value combined
with a tensor takes its dtype, and must be representable in it (`int_tensor + 1.5` is a
TypeError); a list holding tensors is stacked (autopack.py). Operators: `frontend/ops.py`.
"""

from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.array_pointer import data_pointer
from ember.dialects.ember.dtypes import DType
from ember.frontend import autopack
from ember.frontend.device_memory import CPU as _CPU, device_of as _device_of, owner_of, placed
from ember.frontend.object_identity import TensorRef
from ember.frontend.shape import TensorShape


class Tensor:
    """An immutable eager tensor holding a numpy array.

    Example:
      >>> import ember as em
      >>> em.constant([[1.0, 2.0]]) * 2
      <ember.Tensor: shape=(1, 2), dtype=float32, numpy=array([[2., 4.]], dtype=float32)>
    """

    __slots__ = ("_value", "_dtype", "_ptr", "__weakref__")
    __array_priority__ = 100  # numpy defers `ndarray + Tensor` to Tensor.__radd__

    def __init__(self, value: np.ndarray, dtype: Optional[DType] = None):
        """Wraps the numpy array `value` (for other values use em.constant).

        Compiled calls hand `_value`'s data pointer to native code that reads exactly the
        elements `dtype` and the shape say, so the array is checked here, once: its dtype
        must be `dtype`'s, and it is made C-contiguous and aligned (a copy if it is not).
        The Tensor keeps its own view: reshaping the caller's array in place cannot change it.

        Raises:
          TypeError: if `value` is not a numpy array or its elements are not `dtype`.
        """
        if type(value) is not np.ndarray:
            value = _as_ndarray(value)
        if dtype is None:
            dtype = _dtype_of(value)
        elif type(dtype) is not DType:
            dtype = dtypes.as_dtype(dtype)
        if value.dtype is not dtype.np_dtype or dtype is dtypes.string:
            value = _checked_elements(value, dtype)
        flags = value.flags
        if flags.c_contiguous and flags.aligned:
            value = value.view()
        else:  # same values, in the layout native code reads
            value = np.array(value, order="C", copy=True)
        self._value, self._dtype, self._ptr = value, dtype, 0

    @classmethod
    def _of_output(cls, value: np.ndarray, dtype: DType) -> "Tensor":
        """Wraps an array that compiled code has just written (allocated for exactly `dtype`
        and shape, C-contiguous, unshared): what __init__ checks holds by construction."""
        tensor = cls.__new__(cls)
        tensor._value, tensor._dtype, tensor._ptr = value, dtype, 0
        return tensor

    def _data_pointer(self) -> int:
        """The data's address (C-contiguous, aligned: see __init__) for compiled calls."""
        if not self._ptr:
            self._ptr = data_pointer(self._value)
        return self._ptr

    @property
    def dtype(self) -> DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._value.shape)

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def device(self) -> str:
        """The device holding the value, as TensorFlow names it:
        '/job:localhost/replica:0/task:0/device:CPU:0', or GPU:N for tensors made inside
        `with em.device("gpu:N")` or imported from CUDA by DLPack (runtime/devices.py)."""
        return _device_of(self._value) or _CPU

    def numpy(self):
        """The value, as TensorFlow's: a numpy scalar for a 0-d tensor (`np.float32(3.0)`,
        `bytes` for a string), else a read-only array. A GPU tensor is copied to the host."""
        value = self._numpy_array()
        return value[()] if value.ndim == 0 else value

    def _numpy_array(self) -> np.ndarray:
        """numpy() as an array at every rank (0-d for a scalar), as np.asarray(t) gives it."""
        if _device_of(self._value) is not None:
            return owner_of(self._value).host_copy(self._value)
        view = self._value.view()
        view.flags.writeable = False
        return view

    def __array__(self, dtype=None, copy=None):
        """numpy 2's protocol: a read-only view, a copy for copy=True (see frontend/dlpack)."""
        from ember.frontend.dlpack import as_array
        return as_array(self, dtype, copy)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Zero-copy, read-only DLPack export (a copy for consumers of DLPack < 1.0)."""
        from ember.frontend.dlpack import export
        return export(self, stream=stream, max_version=max_version, dl_device=dl_device,
                      copy=copy)

    def __dlpack_device__(self):
        from ember.frontend.dlpack import device
        return device(self)

    def __repr__(self) -> str:
        text = _value_text(self._value, repr)
        sep = "\n" if "\n" in text else ""
        return f"<ember.Tensor: shape={self.shape}, dtype={self._dtype.name}, numpy={sep}{text}>"

    def __str__(self) -> str:
        text = _value_text(self._value, str)
        return f"ember.Tensor({text}, shape={self.shape}, dtype={self._dtype.name})"

    def __format__(self, spec: str) -> str:
        """`f"{loss:.3f}"` formats a scalar's value (as TensorFlow); no spec gives str()."""
        if not spec:
            return str(self)
        value = self._value.item() if self._value.ndim == 0 else self._value
        if isinstance(value, bytes):  # a string scalar formats as its (UTF-8 decoded) text
            value = value.decode("utf-8", "replace")
        return format(value, spec)

    def _scalar(self, what: str):
        if self._value.size != 1:
            raise ValueError(f"{what}() of a tensor needs exactly one element, this one has "
                             f"shape {self.shape}; reduce it first (em.reduce_any, ...)")
        return self._value.reshape(()).item()

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __index__(self) -> int:
        if not self._dtype.is_integer:
            raise TypeError(f"only integer tensors can be used as an index, not {self._dtype.name}")
        return int(self._scalar("index"))

    def __len__(self) -> int:
        if self._value.ndim == 0:
            raise TypeError("len() of a scalar tensor")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:  # raised by iter() itself, not at the first next()
            raise TypeError("cannot iterate over a scalar tensor")
        from ember.frontend.autodiff import recording
        if recording.tapes():  # a tape records the rows as x[i] (TensorFlow's __iter__)
            return (self[i] for i in range(self._value.shape[0]))
        return (Tensor(np.asarray(row, self._value.dtype), self._dtype) for row in self._value)

    __hash__ = None  # `==` is elementwise, as in TensorFlow 2

    def ref(self) -> "TensorRef":
        """A hashable reference to this tensor (by identity), usable as a dict key."""
        return TensorRef(self)

    experimental_ref = ref  # TensorFlow's older spelling


def _as_ndarray(value) -> np.ndarray:
    if isinstance(value, (np.ndarray, np.generic)):  # ndarray subclasses, numpy scalars
        return np.asarray(value)
    raise TypeError(f"em.Tensor(value) wraps a numpy array, got {type(value).__name__}; "
                    "use em.constant(value) or em.convert_to_tensor(value) for other values")


def _dtype_of(value: np.ndarray) -> DType:
    if value.dtype.kind in "OUS":
        return dtypes.string
    return dtypes.as_dtype(value.dtype if value.dtype.isnative
                           else value.dtype.newbyteorder("="))


def _checked_elements(value: np.ndarray, dtype: DType) -> np.ndarray:
    """`value` with elements exactly of `dtype`'s numpy dtype: the same values in native
    byte order, strings as UTF-8 bytes, or a TypeError when the elements are of another type
    (an int8 buffer read as float64 would be read out of bounds)."""
    have = value.dtype
    if dtype.is_string:
        if have.kind == "O" and all(type(item) is bytes for item in value.flat):
            return value
        if have.kind in "OUS":
            return _as_bytes(value)
    elif have == dtype.np_dtype:
        return value
    elif have.newbyteorder("=") == dtype.np_dtype:
        return value.astype(dtype.np_dtype)
    raise TypeError(f"em.Tensor: an array of {have} cannot hold a {dtype.name} tensor; "
                    f"convert it with em.constant(value, dtype=em.{dtype.name}) or "
                    f"em.cast(em.Tensor(value), em.{dtype.name})")


def _value_text(value: np.ndarray, array_format) -> str:
    """numpy's text for arrays; scalars bare (`1.0`, `b'abc'`), as TensorFlow shows them."""
    if value.ndim:
        return array_format(value)
    return repr(value.item()) if value.dtype == object else str(value[()])


def _as_bytes(arr: np.ndarray) -> np.ndarray:
    """String arrays as object arrays of `bytes` (UTF-8), TensorFlow's string elements."""
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, item in enumerate(arr.reshape(-1)):
        if not isinstance(item, (str, bytes)):
            raise TypeError(f"cannot convert {item!r} to a tensor of dtype string: string "
                            "elements must be str or bytes")
        flat[i] = item.encode("utf-8") if isinstance(item, str) else bytes(item)
    return out


def _array_of(value) -> np.ndarray:
    """A numpy array, numpy scalar or array-like object (`__array__`, DLPack) as an array."""
    if isinstance(value, (np.ndarray, np.generic)) or hasattr(value, "__array__"):
        return np.asarray(value)
    if hasattr(value, "__dlpack__"):
        return np.from_dlpack(value)
    raise TypeError(f"cannot convert {type(value).__name__} {value!r} to a tensor; "
                    "expected a Tensor, numpy array, number, bool, string or a nested "
                    "list of them")


def _complex_error(value, dtype: DType) -> TypeError:
    return TypeError(f"cannot convert {value!r} to a tensor of dtype {dtype.name}: that would "
                     "drop its imaginary part; use a complex dtype (em.complex64, "
                     "em.complex128), or em.cast a tensor to one, or pass em.math.real(x)")


def _python_array(value) -> np.ndarray:
    """Default conversion of Python values (no dtype requested), as TensorFlow's."""
    arr = np.asarray(value)
    if arr.dtype.kind == "c":  # Python complex numbers are complex128, as in TensorFlow
        return arr.astype(np.complex128)
    if arr.dtype.kind in "US":  # from the Python objects: numpy strips trailing NULs
        return _as_bytes(np.asarray(value, dtype=object))
    if arr.dtype == object:
        raise TypeError(f"cannot convert {value!r} to a tensor: nested sequences must be "
                        "rectangular and hold numbers, bools or strings")
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype.kind == "i" and arr.dtype != np.int32:
        info = np.iinfo(np.int32)
        if arr.size == 0 or (arr.min() >= info.min and arr.max() <= info.max):
            return arr.astype(np.int32)
        return arr.astype(np.int64)
    return arr


def _representable(arr: np.ndarray, dtype: DType) -> bool:
    if arr.size == 0:
        return True  # `[]` holds no value that could fail to fit
    kind = arr.dtype.kind
    if dtype.is_complex:
        return kind in "iufc"
    if kind == "c":
        return False
    if dtype.is_string:
        return kind == "O"
    if kind == "O":
        return False
    if dtype.is_bool:
        return kind == "b"
    if kind == "b":
        return False
    if dtype.is_floating:
        return True
    if kind == "f":
        return False
    info = np.iinfo(dtype.np_dtype)
    return bool(arr.min() >= info.min and arr.max() <= info.max)


def _is_python_value(value) -> bool:
    return isinstance(value, (numbers.Number, str, bytes, list, tuple)) and \
        not isinstance(value, np.generic)


def convert_to_tensor(value, dtype=None, dtype_hint=None, name: Optional[str] = None) -> Tensor:
    """Converts a Tensor, numpy array or (nested) Python value to an `em.Tensor` (arrays are
    copied, as TensorFlow's).

    Args:
      value: the value to convert.
      dtype: the required dtype; a Python value must be representable in it.
      dtype_hint: the preferred dtype for Python values (falls back to the default rules).
      name: ignored in eager mode (kept for TensorFlow compatibility).

    Raises:
      TypeError: if `value` cannot be represented in `dtype`.

    Example:
      >>> import ember as em
      >>> em.convert_to_tensor([1, 2], dtype=em.float32).dtype
      em.float32
    """
    want = dtypes.as_dtype(dtype) if dtype is not None else None
    if not isinstance(value, Tensor) and hasattr(value, "_as_tensor"):  # em.Variable
        value = value._as_tensor()
    if isinstance(value, Tensor):
        tensor = value
        if want is not None and tensor.dtype is not want:
            raise TypeError(f"a {tensor.dtype.name} tensor cannot be used where {want.name} "
                            f"is required; cast it with em.cast(x, em.{want.name})")
        return tensor
    if not _is_python_value(value):
        arr = _array_of(value)
        if arr.dtype.kind == "c" and want is not None and not want.is_complex:
            raise _complex_error(value, want)  # never truncated to its real part
        arr = arr.astype(want.np_dtype) if want is not None and _dtype_of(arr) is not want \
            else np.array(arr, order="C", copy=True)
        return Tensor(arr)  # checks the elements (strings: str or bytes)
    if (first := autopack.first_tensor(value)) is not None:  # a list holding tensors
        return autopack.pack(value, first, want)  # TensorFlow's auto-packing: a stack
    default = _python_array(value)
    target = want or (dtypes.as_dtype(dtype_hint) if dtype_hint is not None else None)
    if target is None:
        return Tensor(default)
    raw = np.asarray(value) if default.dtype != object else default
    if not _representable(raw, target):
        if raw.dtype.kind == "c":  # never truncated to its real part
            raise _complex_error(value, target)
        if want is None:
            return Tensor(default)
        raise TypeError(f"cannot convert {value!r} to a tensor of dtype {target.name}")
    return Tensor(np.asarray(raw, dtype=target.np_dtype), target)


@placed  # inside `with em.device("gpu:N")`: on that GPU
def constant(value, dtype=None, shape=None, name: Optional[str] = None) -> Tensor:
    """Creates a constant tensor from a Python or numpy value.

    Args:
      value: a number, bool, string, nested list or numpy array.
      dtype: the element type (default: inferred, ints -> int32, floats -> float32).
      shape: optional shape; a single value is broadcast to it, otherwise the element count
        must match.
      name: ignored in eager mode.

    Raises:
      TypeError: if `value` is not representable in `dtype`.
      ValueError: if `value` cannot take `shape`.

    Example:
      >>> import ember as em
      >>> em.constant(0.5, shape=[2])
      <ember.Tensor: shape=(2,), dtype=float32, numpy=array([0.5, 0.5], dtype=float32)>
    """
    del name
    tensor = convert_to_tensor(value, dtype=dtype)  # (a copy of an array: later writes stay out)
    if shape is None:
        return tensor
    target = tuple(TensorShape(shape).as_list())
    if None in target:
        raise ValueError(f"constant shape {list(target)} must be fully defined")
    arr = tensor._value
    if arr.size == 1:
        return Tensor(np.full(target, arr.reshape(()), dtype=arr.dtype), tensor.dtype)
    if arr.size != int(np.prod(target)):
        raise ValueError(f"cannot give a value of {arr.size} elements the shape {list(target)}")
    return Tensor(arr.reshape(target), tensor.dtype)
