"""What a trace keeps of the values it was called with and returns: templates of the Python
arguments (objects traced by identity held weakly, so the trace does not keep them alive),
whether a later call's Python value may stand for a traced one, the result placeholders of
the outputs, and how structures of symbolic tensors are shown in signatures.
"""

from __future__ import annotations

import weakref

import numpy as np

from ember.frontend import nest
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.trace_types import WeakrefTraceType, literal_key, trace_type_of
from ember.frontend.tracing import SymbolicTensor
from ember.frontend.variables import Variable


class WeakValue:
    """A Python argument the trace is keyed on by weak reference (any object without a
    trace type of its own): the trace must not keep it alive, or the trace could never be
    dropped when the object goes (Function drops it then)."""

    __slots__ = ("ref", "kind")

    def __init__(self, obj):
        self.ref = weakref.ref(obj)
        self.kind = type(obj).__name__


class _Deleted:
    """Stands for a traced-with object that has since been garbage-collected."""

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self) -> str:
        return f"<deleted {self.kind} object>"


def hold_weakly(template):
    def weaken(leaf):
        if isinstance(leaf, Tensor):
            return leaf
        try:
            ttype = trace_type_of(leaf)
        except Exception:
            return leaf
        return WeakValue(leaf) if isinstance(ttype, WeakrefTraceType) and ttype.weak \
            else leaf
    try:
        return nest.map_structure(weaken, template)
    except Exception:  # a container that cannot be rebuilt: keep it as it is
        return template


def live(template):
    def strong(leaf):
        if type(leaf) is not WeakValue:
            return leaf
        obj = leaf.ref()
        return _Deleted(leaf.kind) if obj is None else obj
    return nest.map_structure(strong, template)


class _Result(int):
    """Marks an output leaf that is the i-th function result (not a Python constant)."""


def result_index(i: int) -> _Result:
    return _Result(i)


_TENSOR_LIKE = (bool, int, float, str, bytes, np.ndarray, np.generic)


def output_leaf(leaf):
    """A returned value as the function gives it back: variables are read and Python
    numbers, strings and numpy values become tensors, as tf.function returns them
    (`return 1 + foo` gives `<ember.Tensor: shape=(), dtype=int32, numpy=2>`); None and
    other objects are returned as they are."""
    if isinstance(leaf, Variable):
        return leaf.read_value()
    if isinstance(leaf, _TENSOR_LIKE):
        return convert_to_tensor(leaf)
    return leaf


def is_result(leaf) -> bool:
    return type(leaf) is _Result


_BIT_EXACT = (float, complex)


def same_python_value(expected, value) -> bool:
    """Whether `value` may stand where the trace saw the Python value `expected`: the same
    value, or one whose trace type is a subtype of the traced one (a custom
    `__tracing_type__` can make different objects interchangeable)."""
    if expected is value:
        return True
    if type(expected) in _BIT_EXACT or type(value) in _BIT_EXACT:  # -0.0 != 0.0, nan == nan
        return literal_key(expected) == literal_key(value)
    try:  # (a Variable's `==` is elementwise: two holding equal values are not the same)
        if type(expected) is type(value) and not isinstance(expected, (Variable, Tensor)) \
                and bool(expected == value):
            return True
    except Exception:
        pass
    try:
        return trace_type_of(value).is_subtype_of(trace_type_of(expected))
    except Exception:
        return False


def spec_of(leaf, name: str):
    if isinstance(leaf, SymbolicTensor):
        return TensorSpec(leaf.shape, leaf.dtype, name=leaf._name if leaf._name else name)
    return leaf


def describe(structure) -> str:
    if isinstance(structure, SymbolicTensor):
        shape = structure.shape
        text = "<unknown>" if shape.rank is None else str(shape)
        return f"{structure.dtype.name} Tensor, shape={text}"
    kids = nest.flatten(structure)
    if len(kids) == 1 and kids[0] is structure:  # a leaf (`==` would compare a Variable's value)
        return repr(structure)
    return repr(nest.map_structure(lambda leaf: _Described(describe(leaf)), structure))


class _Described:
    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"<{self.text}>"
