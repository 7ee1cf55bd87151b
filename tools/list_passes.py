"""`ember-opt --list-passes`: every registered pass and named pipeline with its one-line
doc and its options (name, type, default), as `mlir-opt --help` lists passes.

    ember-canonicalize                 algebraic identities and constant control flow, ...
        --max-iterations=<int>         default: 16

Passes registered at run time (`register_pass`, plugins) are listed with Ember's own.
"""

from __future__ import annotations

import sys
import typing

from ember.passes import registry
from ember.passes.base import list_element

_TYPES = {int: "int", float: "number", bool: "bool", str: "string"}
_WIDTH = 36


def summary(cls: type) -> str:
    """A pass's one-line doc: its class docstring's first sentence, else its module's
    (without the leading `name:` and the `(upstream: ...)` aside)."""
    doc = cls.__doc__ or ""
    if not doc or doc.startswith(cls.__name__ + "("):  # dataclass's generated docstring
        doc = getattr(sys.modules.get(cls.__module__), "__doc__", None) or ""
    text = " ".join(doc.strip().split("\n\n")[0].split())
    if text.startswith(f"{cls.name}:"):
        text = text[len(cls.name) + 1:].strip()
    text = text.split(" (upstream", 1)[0]
    return text.split(". ", 1)[0].rstrip(".")


def type_name(kind) -> str:
    element = list_element(kind)
    if element is not None:
        return f"list of {_TYPES.get(element, getattr(element, '__name__', str(element)))}"
    return _TYPES.get(kind, getattr(kind, "__name__", str(kind)))


def options(cls: type) -> list[tuple[str, str, str]]:
    """(kebab name, type, default as spelled in a pipeline) of each option of `cls`."""
    hints = typing.get_type_hints(cls)
    rows = []
    for kebab, field in cls.options().items():
        default = field.default
        if isinstance(default, bool):
            shown = str(default).lower()
        elif isinstance(default, tuple):
            shown = ",".join(str(v) for v in default) or "(empty)"
        else:
            shown = str(default)
        rows.append((kebab, type_name(hints.get(field.name, str)), shown))
    return rows


def listing() -> str:
    """The text `--list-passes` prints."""
    lines = ["Ember passes (in a pipeline: -p 'builtin.module(NAME{option=value ...})'):"]
    for name in sorted(registry.PASSES):
        cls = registry.pass_class(name)
        nests = " [nests under func.func]" if getattr(cls, "per_function", False) else ""
        lines.append(f"  {name:<{_WIDTH - 2}}{summary(cls)}{nests}")
        for kebab, kind, default in options(cls):
            lines.append(f"      {'--' + kebab + '=<' + kind + '>':<{_WIDTH - 6}}"
                         f"default: {default}")
    lines.append("")
    lines.append("Named pipelines (usable wherever a pass name is):")
    for name in sorted(registry.PIPELINES):
        lines.append(f"  {name:<{_WIDTH - 2}}{registry.PIPELINES[name]}")
    lines.append("")
    lines.append("Upstream MLIR passes are accepted too, with their options "
                 "(canonicalize{max-iterations=2}, cse, one-shot-bufferize, ...): "
                 "MLIR's pass documentation and `mlir-opt --help` list them.")
    return "\n".join(lines) + "\n"

