"""DLPack's C structures in ctypes, for buffers numpy cannot exchange: Ember's GPU tensors
(kDLCUDA) going out, CUDA buffers of CuPy or PyTorch coming in (runtime/dlpack_cuda.py).
numpy handles CPU buffers itself (frontend/dlpack.py).

`export_capsule` makes a "dltensor_versioned" capsule (DLPack 1.0, read-only flag set) or
a legacy "dltensor" one over memory an owner object keeps alive; the owner is held until
the consumer calls the deleter, or until the capsule dies unconsumed. `read_capsule`
takes a producer's capsule, marks it consumed and returns what it describes with the
function that releases it. The layout is dlpack.h's (v1.0); numpy consuming Ember's CPU
capsules and Ember reading numpy's check it in the tests.
"""

from __future__ import annotations

import ctypes
import dataclasses
import threading

import numpy as np

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 13
READ_ONLY = 1
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}  # numpy kind -> DLDataTypeCode
_BFLOAT = 4


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER)]


_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_raw = ctypes.PyDLL(None)  # the capsule destructor gets a dying object: raw pointers only
_raw.PyCapsule_IsValid.restype = ctypes.c_int
_raw.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_raw.PyCapsule_GetPointer.restype = ctypes.c_void_p
_raw.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]

# capsule names, kept alive here: a capsule stores the pointer to its name, not a copy
_VERSIONED, _LEGACY = b"dltensor_versioned", b"dltensor"
_USED = {_VERSIONED: b"used_dltensor_versioned", _LEGACY: b"used_dltensor"}
_exports: dict[int, tuple] = {}  # struct address -> (owner, struct, shape array)
# re-entrant: _release runs from finalizers (a capsule's destructor, a DeviceBuffer's
# release), possibly on a thread inside `with _lock` here; each holder does one dict
# setitem or pop, which a nested pop of another key leaves consistent
_lock = threading.RLock()


def dl_dtype(dtype: np.dtype, name: str) -> DLDataType:
    """The DLDataType of an element type (`name` bfloat16 is kDLBfloat)."""
    if name == "bfloat16":
        return DLDataType(_BFLOAT, 16, 1)
    if dtype.kind not in _CODES:
        raise BufferError(f"DLPack has no type for {name} elements")
    return DLDataType(_CODES[dtype.kind], dtype.itemsize * 8, 1)


def _release(address) -> None:
    with _lock:
        _exports.pop(address, None)  # drops the owner: its memory may go


_deleter = _DELETER(_release)


def _capsule_died(capsule) -> None:
    """PyCapsule destructor: an unconsumed capsule releases its tensor itself."""
    for name in (_VERSIONED, _LEGACY):
        if _raw.PyCapsule_IsValid(capsule, name):
            _release(_raw.PyCapsule_GetPointer(capsule, name))


_destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_capsule_died)


def export_capsule(owner, pointer: int, shape: tuple, dtype: DLDataType, device: tuple,
                   versioned: bool = True):
    """A DLPack capsule of the C-contiguous buffer at `pointer` on `device`
    ((device_type, id)); `owner` stays alive until the consumer is done with it.
    Versioned capsules are marked read-only (Ember's tensors are immutable)."""
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    kind = DLManagedTensorVersioned if versioned else DLManagedTensor
    managed = kind()
    tensor = managed.dl_tensor
    tensor.data, tensor.device = pointer, DLDevice(*device)
    tensor.ndim, tensor.dtype, tensor.shape = len(shape), dtype, dims
    tensor.strides, tensor.byte_offset = None, 0  # NULL: compact row-major
    managed.deleter = _deleter
    if versioned:
        managed.major, managed.minor, managed.flags = 1, 0, READ_ONLY
    address = ctypes.addressof(managed)
    with _lock:
        _exports[address] = (owner, managed, dims)
    name = _VERSIONED if versioned else _LEGACY
    return _api.PyCapsule_New(address, name,
                              ctypes.cast(_destructor, ctypes.c_void_p).value)


@dataclasses.dataclass
class Imported:
    """What a consumed capsule describes; `release()` (once) hands it back."""
    pointer: int  # data + byte_offset
    shape: tuple
    strides: tuple | None  # in elements; None: compact row-major
    code: int
    bits: int
    lanes: int
    device: tuple
    read_only: bool
    release: object

    @property
    def contiguous(self) -> bool:
        if self.strides is None:
            return True
        step = 1
        for n, s in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and s != step:
                return False
            step *= n
        return True


def capsule_device(capsule) -> tuple[int, int]:
    """(device_type, device_id) of an unconsumed capsule, which stays unconsumed."""
    for name, kind in ((_VERSIONED, DLManagedTensorVersioned), (_LEGACY, DLManagedTensor)):
        if _api.PyCapsule_IsValid(capsule, name):
            device = kind.from_address(_api.PyCapsule_GetPointer(capsule, name)) \
                .dl_tensor.device
            return device.device_type, device.device_id
    raise BufferError("not an unconsumed DLPack capsule")


def read_capsule(capsule) -> Imported:
    """Consumes a DLPack capsule (renamed "used_..." so its producer does not free it)."""
    for name, kind, versioned in ((_VERSIONED, DLManagedTensorVersioned, True),
                                  (_LEGACY, DLManagedTensor, False)):
        if _api.PyCapsule_IsValid(capsule, name):
            address = _api.PyCapsule_GetPointer(capsule, name)
            break
    else:
        raise BufferError("not an unconsumed DLPack capsule")
    managed = kind.from_address(address)
    if versioned and managed.major != 1:
        raise BufferError(f"DLPack {managed.major}.{managed.minor} capsules are not "
                          "supported (1.x are)")
    _api.PyCapsule_SetName(capsule, _USED[name])
    t = managed.dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    done = []

    def release():
        if not done and managed.deleter:
            done.append(True)
            managed.deleter(address)
    return Imported((t.data or 0) + t.byte_offset, shape, strides, t.dtype.code,
                    t.dtype.bits, t.dtype.lanes, (t.device.device_type, t.device.device_id),
                    bool(versioned and managed.flags & READ_ONLY), release)
