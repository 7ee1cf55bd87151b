"""Flattening nested Python structures (tuple, list, dict, namedtuple, dataclass) and back.

Like `tf.nest`: dicts flatten in sorted-key order, anything that is not a container is a leaf.
A class may take part as a container (as TensorFlow's composite tensors do) by defining
`__ember_components__()` (its tensors, in order) and `__ember_rebuild__(parts)` (a copy
holding `parts` instead): `em.TensorArray` does, so it can be a loop variable.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _children(value) -> list | None:
    if hasattr(type(value), "__ember_components__"):  # e.g. em.TensorArray
        return list(value.__ember_components__())
    if _is_namedtuple(value) or isinstance(value, (tuple, list)):
        return list(value)
    if isinstance(value, dict):
        return [value[k] for k in sorted(value, key=repr)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [getattr(value, f.name) for f in dataclasses.fields(value)]
    return None


def flatten(structure) -> list:
    """The leaves of `structure`, depth first."""
    kids = _children(structure)
    if kids is None:
        return [structure]
    out = []
    for kid in kids:
        out.extend(flatten(kid))
    return out


def _rebuild(template, parts: list):
    if hasattr(type(template), "__ember_components__"):
        return template.__ember_rebuild__(parts)
    if _is_namedtuple(template):
        return type(template)(*parts)
    if isinstance(template, (tuple, list)):
        return type(template)(parts) if type(template) in (tuple, list) else parts
    if isinstance(template, dict):
        keys = sorted(template, key=repr)
        return type(template)(zip(keys, parts)) if type(template) is dict else dict(
            zip(keys, parts))
    names = [f.name for f in dataclasses.fields(template)]
    return dataclasses.replace(template, **dict(zip(names, parts)))


def pack_sequence_as(structure, leaves: list):
    """Rebuilds `structure` with its leaves replaced, in order, by `leaves`."""
    it = iter(leaves)

    def build(node):
        kids = _children(node)
        if kids is None:
            return next(it)
        return _rebuild(node, [build(k) for k in kids])
    out = build(structure)
    rest = list(it)
    if rest:
        raise ValueError(f"{len(rest)} leaves left over when packing into {structure!r}")
    return out


def map_structure(fn: Callable[[Any], Any], structure):
    """Applies `fn` to every leaf."""
    return pack_sequence_as(structure, [fn(leaf) for leaf in flatten(structure)])


def structure(value):
    """A hashable description of the nesting of `value` (leaves are '*')."""
    kids = _children(value)
    if kids is None:
        return "*"
    names = ()
    if isinstance(value, dict):
        names = tuple(sorted((repr(k) for k in value)))
    elif dataclasses.is_dataclass(value):
        names = tuple(f.name for f in dataclasses.fields(value))
    # a composite may name its kind (`__ember_kind__`): a dataset argument matches the
    # staged dataset it was traced as
    kind = getattr(type(value), "__ember_kind__", None) or type(value).__name__
    return (kind, names, tuple(structure(k) for k in kids))
