"""`em.experimental.dlpack.from_dlpack` for every device: CPU buffers through numpy
(frontend/dlpack.py), CUDA buffers of CuPy, PyTorch, JAX... here.

A producer's kDLCUDA_MANAGED buffer is wrapped without a copy (the host may read managed
memory, as it reads Ember's own GPU tensors). A kDLCUDA buffer is device memory the host
cannot read, and every em.Tensor must be readable by eager ops: it is copied once, on the
GPU (cuMemcpyAsync into a block of Ember's caching allocator; no trip through the host),
and the producer's buffer is released at once. The producer is asked to order its work
before Ember's stream (`__dlpack__(stream=...)`, the protocol's synchronisation).
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import dlpack as cpu_dlpack
from ember.frontend.dlpack_structs import (KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED,
                                           capsule_device, read_capsule)
from ember.frontend.tensor import Tensor

_NUMPY = {(0, 8): np.int8, (0, 16): np.int16, (0, 32): np.int32, (0, 64): np.int64,
          (1, 8): np.uint8, (1, 16): np.uint16, (1, 32): np.uint32, (1, 64): np.uint64,
          (2, 16): np.float16, (2, 32): np.float32, (2, 64): np.float64,
          (5, 64): np.complex64, (5, 128): np.complex128, (6, 8): np.bool_}


def _dtype(code: int, bits: int, lanes: int):
    if lanes == 1 and (code, bits) == (4, 16):
        return dtypes.bfloat16.np_dtype
    if lanes != 1 or (code, bits) not in _NUMPY:
        raise BufferError(f"em.experimental.dlpack.from_dlpack: DLPack type (code {code}, "
                          f"{bits} bits, {lanes} lanes) has no Ember dtype")
    return np.dtype(_NUMPY[(code, bits)])


def from_dlpack(dlcapsule):
    """An em.Tensor of a DLPack capsule or of any object with `__dlpack__`: CPU buffers
    without a copy (see ember.frontend.dlpack), CUDA managed memory without a copy, CUDA
    device memory with one copy on the GPU (module docstring); the tensor of a CUDA buffer
    is on that GPU (`.device`).

    Raises:
      TypeError: for an object that is neither.
      BufferError: for a buffer Ember cannot hold (other devices, strided CUDA buffers,
        types without an Ember dtype).
      em.errors.GpuUnavailableError: for a CUDA buffer in a process without a GPU.
    """
    if hasattr(dlcapsule, "__dlpack_device__"):
        kind, index = dlcapsule.__dlpack_device__()
        if kind not in (KDL_CUDA, KDL_CUDA_MANAGED):
            return cpu_dlpack.from_dlpack(dlcapsule)
        from ember.backends.cuda import runtime
        device = runtime.require_device(int(index))
        try:
            capsule = dlcapsule.__dlpack__(stream=device.stream_id, max_version=(1, 0))
        except TypeError:  # a producer of DLPack < 1.0
            capsule = dlcapsule.__dlpack__(stream=device.stream_id)
    elif type(dlcapsule).__name__ == "PyCapsule" and \
            capsule_device(dlcapsule)[0] not in (KDL_CPU, KDL_CUDA_HOST):
        capsule = dlcapsule
    else:
        return cpu_dlpack.from_dlpack(dlcapsule)  # numpy reads CPU capsules; its TypeError
    imported = read_capsule(capsule)
    try:
        return _cuda_tensor(imported)
    except BaseException:
        imported.release()
        raise


def _cuda_tensor(imported) -> Tensor:
    from ember.backends.cuda import runtime
    if imported.device[0] not in (KDL_CUDA, KDL_CUDA_MANAGED):
        raise BufferError(f"em.experimental.dlpack.from_dlpack: DLPack device type "
                          f"{imported.device[0]} is neither the CPU nor CUDA")
    if not imported.contiguous:
        raise BufferError("em.experimental.dlpack.from_dlpack: the CUDA buffer is strided; "
                          "make it contiguous first (e.g. .contiguous() in torch)")
    dtype = _dtype(imported.code, imported.bits, imported.lanes)
    device = runtime.require_device(imported.device[1])
    if imported.device[0] == KDL_CUDA_MANAGED:
        array = runtime.device_array(device, imported.shape, dtype, imported.pointer,
                                     imported.release)
        return Tensor(array)
    array = runtime.device_array(device, imported.shape, dtype)
    device.memcpy(array.ctypes.data, imported.pointer, array.nbytes)
    device.synchronize()
    imported.release()
    return Tensor(array)
