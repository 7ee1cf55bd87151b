"""Textual pass pipelines: MLIR's syntax, parsed into a tree of ember passes, upstream
passes and nested op pipelines.

    builtin.module(func.func(ember-canonicalize,ember-cse),canonicalize,ember-inline)

A name is an ember pass (`passes/registry.py`, with `{opt=value ...}` options), a named
pipeline (`ember-simplify`), or an upstream MLIR pass, checked against MLIR's registry
now so a typo fails before anything runs. `anchor(...)` nests a pipeline on the ops of
that name directly inside (as MLIR's `func.func(...)`); an ember pass may nest under
`func.func` when it works function by function (`Pass.per_function`). pipeline.py runs
the tree inside MLIR's PassManager.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Union

from mlir import ir, passmanager

from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.parsing import split_top_level
from ember.passes import registry
from ember.passes.base import Pass, list_element


class PipelineError(EmberError, ValueError):
    """A pipeline string that cannot be parsed or names an unknown pass or option."""


@dataclasses.dataclass
class Upstream:
    """Upstream MLIR pipeline elements, as text (`canonicalize,cse`, `func.func(cse)`)."""
    text: str


@dataclasses.dataclass
class Nest:
    """A pipeline run on each op named `anchor` directly inside the current op."""
    anchor: str
    steps: list


Step = Union[Pass, Upstream, Nest]
FUNCTION = "func.func"


def parse(text: str) -> list[Step]:
    """The steps of a textual pipeline (an outer `builtin.module(...)` is optional);
    PipelineError names the bad token."""
    inner = text.strip()
    if inner.startswith("builtin.module(") and inner.endswith(")"):
        inner = inner[len("builtin.module("):-1]
    return _steps(inner, text, anchor="builtin.module")


def _steps(inner: str, text: str, anchor: str) -> list[Step]:
    try:
        elements = split_top_level(inner, "({", ")}")
    except ValueError as e:  # (its offset counts in `inner`, which it names)
        where = "" if inner == text else f" of '{inner}'"
        raise PipelineError(f"{e}{where} in pipeline '{text}'") from None
    steps: list[Step] = []
    for element in elements:
        if not element:
            raise PipelineError(f"empty pass name in pipeline '{text}'")
        name, brace, rest = element.partition("{")
        head, paren, body = element.partition("(")
        if paren and "{" not in head and element.endswith(")"):
            steps.append(_nest(head.strip(), body[:-1], text))
        elif name.strip() in registry.PIPELINES and not brace:
            steps.extend(_steps(registry.PIPELINES[name.strip()], text, anchor))
        elif name.strip() in registry.PASSES:
            if brace and not rest.endswith("}"):
                raise PipelineError(f"malformed options for {name.strip()}: '{element}'")
            step = make_pass(name.strip(), rest[:-1] if brace else "")
            if anchor != "builtin.module" and not type(step).per_function:
                raise PipelineError(
                    f"{step.name} works on a whole module, so it cannot nest under "
                    f"{anchor}(...) in pipeline '{text}'; put it at the top level")
            steps.append(step)
        elif _installed(name.strip(), text):  # an `ember.passes` entry point, now loaded
            steps.extend(_steps(element, text, anchor))
        else:
            _check_upstream(element, text)
            _append_upstream(steps, element)
    return steps


def _installed(name: str, text: str) -> bool:
    try:
        return registry.from_entry_point(name)
    except Exception as e:  # noqa: BLE001 - an installed package's error, reported as ours
        raise PipelineError(f"loading pass '{name}' of pipeline '{text}' from its "
                            f"'{registry.ENTRY_POINT_GROUP}' entry point failed: "
                            f"{type(e).__name__}: {e}") from None


def _nest(anchor: str, inner: str, text: str) -> Step:
    if not _probe_context().is_registered_operation(anchor):  # it would run on nothing
        raise PipelineError(f"'{anchor}' is no operation MLIR knows, so '{anchor}(...)' in "
                            f"pipeline '{text}' would run on nothing; nest under an op the "
                            f"module holds, such as {FUNCTION}(...)")
    steps = _steps(inner, text, anchor)
    if all(isinstance(s, Upstream) for s in steps):  # MLIR nests it by itself
        element = f"{anchor}({','.join(s.text for s in steps)})"
        _check_upstream(element, text)
        return Upstream(element)
    if anchor != FUNCTION:
        raise PipelineError(f"ember passes nest only under {FUNCTION}(...), not {anchor}(...), "
                            f"in pipeline '{text}'")
    return Nest(anchor, steps)


def _append_upstream(steps: list, element: str) -> None:
    if steps and isinstance(steps[-1], Upstream):
        steps[-1].text += "," + element
    else:
        steps.append(Upstream(element))


def spelling(steps: list[Step]) -> str:
    """The textual form of `steps` (what `parse` reads back)."""
    parts = []
    for s in steps:
        if isinstance(s, Upstream):
            parts.append(s.text)
        elif isinstance(s, Nest):
            parts.append(f"{s.anchor}({spelling(s.steps)})")
        else:
            parts.append(s.spelling())
    return ",".join(parts)


def walk(steps: list[Step]):
    """Every step, nested ones included (a nest after what it holds)."""
    for s in steps:
        if isinstance(s, Nest):
            yield from walk(s.steps)
        yield s


def make_pass(name: str, options_text: str = "") -> Pass:
    """Instantiates ember pass `name` with options `"a=1 b=true"`; an option typed
    `tuple[int, ...]` (MLIR's ListOption) takes a comma-separated list: `sizes=4,8`."""
    cls = registry.pass_class(name)
    fields = cls.options()
    items = _option_items(name, options_text)
    hints = typing.get_type_hints(cls) if items else {}  # ~0.2 ms: every em.function parses
    values = {}
    for item in items:
        if "=" not in item:
            raise PipelineError(f"option '{item}' of {name} needs a value: '{item}=...'")
        key, raw = item.split("=", 1)
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":  # MLIR's quoted value
            raw = raw[1:-1]
        if key not in fields:
            known = ", ".join(fields) or "none"
            raise PipelineError(f"{name} has no option '{key}'; its options: {known}")
        values[fields[key].name] = _convert(name, key, fields[key], raw, hints)
    return cls(**values)


def _convert(pass_name: str, option: str, field: dataclasses.Field, raw: str, hints):
    kind = hints.get(field.name, str)
    element = list_element(kind)
    if element is not None:
        items = raw.split(",") if raw else []
        for i, item in enumerate(items):
            if not item:
                raise PipelineError(f"option '{option}' of {pass_name} has an empty element "
                                    f"#{i} in '{raw}'; write the list as a,b,c")
        return tuple(_value(pass_name, f"element #{i} of option '{option}'", element, item)
                     for i, item in enumerate(items))
    return _value(pass_name, f"option '{option}'", kind, raw)


def _option_items(pass_name: str, text: str) -> list[str]:
    """`a=1 b="x y"` -> ['a=1', 'b="x y"']: split at spaces outside quotes."""
    items, current, quote = [], "", None
    for ch in text:
        if quote is None and ch.isspace():
            if current:
                items.append(current)
            current = ""
            continue
        if ch in "\"'":
            quote = None if quote == ch else ch if quote is None else quote
        current += ch
    if quote is not None:
        raise PipelineError(f"unterminated {quote} in the options of {pass_name}: '{text}'")
    return items + ([current] if current else [])


def _value(pass_name: str, what: str, kind, raw: str):
    try:
        if kind is bool:
            if raw.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            return raw.lower() in ("true", "1")
        return kind(raw)
    except ValueError:
        expected = {int: "an integer", float: "a number", bool: "true or false"}.get(
            kind, "a string")
        raise PipelineError(f"{what} of {pass_name} expects {expected}, got '{raw}'") from None


def suggest(name: str) -> str:
    import difflib  # only for a misspelt name
    close = difflib.get_close_matches(name, registry.names() + list(registry.UPSTREAM_HINTS),
                                      n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else (
        "; a pass of your own must be registered first: import the module that registers "
        "it (@register_pass), or with ember-opt, --load-pass-plugin=FILE")


def _check_upstream(element: str, text: str) -> None:
    """PipelineError unless MLIR's registry takes `element`: an unknown pass when its bare
    name does not parse, else what MLIR says of its options."""
    name = element.split("{", 1)[0].split("(", 1)[0].strip()
    nest = "(" in element.split("{", 1)[0]  # `anchor(...)`: its passes were checked
    if not nest and not _parses(name):
        raise PipelineError(f"unknown pass '{name}' in pipeline '{text}'{suggest(name)}")
    error = _parse_error(element)
    if error is not None:
        detail = " ".join(line.strip() for line in error.splitlines() if "error:" in line
                          or "no such option" in line) or error.strip().splitlines()[0]
        raise PipelineError(f"cannot use '{element}' in pipeline '{text}': "
                            f"{detail.split('error: ')[-1]}")


def is_upstream_pass(name: str) -> bool:
    """Whether MLIR's registry has a pass called `name`."""
    return bool(name) and all(c.isalnum() or c in "-_." for c in name) and _parses(name)


def _parses(element: str) -> bool:
    return _parse_error(element) is None


def _parse_error(element: str):
    """What MLIR says of `element` run on a module, or on functions when the pass is
    restricted to them (gpu-map-parallel-loops), or on GPU modules (convert-gpu-to-nvvm);
    None if one takes it."""
    error = None
    for anchor in ("builtin.module({})", "builtin.module(func.func({}))",
                   "builtin.module(gpu.module({}))"):
        try:
            passmanager.PassManager.parse(anchor.format(element), context=_probe_context())
            return None
        except (ValueError, ir.MLIRError, RuntimeError) as e:
            error = error or str(e)
    return error


_probe = None


def _probe_context() -> ir.Context:
    global _probe
    if _probe is None:
        from ember.dialects.ember.irdl import make_context
        _probe = make_context()
    return _probe


def pass_names(text: str) -> list[str]:
    """The pass names in an upstream element list (`a{x=1},func.func(b)` -> a, b)."""
    names = []
    for element in split_top_level(text, "({", ")}"):
        head, paren, body = element.partition("(")
        if paren and "{" not in head:
            names += pass_names(body[:-1])
        else:
            names.append(element.split("{", 1)[0].strip())
    return names


def load_dependent_dialects(context: ir.Context, anchor: str, element: str) -> None:
    """Registers the dialects upstream `element` depends on (NVVM and its translations for
    gpu-module-to-binary, ...) in `context` now, by running it on an empty module. A
    PassManager registers them when it starts; when it starts inside another pass (each
    element of an instrumented run, `_wrapped`; the passes of a Nest), MLIR asserts that
    no dialect is added to a context in use: the first run of such a pass aborted."""
    nested = element if anchor == "builtin.module" else f"{anchor}({element})"
    try:
        with context, ir.Location.unknown():
            passmanager.PassManager.parse(f"builtin.module({nested})").run(
                ir.Module.create().operation)
    except (ValueError, ir.MLIRError, RuntimeError):
        pass  # the element's own run reports what is wrong with it
