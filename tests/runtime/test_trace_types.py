"""Laws of the trace-type lattice: subtyping is a preorder and supertypes are upper bounds."""

import collections
import dataclasses
import itertools
import re

import numpy as np
import pytest

import ember as em
from ember.frontend.trace_types import (LiteralTraceType, SequenceTraceType, TensorTraceType,
                                       WeakrefTraceType, trace_type_of)

Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class Pair:
    a: object
    b: object


class Thing:
    pass


_thing = Thing()
_variable = em.Variable([1.0, 2.0])

VALUES = [
    em.constant([1.0, 2.0]), em.constant([1.0, 2.0, 3.0]), em.constant([[1, 2]]),
    np.zeros((2,), np.float32), em.constant(1.0),
    em.TensorSpec([None], em.float32), em.TensorSpec(None, em.float32),
    em.TensorSpec([None, 2], em.int32),
    1, 2, 1.0, True, "s", None,
    (1, em.constant([1.0, 2.0])), [1, 2], [2, 1],
    {"a": 1, "b": em.constant(2)}, {"b": em.constant(2), "a": 1},
    Point(1, em.constant([1.0])), Pair(1, em.constant([1.0])),
    _thing, _variable,
]


def _type(value):
    if isinstance(value, em.TensorSpec):
        return TensorTraceType(value.dtype, value.shape.dims)
    return trace_type_of(value)


TYPES = [_type(v) for v in VALUES]


def _id(t) -> str:
    """The type's repr without memory addresses, so every pytest worker collects the same
    ids (pytest-xdist requires it)."""
    return re.sub(r" at 0x[0-9a-f]+", "", repr(t))


@pytest.mark.parametrize("t", TYPES, ids=_id)
def test_subtyping_is_reflexive(t):
    assert t.is_subtype_of(t)
    assert t == t and hash(t) == hash(t)


def test_subtyping_is_transitive():
    for a, b, c in itertools.product(TYPES, repeat=3):
        if a.is_subtype_of(b) and b.is_subtype_of(c):
            assert a.is_subtype_of(c), (a, b, c)


def test_common_supertype_is_an_upper_bound_and_least_among_candidates():
    for a, b in itertools.product(TYPES, repeat=2):
        sup = a.most_specific_common_supertype([b])
        if sup is None:
            continue
        assert a.is_subtype_of(sup) and b.is_subtype_of(sup), (a, b, sup)
        for c in TYPES:  # any other upper bound is above `sup`
            if a.is_subtype_of(c) and b.is_subtype_of(c):
                assert sup.is_subtype_of(c), (a, b, sup, c)


@pytest.mark.parametrize("small,big", [
    (TensorTraceType(em.float32, (2,)), TensorTraceType(em.float32, (None,))),
    (TensorTraceType(em.float32, (None,)), TensorTraceType(em.float32, None)),
    (TensorTraceType(em.float32, (2, 3)), TensorTraceType(em.float32, (None, 3))),
])
def test_fixed_dims_are_subtypes_of_unknown_dims(small, big):
    assert small.is_subtype_of(big) and not big.is_subtype_of(small)


@pytest.mark.parametrize("a,b", [
    (TensorTraceType(em.float32, (2,)), TensorTraceType(em.int32, (2,))),
    (TensorTraceType(em.float32, (2,)), TensorTraceType(em.float32, (2, 1))),
    (LiteralTraceType(1), LiteralTraceType(True)),
    (LiteralTraceType(1), LiteralTraceType(1.0)),
])
def test_unrelated_types_are_not_subtypes(a, b):
    assert not a.is_subtype_of(b) and not b.is_subtype_of(a)


def test_tensor_supertype_generalises_differing_dims():
    a, b = TensorTraceType(em.float32, (2, 3)), TensorTraceType(em.float32, (4, 3))
    assert a.most_specific_common_supertype([b]) == TensorTraceType(em.float32, (None, 3))
    c = TensorTraceType(em.float32, (4,))
    assert a.most_specific_common_supertype([c]) == TensorTraceType(em.float32, None)


def test_literals_are_typed_by_value():
    assert trace_type_of(3) == LiteralTraceType(3) != trace_type_of(4)


def test_lists_are_ordered_and_dicts_are_not():
    assert trace_type_of([1, 2]) != trace_type_of([2, 1])
    assert trace_type_of({1: 2, 3: 4}) == trace_type_of({3: 4, 1: 2})


def test_numpy_arrays_type_like_tensors():
    assert trace_type_of(np.zeros((2,), np.int32)) == trace_type_of(em.constant([1, 2]))


def test_namedtuples_and_dataclasses_type_by_fields():
    t = trace_type_of(Point(1, 2))
    assert isinstance(t, SequenceTraceType) and t.names == ("x", "y")
    assert trace_type_of(Pair(1, 2)) == trace_type_of(Pair(1, 2)) != trace_type_of(Pair(1, 3))


def test_weakref_types_stop_matching_when_the_object_is_gone():
    a = Thing()
    t = trace_type_of(a)
    assert isinstance(t, WeakrefTraceType) and t == trace_type_of(a)
    del a
    assert t != trace_type_of(Thing())


def test_tracing_type_protocol_is_used():
    class Box:
        def __tracing_type__(self, context):
            return LiteralTraceType("box")
    assert trace_type_of(Box()) == LiteralTraceType("box")


def test_tracing_type_protocol_must_return_a_trace_type():
    class Bad:
        def __tracing_type__(self, context):
            return 3
    with pytest.raises(TypeError, match="expected an em.types.TraceType"):
        trace_type_of(Bad())
