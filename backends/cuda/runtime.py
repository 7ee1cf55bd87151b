"""Running compiled functions on a GPU: compile_function (specialise as the CPU backend
does, lower through backend.py to PTX and host LLVM IR, JIT the host code with the mgpu*
symbols bound to Ember's driver wrapper) and the executable's call path.

A call copies each numpy input into a block of the device's caching allocator (inputs
already in device memory, from an earlier GPU call or DLPack, are passed as they are),
runs the host code (which launches the kernels on the device's stream and allocates its
intermediates from the same allocator), waits for the stream and copies the outputs back
into numpy arrays. When an input was a device array, or the call runs inside
`with em.device("gpu:N")`, the outputs stay on the device instead: numpy arrays over
managed memory (`device_array`), whose buffer object says which device holds it
(`ember_device`) and copies to the host on `.numpy()`.
"""

from __future__ import annotations

import ctypes
import re
import threading
from typing import Callable, Sequence

import llvmlite.binding as llvm
import numpy as np
from mlir import ir

from ember.backends import compile_log
from ember.backends.base import NotCompilable
from ember.backends.cpu.backend import BackendError, CpuBackend
from ember.backends.cpu.cache import cache_key, disk_cache
from ember.backends.cpu.compilable import check_compilable, function_named
from ember.backends.cpu.compiler import DEFAULT_PIPELINE, specialize, specialize_pipeline
from ember.backends.cpu.translate import TranslationError
from ember.backends.cuda import driver, emulated_device, runtime_mgpu
from ember.backends.cuda.backend import CHIPS, CudaBackend, CudaOptions, kernel_ptx
from ember.dialects.ember.types import TensorType, parse_type
from ember.passes.conversions.runtime_attrs import VARIABLES_ATTR
from ember.passes.pipeline import PassFailure

ENTRY_PREFIX = "__ember_cuda_entry_"
# what the host code may call besides mgpu*: libc (MCJIT aborts on an unresolved symbol)
_LIBC = {"malloc", "free", "memcpy", "memset", "memmove", "aligned_alloc", "abort"}
_UNSUPPORTED_TYPES = {"i1": "bool", "complex": "complex"}


class _Scope(threading.local):
    def __init__(self):
        self.ordinal: int | None = None  # the GPU of the innermost `em.device("gpu:N")`


_scope = _Scope()


def set_scope_device(ordinal: int | None) -> int | None:
    """Sets the GPU the calling thread's CUDA calls run on and keep their results on
    (None: GPU 0, results copied to the host); returns the previous one."""
    previous, _scope.ordinal = _scope.ordinal, ordinal
    return previous


def require_device(ordinal: int | None = None) -> driver.Device:
    """The GPU calls run on (the scope's, else GPU 0); GpuUnavailableError without one."""
    if ordinal is None:
        ordinal = _scope.ordinal or 0
    return driver.device(ordinal)


def chip_for(info: driver.DeviceInfo, options: CudaOptions) -> CudaOptions:
    """The options with the newest chip Ember targets that the device runs (PTX for an
    older compute capability JIT-compiles on newer devices)."""
    usable = [c for c in CHIPS if int(c[3:]) <= info.compute_capability[0] * 10
              + info.compute_capability[1]]
    if not usable:
        raise NotCompilable(f"GPU:{info.ordinal} ({info.name}) has compute capability "
                            f"{info.compute_capability}; Ember targets {', '.join(CHIPS)}",
                            NotCompilable.Reason.UNSUPPORTED)
    return CudaOptions(chip=usable[-1], opt_level=options.opt_level, tiles=options.tiles)


_cache: dict = {}
_cache_lock = threading.Lock()


def compile_function(module_text: str | Callable[[], str], symbol: str,
                     arg_types: Sequence[TensorType], options: CudaOptions | None = None, *,
                     source_key: str | None = None, pipeline: str = DEFAULT_PIPELINE,
                     device: driver.Device | None = None) -> "CudaExecutable":
    """The executable of `@symbol` for static `arg_types` on `device` (the current one),
    cached in memory per device and on disk (the host LLVM IR, PTX inside: the compile
    cache of backends/cpu/cache.py) by the source, types, pipeline and options, the chip
    among them. The driver's own JIT cache keeps the PTX compiled for the device."""
    device = device or require_device()
    options = chip_for(device.info, options or CudaOptions())
    if source_key is None and callable(module_text):
        module_text = module_text()
    load = _load
    if emulated_device.is_emulated(device):  # built and checked as for a GPU, run on the CPU
        load = emulated_device.loader(module_text, source_key, pipeline, options)
    disk_key = cache_key(module_text if source_key is None else ("source", source_key),
                         symbol, tuple(str(t) for t in arg_types),
                         specialize_pipeline(pipeline), options.key(), "cuda-host-ir")
    key = (disk_key, device)  # the Device object: its modules are loaded in its context
    with _cache_lock:
        exe = _cache.get(key)
    if exe is not None:
        return exe
    disk = disk_cache()
    entry = disk.load(disk_key)
    if entry is not None:
        try:
            exe = load(entry, symbol, arg_types, device)
        except _BadEntry as e:  # checksummed but unusable: rebuilt below
            disk.discard(disk_key, str(e))
    if exe is None:
        with compile_log.stage(f"compile @{symbol} for {options.chip}"):
            text = module_text() if callable(module_text) else module_text
            host_ir, results, variables = build(text, symbol, arg_types, options, pipeline)
            meta = {"symbol": symbol, "results": [str(t) for t in results],
                    "variables": variables}
            disk.store(disk_key, host_ir.encode(), meta)
            exe = load((host_ir.encode(), meta), symbol, arg_types, device)
    with _cache_lock:
        return _cache.setdefault(key, exe)


class _BadEntry(Exception):
    """A disk-cache entry that passed its checksum but is not this function's code."""


def _load(entry: tuple[bytes, dict], symbol: str, arg_types, device) -> "CudaExecutable":
    """The executable of a compile-cache entry: the host LLVM IR (the PTX inside it) and
    the result types and variables."""
    code, meta = entry
    try:
        if meta["symbol"] != symbol:
            raise _BadEntry(f"it holds @{meta['symbol']}, not @{symbol}")
        results = [parse_type(t) for t in meta["results"]]
        variables = [int(i) for i in meta["variables"]]
        if any(not 0 <= i < len(arg_types) for i in variables):
            raise _BadEntry(f"variable indices {variables} out of range")
        host_ir = code.decode()
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise _BadEntry(f"{type(e).__name__}: {e}") from None
    exe = CudaExecutable(host_ir, symbol, arg_types, results, device)
    exe.variables = variables
    return exe


def build(module_text: str, symbol: str, arg_types: Sequence[TensorType],
          options: CudaOptions, pipeline: str = DEFAULT_PIPELINE):
    """(host LLVM IR with the entry, result types, variable indices) of `@symbol`;
    NotCompilable for what the CUDA backend does not run."""
    module = specialize(module_text, symbol, arg_types, pipeline)
    results = check_compilable(module, symbol)
    dynamic = [str(t) for t in results if not t.is_static]
    if dynamic:
        raise NotCompilable(f"@{symbol} returns {', '.join(dynamic)}: results whose shape "
                            "depends on values are not supported by the CUDA backend",
                            NotCompilable.Reason.UNSUPPORTED)
    backend = CudaBackend(options)
    try:
        backend.make_linalg(module)
        text = str(module)
        for mlir_name, what in _UNSUPPORTED_TYPES.items():
            if f"x{mlir_name}>" in text or f"<{mlir_name}>" in text:
                raise NotCompilable(f"@{symbol} computes on {what} tensors, which the CUDA "
                                    "backend does not lower yet",
                                    NotCompilable.Reason.UNSUPPORTED)
        fn = function_named(module, symbol)
        variables = [int(i) for i in ir.DenseI64ArrayAttr(fn.attributes[VARIABLES_ATTR])] \
            if VARIABLES_ATTR in fn.attributes else []
        binary = backend.lower(module, "binary", "bufferized")
        for name, ptx in kernel_ptx(binary):
            check_kernel_calls(name, ptx)
        host_ir = backend.make_host(binary)
        check_symbols(re.findall(r"^declare [^@]*@([\w.$]+)\(", host_ir, re.MULTILINE))
    except (BackendError, PassFailure, TranslationError) as e:
        raise NotCompilable(f"lowering @{symbol} for CUDA failed: {e}",
                            NotCompilable.Reason.FAILED) from None
    results = list(results) + [arg_types[i] for i in variables]
    return host_ir + entry_wrapper(symbol, list(arg_types) + results), results, variables


def entry_wrapper(symbol: str, types: Sequence[TensorType]) -> str:
    """LLVM IR of `void __ember_cuda_entry_<symbol>(ptr* data)`: calls `@symbol` with each
    buffer's pointer from `data` and its static sizes and (row-major) strides."""
    lines = [f"define void @{ENTRY_PREFIX}{symbol}(ptr %data) {{"]
    args = []
    for i, t in enumerate(types):
        lines += [f"  %slot{i} = getelementptr ptr, ptr %data, i64 {i}",
                  f"  %p{i} = load ptr, ptr %slot{i}"]
        strides, step = [], 1
        for d in reversed(t.shape):
            strides.insert(0, step)
            step *= max(d, 1)
        args += [f"ptr %p{i}", f"ptr %p{i}", "i64 0"] + [f"i64 {d}" for d in t.shape] + \
            [f"i64 {s}" for s in strides]
    lines += [f"  call void @{symbol}({', '.join(args)})", "  ret void", "}"]
    return "\n".join(lines) + "\n"


def check_symbols(declared) -> None:
    """NotCompilable if the host code declares (`declared`: the names) a function that
    neither the mgpu* binding nor libc provides (MCJIT would abort the process resolving
    it)."""
    for name in declared:
        if not name.startswith("llvm.") and name not in runtime_mgpu.SIGNATURES and \
                name not in _LIBC:
            raise NotCompilable(f"the CUDA host code calls @{name}{_why(name)}, which the "
                                "CUDA runtime does not provide",
                                NotCompilable.Reason.UNSUPPORTED)


def check_kernel_calls(module_name: str, ptx: str) -> None:
    """NotCompilable if a kernel calls a function its PTX only declares (`.extern .func`):
    the driver could not link the module (libdevice's math is linked in already)."""
    for line in ptx.splitlines():
        if line.startswith(".extern .func"):
            name = re.sub(r"\(.*?\)", " ", line).split()[-1].rstrip("(")
            name = name.removeprefix("_mlir_ciface_")
            raise NotCompilable(f"kernel module @{module_name} calls {name}{_why(name)}, "
                                "which no GPU library provides",
                                NotCompilable.Reason.UNSUPPORTED)


def _why(symbol: str) -> str:
    if symbol.startswith("ember_error_") or symbol.startswith("ember_rt_"):
        return (" (a run-time check of an op that can fail, such as integer division or "
                "gather: the CUDA backend does not raise errors from compiled code yet)")
    return ""


class DeviceBuffer:
    """A block of the device's caching allocator under numpy arrays (`device_array`): it
    goes back to the allocator when the last array over it goes. `ember_device` is the
    device's name (em.Tensor.device reads it); `host_copy` copies the array to the host."""

    __slots__ = ("device", "pointer", "nbytes", "ember_device", "release",
                 "__array_interface__", "__weakref__")

    def __init__(self, device: driver.Device, pointer: int, nbytes: int, release=None):
        """`release()`, if given, hands back memory that is not the allocator's (a DLPack
        producer's managed buffer) in place of freeing the block."""
        self.device, self.pointer, self.nbytes = device, pointer, nbytes
        self.release = release
        self.ember_device = device.name
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "version": 3,
                                    "data": (pointer, False)}

    def host_copy(self, array: np.ndarray) -> np.ndarray:
        """A host (numpy) copy of `array`, an array over this buffer."""
        out = np.empty(array.shape, array.dtype)
        offset = array.__array_interface__["data"][0] - self.pointer
        self.device.to_host(out.ctypes.data, self.pointer + offset, out.nbytes)
        return out

    def __del__(self):
        try:
            if self.release is not None:
                self.device.synchronize()  # Ember's queued work may still read it
                self.release()
            else:
                self.device.allocator.free(self.pointer, from_host=True)
        except Exception:  # noqa: BLE001 -- interpreter shutdown: the driver may be gone
            pass


def device_array(device: driver.Device, shape, dtype, pointer: int | None = None,
                 release=None) -> np.ndarray:
    """A C-contiguous numpy array over a fresh block of `device`'s allocator, owning it;
    or over managed memory at `pointer` that `release()` hands back when the array goes."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if pointer is None:
        pointer = device.allocator.malloc(nbytes)
    raw = np.asarray(DeviceBuffer(device, pointer, nbytes, release))
    return np.ndarray(tuple(shape), dtype, buffer=raw)


def to_device(array: np.ndarray, device: driver.Device) -> np.ndarray:
    """A device array holding a copy of the host array `array`."""
    array = np.asarray(array)
    if not array.flags.c_contiguous:  # (ascontiguousarray would make a scalar 1-D)
        array = np.ascontiguousarray(array)
    out = device_array(device, array.shape, array.dtype)
    device.to_device(out.ctypes.data, array.ctypes.data, array.nbytes)
    device.synchronize()  # the host array may change or go once this returns
    return out


def buffer_of(array: np.ndarray):
    """The DeviceBuffer under `array`, or None for a host array."""
    base = array.base
    while type(base) is np.ndarray:  # numpy keeps the array a buffer= array was made over
        base = base.base
    return base if type(base) is DeviceBuffer else None


class CudaExecutable:
    """A compiled function for static argument types on one GPU (the runtime's executable
    protocol: `exe(arrays) -> arrays`, `variables`, `fast_path`)."""

    fast_path = False  # every call goes through __call__ (copies and the device check)

    def __init__(self, host_ir: str, symbol: str, arg_types: Sequence[TensorType],
                 result_types: Sequence[TensorType], device: driver.Device):
        self.symbol, self.device = symbol, device
        self.arg_types, self.result_types = list(arg_types), list(result_types)
        self.variables: list[int] = []
        runtime_mgpu.bind()
        backend = CpuBackend()
        machine = backend.target_machine()
        try:
            module = backend.optimize_llvm(host_ir, machine)
        except RuntimeError as e:
            raise NotCompilable(f"LLVM rejected the CUDA host code of @{symbol}: {e}",
                                NotCompilable.Reason.FAILED) from None
        check_symbols(fn.name for fn in module.functions if fn.is_declaration)
        self._engine = llvm.create_mcjit_compiler(module, machine)
        self._engine.finalize_object()
        runtime_mgpu.use(device)
        self._engine.run_static_constructors()  # loads the kernels' modules (PTX JIT)
        try:
            runtime_mgpu.raise_pending()
        except driver.CudaError as e:  # the driver refused the PTX: run elsewhere, say why
            raise NotCompilable(f"loading the kernels of @{symbol} on {device.info.name} "
                                f"failed: {e}", NotCompilable.Reason.FAILED) from None
        address = self._engine.get_function_address(ENTRY_PREFIX + symbol)
        self._entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
        self._pointers = ctypes.c_void_p * (len(self.arg_types) + len(self.result_types))
        self._lock = threading.Lock()

    def __call__(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(arrays) != len(self.arg_types):
            raise ValueError(f"expected {len(self.arg_types)} arrays, got {len(arrays)}")
        device = self.device
        keep = _scope.ordinal == device.info.ordinal
        inputs = []
        for i, (a, t) in enumerate(zip(arrays, self.arg_types)):
            if a.shape != tuple(t.shape) or a.dtype != t.dtype.np_dtype:
                raise ValueError(f"argument {i} must be {t}, got {a.dtype} {a.shape}")
            buffer = buffer_of(a)
            if buffer is not None and buffer.device is device and a.flags.c_contiguous:
                inputs.append(a)
                keep = True
            else:
                inputs.append(to_device(a, device))
        outputs = [device_array(device, t.shape, t.dtype.np_dtype) for t in self.result_types]
        data = self._pointers(*[a.ctypes.data for a in inputs + outputs])
        try:
            with self._lock:  # the pending failure and the device are the thread's
                runtime_mgpu.use(device)
                self._entry(data)
                device.synchronize()
                runtime_mgpu.raise_pending()
        except BaseException:
            inputs = outputs = None  # the traceback keeps this frame: free the blocks now
            raise
        if keep:
            return outputs
        return [buffer_of(o).host_copy(o) for o in outputs]

    def __del__(self):
        engine = getattr(self, "_engine", None)
        if engine is not None:
            previous = runtime_mgpu.use(self.device)
            try:
                engine.run_static_destructors()  # unloads the kernels' modules
            except Exception:  # noqa: BLE001 -- interpreter shutdown
                pass
            finally:
                runtime_mgpu.restore(previous)


class DeviceDispatch:
    """What the CUDA backend gives the runtime for one signature: the executable for the
    GPU of each call (the scope's `em.device("gpu:N")`, else GPU 0), compiled for it on
    its first call there (the first one at once, so failures surface as NotCompilable)."""

    fast_path = False

    def __init__(self, compile_for: Callable[[driver.Device], CudaExecutable]):
        self._compile_for = compile_for
        first = compile_for(require_device())
        self._by_device = {first.device: first}
        self.variables = first.variables

    def __call__(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        device = require_device()
        exe = self._by_device.get(device)
        if exe is None:
            exe = self._by_device.setdefault(device, self._compile_for(device))
        return exe(arrays)
