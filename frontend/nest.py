"""Flattening nested Python structures (tuple, list, dict, namedtuple, dataclass) and back.

Like `tf.nest`: dicts flatten in sorted-key order and are rebuilt in their own key order;
anything that is not a container is a leaf.
A class may take part as a container (as TensorFlow's composite tensors do) by defining
`__ember_components__()` (its tensors, in order) and `__ember_rebuild__(parts)` (a copy
holding `parts` instead): `em.TensorArray` does, so it can be a loop variable.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable


def _is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _children(value, composites: bool = True) -> list | None:
    if hasattr(type(value), "__ember_components__"):  # e.g. em.TensorArray
        return list(value.__ember_components__()) if composites else None
    if _is_namedtuple(value) or isinstance(value, (tuple, list)):
        return list(value)
    if isinstance(value, dict):
        return [value[k] for k in sorted(value, key=repr)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [getattr(value, f.name) for f in dataclasses.fields(value)]
    return None


def flatten(structure, expand_composites: bool = True) -> list:
    """The leaves of `structure`, depth first (a composite such as em.TensorArray is a leaf
    unless `expand_composites`)."""
    kids = _children(structure, expand_composites)
    if kids is None:
        return [structure]
    out = []
    for kid in kids:
        out.extend(flatten(kid, expand_composites))
    return out


def is_nested(value) -> bool:
    """Whether `value` is a container nest flattens (not a leaf)."""
    return _children(value, False) is not None


def assert_same_structure(nest1, nest2, check_types: bool = True,
                          expand_composites: bool = False) -> None:
    """ValueError unless `nest1` and `nest2` nest alike (the same containers holding as many
    items, dicts the same keys); TypeError where `check_types` and two containers at the
    same place differ in type (a list and a tuple), as tf.nest's."""
    def walk(a, b, where: str):
        ka, kb = _children(a, expand_composites), _children(b, expand_composites)
        if ka is None and kb is None:
            return
        if ka is None or kb is None or len(ka) != len(kb) or (
                isinstance(a, dict) and isinstance(b, dict) and
                sorted(map(repr, a)) != sorted(map(repr, b))):
            raise ValueError(f"The two structures don't have the same nested structure "
                             f"(at {where}).\n\nFirst structure: {nest1!r}\n\nSecond "
                             f"structure: {nest2!r}")
        if check_types and type(a) is not type(b):
            raise TypeError(f"The two structures don't have the same sequence type (at "
                            f"{where}): the first has type {type(a).__name__}, the second "
                            f"{type(b).__name__}")
        for i, (x, y) in enumerate(zip(ka, kb)):
            walk(x, y, f"{where}[{i}]")
    walk(nest1, nest2, "the top")


def _rebuild(template, parts: list):
    if hasattr(type(template), "__ember_components__"):
        return template.__ember_rebuild__(parts)
    if _is_namedtuple(template):
        return type(template)(*parts)
    if isinstance(template, (tuple, list)):
        return type(template)(parts) if type(template) in (tuple, list) else parts
    if isinstance(template, dict):
        return _rebuild_dict(template, parts)
    names = [f.name for f in dataclasses.fields(template)]
    return dataclasses.replace(template, **dict(zip(names, parts)))


def _rebuild_dict(template: dict, parts: list) -> dict:
    """`parts` (in sorted-key order, as `flatten` gives them) keyed as `template`, in the
    template's own key order and type, as tf.nest's `sequence_like`: `{'b': x, 'a': y}`
    comes back as b, a."""
    by_key = dict(zip(sorted(template, key=repr), parts))
    if isinstance(template, collections.defaultdict):
        out = collections.defaultdict(template.default_factory)
    else:
        try:
            out = type(template)()
        except TypeError:  # a dict subclass that needs arguments: a plain dict
            out = {}
    for key in template:
        out[key] = by_key[key]
    return out


def pack_sequence_as(structure, leaves: list, expand_composites: bool = True):
    """Rebuilds `structure` with its leaves replaced, in order, by `leaves`."""
    it = iter(leaves)

    def build(node):
        kids = _children(node, expand_composites)
        if kids is None:
            return next(it)
        return _rebuild(node, [build(k) for k in kids])
    try:
        out = build(structure)
    except StopIteration:
        raise ValueError(f"{len(flatten(structure, expand_composites))} leaves needed to "
                         f"pack into {structure!r}, got {len(leaves)}") from None
    rest = list(it)
    if rest:
        raise ValueError(f"{len(rest)} leaves left over when packing into {structure!r}")
    return out


def map_structure(fn: Callable[..., Any], *structures, check_types: bool = True,
                  expand_composites: bool = True):
    """Applies `fn` to every leaf (with several structures, to the leaves at the same place
    in each, which must nest alike: `assert_same_structure`)."""
    if not structures:
        raise ValueError("map_structure needs at least one structure")
    for other in structures[1:]:
        assert_same_structure(structures[0], other, check_types, expand_composites)
    leaves = [flatten(s, expand_composites) for s in structures]
    return pack_sequence_as(structures[0], [fn(*parts) for parts in zip(*leaves)],
                            expand_composites)


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
