"""Runs a program three ways, for the tests of control flow, variables and tracing: eagerly
on em.Tensors, traced and run on the reference interpreter (the trace's own graph:
`jit_compile=False`), and traced and compiled (a fallback to the interpreter is an error).
`STRUCTURES` builds the same values as a tuple, a list, a dict and a namedtuple."""

import collections

import numpy as np

import ember as em
from ember.frontend import nest

Pair = collections.namedtuple("Pair", "a b")

STRUCTURES = {
    "tuple": lambda a, b: (a, b),
    "list": lambda a, b: [a, b],
    "dict": lambda a, b: {"a": a, "b": b},
    "namedtuple": Pair,
}


def parts(structure):
    """The two values of a STRUCTURES value, whatever its kind."""
    return (structure["a"], structure["b"]) if isinstance(structure, dict) else tuple(structure)


def run_three_ways(program, *args):
    """[eager, traced (interpreter), compiled] results of `program(*args)`, each with the
    structure it returned; numpy arrays and scalars in `args` (nested too) become em.Tensors
    for the eager run."""
    def tensor(leaf):
        return em.constant(leaf) if isinstance(leaf, (np.ndarray, np.generic)) else leaf
    eager = program(*[nest.map_structure(tensor, a) for a in args])
    traced = em.function(program, jit_compile=False)(*args)
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        compiled = em.function(program)(*args)
    finally:
        em.config.set_fallback(previous)
    return [eager, traced, compiled]


def assert_same(results):
    """All results have the first one's structure (kinds included) and values."""
    first = results[0]
    for other in results[1:]:
        assert type(other) is type(first)
        assert nest.structure(other) == nest.structure(first)
        for x, y in zip(nest.flatten(first), nest.flatten(other)):
            assert type(x) is type(y) or isinstance(y, em.Tensor)
            np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
