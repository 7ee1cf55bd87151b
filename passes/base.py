"""The pass protocol: a frozen dataclass with a kebab-case `name`, typed options and `run`.

    @dataclasses.dataclass(frozen=True)
    class MyPass(Pass):
        name: ClassVar[str] = "my-pass"
        threshold: int = 4            # an option: `my-pass{threshold=8}`

        def run(self, module: ir.Module, stats: Statistics) -> None:
            ...                       # rewrite the module in place; count with stats.add

Passes walk and rewrite the MLIR module through the bindings, in place. Pipelines run them
inside MLIR's PassManager (pipeline.py), which verifies after each pass (when asked), times
it and prints the IR; the pipeline collects each pass's statistics.
"""

from __future__ import annotations

import collections
import dataclasses
import typing
from typing import ClassVar

from mlir import ir

from ember.passes import safe_erase  # noqa: F401  (a used op's erase raises)


class Statistics:
    """Named counters a pass fills in (`folded`, `hoisted`, `erased`, ...)."""

    def __init__(self, pass_name: str):
        self.pass_name = pass_name
        self.counts: collections.Counter = collections.Counter()

    def add(self, what: str, n: int = 1) -> None:
        self.counts[what] += n

    def __getitem__(self, what: str) -> int:
        return self.counts[what]

    def as_dict(self) -> dict:
        return dict(self.counts)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
        return f"{self.pass_name}({inner})"


OPTION_TYPES = (bool, int, float, str)


def check_options(cls) -> None:
    """TypeError unless `cls` is a dataclass whose fields (its options) are typed bool, int,
    float, str or tuple[T, ...] of those, the types a textual pipeline can spell."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"pass class {cls.__name__} must be a dataclass "
                        "(@dataclasses.dataclass(frozen=True)): its fields are its options")
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        kind = hints.get(field.name, str)
        if (list_element(kind) or kind) not in OPTION_TYPES:
            raise TypeError(
                f"option '{field.name}' of pass class {cls.__name__} has type {kind}; an option "
                "is a bool, int, float or str, or a tuple[T, ...] of one (give it a default "
                "instead of making it Optional)")


def list_element(kind):
    """The element type of a list option's type `tuple[T, ...]`, else None."""
    args = typing.get_args(kind)
    if typing.get_origin(kind) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    return None


@dataclasses.dataclass(frozen=True)
class Pass:
    """Base of ember passes; subclasses are frozen dataclasses whose fields are options."""

    name: ClassVar[str] = ""
    # run() takes a func.func as well as a module (it works function by function, through
    # ir_utils.functions), so the pass may nest under `func.func(...)` in a pipeline
    per_function: ClassVar[bool] = False

    def run(self, module: ir.Module, stats: Statistics) -> None:
        raise TypeError(f"{type(self).__name__} does not implement run()")

    def apply(self, module: ir.Module) -> Statistics:
        """Runs the pass on `module` in place and returns its statistics."""
        stats = Statistics(self.name)
        self.run(module, stats)
        return stats

    @classmethod
    def options(cls) -> dict[str, dataclasses.Field]:
        """The pass's options by their kebab-case spelling."""
        return {f.name.replace("_", "-"): f for f in dataclasses.fields(cls)}

    def spelling(self) -> str:
        """The textual-pipeline spelling of this pass with its non-default options."""
        parts = []
        for kebab, field in self.options().items():
            value = getattr(self, field.name)
            if value != field.default:
                shown = str(value).lower() if isinstance(value, bool) else value
                if isinstance(value, tuple):  # a list option: `sizes=4,8`
                    shown = ",".join(str(v).lower() if isinstance(v, bool) else str(v)
                                     for v in value)
                if isinstance(value, str) and (not value or any(
                        c.isspace() or c in "{}," for c in value)):
                    shown = f'"{value}"'  # quoted, as MLIR's pass options are
                parts.append(f"{kebab}={shown}")
        return self.name + (f"{{{' '.join(parts)}}}" if parts else "")
