"""Trace types: the lattice `Function` uses to decide whether a trace can serve a call.

As in TensorFlow (tf.types.experimental.TraceType) each argument gets a type:
  - tensors (and numpy arrays) by dtype and shape; a fixed dim is a subtype of an unknown
    dim, a ranked shape a subtype of an unknown rank;
  - variables by identity plus dtype and shape;
  - Python literals (int, float, bool, str, None, ...) by value (`3` is Literal[3], not int),
    floats by bit pattern (`-0.0` is not `0.0`; a NaN is the same NaN);
  - tuples and lists by their element types in order, dicts by key -> type (order-free),
    namedtuples and dataclasses by type and fields;
  - objects with `__tracing_type__(context)` (or TensorFlow's `__tf_tracing_type__`) by
    whatever it returns;
  - anything else by Python equality and hash through a weak reference: once the object
    is gone, its traces can no longer match.
A call is served by the most specific cached trace whose type is a supertype of the call's.
"""

from __future__ import annotations

import abc
import dataclasses
import struct
import weakref
from typing import Any, Optional, Sequence

from ember.dialects.ember import dtypes
from ember.dialects.ember.dtypes import DType


class TracingContext:
    """Passed to `__tracing_type__`; carries nothing users need today (TF compatibility)."""


class PlaceholderContext:
    """Passed to `placeholder_value`: knows how to make symbolic values for the tracer."""

    def __init__(self, make_tensor=None, value=None):
        self.make_tensor = make_tensor
        self.value = value


class TraceType(abc.ABC):
    """Base class of trace types (the protocol of tf.types.experimental.TraceType)."""

    @abc.abstractmethod
    def is_subtype_of(self, other: "TraceType") -> bool:
        """Whether every value of `self` is also a value of `other`."""

    @abc.abstractmethod
    def most_specific_common_supertype(self, others: Sequence["TraceType"]
                                       ) -> Optional["TraceType"]:
        """The least upper bound of self and `others`, or None if there is none."""

    def placeholder_value(self, placeholder_context: PlaceholderContext) -> Any:
        """The value the traced function receives for this argument (default: the argument)."""
        return placeholder_context.value

    @abc.abstractmethod
    def __eq__(self, other) -> bool: ...

    @abc.abstractmethod
    def __hash__(self) -> int: ...


def _all_same(first: TraceType, others: Sequence[TraceType]) -> Optional[TraceType]:
    return first if all(first == o for o in others) else None


@dataclasses.dataclass(frozen=True, eq=True)
class TensorTraceType(TraceType):
    """A tensor of `dtype` and `shape` (dims None = unknown; shape None = unknown rank)."""

    dtype: DType
    shape: Optional[tuple]

    def is_subtype_of(self, other) -> bool:
        if not isinstance(other, TensorTraceType) or other.dtype is not self.dtype:
            return False
        if other.shape is None:
            return True
        if self.shape is None or len(self.shape) != len(other.shape):
            return False
        return all(o is None or s == o for s, o in zip(self.shape, other.shape))

    def most_specific_common_supertype(self, others):
        if not all(isinstance(o, TensorTraceType) and o.dtype is self.dtype for o in others):
            return None
        shapes = [self.shape] + [o.shape for o in others]
        if any(s is None for s in shapes) or len({len(s) for s in shapes}) != 1:
            return TensorTraceType(self.dtype, None)
        dims = tuple(d[0] if len(set(d)) == 1 else None for d in zip(*shapes))
        return TensorTraceType(self.dtype, dims)

    def placeholder_value(self, placeholder_context):
        return placeholder_context.make_tensor(self)

    def __repr__(self) -> str:
        shape = "?" if self.shape is None else list(self.shape)
        return f"Tensor[{self.dtype.name}, {shape}]"


@dataclasses.dataclass(frozen=True, eq=True)
class VariableTraceType(TraceType):
    """A specific variable: identity plus dtype and shape."""

    handle_id: int
    dtype: DType
    shape: tuple

    def is_subtype_of(self, other) -> bool:
        return self == other

    def most_specific_common_supertype(self, others):
        return _all_same(self, others)

    def __repr__(self) -> str:
        return f"Variable[#{self.handle_id}, {self.dtype.name}, {list(self.shape)}]"


def literal_key(value) -> Any:
    """A hashable key that tells Python literals apart exactly: the type, and for floats
    and complex numbers the bit pattern, so `-0.0` is not `0.0` and every NaN equals itself
    (`==` says `-0.0 == 0.0` and `nan != nan`). Trace types, the dispatch fast path and
    `ConcreteFunction`'s argument check all compare literals with it."""
    kind = type(value)
    if kind is float:
        return kind, float_bits(value)
    if kind is complex:
        return kind, float_bits(value.real), float_bits(value.imag)
    return kind, value


float_bits = struct.Struct("<d").pack  # a Python float's 8 bytes


@dataclasses.dataclass(frozen=True)
class LiteralTraceType(TraceType):
    """A Python literal, by value and exact type (`1`, `1.0` and `True` differ); floats by
    bit pattern (`0.0` and `-0.0` differ, a NaN matches the same NaN)."""

    value: Any

    def __eq__(self, other) -> bool:
        return (isinstance(other, LiteralTraceType)
                and literal_key(other.value) == literal_key(self.value))

    def __hash__(self) -> int:
        return hash(literal_key(self.value))

    def is_subtype_of(self, other) -> bool:
        return self == other

    def most_specific_common_supertype(self, others):
        return _all_same(self, others)

    def __repr__(self) -> str:
        return f"Literal[{self.value!r}]"


@dataclasses.dataclass(frozen=True, eq=True)
class SequenceTraceType(TraceType):
    """A tuple or list (`kind`), namedtuple or dataclass (`kind` is the class), by elements."""

    kind: Any
    components: tuple
    names: tuple = ()  # field names of namedtuples/dataclasses, keys of dicts

    def is_subtype_of(self, other) -> bool:
        return (isinstance(other, SequenceTraceType) and other.kind is self.kind
                and other.names == self.names
                and len(other.components) == len(self.components)
                and all(a.is_subtype_of(b) for a, b in zip(self.components, other.components)))

    def most_specific_common_supertype(self, others):
        if not all(isinstance(o, SequenceTraceType) and o.kind is self.kind
                   and o.names == self.names and len(o.components) == len(self.components)
                   for o in others):
            return None
        parts = []
        for i, mine in enumerate(self.components):
            sup = mine.most_specific_common_supertype([o.components[i] for o in others])
            if sup is None:
                return None
            parts.append(sup)
        return SequenceTraceType(self.kind, tuple(parts), self.names)

    def placeholder_value(self, placeholder_context):
        values = _component_values(placeholder_context.value, self)
        placeholders = [c.placeholder_value(PlaceholderContext(placeholder_context.make_tensor, v))
                        for c, v in zip(self.components, values)]
        if all(p is v for p, v in zip(placeholders, values)):
            return placeholder_context.value  # no tensor inside: the value itself, not a copy
        return _rebuild(self, placeholders, placeholder_context.value)

    def __repr__(self) -> str:
        name = getattr(self.kind, "__name__", str(self.kind))
        if self.names:
            inner = ", ".join(f"{k}={c!r}" for k, c in zip(self.names, self.components))
        else:
            inner = ", ".join(repr(c) for c in self.components)
        return f"{name}[{inner}]"


def _component_values(value, ttype: SequenceTraceType) -> list:
    if ttype.kind is dict:
        return [value[k] for k in _dict_keys_from_names(value, ttype.names)]
    if dataclasses.is_dataclass(ttype.kind):
        return [getattr(value, f) for f in ttype.names]
    return list(value)


def _dict_keys_from_names(value: dict, names: tuple) -> list:
    by_key = {_key_id(k): k for k in value}
    return [by_key[n] for n in names]


def _key_id(key) -> Any:
    exact = literal_key(key)[1:]  # float keys by bits: {-0.0: v} is not {0.0: v}
    return (type(key).__name__, key) if exact[0] is key else (type(key).__name__, *exact)


def _rebuild(ttype: SequenceTraceType, parts: list, original):
    kind = ttype.kind
    if kind is dict:
        keys = _dict_keys_from_names(original, ttype.names)
        return dict(zip(keys, parts))
    if kind in (tuple, list):
        return kind(parts)
    if dataclasses.is_dataclass(kind):
        clone = dataclasses.replace(original, **dict(zip(ttype.names, parts)))
        return clone
    return kind(*parts)  # namedtuple


class WeakrefTraceType(TraceType):
    """Any other object: Python equality and hash, through a weak reference."""

    def __init__(self, obj):
        self.weak = True  # False: the object cannot be weakly referenced and is held
        try:
            self._ref = weakref.ref(obj)
        except TypeError:  # not weak-referenceable (e.g. a bare object()): hold it
            self._ref = lambda obj=obj: obj
            self.weak = False
        self._type = type(obj)
        self._id = id(obj)
        try:
            self._hash = hash((self._type, obj))
        except TypeError:
            self._hash = hash((self._type, id(obj)))

    @property
    def alive(self) -> bool:
        return self._ref() is not None

    def referent(self):
        """The object, or None once it is gone."""
        return self._ref()

    def __eq__(self, other) -> bool:
        if not isinstance(other, WeakrefTraceType) or other._type is not self._type:
            return False
        mine, theirs = self._ref(), other._ref()
        if mine is None or theirs is None:
            return False
        try:
            return bool(mine is theirs or mine == theirs)
        except Exception:  # an __eq__ that raises or returns an array: not equal
            return False

    def __hash__(self) -> int:
        return self._hash

    def is_subtype_of(self, other) -> bool:
        return self == other

    def most_specific_common_supertype(self, others):
        return _all_same(self, others)

    def __repr__(self) -> str:
        # the address tells two unequal instances apart in explain_retrace()
        where = f" at {self._id:#x}" + ("" if self.alive else ", deleted")
        return f"Object[{self._type.__name__}{where}]"


_LITERALS = (int, float, bool, str, bytes, complex, type(None), type(Ellipsis))


def weak_referents(ttype: TraceType) -> list:
    """The live objects `ttype` refers to by weak reference (a trace keyed on one of them
    can never be hit again once it is gone)."""
    if isinstance(ttype, WeakrefTraceType):
        obj = ttype.referent() if ttype.weak else None
        return [] if obj is None else [obj]
    if isinstance(ttype, SequenceTraceType):
        return [obj for part in ttype.components for obj in weak_referents(part)]
    return []


def trace_type_of(value, context: TracingContext | None = None) -> TraceType:
    """The trace type of one argument value (see the module docstring for the rules)."""
    context = context or TracingContext()
    protocol = getattr(value, "__tracing_type__", None) or getattr(value, "__tf_tracing_type__",
                                                                   None)
    if protocol is not None and not isinstance(value, type):
        result = protocol(context)
        if not isinstance(result, TraceType):
            raise TypeError(f"{type(value).__name__}.__tracing_type__ returned "
                            f"{type(result).__name__}, expected an em.types.TraceType")
        return result
    hook = getattr(value, "_ember_trace_type", None)
    if hook is not None and not isinstance(value, type):
        return hook()
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None and hasattr(value, "__array__") \
            and not isinstance(value, type):
        return TensorTraceType(dtypes.as_dtype(dtype), tuple(shape))
    if isinstance(value, _LITERALS):
        return LiteralTraceType(value)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return SequenceTraceType(type(value), tuple(trace_type_of(v, context) for v in value),
                                 tuple(type(value)._fields))
    if isinstance(value, (tuple, list)):
        return SequenceTraceType(type(value) if type(value) in (tuple, list) else tuple,
                                 tuple(trace_type_of(v, context) for v in value))
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: repr(_key_id(k)))
        return SequenceTraceType(dict, tuple(trace_type_of(value[k], context) for k in keys),
                                 tuple(_key_id(k) for k in keys))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = tuple(f.name for f in dataclasses.fields(value))
        return SequenceTraceType(type(value), tuple(trace_type_of(getattr(value, f), context)
                                                    for f in fields), fields)
    return WeakrefTraceType(value)
