"""Emulated GPUs: devices of Ember's CUDA runtime whose "device memory" is host memory and
whose compiled code is the CUDA backend's mapped loop nests run on the CPU (emulated.py),
so what runs on several GPUs (`em.device("gpu:N")`, `em.distribute.MirroredStrategy` over
GPUs) is exercised on a machine without one.

Ask for them with `EMBER_CUDA_EMULATED_GPUS=N` in the environment (read when the process
first looks for GPUs) or `emulate_gpus(N)` (from then on; `emulate_gpus(None)` goes back to
the environment's setting, 0 to none). While N > 0 the process sees N emulated GPUs in place
of the real driver's: `em.config.list_physical_devices("GPU")` lists them, `backend="cuda"`
compiles for them, and everything above the driver is Ember's real code: `driver.Device`
(context, stream, caching allocator), device arrays (`runtime.DeviceBuffer`: tensors whose
`.device` is GPU:N and whose `.numpy()` copies to the host), the copies in and out of a
call, results kept on the device of their inputs or of the `em.device` scope.

What runs differently: the function is built for CUDA as for a GPU (PTX and host code, in
the compile cache: what a GPU's backend refuses, such as host calls or results of dynamic
shape, is refused here too), but a call runs the function compiled by the `cuda-emulated`
backend (the same mapped nests as the PTX, sequential on the calling CPU thread) on the
device arrays, and copies its results into fresh device arrays; no PTX is loaded (the
emulated driver refuses modules). So the emulation checks placement, copies and the index
arithmetic of the kernels, not the PTX nor timing (emulated.py says what else it cannot).
DLPack exports an emulated GPU's tensors as CUDA memory (kDLCUDA), as a real GPU's.
"""

from __future__ import annotations

import ctypes
import enum
import os
import threading
from typing import Sequence

import numpy as np

ENV = "EMBER_CUDA_EMULATED_GPUS"
MAX_DEVICES = 16
MEMORY = 16 << 30  # the memory each emulated GPU reports (host memory is the real limit)
_requested: int | None = None  # emulate_gpus()'s count; None: the environment's


def _check_count(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not 0 <= value <= MAX_DEVICES:
        raise ValueError(f"{where}: the number of emulated GPUs must be an integer from 0 to "
                         f"{MAX_DEVICES}, got {value!r}")
    return int(value)


def requested() -> int:
    """The number of emulated GPUs asked for (0: none, the real driver is used)."""
    if _requested is not None:
        return _requested
    text = os.environ.get(ENV, "").strip()
    if not text:
        return 0
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{ENV}={text!r}: give the number of emulated GPUs, e.g. "
                         f"{ENV}=2") from None
    return _check_count(value, ENV)


def emulate_gpus(count: int | None) -> int | None:
    """Makes this process see `count` emulated GPUs from now on (0: none; None: what
    EMBER_CUDA_EMULATED_GPUS says). Devices set up before are forgotten (arrays on them stay
    valid); returns the previous setting, for restoring it.

    Example:
      >>> import ember as em
      >>> from ember.backends.cuda.emulated_device import emulate_gpus
      >>> previous = emulate_gpus(2)
      >>> [d.name for d in em.config.list_physical_devices("GPU")]
      ['/physical_device:GPU:0', '/physical_device:GPU:1']
      >>> _ = emulate_gpus(previous)
    """
    global _requested
    if count is not None:
        count = _check_count(count, "emulate_gpus")
    previous, _requested = _requested, count
    from ember.backends.cuda import driver
    driver.probe.cache_clear()
    with driver._devices_lock:
        driver._devices.clear()
    return previous


def probe():
    """(Driver, [DeviceInfo...]) of the emulated GPUs, or None when none are asked for
    (driver.probe asks this first)."""
    count = requested()
    if not count:
        return None
    from ember.backends.cuda.driver import Driver
    driver = Driver(EmulatedApi(count))
    return driver, driver.devices()


def is_emulated(device) -> bool:
    """Whether `device` (a driver.Device) is an emulated GPU."""
    return isinstance(getattr(device.driver, "api", None), EmulatedApi)


# -- the driver API over host memory ---------------------------------------------------------

class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NOT_SUPPORTED = 801


class CUdevice_attribute(enum.IntEnum):  # noqa: N801 -- cuda-bindings' names
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


class CUstream_flags(enum.IntEnum):  # noqa: N801
    CU_STREAM_NON_BLOCKING = 1


class CUmemAttach_flags(enum.IntEnum):  # noqa: N801
    CU_MEM_ATTACH_GLOBAL = 1


_TEXT = {CUresult.CUDA_ERROR_INVALID_VALUE: b"invalid argument",
         CUresult.CUDA_ERROR_OUT_OF_MEMORY: b"out of memory",
         CUresult.CUDA_ERROR_NOT_SUPPORTED: b"an emulated GPU runs no PTX: Ember runs the "
                                            b"cuda-emulated backend's code for it"}
_OK = CUresult.CUDA_SUCCESS


class EmulatedApi:
    """The part of cuda-bindings' `driver` module Ember's runtime uses (its names and return
    convention: a tuple whose first item is the CUresult), over host memory: "device"
    pointers are addresses of host blocks, copies are memmoves, streams are synchronous."""
    CUresult = CUresult
    CUdevice_attribute = CUdevice_attribute
    CUstream_flags = CUstream_flags
    CUmemAttach_flags = CUmemAttach_flags
    CUdeviceptr = CUstream = CUmodule = CUfunction = int

    def __init__(self, count: int, capability: tuple[int, int] = (8, 0)):
        self.count, self.capability = count, capability
        self._blocks: dict[int, np.ndarray] = {}  # pointer -> the host block under it
        self._lock = threading.Lock()
        self._streams = 0

    def cuGetErrorString(self, status):
        text = _TEXT.get(status)
        return (_OK, text) if text else (CUresult.CUDA_ERROR_INVALID_VALUE, None)

    def cuInit(self, flags):
        return (_OK,)

    def cuDeviceGetCount(self):
        return (_OK, self.count)

    def cuDeviceGet(self, ordinal):
        ok = 0 <= ordinal < self.count
        return (_OK, ordinal) if ok else (CUresult.CUDA_ERROR_INVALID_VALUE,)

    def cuDeviceGetName(self, length, dev):
        return (_OK, b"Emulated GPU %d\0" % dev)

    def cuDeviceGetAttribute(self, attribute, dev):
        major = attribute == CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        return (_OK, self.capability[0] if major else self.capability[1])

    def cuDeviceTotalMem(self, dev):
        return (_OK, MEMORY)

    def cuDevicePrimaryCtxRetain(self, dev):
        return (_OK, 1000 + dev)

    def cuCtxSetCurrent(self, context):
        return (_OK,)

    def cuStreamCreate(self, flags):
        with self._lock:
            self._streams += 1
            return (_OK, 7000 + self._streams)

    def cuStreamSynchronize(self, stream):
        return (_OK,)

    def cuMemAllocManaged(self, size, flags):
        try:
            block = np.empty(size + 256, np.uint8)
        except MemoryError:
            return (CUresult.CUDA_ERROR_OUT_OF_MEMORY,)
        pointer = (block.ctypes.data + 255) // 256 * 256  # cuMemAlloc's alignment
        with self._lock:
            self._blocks[pointer] = block
        return (_OK, pointer)

    def cuMemFree(self, pointer):
        with self._lock:
            block = self._blocks.pop(int(pointer), None)
        return (_OK,) if block is not None else (CUresult.CUDA_ERROR_INVALID_VALUE,)

    def _copy(self, dst, src, nbytes, stream):
        ctypes.memmove(int(dst), int(src), nbytes)
        return (_OK,)

    cuMemcpyHtoDAsync = cuMemcpyDtoHAsync = cuMemcpyDtoDAsync = cuMemcpyAsync = _copy

    def cuMemsetD32Async(self, dst, value, count, stream):
        np.frombuffer((ctypes.c_uint32 * count).from_address(int(dst)),
                      np.uint32)[:] = value
        return (_OK,)

    def cuModuleLoadData(self, image):
        return (CUresult.CUDA_ERROR_NOT_SUPPORTED,)


# -- calls on an emulated GPU ----------------------------------------------------------------

def loader(module_text, source_key, pipeline, options):
    """runtime.compile_function's loader of a compile-cache entry for an emulated GPU: the
    entry is the CUDA build of the function (made and checked as for a GPU, so what the
    CUDA backend refuses is refused here too), and the executable runs the cuda-emulated
    backend's code of the same function for the same CUDA `options` (chip and tiles shape
    the mapped nests)."""
    def load(entry, symbol: str, arg_types, device) -> "EmulatedExecutable":
        from ember.backends.cuda.emulated import EmulatedCompiler, EmulatedOptions
        from ember.backends.cuda.runtime import _BadEntry
        meta = entry[1]
        if not isinstance(meta, dict) or meta.get("symbol") != symbol:
            raise _BadEntry(f"it is not the CUDA build of @{symbol}")
        compiler = EmulatedCompiler(EmulatedOptions(cuda=options))
        exe = compiler.compile(module_text, symbol, arg_types, source_key=source_key,
                               pipeline=pipeline)
        return EmulatedExecutable(exe, device, arg_types)
    return load


class EmulatedExecutable:
    """A compiled function on an emulated GPU, with CudaExecutable's call protocol: inputs
    not on the device are copied there, the code runs on the device arrays, and the results
    are device arrays when an input was on the device or the call is in the device's
    `em.device` scope (host arrays otherwise)."""

    fast_path = False

    def __init__(self, exe, device, arg_types: Sequence):
        self._exe, self.device = exe, device
        self.arg_types = list(arg_types)
        self.variables = list(getattr(exe, "variables", ()))

    def __call__(self, arrays):
        from ember.backends.cuda import runtime
        if len(arrays) != len(self.arg_types):
            raise ValueError(f"expected {len(self.arg_types)} arrays, got {len(arrays)}")
        device = self.device
        keep = runtime._scope.ordinal == device.info.ordinal
        inputs = []
        for i, (a, t) in enumerate(zip(arrays, self.arg_types)):
            if a.shape != tuple(t.shape) or a.dtype != t.dtype.np_dtype:
                raise ValueError(f"argument {i} must be {t}, got {a.dtype} {a.shape}")
            buffer = runtime.buffer_of(a)
            if buffer is not None and buffer.device is device and a.flags.c_contiguous:
                inputs.append(a)
                keep = True
            else:
                inputs.append(runtime.to_device(a, device))
        outputs = self._exe(inputs)
        if keep:  # fresh device arrays, as the GPU's results
            return [runtime.to_device(np.asarray(o), device) for o in outputs]
        # host arrays (an output may be an input itself: the CPU code returns it as is)
        return [o if runtime.buffer_of(o) is None else runtime.buffer_of(o).host_copy(o)
                for o in outputs]
