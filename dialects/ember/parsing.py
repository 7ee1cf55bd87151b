"""Parsing IR text safely: the checks that must come before MLIR's parser sees it.

Every place that turns user-supplied IR text into a module (`ember-opt`, `ember-compile` and
its resumable stages, `backends.cpu.compiler.specialize`) goes through `parse_module`, which
first scans the text for inputs known to abort or overflow this MLIR build instead of giving
an error (its bindings are built with assertions), and reports them as located diagnostics:

- brackets nested deeper than MAX_NESTING: MLIR's parser and verifiers recurse once per
  level and overflow the C stack at a few thousand (a segfault);
- `array<index ...>`: the dense-array parser accepts `index` as an element type and then
  asks it for its bit width (`Type::getIntOrFloatBitWidth` asserts); every other
  non-integer, non-float element type is already a clean parse error;
- a static shape whose element count overflows int64 (`tensor<9223372036854775807x2xf32>`):
  `ShapedType::getNumElements` asserts wherever it is asked, e.g. for a dense literal;
- a generic op name without an op part (`"ember"(...)`, `"func."(...)`): MLIR takes the
  name for an op of a loaded dialect that it cannot create and aborts ("created with
  unregistered dialect"); every op name is `dialect.op`;
- `tensor.concat` with a negative `dim`: its verifier checks `dim < rank` only, then asks
  the type for that (unsigned) dim size, which asserts;
- a list of the custom forms of linalg's transpose and broadcast (`permutation = [1, 0.5]`,
  `dimensions = [...]`) holding anything but integers: their parser hands a null attribute
  to the op's attribute list, which asserts;
- string literals whose escapes spell bytes that are not UTF-8 (`"\\FF"`): MLIR keeps them,
  but every string attribute the Python bindings read would raise a conversion error.

Input bytes that are not UTF-8 are reported at their line and column by `decode`. The
upstream equivalent is `mlir::parseSourceString`, which has none of these guards.
"""

from __future__ import annotations

import re

from mlir import ir

from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.verifier import Diagnostic

# Brackets; real IR stays far below. MLIR overflows the stack at a few thousand nested regions.
MAX_NESTING = 512
INT64_MAX = 2 ** 63 - 1

# One scan finds everything the checks need; strings and comments are skipped as wholes,
# and `->`/`>=` hold no brackets.
_TOKEN = re.compile(r"""
    (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<comment>//[^\n]*)
  | (?P<arrow>->|>=)
  | (?<![\w.!#$])(?P<shaped>(?:tensor|memref|vector)\s*<)
        (?P<dims>(?:\s*(?:[0-9]+|\?|\[[0-9]+\])\s*x)*)
  | (?<![\w.!#$])(?P<index_array>array\s*<\s*index\b)
  | (?P<open>[{(\[<])
  | (?P<close>[})\]>])
""", re.VERBOSE)
_OP_CALL = re.compile(r"[ \t]*\(")  # after a string: the string names a generic op
# tensor.concat's dim, in the custom form `tensor.concat dim(-1)` or the generic one
# `"tensor.concat"(...) <{dim = -1 : i64}>`.
_NEGATIVE_CONCAT_DIM = re.compile(
    r'tensor\.concat\s+dim\s*\(\s*-|"tensor\.concat"\s*\([^)]*\)\s*<?\{[^}]*\bdim\s*=\s*-')
_ESCAPE = re.compile(r'\\([0-9A-Fa-f]{2}|.)', re.DOTALL)
# linalg.transpose/broadcast's custom `permutation = [...]` / `dimensions = [...]`
_INTEGER_LIST = re.compile(r"\b(permutation|dimensions)\s*=\s*\[([^\]]*)\]")
_INTEGER = re.compile(r"\s*-?[0-9]+\s*")


class ParseError(EmberError, ValueError):
    """IR text that cannot be parsed; `diagnostics` holds the located errors."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics))


def _position(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    return line, offset - source.rfind("\n", 0, offset)


def _at(source: str, offset: int, message: str) -> Diagnostic:
    line, col = _position(source, offset)
    return Diagnostic(message, "-", line, col)


def decode(data: bytes) -> str:
    """`data` as text; raises ParseError at the line and column of a byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        good = data[:e.start].decode("utf-8")
        line, col = _position(good, len(good))
        raise ParseError([Diagnostic(f"cannot read the input: not valid UTF-8 (byte "
                                     f"0x{data[e.start]:02X} at offset {e.start})", "-", line,
                                     col)]) from None


def _string_problem(literal: str) -> str | None:
    """Why the string literal (quotes included) cannot be read as UTF-8 text, or None."""
    if "\\" not in literal:
        return None
    raw = bytearray()
    pos = 0
    body = literal[1:-1]
    for m in _ESCAPE.finditer(body):
        raw += body[pos:m.start()].encode("utf-8")
        code = m.group(1)
        raw += bytes([int(code, 16)]) if len(code) == 2 else code.encode("utf-8")
        pos = m.end()
    raw += body[pos:].encode("utf-8")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return (f"string literal is not valid UTF-8 once its escapes are decoded (byte "
                f"\\{raw[e.start]:02X}); ember reads string attributes as UTF-8 text")
    return None


def _element_count_problem(dims: str) -> str | None:
    count = 1
    for dim in re.findall(r"[0-9]+|\?", dims):
        if dim != "?":
            count *= int(dim)
    if count > INT64_MAX:
        return (f"a shape of {count} elements overflows int64 (at most {INT64_MAX}); "
                "MLIR cannot represent it")
    return None


def split_top_level(text: str, opening: str = "<([{", closing: str = ">)]}") -> list[str]:
    """`text` split at the commas outside every bracket, each part stripped: a type list
    (`tensor<2x3xf32>, tuple<i1, i2>`) or a pass pipeline (`a{x=1,y=2},b(c,d)`).

    ValueError names the offset of an unbalanced bracket. Empty text has no parts; an
    empty part between commas is kept (the caller says why that is wrong)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced '{ch}' at offset {i}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if depth:
        raise ValueError("unbalanced brackets")
    tail = text[start:].strip()
    if tail or parts:
        parts.append(tail)
    return parts


def _too_deep(source: str, offset: int) -> Diagnostic:
    return _at(source, offset, f"brackets nest more than {MAX_NESTING} levels deep; such "
               "input is not parsed")


def nesting_problem(source: str, comment: str = "//") -> Diagnostic | None:
    """The first bracket nested deeper than MAX_NESTING, or None; for text other than MLIR
    (LLVM IR: `comment=";"`), whose parsers recurse the same way."""
    token = re.compile(r'"(?:[^"\\\n]|\\.)*"|' + re.escape(comment)
                       + r"[^\n]*|[{(\[<]|[})\]>]")
    depth = 0
    for m in token.finditer(source):
        bracket = m.group()
        if bracket in ("{", "(", "[", "<"):
            depth += 1
            if depth > MAX_NESTING:
                return _too_deep(source, m.start())
        elif bracket in ("}", ")", "]", ">"):
            depth = max(depth - 1, 0)
    return None


def problems(source: str) -> list[Diagnostic]:
    """What in `source` would crash MLIR's parser (see the module docstring), located;
    at most one diagnostic per kind of problem."""
    found: dict[str, Diagnostic] = {}
    depth = 0
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup if m.lastgroup != "dims" else "shaped"
        if kind == "string":
            why = "string" not in found and _string_problem(m.group())
            if why:
                found["string"] = _at(source, m.start(), why)
            if "op_name" not in found and _OP_CALL.match(source, m.end()):
                name = m.group()[1:-1]
                dialect, dot, op = name.partition(".")
                if not (dialect and dot and op):
                    found["op_name"] = _at(source, m.start(), (
                        f"'{name}' is not an op name: an op is named 'dialect.op' (e.g. "
                        "'ember.add'), with both parts"))
        elif kind in ("shaped", "index_array", "open"):
            depth += 1
            if depth > MAX_NESTING and "nesting" not in found:
                found["nesting"] = _too_deep(source, m.start())
                break  # every later bracket is as deep: stop scanning a pathological input
            why = None
            if kind == "shaped" and m.group("dims"):
                why = _element_count_problem(m.group("dims"))
            elif kind == "index_array":
                why = ("dense arrays hold integers or floats of a fixed width; 'index' has "
                       "none: use array<i64: ...>")
            if why and kind not in found:
                found[kind] = _at(source, m.start(), why)
        elif kind == "close":
            depth = max(depth - 1, 0)
    for listed in _INTEGER_LIST.finditer(source):
        items = listed.group(2).split(",")
        if listed.group(2).strip() and not all(_INTEGER.fullmatch(i) for i in items):
            found["integer_list"] = _at(source, listed.start(), (
                f"'{listed.group(1)}' lists dims as integers (e.g. [1, 0]), not "
                f"[{listed.group(2).strip()}]"))
            break
    concat = _NEGATIVE_CONCAT_DIM.search(source)
    if concat:
        found["concat_dim"] = _at(source, concat.start(), (
            "'tensor.concat' op concatenation dim must be non-negative (0 <= dim < rank)"))
    return sorted(found.values(), key=lambda d: (d.line, d.col))


# MLIR's "see current operation" note prints the whole op: a function of 100k ops is 100k lines.
MAX_NOTE_LINES = 40


def _shortened(message: str) -> str:
    lines = message.split("\n")
    if len(lines) <= MAX_NOTE_LINES:
        return message
    return "\n".join(lines[:MAX_NOTE_LINES] + [f"... ({len(lines) - MAX_NOTE_LINES} more lines)"])


def diagnostics_of(error: ir.MLIRError) -> list[Diagnostic]:
    """MLIR's diagnostics, with their notes (shortened to MAX_NOTE_LINES), as ember
    Diagnostics."""
    found = []
    for d in error.error_diagnostics:
        found.append(Diagnostic.at(d.location, d.message))
        found += [Diagnostic.at(n.location, _shortened(n.message), "note") for n in d.notes]
    return found or [Diagnostic(str(error))]


def parse_module(source: str | bytes, context: ir.Context | None = None) -> ir.Module:
    """Parses IR text (in `context`, or the current one) after the checks above.

    Raises:
      ParseError: the text is refused or does not parse; its diagnostics are located in
        the text (file name "-", as MLIR names parsed strings).
    """
    if isinstance(source, bytes):
        source = decode(source)
    found = problems(source)
    if found:
        raise ParseError(found)
    try:
        if context is None:
            return ir.Module.parse(source)
        return ir.Module.parse(source, context=context)
    except ir.MLIRError as e:
        raise ParseError(diagnostics_of(e)) from None
