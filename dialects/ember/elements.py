"""Dense elements attributes <-> numpy arrays, for every ember dtype.

The bindings convert int/float dense attributes through the buffer protocol, but not bfloat16,
complex or string tensors: those go through MLIR's text form (`dense<[...]>` or the `"0x..."` hex
form used for large constants), parsed here.
"""

from __future__ import annotations

import re

import numpy as np
from mlir import ir

from ember.dialects.ember import dtypes
from ember.dialects.ember.types import TensorType

_PAIR = re.compile(r"\(\s*([^,()\s]+)\s*,\s*([^,()\s]+)\s*\)")  # (re,im) of complex
_TOKEN = re.compile(r'\s*(?:(\[)|(\])|(,)|"((?:[^"\\]|\\.)*)"|([^,\[\]\s"]+))')


def _unescape(body: str) -> bytes:
    out = bytearray()
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1]
        simple = {"\\": b"\\", '"': b'"', "n": b"\n", "t": b"\t"}
        if nxt in simple:
            out += simple[nxt]
            i += 2
        else:
            out.append(int(body[i + 1:i + 3], 16))
            i += 3
    return bytes(out)


def _escape(value) -> str:
    raw = value if isinstance(value, bytes) else str(value).encode("utf-8")
    out = []
    for b in raw:
        ch = chr(b)
        if ch in '"\\' or not 32 <= b < 127:
            out.append(f"\\{b:02X}")
        else:
            out.append(ch)
    return "".join(out)


def _parse_literal(text: str, dtype: dtypes.DType):
    """Parses the body of `dense<...>` into nested lists of Python values."""
    stack: list[list] = [[]]
    for m in _TOKEN.finditer(text):
        open_, close, _, string, scalar = m.groups()
        if open_:
            stack.append([])
        elif close:
            done = stack.pop()
            stack[-1].append(done)
        elif string is not None:
            stack[-1].append(_unescape(string))
        elif scalar is not None:
            stack[-1].append(_scalar(scalar, dtype))
    return stack[0][0] if stack[0] else []


def _scalar(text: str, dtype: dtypes.DType):
    if dtype.is_complex:  # "re|im", from _PAIR
        part = dtype.real_dtype
        re_, im = text.split("|")
        return complex(_scalar(re_, part), _scalar(im, part))
    if dtype.is_bool:
        return text == "true"
    if text.lower().startswith("0x") and dtype.is_floating:  # raw bits (NaN, inf)
        bits = np.array([int(text, 16)], dtype=f"u{dtype.np_dtype.itemsize}")
        return float(bits.view(dtype.np_dtype)[0])
    return float(text) if dtype.is_floating else int(text)


def _text_body(attr: ir.Attribute, dtype: dtypes.DType) -> str:
    text = str(attr)
    body = text[text.index("<") + 1:text.rindex(">", 0, text.rindex(":"))]
    return _PAIR.sub(r"\1|\2", body) if dtype.is_complex else body


def _hex_values(body: str, dtype: dtypes.DType) -> np.ndarray:
    """The flat values of the `"0x..."` form (bfloat16 and complex)."""
    raw = bytes.fromhex(body[3:-1])
    if dtype is dtypes.bfloat16:
        return np.frombuffer(raw, dtype=np.uint16).view(dtype.np_dtype)
    return np.frombuffer(raw, dtype=dtype.np_dtype)


def _by_buffer(dtype: dtypes.DType) -> bool:
    """Whether the bindings' buffer protocol reads attributes of `dtype`."""
    return dtype is not dtypes.bfloat16 and not dtype.is_string and not dtype.is_complex


def to_numpy(attr: ir.Attribute, ttype: TensorType) -> np.ndarray:
    """Returns the value of a dense elements attribute of tensor type `ttype` as numpy.

    A splat (`dense<1.0> : tensor<1000x1000xf32>`) comes back as a read-only broadcast view,
    so reading a huge splat costs no memory.
    """
    dtype = ttype.dtype
    if getattr(attr, "is_splat", False) and ttype.num_elements and ttype.num_elements > 1:
        one = to_numpy_first(attr, ttype)
        return np.broadcast_to(one, ttype.shape)
    if _by_buffer(dtype):
        return np.array(attr, copy=True).astype(dtype.np_dtype, copy=False)
    body = _text_body(attr, dtype)
    if body.startswith('"0x') and not dtype.is_string:
        flat = _hex_values(body, dtype)
        return np.broadcast_to(flat, ttype.shape).copy() if flat.size == 1 else \
            flat.reshape(ttype.shape).copy()
    value = _parse_literal(body, dtype)
    arr = np.empty(ttype.shape, dtype=dtype.np_dtype)
    if isinstance(value, list):
        wide = np.complex128 if dtype.is_complex else np.float64
        src = np.array(value, dtype=object if dtype.is_string else wide)
        arr[...] = src.reshape(ttype.shape) if src.size == arr.size else src
    else:
        arr[...] = value
    return arr


def to_numpy_first(attr: ir.Attribute, ttype: TensorType) -> np.ndarray:
    """The (0-d) value of a splat attribute."""
    dtype = ttype.dtype
    if _by_buffer(dtype):
        return np.array(attr.get_splat_value().value, dtype=dtype.np_dtype)
    body = _text_body(attr, dtype)
    if body.startswith('"0x') and not dtype.is_string:
        return _hex_values(body, dtype)[:1].reshape(()).copy()
    value = _parse_literal(body, dtype)
    while isinstance(value, list):
        value = value[0]
    out = np.empty((), dtype=dtype.np_dtype)
    out[()] = value
    return out


def from_numpy(array: np.ndarray, ttype: TensorType) -> ir.Attribute:
    """Builds a dense elements attribute of type `ttype` (which must be static) from numpy.

    Needs an active MLIR context in which `!ember.string` is registered for string tensors.
    """
    dtype = ttype.dtype
    array = np.asarray(array)
    if dtype.is_string:
        flat = [f'"{_escape(v)}"' for v in array.reshape(-1)]
        body = _nest(flat, ttype.shape) if array.size else ""
        return ir.Attribute.parse(f"dense<{body}> : {ttype}")
    array = np.ascontiguousarray(array.astype(dtype.np_dtype, copy=False))
    shaped = ir.RankedTensorType.get(list(ttype.shape), element_type(dtype))
    if dtype is dtypes.bfloat16:
        return ir.DenseElementsAttr.get(array.view(np.uint16), type=shaped.element_type,
                                        shape=list(ttype.shape))
    if dtype.is_complex:  # the bindings take no complex buffers: (re, im) pairs of floats
        pairs = array.reshape(-1).view(dtype.real_dtype.np_dtype)
        return ir.DenseElementsAttr.get(pairs, type=shaped.element_type,
                                        shape=list(ttype.shape))
    if dtype is dtypes.uint8:
        return ir.DenseElementsAttr.get(array, type=shaped.element_type, shape=list(ttype.shape))
    return ir.DenseElementsAttr.get(array, shape=list(ttype.shape))


def _nest(flat: list[str], shape: tuple) -> str:
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    parts = [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"


def element_type(dtype: dtypes.DType) -> ir.Type:
    """The MLIR element type of `dtype` (needs an active context)."""
    return ir.Type.parse(dtype.mlir)


_caster_installed = False


def install_complex_caster(context: ir.Context | None = None) -> None:
    """Lets the bindings hand out dense attributes of complex elements.

    Their built-in downcast of a dense int-or-float attribute raises "Can't cast unknown
    element type" for complex elements (from `op.attributes[...]`; reading one through a
    NamedAttribute even aborts the interpreter). This caster, installed once per process,
    does what the built-in one does for int and float elements and gives complex ones the
    generic `DenseElementsAttr` (read through the text form, `to_numpy`). It can go when
    the bindings downcast complex dense attributes themselves (not in 22.1.8).
    `context`: one to parse a dense attribute in (its type id is every context's); without
    it a new context is made (~15 ms: every upstream dialect is registered in it).
    """
    global _caster_installed
    if _caster_installed:
        return
    with context or ir.Context():
        typeid = ir.Attribute.parse("dense<0.0> : tensor<f32>").typeid

    @ir.register_type_caster(typeid, replace=True)
    def _dense(attr):
        et = ir.ShapedType(attr.type).element_type
        if isinstance(et, ir.FloatType):
            return ir.DenseFPElementsAttr(attr)
        if isinstance(et, (ir.IntegerType, ir.IndexType)):
            return ir.DenseIntElementsAttr(attr)
        return ir.DenseElementsAttr(attr)
    _caster_installed = True
