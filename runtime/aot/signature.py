"""Signatures written as text, as `ember-compile --signature` takes them: `f32[?,784]` is
`em.TensorSpec([None, 784], em.float32)`; `i64[]` a scalar; dtype names long or short."""

from __future__ import annotations

import re

from ember.dialects.ember import dtypes
from ember.frontend.shape import TensorSpec

SHORT = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
         "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
         "i1": "bool", "c64": "complex64", "c128": "complex128"}
_SPEC = re.compile(r"\s*([A-Za-z0-9_]+)\s*\[([^\]]*)\]\s*")


def parse_spec(text: str) -> TensorSpec:
    """`dtype[dims]` as a TensorSpec (`?` or `None` for a dynamic dim); ValueError saying
    what is wrong otherwise.

    Example:
      >>> parse_spec("f32[?, 784]")
      TensorSpec(shape=(None, 784), dtype=em.float32, name=None)
    """
    m = _SPEC.fullmatch(text)
    if m is None:
        raise ValueError(f"signature {text!r} is not of the form dtype[dims], e.g. "
                         "'f32[?,784]' or 'i64[]'")
    name = SHORT.get(m.group(1), m.group(1))
    try:
        dtype = dtypes.as_dtype(name)
    except TypeError:
        raise ValueError(f"signature {text!r}: unknown dtype {m.group(1)!r}; use one of "
                         f"{', '.join(SHORT)} or a full name such as float32") from None
    dims = []
    for part in filter(None, (p.strip() for p in m.group(2).split(","))):
        if part in ("?", "None"):
            dims.append(None)
        elif part.isdigit():
            dims.append(int(part))
        else:
            raise ValueError(f"signature {text!r}: dim {part!r} is neither a size nor '?'")
    return TensorSpec(dims, dtype)
