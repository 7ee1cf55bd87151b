"""Turns an op's docstring `Example:` line into a module that MLIR can parse and verify.

The coverage test and `make demo` use this, so every documented example is known to be
valid IR.
"""

from __future__ import annotations

import re

from ember.dialects.ember.base import Op
from ember.dialects.ember.parsing import split_top_level

_OPERANDS = re.compile(r'"[\w.]+"\(([^)]*)\)')


def example_module(spec: type[Op]) -> str:
    """A `func.func @example` whose arguments feed the op in `spec`'s example."""
    line = spec.example()
    if not line:
        raise ValueError(f"{spec.name} has no Example: in its docstring")
    names = [n.strip() for n in _OPERANDS.search(line).group(1).split(",") if n.strip()]
    signature = line[line.rindex(" : (") + 3:]
    depth = 0
    for end, ch in enumerate(signature):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            break
    types = split_top_level(signature[1:end])
    args, seen = [], set()
    for name, ty in zip(names, types):
        if name not in seen:
            seen.add(name)
            args.append(f"{name}: {ty}")
    return (f"func.func @example({', '.join(args)}) {{\n  {line}\n  return\n}}\n")
