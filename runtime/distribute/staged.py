"""Distributed values and input inside `em.function` (tf.distribute in tf.function).

- A `PerReplica` argument or result is a container of its replicas' values (a trace type
  per replica, `PerReplicaTraceType`): a function returning `strategy.run(...)` returns a
  PerReplica, and one taking a step of a distributed dataset takes one.
- A `DistributedDataset` or `DistributedIterator` passed to an em.function is traced by its
  element_spec and number of replicas (`DistributedTraceType`): equal specs share a trace.
  Inside, it is an int64 handle (a parameter) naming the object to host calls, as
  runtime/data/staged.py does for em.data (whose handles and host-call helpers it uses):
    - `for x in dist_dataset:` is one loop in the IR (frontend/autograph/iterator_loops.py,
      the `__ember_staged_iter__` protocol) whose element is a step: a PerReplica of the
      replicas' pieces for each component;
    - `next(iterator)` / `iterator.get_next()` pulls one global step (OutOfRangeError at
      the end, when the function runs), `get_next_as_optional()` an optional of it.
  A step is pulled from the eager DistributedIterator by one host call returning every
  local replica's leaves (replica by replica), so the empty batches of a partial step and
  the end of the input are exactly as eagerly. The leaves have the per-replica spec's types
  (`?` for an open dim), a known rank: the host call compiles.
"""

from __future__ import annotations

import itertools
import threading

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend.effects import emit_host_call
from ember.frontend.shape import TensorSpec
from ember.frontend.trace_types import (PlaceholderContext, TensorTraceType, TraceType,
                                        trace_type_of)
from ember.frontend.tracing import SymbolicTensor, current_graph

from ember.runtime.data import structure
from ember.runtime.data.host_bridge import find, handle_of, layout
from ember.runtime.data.iterator import OutOfRangeError
from ember.runtime.data.staged import StagedIteratorProtocol, StagedOptional
from ember.runtime.distribute.values import PerReplica, PerReplicaSpec

_sites = itertools.count(1)
_HANDLE = TensorTraceType(dtypes.int64, ())
_made = threading.local()  # .slots: call site -> the DistributedIterator a function made


class PerReplicaTraceType(TraceType):
    """A PerReplica value by the trace types of its values, in replica order."""

    def __init__(self, components: tuple):
        self.components = tuple(components)

    @classmethod
    def of(cls, value: PerReplica, context) -> "PerReplicaTraceType":
        return cls(tuple(trace_type_of(v, context) for v in value.values))

    @classmethod
    def of_specs(cls, specs, context) -> "PerReplicaTraceType":
        """Of a PerReplicaSpec (an input_signature): its TensorSpecs as tensors."""
        return cls(tuple(TensorTraceType(s.dtype, s.shape.dims) if isinstance(s, TensorSpec)
                         else trace_type_of(s, context) for s in specs))

    def is_subtype_of(self, other) -> bool:
        return isinstance(other, PerReplicaTraceType) and \
            len(other.components) == len(self.components) and \
            all(a.is_subtype_of(b) for a, b in zip(self.components, other.components))

    def most_specific_common_supertype(self, others):
        if not all(isinstance(o, PerReplicaTraceType) and
                   len(o.components) == len(self.components) for o in others):
            return None
        joined = []
        for k, mine in enumerate(self.components):
            join = mine.most_specific_common_supertype([o.components[k] for o in others])
            if join is None:
                return None
            joined.append(join)
        return PerReplicaTraceType(tuple(joined))

    def placeholder_value(self, placeholder_context):
        values = placeholder_context.value.values if isinstance(
            placeholder_context.value, PerReplica) else [None] * len(self.components)
        return PerReplica([c.placeholder_value(PlaceholderContext(
            placeholder_context.make_tensor, v)) for c, v in zip(self.components, values)])

    def __eq__(self, other) -> bool:
        return isinstance(other, PerReplicaTraceType) and other.components == self.components

    def __hash__(self) -> int:
        return hash(("PerReplica", self.components))

    def __repr__(self) -> str:
        return f"PerReplica[{', '.join(repr(c) for c in self.components)}]"


def element_spec(piece_spec, replicas: int):
    """A distributed element's spec: per component a PerReplicaSpec (one replica: the
    piece's TensorSpec), as DistributedDataset.element_spec."""
    if replicas == 1:
        return piece_spec
    return structure.map_structure(lambda s: PerReplicaSpec(*[s] * replicas), piece_spec)


class DistributedTraceType(TraceType):
    """A DistributedDataset (`kind` "dataset") or DistributedIterator ("iterator") by its
    per-replica element spec and number of local replicas."""

    def __init__(self, kind: str, piece_spec, replicas: int):
        self.kind, self.piece_spec, self.replicas = kind, piece_spec, replicas
        self.leaves = tuple(TensorTraceType(s.dtype, s.shape.dims)
                            for s in structure.flatten(piece_spec))
        self.layout = layout(piece_spec)

    def _head(self):
        return self.kind, self.layout, self.replicas, len(self.leaves)

    def is_subtype_of(self, other) -> bool:
        return isinstance(other, DistributedTraceType) and self._head() == other._head() \
            and all(a.is_subtype_of(b) for a, b in zip(self.leaves, other.leaves))

    def most_specific_common_supertype(self, others):
        if not all(isinstance(o, DistributedTraceType) and o._head() == self._head()
                   for o in others):
            return None
        joined = []
        for k, leaf in enumerate(self.leaves):
            join = leaf.most_specific_common_supertype([o.leaves[k] for o in others])
            if join is None:
                return None
            joined.append(TensorSpec(join.shape, join.dtype))
        return DistributedTraceType(self.kind, structure.pack_as(self.piece_spec, joined),
                                    self.replicas)

    def _spec(self):
        return structure.pack_as(self.piece_spec, [TensorSpec(t.shape, t.dtype)
                                                   for t in self.leaves])

    def placeholder_value(self, placeholder_context):
        handle = placeholder_context.make_tensor(_HANDLE)
        if self.kind == "dataset":
            return StagedDistributedDataset(handle, self._spec(), self.replicas)
        return StagedDistributedIterator(handle, self._spec(), self.replicas)

    def __eq__(self, other) -> bool:
        return isinstance(other, DistributedTraceType) and self._head() == other._head() \
            and self.leaves == other.leaves

    def __hash__(self) -> int:
        return hash((self._head(), self.leaves))

    def __repr__(self) -> str:
        name = "DistributedDatasetSpec" if self.kind == "dataset" else \
            "DistributedIteratorSpec"
        return f"{name}[{element_spec(self.piece_spec, self.replicas)}]"


def trace_type(obj, kind: str) -> DistributedTraceType:
    """The trace type of an eager DistributedDataset / DistributedIterator."""
    dataset = obj if kind == "dataset" else obj._dataset
    return DistributedTraceType(kind, dataset._piece_spec, dataset._local)


def rebuild(obj, kind: str, parts: list):
    """nest's composite protocol: the staged object for a symbolic handle, the registered
    object for an eager one."""
    part, = parts
    dataset = obj if kind == "dataset" else obj._dataset
    if isinstance(part, SymbolicTensor):
        cls = StagedDistributedDataset if kind == "dataset" else StagedDistributedIterator
        return cls(part, dataset._piece_spec, dataset._local)
    return find(int(part.numpy()), "em.distribute handle")


class StagedDistributedDataset:
    """A DistributedDataset inside a trace (a parameter): iterate it with `for` (one loop
    in the IR) or `iter()`."""

    __ember_kind__ = "DistributedDataset"

    def __init__(self, handle: SymbolicTensor, piece_spec, replicas: int):
        self._handle, self._piece_spec, self._local = handle, piece_spec, replicas

    @property
    def element_spec(self):
        return element_spec(self._piece_spec, self._local)

    def __iter__(self):
        return iterator_over(self)

    def __ember_staged_iter__(self):
        return iterator_over(self)

    def __tracing_type__(self, context):  # passed on to a nested em.function
        return DistributedTraceType("dataset", self._piece_spec, self._local)

    def __ember_components__(self):
        return [self._handle]

    def __ember_rebuild__(self, parts):
        return StagedDistributedDataset(parts[0], self._piece_spec, self._local)

    def __repr__(self) -> str:
        return f"<StagedDistributedDataset element_spec={self.element_spec}>"


def _own(site: int, dataset) -> int:
    """A new DistributedIterator of `dataset` for call site `site` on this thread (it
    replaces the one made there before)."""
    if not hasattr(_made, "slots"):
        _made.slots = {}
    iterator = iter(dataset)
    _made.slots[site] = iterator
    return int(handle_of(iterator).numpy())


def iterator_over(dataset) -> "StagedDistributedIterator":
    """`iter(dist_dataset)` inside a trace: the host call making a fresh iterator (of the
    function's parameter, or of a dataset the function captures)."""
    site = next(_sites)
    if isinstance(dataset, StagedDistributedDataset):
        def make(handle):
            return (np.asarray(_own(site, find(int(handle), "MakeIterator")), np.int64),)
        args = [dataset._handle]
    else:
        def make():
            return (np.asarray(_own(site, dataset), np.int64),)
        args = []
    token, = emit_host_call(current_graph(), make, args, [dtypes.int64], "dist_iter", [()])
    return StagedDistributedIterator(token, dataset._piece_spec, dataset._local, site=site)


def captured_iterator(iterator) -> "StagedDistributedIterator":
    """An eager DistributedIterator the function uses: the trace pulls from it."""
    dataset = iterator._dataset
    return StagedDistributedIterator(handle_of(iterator), dataset._piece_spec,
                                     dataset._local, keep=iterator)


def _pull(iterator, piece_spec, replicas: int):
    """The next step of `iterator` as arrays, replica by replica, or None at the end."""
    try:
        element = next(iterator)
    except StopIteration:
        return None
    specs = structure.flatten(piece_spec)
    leaves = structure.flatten(element)
    if layout(element) != layout(piece_spec) or len(leaves) != len(specs):
        raise InvalidArgumentError("IteratorGetNext", f"a step of {iterator!r} has structure "
                                   f"{layout(element)}, its element_spec {layout(piece_spec)}")
    arrays = []
    for r in range(replicas):
        for k, (leaf, spec) in enumerate(zip(leaves, specs)):
            value = leaf.values[r] if isinstance(leaf, PerReplica) else leaf
            if value.dtype is not spec.dtype or not spec.shape.is_compatible_with(
                    value.shape):
                raise InvalidArgumentError(
                    "IteratorGetNext", f"component {k} of replica {r}'s piece of a step of "
                    f"{iterator!r} is {value!r}, which does not match its spec {spec}")
            arrays.append(value._numpy_array())
    return tuple(arrays)


class StagedDistributedIterator(StagedIteratorProtocol):
    """A DistributedIterator inside a trace: `next(it)` / `get_next()` (OutOfRangeError when
    the function runs past the end), `get_next_as_optional()`, `for x in it`."""

    __ember_kind__ = "DistributedIterator"
    _what = "a distributed dataset"

    def __init__(self, token: SymbolicTensor, piece_spec, replicas: int, keep=None,
                 site=None):
        self._token, self._piece_spec, self._local = token, piece_spec, replicas
        self._keep, self._site = keep, site  # site: made by the function (a for loop's)

    @property
    def element_spec(self):
        return element_spec(self._piece_spec, self._local)

    def _iterator(self, token):
        return self._keep if self._keep is not None else find(int(token), "IteratorGetNext")

    def get_next(self):
        """The next step; raises em.errors.OutOfRangeError (when the function runs) at the
        end of the input."""
        def host(token):
            step = _pull(self._iterator(token), self._piece_spec, self._local)
            if step is None:
                raise OutOfRangeError()
            return step
        return self._pack(self._emit(host, [], "dist_next"))

    def get_next_as_optional(self) -> StagedOptional:
        """The next step as an optional: `has_value()` is false at the end."""
        def host(token):
            step = _pull(self._iterator(token), self._piece_spec, self._local)
            if step is None:
                return (np.asarray(False),) + self._zeros()
            return (np.asarray(True),) + step
        has, *leaves = self._emit(host, [(dtypes.bool_, ())], "dist_next")
        return StagedOptional(has, self._pack(leaves), self.element_spec)

    def _zeros(self) -> tuple:
        specs = structure.flatten(self._piece_spec) * self._local
        return tuple(np.zeros(() if s.shape.dims is None else
                              tuple(d or 0 for d in s.shape.dims), s.dtype.np_dtype)
                     for s in specs)

    def _emit(self, host, head: list, label: str) -> list:
        specs = structure.flatten(self._piece_spec) * self._local
        return emit_host_call(current_graph(), host, [self._token],
                              [d for d, _ in head] + [s.dtype for s in specs], label,
                              [s for _, s in head] + [s.shape.dims for s in specs])

    def _pack(self, leaves: list):
        """The replicas' leaves (replica by replica) as one step: PerReplica components."""
        count = len(structure.flatten(self._piece_spec))
        if self._local == 1:
            return structure.pack_as(self._piece_spec, leaves)
        return structure.pack_as(self._piece_spec, [
            PerReplica([leaves[r * count + k] for r in range(self._local)])
            for k in range(count)])

    def close(self) -> None:
        """Drops the iterator a `for` loop made, once the loop ends."""
        if self._site is not None:
            site = self._site

            def release(token):
                del token
                getattr(_made, "slots", {}).pop(site, None)
                return ()
            emit_host_call(current_graph(), release, [self._token], [], "dist_release")

    def __tracing_type__(self, context):  # passed on to a nested em.function
        return DistributedTraceType("iterator", self._piece_spec, self._local)

    def __ember_rebuild__(self, parts):
        return StagedDistributedIterator(parts[0], self._piece_spec, self._local)

    def __repr__(self) -> str:
        return f"<StagedDistributedIterator element_spec={self.element_spec}>"
