"""`em.nest`: tf.nest's functions on nested structures (tuples, lists, dicts, namedtuples,
dataclasses): `flatten`, `pack_sequence_as`, `map_structure`, `is_nested` and
`assert_same_structure`. Dicts flatten in sorted-key order and are packed back in the
template's own key order (tf.nest's `sequence_like`); a composite such as em.TensorArray
is a leaf unless `expand_composites=True`, as in TensorFlow. The code is in
`ember.frontend.nest`; these wrappers give tf.nest's defaults.
"""

from __future__ import annotations

from ember.frontend import nest as _nest
from ember.frontend.nest import assert_same_structure, is_nested


def flatten(structure, expand_composites=False):
    """The leaves of `structure`, depth first.

    Example:
      >>> import ember as em
      >>> em.nest.flatten({"b": (1, 2), "a": [3]})
      [3, 1, 2]
    """
    return _nest.flatten(structure, expand_composites)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """`structure` rebuilt with its leaves replaced, in order, by `flat_sequence`.

    Example:
      >>> import ember as em
      >>> em.nest.pack_sequence_as({"b": 0, "a": 0}, [1, 2])
      {'b': 2, 'a': 1}
    """
    return _nest.pack_sequence_as(structure, list(flat_sequence), expand_composites)


def map_structure(func, *structure, check_types=True, expand_composites=False):
    """`func` applied to the leaves at each place of the structures (which nest alike).

    Example:
      >>> import ember as em
      >>> em.nest.map_structure(lambda a, b: a + b, (1, [2]), (10, [20]))
      (11, [22])
    """
    return _nest.map_structure(func, *structure, check_types=check_types,
                               expand_composites=expand_composites)


__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure",
           "pack_sequence_as"]
