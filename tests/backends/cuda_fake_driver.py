"""A stand-in for cuda-bindings' `driver` module (its names, signatures and return
convention: a tuple whose first item is the CUresult), for testing Ember's CUDA runtime
without a GPU. "Device" memory is host memory, so copies, the allocator and the host code
that reads managed memory run for real; kernels are recorded, not run."""

import ctypes
import enum

import numpy as np


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NO_DEVICE = 100


class CUdevice_attribute(enum.IntEnum):  # noqa: N801 -- the bindings' names
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


class CUstream_flags(enum.IntEnum):  # noqa: N801
    CU_STREAM_NON_BLOCKING = 1


class CUmemAttach_flags(enum.IntEnum):  # noqa: N801
    CU_MEM_ATTACH_GLOBAL = 1


_TEXT = {CUresult.CUDA_ERROR_OUT_OF_MEMORY: b"out of memory",
         CUresult.CUDA_ERROR_NO_DEVICE: b"no CUDA-capable device is detected",
         CUresult.CUDA_ERROR_INVALID_VALUE: b"invalid argument"}
OK = CUresult.CUDA_SUCCESS


class FakeDriver:
    """The driver API over host memory; `calls` records (name, args) of every call."""
    CUresult = CUresult
    CUdevice_attribute = CUdevice_attribute
    CUstream_flags = CUstream_flags
    CUmemAttach_flags = CUmemAttach_flags
    CUdeviceptr = CUstream = CUmodule = CUfunction = CUevent = int

    def __init__(self, devices=1, capability=(9, 0), memory_limit=1 << 30):
        self.count, self.capability, self.limit = devices, capability, memory_limit
        self.calls, self.memory, self.modules, self.launches = [], {}, {}, []
        self.functions = {}

    def __getattribute__(self, name):
        attr = object.__getattribute__(self, name)
        if name.startswith("cu") and callable(attr):
            calls = object.__getattribute__(self, "calls")
            return lambda *args: (calls.append((name, args)), attr(*args))[1]
        return attr

    def cuGetErrorString(self, status):
        return (OK, _TEXT[status]) if status in _TEXT else (CUresult.CUDA_ERROR_INVALID_VALUE,
                                                            None)

    def cuInit(self, flags):
        return (OK,)

    def cuDeviceGetCount(self):
        return (OK, self.count)

    def cuDeviceGet(self, ordinal):
        return (OK, ordinal) if ordinal < self.count else (CUresult.CUDA_ERROR_INVALID_VALUE,)

    def cuDeviceGetName(self, length, dev):
        return (OK, b"Fake GPU %d\0" % dev)

    def cuDeviceGetAttribute(self, attribute, dev):
        major = attribute == CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        return (OK, self.capability[0] if major else self.capability[1])

    def cuDeviceTotalMem(self, dev):
        return (OK, self.limit)

    def cuDevicePrimaryCtxRetain(self, dev):
        return (OK, 1000 + dev)

    def cuCtxSetCurrent(self, context):
        return (OK,)

    def cuStreamCreate(self, flags):
        return (OK, 7000 + len(self.calls))

    def cuStreamSynchronize(self, stream):
        return (OK,)

    def cuMemAllocManaged(self, size, flags):
        if sum(a.nbytes for a in self.memory.values()) + size > self.limit:
            return (CUresult.CUDA_ERROR_OUT_OF_MEMORY,)
        block = np.zeros(size + 256, np.uint8)
        pointer = (block.ctypes.data + 255) // 256 * 256
        self.memory[pointer] = block
        return (OK, pointer)

    def cuMemFree(self, pointer):
        return (OK,) if self.memory.pop(int(pointer), None) is not None else \
            (CUresult.CUDA_ERROR_INVALID_VALUE,)

    def _copy(self, dst, src, nbytes, stream):
        ctypes.memmove(int(dst), int(src), nbytes)
        return (OK,)

    cuMemcpyHtoDAsync = cuMemcpyDtoHAsync = cuMemcpyDtoDAsync = cuMemcpyAsync = _copy

    def cuMemsetD32Async(self, dst, value, count, stream):
        (ctypes.c_uint32 * count).from_address(int(dst))[:] = [value] * count
        return (OK,)

    def cuModuleLoadData(self, image):
        text = ctypes.string_at(image) if isinstance(image, int) else bytes(image)
        handle = 500 + len(self.modules)
        self.modules[handle] = text
        return (OK, handle)

    def cuModuleUnload(self, module):
        return (OK,) if self.modules.pop(int(module), None) is not None else \
            (CUresult.CUDA_ERROR_INVALID_VALUE,)

    def cuModuleGetFunction(self, module, name):
        if name.decode() not in self.modules[int(module)].decode():
            return (CUresult.CUDA_ERROR_INVALID_VALUE,)
        handle = 900 + len(self.functions)
        self.functions[handle] = name.decode()
        return (OK, handle)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.launches.append((self.functions[int(f)], (gx, gy, gz), (bx, by, bz), shared))
        return (OK,)

    def cuEventCreate(self, flags):
        self.events = getattr(self, "events", 0) + 1
        return (OK, 3000 + self.events)

    def cuEventRecord(self, event, stream):
        return (OK,)

    def cuEventSynchronize(self, event):
        return (OK,)

    def cuEventElapsedTime(self, start, end):
        return (OK, 2.5)

    def cuEventDestroy(self, event):
        return (OK,)
