"""`--verify-diagnostics`: match emitted diagnostics with `expected-*` comments, as mlir-opt.

    // expected-error @+1 {{operand types tensor<2xf32> and tensor<3xf32>}}

Supported: expected-error/-warning/-note/-remark, on the same line or at a designated one:
`@+N`/`@-N` (relative), `@N` (absolute), `@above`/`@below` (the nearest line above or below
with no expectation of its own), as mlir-opt's; any other designator is an error, not a
comment ignored. The text in `{{...}}` is matched as a substring of the message. Every
expected diagnostic must be produced, and every produced error or warning must be expected
(notes and remarks are only checked when expected). Diagnostics located in another file (an
op's explicit `loc("model.py":3:1)`) match no expectation of the input.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TextIO

from ember.dialects.ember.verifier import Diagnostic

_EXPECT = re.compile(r"expected-(error|warning|note|remark)\s*(?:@\s*(\S*?))?\s*\{\{(.*?)\}\}")
_DESIGNATOR = re.compile(r"[+-]?\d+|above|below")


# The file name MLIR gives to locations in text parsed from a string (the input).
PARSED_SOURCE = "-"


def in_input(d: Diagnostic) -> bool:
    """Whether `d` points into the input (or nowhere), not into a file named by a `loc(...)`."""
    return d.filename in ("", PARSED_SOURCE)


def display_name(d: Diagnostic, input_name: str) -> str:
    """The file name to print for `d`: the input's, or the file its own location names."""
    return input_name if in_input(d) else d.filename


@dataclasses.dataclass
class Expectation:
    line: int
    severity: str
    text: str
    matched: bool = False


def expectations(source: str) -> list[Expectation]:
    """The expected diagnostics written in `source` (lines are 1-based). ValueError naming
    the line of a designator that is none of mlir-opt's."""
    lines = source.split("\n")
    marked = [bool(_EXPECT.search(line)) for line in lines]

    def nearest(number: int, step: int) -> int:
        line = number + step
        while 1 <= line <= len(lines) and marked[line - 1]:
            line += step
        return line

    found = []
    for number, line in enumerate(lines, start=1):
        for m in _EXPECT.finditer(line):
            where = m.group(2) or ""
            if where and not _DESIGNATOR.fullmatch(where):
                raise ValueError(f"line {number}: unknown designator '@{where}' in "
                                 f"'{m.group(0)}'; use @+N, @-N, @N, @above or @below")
            target = (number if not where else nearest(number, -1) if where == "above"
                      else nearest(number, 1) if where == "below"
                      else number + int(where) if where[0] in "+-" else int(where))
            found.append(Expectation(target, m.group(1), m.group(3)))
    return found


def check(source: str, diagnostics: list[Diagnostic], filename: str, out: TextIO) -> bool:
    """Reports mismatches to `out`; returns True when diagnostics and expectations agree."""
    try:
        wanted = expectations(source)
    except ValueError as e:
        print(f"{filename}: error: {e}", file=out)
        return False
    ok = True
    for d in diagnostics:
        match = next((w for w in wanted if not w.matched and w.severity == d.severity
                      and w.line == d.line and w.text in d.message and in_input(d)), None)
        if match is not None:
            match.matched = True
        elif d.severity in ("error", "warning"):
            ok = False
            print(f"{d.format(display_name(d, filename))}\n  (unexpected {d.severity})",
                  file=out)
    for w in wanted:
        if not w.matched:
            ok = False
            print(f"{filename}:{w.line}: error: expected {w.severity} \"{w.text}\" was not "
                  "produced", file=out)
    return ok
