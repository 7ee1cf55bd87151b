"""The error table of an AOT library: for each error site, the class and message that the
JIT raises (native.raise_for_status), as a template the library fills with the failure's
values at run time, in C, with no Python to ask.

A template is the whole message (`'ember.assert' op ... (at file.py:12)`) in which
`REF` followed by the byte k+1 stands for the k-th value the site reported.

  - A site with a fixed message: its `{}`s stand for the values in order, as in the JIT.
  - A shape site (checks.shape_check) is worded by the op's type inference on the operand
    types with their run-time dims. Here inference runs at compile time on sentinel dims
    (7-digit numbers no inference produces; 5-digit ones when a tensor has 3 or more `?`
    dims, whose 7-digit sentinels would make more bytes than an int64 counts, which the
    types refuse; the generic message if even those do) and the sentinels in its message become
    references: broadcasting, contraction and concatenation errors name the operand
    types, which is what that catches. A message that the sentinels change in another
    way (a product of dims), from an op whose inference reads operand values, or that
    inference does not raise on sentinels, falls back to the generic shape message with
    the run-time dims (`checks.shape_error` of an unknown op): same class, less detail.
    Known gap: a message naming which dim differs (concat's "differ in dim 1") names
    the first `?` dim, the one the sentinels make differ, whichever differs at run time.
"""

from __future__ import annotations

import json
import re

from ember.backends.cpu.native import FIRST_SITE, MAX_VALUES
from ember.dialects.ember.types import ShapeError as TypeShapeError
from ember.dialects.ember.types import TensorType, parse_type
from ember.passes.conversions.ember_to_linalg.checks import shape_error

REF = "\x01"
_SENTINELS = ((7100003, 7200007, 7300009), (8100007, 8200009, 8300011))
# 5-digit ones, for a tensor of 3 or more `?` dims, whose 7-digit dims make more bytes
# than an int64 counts (the types refuse them)
_SMALL = ((71003, 72007, 73009), (81007, 82009, 83011))


def _ref(k: int) -> str:
    return REF + chr(k + 1)


def site_template(site: dict) -> tuple[str, str]:
    """(error class name, message template) of one error site (native_ir.error_sites)."""
    if "types" in site:
        return _shape_template(site)
    parts = site["message"].split("{}")
    text = parts[0] + "".join(_ref(k) + rest for k, rest in
                              enumerate(parts[1:][:MAX_VALUES]))
    return site["error"], f"'{site['op']}' op {text} (at {site['where']})"


def error_table(sites: dict) -> list[tuple[int, str, str]]:
    """(status, class name, template) for each site of a compiled entry, by status."""
    return sorted((int(status), *site_template(site)) for status, site in sites.items()
                  if int(status) >= FIRST_SITE)


def _operand_types(site: dict) -> list:
    return [parse_type(text) for text in json.loads(site["types"])]


def _dynamic_dims(types: list) -> int:
    return sum(sum(d is None for d in t.shape) for t in types
               if isinstance(t, TensorType) and t.shape is not None)


def _referenced(text: str, values: list[int], first: int = 0) -> str:
    """`text` with each of `values` (sentinels) replaced by a reference to value
    `first + k`; longest first, so no sentinel is replaced inside another."""
    for k in sorted(range(len(values)), key=lambda k: -len(str(values[k]))):
        text = text.replace(str(values[k]), _ref(first + k))
    return text


def _type_text(t: TensorType, sizes) -> str:
    """`str(t)` with its `?` dims replaced by the next `sizes` (not a TensorType: sentinel
    dims may make more bytes than an int64 counts, which TensorType refuses)."""
    dims = "".join(f"{next(sizes) if d is None else d}x" for d in t.shape)
    return f"tensor<{dims}{t.dtype.mlir}>"


def _inferred(site: dict, sets, dims: int) -> set | None:
    """The (class, template) pairs the op's inference gives on each set of sentinels
    (one pair if the sentinels are only named); None if the sentinel dims are too large
    for a type."""
    found = set()
    for sentinels in sets:
        values = [sentinels[k % 3] + 1000 * (k // 3) for k in range(dims)]
        try:
            error = shape_error(site, values)
        except TypeShapeError:  # more bytes than an int64 counts
            return None
        found.add((type(error).__name__,
                   _referenced(f"'{error.op_name}' op {error.detail}", values)))
    return found


def _shape_template(site: dict) -> tuple[str, str]:
    types = _operand_types(site)
    dims = _dynamic_dims(types)
    where = f" (at {site['where']})"
    valued = json.loads(site.get("valued", "[]"))
    if not valued and 0 < dims <= MAX_VALUES:
        for sets, digits in ((_SENTINELS, 7), (_SMALL, 5)):
            found = _inferred(site, sets, dims)
            if found is None:
                continue  # too large: the smaller sentinels
            if len(found) == 1:
                error, text = found.pop()
                if REF in text and not re.search(rf"\d{{{digits},}}", text):
                    return error, text + where
            break
    # the generic message: after the valued operands' elements come the `?` dims
    first = sum(types[k].num_elements for k in valued)
    values = [_SENTINELS[0][k % 3] + 1000 * (k // 3) for k in range(dims)]
    sizes = iter(values)
    shown = [_type_text(t, sizes) if isinstance(t, TensorType) and t.shape is not None
             else str(t) for t in types]
    text = _referenced(", ".join(shown), values, first)
    return "OpShapeError", f"'{site['op']}' op {site['message']}: {text}{where}"
