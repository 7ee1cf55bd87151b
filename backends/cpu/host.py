"""Host callbacks of compiled code: `ember.print` sites call back into Python.

`convert-ember-to-linalg` turns each print site into a call of a private declaration
`@ember_print_<k>` (with `llvm.emit_c_interface`) carrying the site's format, end, stream and
ember tensor type. The runtime binds `_mlir_ciface_<name>` to a ctypes callback that
rebuilds the tensor from its memref descriptor and writes it with tf.print's formatting (the
same `format_value` the interpreter uses).

MCJIT resolves an external symbol process-wide, and compiled objects reach other processes
through the disk cache, so a symbol must mean one printer in every process: before lowering,
each site is renamed `ember_print_<hash>`, a hash of everything the printer does (format,
end, stream, tensor type) and of how it is bound (`_ABI`). Equal sites share one symbol and
one callback; no counter or address, which restart or differ in each process, takes part.
"""

from __future__ import annotations

import ctypes
import json
import sys
import threading

import numpy as np
from mlir import ir

from ember.dialects.ember import digest
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.state import format_value
from ember.dialects.ember.types import parse_type
from ember.passes.ir_utils import symbol_name

# How a print symbol is called: its C interface gets a pointer to a strided memref
# descriptor of the site's rank. A change here must change every symbol.
_ABI = "mlir-ciface-memref-descriptor-v1"
_SITE_KEYS = ("format", "end", "stream", "type", "summarize")
_lock = threading.Lock()
_bound: dict[str, tuple[dict, object]] = {}  # symbol -> (site, ctypes callback), for good


def print_symbol(site: dict) -> str:
    """The symbol of the printer for `site` (format, end, stream, type, summarize): equal
    sites, in any module and any process, get the same symbol; different sites different
    ones."""
    text = json.dumps([_ABI] + [site[k] for k in _SITE_KEYS])
    return "ember_print_" + digest.hexdigest(text.encode())[:24]


def rename_prints(module: ir.Module) -> list[dict]:
    """Names every print declaration of `module` after what it prints (`print_symbol`),
    merging equal ones; returns their descriptions (symbol, format, end, stream, type) for
    `bind_print`."""
    renames, found, kept = {}, [], {}
    for op in list(module.body.operations):
        op = op.operation
        if op.name != "func.func" or "ember.format" not in op.attributes:
            continue
        site = {"format": ir.StringAttr(op.attributes["ember.format"]).value,
                "end": ir.StringAttr(op.attributes["ember.end"]).value,
                "stream": ir.StringAttr(op.attributes["ember.stream"]).value,
                "type": str(ir.TypeAttr(op.attributes["ember.type"]).value),
                "summarize": ir.IntegerAttr(op.attributes["ember.summarize"]).value}
        symbol = print_symbol(site)
        renames[symbol_name(op)] = symbol
        if symbol in kept:  # an equal site: its calls go to the first declaration
            op.erase()
            continue
        kept[symbol] = op
        found.append({"symbol": symbol, **site})
    for symbol, op in kept.items():
        op.attributes["sym_name"] = ir.StringAttr.get(symbol)
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


class PrintBindingError(EmberError, RuntimeError):
    """A compiled object names a print symbol that does not match what it prints."""


def bind_print(site: dict):
    """Binds `_mlir_ciface_<symbol>` of the JIT to a Python printer; returns the callback.

    Raises PrintBindingError when the symbol is not `print_symbol(site)` (an object from a
    cache written by an older Ember, or a damaged one): it would print through another
    site's printer.
    """
    if site["symbol"] != print_symbol(site):
        what = ", ".join(f"{k}={site[k]!r}" for k in _SITE_KEYS)
        raise PrintBindingError(f"print symbol {site['symbol']} of a compiled object does not "
                                f"name the printer of its site ({what}); clear the compile "
                                f"cache ($EMBER_CACHE_DIR, or ~/.cache/ember)")
    symbol = "_mlir_ciface_" + site["symbol"]
    with _lock:  # one callback per symbol: the JIT keeps the address it was given last
        if symbol not in _bound:
            callback = _printer(site)
            import llvmlite.binding as llvm  # the JIT is loaded when code is: not at import
            llvm.add_symbol(symbol, ctypes.cast(callback, ctypes.c_void_p).value)
            _bound[symbol] = (site, callback)
        return _bound[symbol][1]


def _printer(site: dict):
    ttype = parse_type(site["type"])
    rank, dtype = len(ttype.shape), ttype.dtype.np_dtype
    desc = _descriptor(rank)
    head, tail = site["format"].split("{}") if "{}" in site["format"] else (None, None)
    end, stream, summarize = site["end"], site["stream"], site["summarize"]

    def printer(pointer):
        if head is None:  # a format without {} prints its text only
            getattr(sys, stream).write(site["format"] + end)
            return
        d = ctypes.cast(pointer, ctypes.POINTER(desc)).contents
        sizes = tuple(d.sizes) if rank else ()
        strides = tuple(d.strides) if rank else ()
        value = _array(d.aligned, d.offset, sizes, strides, dtype)
        getattr(sys, stream).write(head + format_value(value, summarize) + tail + end)

    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(printer)


def _array(address: int, offset: int, sizes: tuple, strides: tuple, dtype) -> np.ndarray:
    item = np.dtype(dtype).itemsize
    if any(s == 0 for s in sizes):
        return np.zeros(sizes, dtype)
    extent = 1 + sum((n - 1) * abs(s) for n, s in zip(sizes, strides))
    raw = (ctypes.c_byte * (extent * item)).from_address(address + offset * item)
    base = np.frombuffer(raw, dtype=np.uint8 if dtype == np.bool_ else dtype)
    view = np.lib.stride_tricks.as_strided(base, sizes, [s * item for s in strides])
    return view.astype(dtype, copy=True) if dtype == np.bool_ else view.copy()
