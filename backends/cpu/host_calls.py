"""Host calls of compiled code: `em.py_function`, the host calls of a dataset loop inside an
em.function (runtime/data/staged.py) and printing to a Python stream run as compiled CPU
code that calls back into Python (host_call_lowering.py is the IR side).

Symbols. MCJIT resolves an external symbol process-wide, and compiled objects reach other
processes through the disk cache; the Python callable behind a call is per process and per
ConcreteFunction. So the object names no callable: each call goes to
`_mlir_ciface_ember_host_<hash>`, a hash of the call's argument and result types and of
this ABI (`host_symbol`), bound once per process to a dispatcher for those types. The
call passes a control block holding its site number (the host calls of one function,
numbered in the compiled module); the dispatcher takes the callable of that site from the
innermost `_Frame` of the calling thread, which `BoundExecutable` pushes around each call
of compiled code: the same object loaded for two ConcreteFunctions calls each one's own
callables, and threads calling one executable at once (MirroredStrategy) each see their
own frame. Compiled code runs with the GIL released (ctypes); the dispatcher, a ctypes
callback, takes it again.

ABI (`_ABI`): `void cb(results*, ctl*, arg0*, ...)`, every pointer to a strided memref
descriptor (`results*` to the descriptors of all results, one after the other, absent
when there are none). Arguments are read (copied: the callable may keep them). Results are
handed over: the dispatcher mallocs each buffer and copies the array in; the compiled
caller owns them and frees them with `free` (function-boundary ownership, the buffer
deallocation pass), so no buffer is freed twice or kept. Both go through the malloc and
free compiled code calls (block_cache.TABLE): big copies reuse cached blocks instead of
faulting in fresh pages at every call (a training step all-reducing 6 MB of gradients
per replica spent more time in page faults than in the reduction).

Errors. A callback never unwinds through compiled frames: the dispatcher catches whatever
the callable raises (OutOfRangeError at the end of an iterator, a py_function's own error,
InvalidArgumentError for a result of the wrong dtype or shape), keeps it in the frame and
writes status 1 into the control block; the compiled code then calls its error site, which
unwinds to the entry (native.py), and `BoundExecutable` raises the kept exception: the
same one the interpreter and eager raise. A failing callback frees the results it had
made; the buffers compiled code held when it unwinds are lost, as for any error raised by
compiled code (native.py).

What compiles: host calls whose arguments and results all have known rank (`?` dims
allowed) and are not unsigned; others keep the function on the interpreter, quietly
(host_call_lowering.check). `em.py_function`'s results have unknown rank, so a py_function
with results runs there; one with `Tout=[]`, stream prints and dataset loops compile.
"""

from __future__ import annotations

import ctypes
import functools
import json
import threading

import numpy as np

from ember.backends.base import NotCompilable
from ember.backends.cpu import block_cache
from ember.backends.cpu.host import _array
from ember.dialects.ember import digest
from ember.dialects.ember.base import InvalidArgumentError
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.types import parse_type

# A change here must change every symbol (they are in objects of the disk cache).
_ABI = "ember-host-call-v1: void(results*, ctl[2 x i64]*, args*...), memref descriptors, " \
       "results malloc'ed by the callee and freed by the caller"
_lock = threading.Lock()
_bound: dict[str, object] = {}  # symbol -> dispatcher (a ctypes callback), for good
_local = threading.local()  # .frames: the calling thread's frames, innermost last



def host_symbol(args: list[str], results: list[str]) -> str:
    """The symbol of the dispatcher for a host call with these argument and result types
    (ember type strings): equal in every module and process for equal types."""
    text = json.dumps([_ABI, list(args), list(results)])
    return "ember_host_" + digest.hexdigest(text.encode())[:24]


class HostBindingError(EmberError, RuntimeError):
    """A compiled object names a host-call symbol that does not match its types."""


def bind(site: dict):
    """Binds `_mlir_ciface_<symbol>` of the JIT to the dispatcher of the site's types (once
    per process); returns the dispatcher."""
    if site["symbol"] != host_symbol(site["args"], site["results"]):
        raise HostBindingError(f"host-call symbol {site['symbol']} of a compiled object does "
                               f"not name the dispatcher of its types; clear the compile "
                               f"cache ($EMBER_CACHE_DIR, or ~/.cache/ember)")
    symbol = "_mlir_ciface_" + site["symbol"]
    with _lock:
        if symbol not in _bound:
            callback = _dispatcher(site["args"], site["results"])
            import llvmlite.binding as llvm  # the JIT is loaded when code is: not at import
            llvm.add_symbol(symbol, ctypes.cast(callback, ctypes.c_void_p).value)
            _bound[symbol] = callback
        return _bound[symbol]


class _Frame:
    """One call of compiled code on this thread: its function's callables (by the traced
    symbol of each host call), its sites (by site number) and a callback's error."""
    __slots__ = ("callables", "sites", "error")

    def __init__(self, callables: dict, sites: list):
        self.callables, self.sites, self.error = callables, sites, None


def _frames() -> list:
    frames = getattr(_local, "frames", None)
    if frames is None:
        frames = _local.frames = []
    return frames


class _Spec:
    """One argument's or result's type, as the dispatcher needs it."""
    __slots__ = ("type", "rank", "dtype", "dims", "words")

    def __init__(self, text: str):
        self.type = parse_type(text)
        self.rank = len(self.type.shape)
        self.dtype = np.dtype(self.type.dtype.np_dtype)
        self.dims = self.type.shape
        self.words = ctypes.c_int64 * (3 + 2 * self.rank)  # a strided memref descriptor


def _dispatcher(arg_types: list[str], result_types: list[str]):
    args = [_Spec(t) for t in arg_types]
    results = [_Spec(t) for t in result_types]
    first = 2 if results else 1  # results*, ctl*, then the arguments

    def dispatch(*pointers):
        frames = _frames()
        frame = frames[-1] if frames else None
        d = _Control.from_address(pointers[first - 1])
        ctl = _Pair.from_address(d[1] + 8 * d[2])  # aligned + offset: [site, status]
        try:
            if frame is None:
                raise RuntimeError("compiled code called a host callback on a thread "
                                   "that runs no em.function")
            where = frame.sites[ctl[0]]
            callable_ = frame.callables[where["callee"]]
            borrow = getattr(callable_, "borrows_arguments", False)
            out = callable_(*[_read(p, spec, borrow) for p, spec in zip(pointers[first:], args)])
            outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
            if results:
                _write(pointers[0], _checked(outs, results, where), results)
            ctl[1] = 0
        except BaseException as e:  # noqa: B902 - raised again by BoundExecutable
            if frame is not None:
                frame.error = e
            ctl[1] = 1

    return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (first + len(args)))(dispatch)


_Control = ctypes.c_int64 * 3  # allocated, aligned, offset (then its size and stride)
_Pair = ctypes.c_int64 * 2


def _read(pointer: int, spec: _Spec, borrow: bool = False) -> np.ndarray:
    """A copy of the argument a descriptor describes (the callable may keep it); with
    `borrow`, a contiguous one is a read-only view, valid during the call only (for
    Ember's own callables that say so: `borrows_arguments`, e.g. the all-reduce's)."""
    d = spec.words.from_address(pointer)
    rank = spec.rank
    sizes, strides = tuple(d[3:3 + rank]), tuple(d[3 + rank:])
    step, contiguous = 1, True
    for n, stride in zip(reversed(sizes), reversed(strides)):
        contiguous = contiguous and (n <= 1 or stride == step)
        step *= n
    if not contiguous:
        return _array(d[1], d[2], sizes, strides, spec.dtype)
    if borrow:
        count = int(np.prod(sizes, dtype=np.int64))
        address = d[1] + d[2] * spec.dtype.itemsize
        view = np.ctypeslib.as_array((ctypes.c_char * (count * spec.dtype.itemsize or 1))
                                     .from_address(address))
        view = view[:count * spec.dtype.itemsize].view(spec.dtype).reshape(sizes)
        view.flags.writeable = False
        return view
    out = block_cache.empty(sizes, spec.dtype)  # a big one reuses a block: no page faults
    if out.nbytes:
        ctypes.memmove(out.ctypes.data, d[1] + d[2] * spec.dtype.itemsize, out.nbytes)
    return out


def _checked(outs: tuple, specs: list[_Spec], site: dict) -> list[np.ndarray]:
    """The callable's results as C-contiguous arrays of exactly the types the compiled
    call expects, else InvalidArgumentError naming the result."""
    if len(outs) != len(specs):
        raise InvalidArgumentError(site["label"], f"{_what(site)} returned {len(outs)} "
                                   f"value(s), but its call expects {len(specs)}")
    arrays = []
    for i, (value, spec) in enumerate(zip(outs, specs)):
        array = np.asarray(value)
        shape = array.shape
        if array.dtype != spec.dtype or len(shape) != spec.rank or any(
                d is not None and d != n for d, n in zip(spec.dims, shape)):
            raise InvalidArgumentError(site["label"], f"{_what(site)} returned, as result "
                                       f"{i}, an array of dtype {array.dtype} and shape "
                                       f"{shape}, but its call expects {spec.type}")
        arrays.append(array if array.flags.c_contiguous else array.copy(order="C"))
    return arrays


def _what(site: dict) -> str:
    return f"the host callback @{site['callee']} (at {site['where']})"


def _write(pointer: int, arrays: list[np.ndarray], specs: list[_Spec]) -> None:
    """Fills the results' descriptors with malloc'ed copies of `arrays` (all or none)."""
    buffers = []
    if block_cache.available() and any(a.nbytes >= block_cache.MIN_BYTES for a in arrays):
        block_cache.pool()  # big results from its cached blocks, faulted in once
    malloc, free = _allocator(*block_cache.table())
    try:
        for a in arrays:
            p = malloc(a.nbytes or 1)
            if not p:
                raise MemoryError(f"Unable to allocate {a.nbytes} bytes for the result of a "
                                  "host callback")
            buffers.append(p)
            if a.nbytes:
                ctypes.memmove(p, a.ctypes.data, a.nbytes)
    except BaseException:
        for p in buffers:
            free(p)
        raise
    at = pointer
    for a, p, spec in zip(arrays, buffers, specs):
        strides, step = [], 1
        for n in reversed(a.shape):
            strides.append(step)
            step *= n if n > 1 else 1
        strides.reverse()
        spec.words.from_address(at)[:] = [p, p, 0, *a.shape, *strides]
        at += ctypes.sizeof(spec.words)


@functools.lru_cache(maxsize=4)
def _allocator(malloc: int, free: int):
    """Callables of the malloc and free compiled code calls (block_cache.TABLE: the compiled
    caller frees the results with its free, so they come from its malloc)."""
    return (ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t)(malloc),
            ctypes.CFUNCTYPE(None, ctypes.c_void_p)(free))


class BoundExecutable:
    """An executable whose host calls go to one ConcreteFunction's callables: each call
    runs inside a frame naming them, and raises a callback's own exception."""

    def __init__(self, exe, callables: dict, sites: list):
        self._exe, self._callables, self._sites = exe, callables, sites

    def __getattr__(self, name):
        return getattr(self._exe, name)

    def _run(self, method, argument):
        frame = _Frame(self._callables, self._sites)
        frames = _frames()
        frames.append(frame)
        try:
            return method(argument)
        except Exception:
            error = frame.error
            if error is None:
                raise
            frame.error = None
            raise error from None
        finally:
            frames.pop()

    def __call__(self, arrays):
        return self._run(self._exe.__call__, arrays)

    def call_pointers(self, pointers):
        return self._run(self._exe.call_pointers, pointers)

    def run_entry(self, pointers):
        return self._run(self._exe.run_entry, pointers)


def with_callbacks(exe, callbacks: dict):
    """`exe` bound to `callbacks` (symbol -> Python callable, a FuncGraph's), or `exe` if
    it makes no host calls; NotCompilable (host only) if it calls one `callbacks` lacks."""
    sites = getattr(exe, "host_sites", None)
    if not sites:
        return exe
    missing = [s["callee"] for s in sites if s["callee"] not in callbacks]
    if missing:
        raise NotCompilable(f"the compiled code calls host functions {missing} that this "
                            "function has no callables for", NotCompilable.Reason.HOST_ONLY)
    return BoundExecutable(exe, callbacks, list(sites))


class BoundBackend:
    """A backend whose executables call one function's host callables (`with_callbacks`);
    everything else is the backend's."""

    def __init__(self, backend, callbacks: dict):
        self._backend, self._callbacks = backend, callbacks

    def __getattr__(self, name):
        return getattr(self._backend, name)

    def compile(self, *args, **kwargs):
        return with_callbacks(self._backend.compile(*args, **kwargs), self._callbacks)


def bound(backend, graph):
    """`backend`, its executables calling the host callbacks of `graph` (a FuncGraph) if it
    has any (em.py_function, dataset loops)."""
    return BoundBackend(backend, graph.callbacks) if graph.callbacks else backend
