"""Host callbacks of compiled code: `ember.print` sites call back into Python.

`convert-ember-to-linalg` turns each print site into a call of a private declaration
`@ember_print_<k>` (with `llvm.emit_c_interface`) carrying the site's format, end, stream and
ember tensor type. Symbols of the JIT are process-wide, so before lowering each site is
renamed to a unique `ember_print_<n>`; the runtime binds `_mlir_ciface_<name>` to a ctypes
callback that rebuilds the tensor from its memref descriptor and writes it with tf.print's
formatting (the same `format_value` the interpreter uses).
"""

from __future__ import annotations

import ctypes
import itertools
import sys
import threading

import llvmlite.binding as llvm
import numpy as np
from mlir import ir

from ember.dialects.ember.state import format_value
from ember.dialects.ember.types import parse_type

_ids = itertools.count()
_lock = threading.Lock()
_bound: dict[str, object] = {}  # symbol -> ctypes callback (kept alive for the process)


def rename_prints(module: ir.Module) -> list[dict]:
    """Gives every print declaration of `module` a process-unique name; returns their
    descriptions (symbol, format, end, stream, type) for `bind_print`."""
    renames, found = {}, []
    for op in module.body.operations:
        op = op.operation
        if op.name != "func.func" or "ember.format" not in op.attributes:
            continue
        old = ir.StringAttr(op.attributes["sym_name"]).value
        with _lock:
            new = f"ember_print_{next(_ids)}_{id(module) & 0xFFFF:x}"
        renames[old] = new
        op.attributes["sym_name"] = ir.StringAttr.get(new)
        found.append({"symbol": new,
                      "format": ir.StringAttr(op.attributes["ember.format"]).value,
                      "end": ir.StringAttr(op.attributes["ember.end"]).value,
                      "stream": ir.StringAttr(op.attributes["ember.stream"]).value,
                      "type": str(ir.TypeAttr(op.attributes["ember.type"]).value)})
    if renames:
        module.operation.walk(lambda op: _retarget(op, renames) or ir.WalkResult.ADVANCE)
    return found


def _retarget(op, renames: dict) -> None:
    if op.name == "func.call":
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        if callee in renames:
            op.attributes["callee"] = ir.FlatSymbolRefAttr.get(renames[callee])


def _descriptor(rank: int):
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})


def bind_print(site: dict):
    """Binds `_mlir_ciface_<symbol>` of the JIT to a Python printer; returns the callback."""
    symbol = "_mlir_ciface_" + site["symbol"]
    with _lock:
        if symbol in _bound:
            return _bound[symbol]
    ttype = parse_type(site["type"])
    rank, dtype = len(ttype.shape), ttype.dtype.np_dtype
    desc = _descriptor(rank)
    head, tail = site["format"].split("{}")
    end, stream = site["end"], site["stream"]

    def printer(pointer):
        d = ctypes.cast(pointer, ctypes.POINTER(desc)).contents
        sizes = tuple(d.sizes) if rank else ()
        strides = tuple(d.strides) if rank else ()
        value = _array(d.aligned, d.offset, sizes, strides, dtype)
        getattr(sys, stream).write(head + format_value(value) + tail + end)

    callback = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(printer)
    llvm.add_symbol(symbol, ctypes.cast(callback, ctypes.c_void_p).value)
    with _lock:
        _bound[symbol] = callback
    return callback


def _array(address: int, offset: int, sizes: tuple, strides: tuple, dtype) -> np.ndarray:
    item = np.dtype(dtype).itemsize
    if any(s == 0 for s in sizes):
        return np.zeros(sizes, dtype)
    extent = 1 + sum((n - 1) * abs(s) for n, s in zip(sizes, strides))
    raw = (ctypes.c_byte * (extent * item)).from_address(address + offset * item)
    base = np.frombuffer(raw, dtype=np.uint8 if dtype == np.bool_ else dtype)
    view = np.lib.stride_tricks.as_strided(base, sizes, [s * item for s in strides])
    return view.astype(dtype, copy=True) if dtype == np.bool_ else view.copy()
