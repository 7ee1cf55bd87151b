"""The `mgpu*` functions that MLIR's `gpu-to-llvm` host code calls, implemented over
Ember's driver wrapper (driver.py) and bound into the JIT with `llvm.add_symbol`.

Upstream MLIR links its host code against `libmlir_cuda_runtime` (CudaRuntimeWrappers.cpp);
Ember binds the same symbols, with the same C signatures, to ctypes callbacks instead, so
the host code runs on Ember's devices: the primary context of the current device, its one
stream (`mgpuStreamCreate` returns it and `mgpuStreamDestroy` keeps it: MLIR's host code
makes a stream per launch, Ember orders everything on one stream per device), and its
caching allocator (`mgpuMemAlloc`, `mgpuMemFree`: managed memory, which host code may
read). Each call costs a ctypes callback into Python and a cuda-bindings call, about
5-10 µs; a launch makes four (stream, function lookup, launch, synchronise).

A callback cannot raise into compiled code: the first failure of a call is kept for the
calling thread (the later calls of that call do nothing and return null) and raised by
`raise_pending()`, which the executable calls after the host code returns.
"""

from __future__ import annotations

import ctypes
import threading

import llvmlite.binding as llvm

P, I64, I32, I8 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32, ctypes.c_int8


class _State(threading.local):
    def __init__(self):
        self.device = None  # the Device the calling thread's host code runs on
        self.pending: BaseException | None = None  # the first failure of the current call


_state = _State()
_devices: dict[int, object] = {}  # ordinal -> Device, for mgpuSetDefaultDevice


def use(device) -> tuple:
    """Makes `device` the one the calling thread's host code runs on and clears its
    pending failure; returns what it replaced (for `restore`)."""
    previous = (_state.device, _state.pending)
    _devices[device.info.ordinal] = device
    _state.device = device
    _state.pending = None
    return previous


def restore(previous: tuple) -> None:
    """Puts back the state `use` replaced (a destructor run by the garbage collector in
    the middle of another call must not lose that call's device or failure)."""
    _state.device, _state.pending = previous


def raise_pending() -> None:
    """Raises the first failure a callback of the calling thread kept, if any."""
    error, _state.pending = _state.pending, None
    if error is not None:
        raise error


def _checked(restype):
    """Wraps an implementation: runs it unless a failure is pending; a failure is kept and
    the callback returns null/0."""
    def wrap(fn):
        def callback(*args):
            if _state.pending is not None:
                return None if restype is P else 0
            try:
                device = _state.device
                if device is None:
                    raise RuntimeError(f"{fn.__name__} called outside an Ember CUDA call")
                return fn(device, *args)
            except BaseException as e:  # noqa: BLE001 -- re-raised by raise_pending
                _state.pending = e
                return None if restype is P else 0
        callback.__name__ = fn.__name__
        return callback
    return wrap


def _module_load_jit(device, data, opt_level):
    return device.load_module(data)  # NUL-terminated PTX: the driver JIT-compiles it


def _module_load(device, data, size):
    return device.load_module(ctypes.string_at(data, size))  # a cubin of `size` bytes


def _module_unload(device, module):
    device.unload_module(module)


def _get_function(device, module, name):
    return device.function(module, ctypes.string_at(name))


def _launch(device, function, gx, gy, gz, bx, by, bz, smem, stream, params, extra, count):
    if extra:
        raise ValueError("mgpuLaunchKernel: 'extra' launch arguments are not supported")
    if 0 in (gx, gy, gz, bx, by, bz):
        return  # an empty tensor's loop: no work (the driver refuses empty grids)
    device.launch(function, (gx, gy, gz), (bx, by, bz), smem, params or 0)


def _stream_create(device):
    return device.stream_id


def _stream_destroy(device, stream):
    del stream  # the device's own stream lives as long as the device


def _stream_sync(device, stream):
    device.synchronize()


def _stream_wait_event(device, stream, event):
    del stream, event  # one stream per device: its work is already in order


def _event_create(device):
    return int(device.driver.call("cuEventCreate", 0))


def _event_destroy(device, event):
    device.driver.call("cuEventDestroy", device.driver.api.CUevent(event))


def _event_sync(device, event):
    device.driver.call("cuEventSynchronize", device.driver.api.CUevent(event))


def _event_record(device, event, stream):
    device.driver.call("cuEventRecord", device.driver.api.CUevent(event), device.stream)


def _mem_alloc(device, size, stream, host_shared):
    return device.allocator.malloc(size)  # managed memory either way: host code may read it


def _mem_free(device, pointer, stream):
    if pointer:
        device.allocator.free(pointer)  # stream-ordered: later work on the stream reuses it


def _memcpy(device, dst, src, size, stream):
    device.memcpy(dst, src, size)


def _memset32(device, dst, value, count, stream):
    device.memset32(dst, value & 0xFFFFFFFF, count)


def _set_default_device(device, ordinal):
    if ordinal not in _devices:
        raise ValueError(f"mgpuSetDefaultDevice({ordinal}): GPU:{ordinal} is not in use")
    _state.device = _devices[ordinal]


# symbol -> (implementation, result type, argument types): CudaRuntimeWrappers.cpp's
# signatures as MLIR 22's gpu-to-llvm and SelectObjectAttr call them
SIGNATURES = {
    "mgpuModuleLoadJIT": (_module_load_jit, P, (P, I32)),
    "mgpuModuleLoad": (_module_load, P, (P, I64)),
    "mgpuModuleUnload": (_module_unload, None, (P,)),
    "mgpuModuleGetFunction": (_get_function, P, (P, P)),
    "mgpuLaunchKernel": (_launch, None, (P, I64, I64, I64, I64, I64, I64, I32, P, P, P, I64)),
    "mgpuStreamCreate": (_stream_create, P, ()),
    "mgpuStreamDestroy": (_stream_destroy, None, (P,)),
    "mgpuStreamSynchronize": (_stream_sync, None, (P,)),
    "mgpuStreamWaitEvent": (_stream_wait_event, None, (P, P)),
    "mgpuEventCreate": (_event_create, P, ()),
    "mgpuEventDestroy": (_event_destroy, None, (P,)),
    "mgpuEventSynchronize": (_event_sync, None, (P,)),
    "mgpuEventRecord": (_event_record, None, (P, P)),
    "mgpuMemAlloc": (_mem_alloc, P, (I64, P, I8)),
    "mgpuMemFree": (_mem_free, None, (P, P)),
    "mgpuMemcpy": (_memcpy, None, (P, P, I64, P)),
    "mgpuMemset32": (_memset32, None, (P, I32, I64, P)),
    "mgpuSetDefaultDevice": (_set_default_device, None, (I32,)),
}

_bound: dict[str, object] = {}  # symbol -> its ctypes callback (kept alive here)
_lock = threading.Lock()


def bind() -> None:
    """Makes every mgpu* symbol resolvable by JIT-compiled code (once per process)."""
    with _lock:
        for symbol, (fn, restype, argtypes) in SIGNATURES.items():
            if symbol in _bound:
                continue
            callback = ctypes.CFUNCTYPE(restype, *argtypes)(_checked(restype)(fn))
            llvm.add_symbol(symbol, ctypes.cast(callback, ctypes.c_void_p).value)
            _bound[symbol] = callback
