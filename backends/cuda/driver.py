"""The CUDA driver API as Ember uses it, through NVIDIA's `cuda-bindings`
(`from cuda.bindings import driver`, the `ember[cuda]` extra).

`Driver` wraps the bindings module: every call is checked (a failing CUresult raises
`CudaError` naming the call and the driver's description, cuGetErrorString), and handles
cross the boundary as plain ints (CUdeviceptr, CUstream, CUmodule, CUfunction are rebuilt
from ints by the bindings' own classes). The bindings module is an argument, so the tests
drive the allocator and launch plumbing with a stand-in that records what it is asked.

`probe()` answers, once per process, whether this process can use a GPU: the bindings
import, libcuda loads, `cuInit(0)` succeeds and at least one device is present. Otherwise
it raises `GpuUnavailableError` saying which of those failed and what still works (PTX
with `ember-compile`, the CPU backend). `Device` is one GPU: its primary context
(cuDevicePrimaryCtxRetain, made current on the calling thread before each use), its one
stream (every copy and launch of Ember on that device is ordered on it) and its caching
allocator (allocator.py).
"""

from __future__ import annotations

import dataclasses
import functools
import threading

from ember.backends.cuda.allocator import CachingAllocator
from ember.dialects.ember.errors import EmberError

INSTALL = "pip install 'ember[cuda]'"
_WHAT_WORKS = ("PTX is still produced without a GPU (ember-compile --target cuda:sm_90 "
               "--emit=ptx); run the function on the CPU with backend=\"cpu\"")


class GpuUnavailableError(EmberError, RuntimeError):
    """The CUDA backend or a GPU device was asked for, but this process cannot use a GPU:
    cuda-bindings is not installed, no NVIDIA driver (libcuda) is found, or the driver
    sees no device. A RuntimeError (the environment lacks something, the request itself
    is well-formed), raised when the backend or device is selected: at `em.function(...,
    backend="cuda")` and on entering `em.device("gpu:0")`."""


class CudaError(EmberError, RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's reason."""


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """What `cuDeviceGet*` says about one GPU."""
    ordinal: int
    name: str
    compute_capability: tuple[int, int]
    total_memory: int

    @property
    def chip(self) -> str:
        """The `sm_XY` target of the device (backend.CHIPS lists those Ember generates)."""
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"


def load_bindings():
    """The cuda-bindings driver module; GpuUnavailableError saying how to install it."""
    try:
        from cuda.bindings import driver
    except ImportError as e:
        raise GpuUnavailableError(f"the CUDA backend needs NVIDIA's cuda-bindings ({e}): "
                                  f"{INSTALL}; {_WHAT_WORKS}") from None
    return driver


class Driver:
    """Checked calls into a cuda-bindings `driver` module (or a stand-in with its API)."""

    def __init__(self, api):
        self.api = api
        self._success = api.CUresult.CUDA_SUCCESS

    def call(self, name: str, *args):
        """`api.<name>(*args)` without its CUresult: None, the one value, or a tuple;
        CudaError if the CUresult is not CUDA_SUCCESS."""
        returned = getattr(self.api, name)(*args)
        status, values = returned[0], returned[1:]
        if status != self._success:
            raise CudaError(f"CUDA driver call {name} failed: {self.describe(status)}")
        if not values:
            return None
        return values[0] if len(values) == 1 else values

    def describe(self, status) -> str:
        """`CUDA_ERROR_X (the driver's description)`, as far as the driver can say."""
        name = getattr(status, "name", str(status))
        try:
            error, text = self.api.cuGetErrorString(status)
        except Exception:  # the driver cannot even describe it: the name must do
            return name
        if error != self._success or not text:
            return name
        return f"{name} ({text.decode() if isinstance(text, bytes) else text})"

    def devices(self) -> list[DeviceInfo]:
        """cuInit, then every device's name, compute capability and memory."""
        self.call("cuInit", 0)
        found = []
        attr = self.api.CUdevice_attribute
        for ordinal in range(self.call("cuDeviceGetCount")):
            dev = self.call("cuDeviceGet", ordinal)
            name = self.call("cuDeviceGetName", 256, dev)
            name = name.split(b"\0", 1)[0].decode() if isinstance(name, bytes) else str(name)
            major = self.call("cuDeviceGetAttribute",
                              attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
            minor = self.call("cuDeviceGetAttribute",
                              attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
            memory = self.call("cuDeviceTotalMem", dev)
            found.append(DeviceInfo(ordinal, name, (int(major), int(minor)), int(memory)))
        return found


class Device:
    """One GPU as Ember uses it: its primary context, one stream, a caching allocator of
    managed memory (host code and kernels both reach it), and the modules loaded on it."""

    def __init__(self, driver: Driver, info: DeviceInfo):
        self.driver = driver
        self.info = info
        api = driver.api
        self.handle = driver.call("cuDeviceGet", info.ordinal)
        self.context = driver.call("cuDevicePrimaryCtxRetain", self.handle)
        self.make_current()
        self.stream = driver.call("cuStreamCreate",
                                  int(api.CUstream_flags.CU_STREAM_NON_BLOCKING))
        self.stream_id = int(self.stream)
        attach = int(api.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL)
        self.allocator = CachingAllocator(
            lambda size: int(self._current("cuMemAllocManaged", size, attach)),
            lambda pointer: self._current("cuMemFree", api.CUdeviceptr(pointer)),
            self.synchronize)
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """TF's spelling of the device: '/job:localhost/replica:0/task:0/device:GPU:0'."""
        return f"/job:localhost/replica:0/task:0/device:GPU:{self.info.ordinal}"

    def make_current(self) -> None:
        """Makes the device's primary context the calling thread's current context."""
        self.driver.call("cuCtxSetCurrent", self.context)

    def _current(self, name: str, *args):
        self.make_current()
        return self.driver.call(name, *args)

    def synchronize(self) -> None:
        """Waits for everything queued on the device's stream."""
        self._current("cuStreamSynchronize", self.stream)

    def to_device(self, pointer: int, host_pointer: int, nbytes: int) -> None:
        """Queues a copy of `nbytes` from host memory to device (or managed) memory."""
        if nbytes:
            self._current("cuMemcpyHtoDAsync", self.driver.api.CUdeviceptr(pointer),
                          host_pointer, nbytes, self.stream)

    def to_host(self, host_pointer: int, pointer: int, nbytes: int) -> None:
        """Copies `nbytes` of device memory to host memory, waiting for the stream."""
        if nbytes:
            self._current("cuMemcpyDtoHAsync", host_pointer,
                          self.driver.api.CUdeviceptr(pointer), nbytes, self.stream)
        self.synchronize()

    def copy(self, dst: int, src: int, nbytes: int) -> None:
        """Queues a device-to-device copy on the stream."""
        api = self.driver.api
        if nbytes:
            self._current("cuMemcpyDtoDAsync", api.CUdeviceptr(dst), api.CUdeviceptr(src),
                          nbytes, self.stream)

    def memcpy(self, dst: int, src: int, nbytes: int) -> None:
        """Queues a copy between any two addresses the driver knows (unified addressing:
        host, device or managed; cuMemcpyAsync)."""
        api = self.driver.api
        if nbytes:
            self._current("cuMemcpyAsync", api.CUdeviceptr(dst), api.CUdeviceptr(src),
                          nbytes, self.stream)

    def memset32(self, dst: int, value: int, count: int) -> None:
        """Queues filling `count` 32-bit words at `dst` with `value`."""
        if count:
            self._current("cuMemsetD32Async", self.driver.api.CUdeviceptr(dst), value,
                          count, self.stream)

    def load_module(self, image: bytes) -> int:
        """Loads a module from PTX (the driver JIT-compiles it for this device; the text
        must end in NUL) or a cubin; returns the CUmodule as an int."""
        with self._lock:
            return int(self._current("cuModuleLoadData", image))

    def unload_module(self, module: int) -> None:
        self._current("cuModuleUnload", self.driver.api.CUmodule(module))

    def function(self, module: int, name: bytes) -> int:
        """The kernel called `name` in a loaded module, as an int (CUfunction)."""
        return int(self._current("cuModuleGetFunction", self.driver.api.CUmodule(module),
                                 name))

    def launch(self, function: int, grid: tuple[int, int, int], block: tuple[int, int, int],
               shared_bytes: int, params: int) -> None:
        """Queues the kernel on the device's stream; `params` is the address of its array
        of argument pointers (the host code builds it: MLIR's launch lowering)."""
        api = self.driver.api
        self._current("cuLaunchKernel", api.CUfunction(function), *grid, *block,
                      shared_bytes, self.stream, params, 0)


@functools.lru_cache(maxsize=1)
def probe() -> tuple:
    """(Driver, [DeviceInfo...]) for this process's GPUs; GpuUnavailableError if there are
    none, saying why (cached: the answer does not change while the process runs).
    Emulated GPUs, when asked for (emulated_device.py), take the real driver's place."""
    from ember.backends.cuda import emulated_device
    emulated = emulated_device.probe()
    if emulated is not None:
        return emulated
    api = load_bindings()
    driver = Driver(api)
    try:
        found = driver.devices()
    except CudaError as e:
        raise GpuUnavailableError(f"no usable NVIDIA GPU was found: {e}; {_WHAT_WORKS}") from None
    except (OSError, RuntimeError) as e:  # cuda.pathfinder: libcuda.so not found
        raise GpuUnavailableError(f"no NVIDIA driver or GPU was found ({type(e).__name__}: "
                                  f"{e}); "
                                  f"{_WHAT_WORKS}") from None
    if not found:
        raise GpuUnavailableError(f"the NVIDIA driver sees no GPU; {_WHAT_WORKS}")
    return driver, found


def available() -> bool:
    """Whether this process can use a GPU (probe() without the error)."""
    try:
        probe()
    except GpuUnavailableError:
        return False
    return True


_devices: dict[int, Device] = {}
_devices_lock = threading.Lock()


def device(ordinal: int = 0) -> Device:
    """GPU `ordinal`, set up on first use (context, stream, allocator);
    GpuUnavailableError without GPUs, ValueError for an ordinal out of range."""
    driver, found = probe()
    if not 0 <= ordinal < len(found):
        raise ValueError(f"there is no GPU:{ordinal}: this process sees {len(found)} "
                         f"GPU(s) ({', '.join(f'GPU:{d.ordinal} {d.name}' for d in found)})")
    with _devices_lock:
        if ordinal not in _devices:
            _devices[ordinal] = Device(driver, found[ordinal])
        return _devices[ordinal]
