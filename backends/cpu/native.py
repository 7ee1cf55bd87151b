"""Errors raised by native code: how compiled code reports a failure as a Python exception.

Compiled code cannot raise; it unwinds instead (the way `abort` would, but back to the
caller). The pieces, all in the compiled module (libc's setjmp/longjmp and a pthread key;
no thread_local: MCJIT aborts on "allocation of TLS not implemented"):

  1. The entry wrapper (`jit.entry_wrapper`) returns an i32 status. It keeps a context on
     its stack (a jump buffer of `JMP_BUF_BYTES`, then the failure's value), publishes it as
     the calling thread's value of a pthread key, `_setjmp`s, and calls the function.
  2. `@ember_rt_fail(i32 status, i64 value)` finds the context through the key, stores the
     value and `longjmp`s to the entry, which returns `status` and writes `value` into the
     slot after the buffer pointers. With no context (code called without its entry) it
     aborts.
  3. Every `malloc` the memref lowering emits calls `@ember_rt_malloc`, which fails with
     status OUT_OF_MEMORY (value: the bytes asked for) when malloc returns NULL.
  4. Each run-time check of the lowering (passes/.../checks.py) calls a site
     `@ember_error_<k>(i64 value)`; `install` defines it as `ember_rt_fail(FIRST_SITE + k,
     value)`. `error_sites` reads the sites' class, op, message and location from their
     declarations; the compiler stores them in the entry's metadata (so a disk-cache hit
     raises the same errors) and `raise_for_status` builds the exception.

The key is created once per process (`error_key`); the loader writes it into the module's
`@ember_rt_error_key` (`bind`). Each thread's context is its own, so row blocks running on
a thread pool (parallel.py) fail independently. The runtime's IR (`install`, `error_sites`)
is in native_ir.py: a cache hit imports this module, not the IR's (~0.05 ms less).

The unwinding skips the frames that own the call's buffers, so the context also lists the
buffers the call allocated and has not freed yet (from `TRACK_OFFSET`: a count, a capacity,
the list, and `TRACK_INLINE` slots the list starts in): the JIT's code keeps it
(call_buffers.py) and its entry frees what is listed when the call fails; AOT libraries
keep their own list in their C runtime (backends/cpu/aot/runtime_c.py).
"""

from __future__ import annotations

import ctypes
import functools
import threading

from ember.dialects.ember.base import (AssertionFailedError, InvalidArgumentError,
                                       OpAttributeError, OpShapeError, OpTypeError)

OK, OUT_OF_MEMORY, FIRST_SITE = 0, 1, 2
JMP_BUF_BYTES = 512  # glibc x86-64: 200, aarch64: 312; musl and macOS are smaller
MAX_VALUES = 32  # i64 values a failure reports (a shape site: the operands' run-time dims)
DETAIL_OFFSET = JMP_BUF_BYTES  # the failure's i64 values
OUTER_OFFSET = JMP_BUF_BYTES + 8 * MAX_VALUES  # the thread's previous context (nested calls)
TRACK_OFFSET = OUTER_OFFSET + 8  # the call's live buffers: i64 count, i64 capacity, ptr list
TRACK_INLINE = 16  # slots in the context itself, where the list starts (call_buffers.py)
CONTEXT_BYTES = TRACK_OFFSET + 24 + 8 * TRACK_INLINE
KEY_SYMBOL = "ember_rt_error_key"
FAIL, MALLOC = "ember_rt_fail", "ember_rt_malloc"

# the classes a site may raise (checks.py), by name
_ERRORS = {e.__name__: e for e in (AssertionFailedError, InvalidArgumentError, OpShapeError,
                                   OpTypeError, OpAttributeError)}

_key_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _create_key() -> int:
    key = ctypes.c_uint(0)
    # ctypes.pythonapi is the process's global scope (libc's pthread_key_create in it),
    # opened with ctypes: a CDLL(None) would define a class per call (~50 us of a warm start)
    if ctypes.pythonapi.pthread_key_create(ctypes.byref(key), None) != 0:
        raise OSError("pthread_key_create failed: no key for errors of compiled code")
    return key.value


def error_key() -> int:
    """This process's pthread key for the calling thread's error context, created once (a
    process has only PTHREAD_KEYS_MAX keys); a forked child inherits it."""
    with _key_lock:  # lru_cache alone could run _create_key twice
        return _create_key()


def bind(engine) -> None:
    """Writes the process's key into a loaded module's `@ember_rt_error_key`."""
    address = engine.get_global_value_address(KEY_SYMBOL)
    if address:
        ctypes.c_int32.from_address(address).value = error_key()


def raise_for_status(status: int, values, sites: dict, symbol: str) -> None:
    """Raises the error a failed native call reported (`status` != OK, with `values`, the
    value slots: an int is the first alone; the k-th `{}` of a message stands for the k-th
    value). A shape site re-runs its op's type inference on the operand types with their
    run-time dims (`values`), which raises eager's error."""
    values = [values] if isinstance(values, int) else list(values)
    value = values[0] if values else 0
    if status == OUT_OF_MEMORY:
        raise MemoryError(f"Unable to allocate {_size(value)} in compiled code of @{symbol}: "
                          "out of memory")
    site = sites.get(str(status))
    if site is None:
        raise RuntimeError(f"compiled code of @{symbol} failed with unknown status {status}")
    if "types" in site:
        from ember.passes.conversions.ember_to_linalg.checks import shape_error  # the lowering's
        raise shape_error(site, values).located(site["where"])
    parts = site["message"].split("{}")  # the k-th `{}` stands for the k-th value
    message = parts[0] + "".join(str(v) + text for v, text in
                                 zip(values + [0] * len(parts), parts[1:]))
    error = _ERRORS.get(site["error"])
    if error is not None:
        raise error(site["op"], message).located(site["where"])
    raise RuntimeError(f"'{site['op']}' op {message} (at {site['where']})")


def _size(count: int) -> str:
    """Bytes as numpy's MemoryError says them (`37.3 GiB`, `1.00 PiB`)."""
    units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    unit = min(max(count.bit_length() - 1, 1) // 10, len(units) - 1)
    value = count / (1 << (10 * unit))
    if round(value) == 1024 and unit < len(units) - 1:
        value, unit = value / 1024, unit + 1
    if unit == 0:
        return f"{count} bytes"
    return f"{value:#.3g} {units[unit]}" if round(value) < 1000 else f"{value:#.0f} {units[unit]}"
