"""Datasets and iterators inside `em.function` (tf.data inside tf.function).

A dataset passed to an em.function is traced by its element_spec (`DatasetTraceType`, TF's
DatasetSpec): datasets with equal specs share one trace, and inside the trace the argument
is a `StagedDataset`, an int64 handle (a parameter of the function) plus the spec. An
`em.data.Iterator` passed in is traced the same way and keeps its position across calls.

Elements reach the trace through host calls (`func.call`s of private declarations bound to
Python, as em.py_function's; frontend/effects.py):
  - `__dataset_iter_N(handle) -> token`: a new iterator of the dataset (for a dataset the
    function captures, no operand: the callback holds it);
  - `__dataset_next_N(token) -> (has_value, leaves...)` for `get_next_as_optional()`, or
    `-> leaves` raising `em.errors.OutOfRangeError` at the end for `get_next()`;
  - `__dataset_release_N(token)` after a `for` loop over a dataset.
The leaves have the element_spec's types (`?` for a dim the spec leaves open: a partial last
batch), and each element is checked against the spec before it enters the function. A
`for` loop pulls once per iteration inside one `scf.while` (frontend/autograph/
iterator_loops.py), so the IR is the same size whatever the data size.

Why host calls and not a compiled iterator op: the pipeline itself is Python (map functions,
generators, shuffling, prefetch threads), so every element is made by the host anyway; the
loop around the pull is compiled code calling back into Python for each pull
(backends/cpu/host_calls.py; an element_spec of unknown rank runs on the interpreter).

The host side (handles, the iterators a function makes and their lifetime, the checked
pull) is runtime/data/host_bridge.py.
"""

from __future__ import annotations

import itertools

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend.autodiff import recording
from ember.frontend.control_flow import ControlFlowError
from ember.frontend.effects import emit_host_call
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor
from ember.frontend.trace_types import TensorTraceType, TraceType
from ember.frontend.tracing import SymbolicTensor, current_graph

from ember.runtime.data import structure
from ember.runtime.data.host_bridge import (find, handle_of, layout, own, pull, release,
                                            zeros)
from ember.runtime.data.iterator import OutOfRangeError

_numbers = itertools.count(1)  # call sites
_HANDLE = TensorTraceType(dtypes.int64, ())


# -- trace types ------------------------------------------------------------------------------

class DatasetTraceType(TraceType):
    """A dataset (`kind` "dataset") or iterator ("iterator") by its element_spec: each
    component by dtype and shape, as tensors (a fixed dim is a subtype of an open one)."""

    def __init__(self, kind: str, spec):
        self.kind, self.spec = kind, spec
        leaves = structure.flatten(spec)
        for leaf in leaves:
            if not isinstance(leaf, TensorSpec):
                raise TypeError(f"an em.data {kind}'s element_spec must hold TensorSpecs, "
                                f"got {leaf!r}")
        self.leaves = tuple(TensorTraceType(s.dtype, s.shape.dims) for s in leaves)
        self.layout = layout(spec)

    def is_subtype_of(self, other) -> bool:
        return isinstance(other, DatasetTraceType) and self._key()[:2] == other._key()[:2] \
            and all(a.is_subtype_of(b) for a, b in zip(self.leaves, other.leaves))

    def most_specific_common_supertype(self, others):
        if not all(isinstance(o, DatasetTraceType) and o._key()[:2] == self._key()[:2]
                   for o in others):
            return None
        joined = []
        for k, leaf in enumerate(self.leaves):
            join = leaf.most_specific_common_supertype([o.leaves[k] for o in others])
            if join is None:
                return None
            joined.append(TensorSpec(join.shape, join.dtype))
        return DatasetTraceType(self.kind, structure.pack_as(self.spec, joined))

    def placeholder_value(self, placeholder_context):
        handle = placeholder_context.make_tensor(_HANDLE)
        spec = structure.pack_as(self.spec, [TensorSpec(t.shape, t.dtype)
                                             for t in self.leaves])
        if self.kind == "dataset":
            return StagedDataset(handle, spec)
        return StagedIterator(handle, spec, owned=False)

    def _key(self):
        return self.kind, self.layout, self.leaves

    def __eq__(self, other) -> bool:
        return isinstance(other, DatasetTraceType) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        name = "DatasetSpec" if self.kind == "dataset" else "IteratorSpec"
        return f"{name}[{self.spec}]"


class DatasetSpec:
    """How a dataset (or iterator) parameter shows in a concrete function's signature."""

    def __init__(self, kind: str, element_spec):
        self.kind, self.element_spec = kind, element_spec

    def __repr__(self) -> str:
        name = "DatasetSpec" if self.kind == "dataset" else "IteratorSpec"
        return f"{name}(element_spec={self.element_spec})"


def trace_type(obj, kind: str) -> DatasetTraceType:
    return DatasetTraceType(kind, obj.element_spec)


def captured_iterator(iterator) -> "StagedIterator":
    """An eager `em.data.Iterator` the function uses (not a parameter): the trace pulls
    from it, and keeps it alive."""
    return StagedIterator(handle_of(iterator), iterator.element_spec, owned=False,
                          keep=iterator)


def rebuild(kind: str, spec, parts: list):
    """A dataset/iterator with its handle replaced by `parts[0]` (nest's composite
    protocol): the staged object for a symbolic handle, the registered object for an eager
    one, a DatasetSpec for anything else (a TensorSpec: signatures)."""
    part, = parts
    if isinstance(part, SymbolicTensor):
        return StagedDataset(part, spec) if kind == "dataset" else \
            StagedIterator(part, spec, owned=False)
    if isinstance(part, Tensor) and part.dtype == dtypes.int64 and part.shape.rank == 0:
        return find(int(part.numpy()), "em.data handle")
    return DatasetSpec(kind, spec)


# -- staged values ------------------------------------------------------------------------------

_DATASET_METHODS = ("batch", "map", "filter", "repeat", "shuffle", "take", "skip", "prefetch",
                    "cache", "enumerate", "shard", "rebatch", "interleave", "with_options",
                    "cardinality", "as_numpy_iterator", "unbatch", "padded_batch")


class StagedDataset:
    """A dataset inside a trace (a parameter of the em.function): iterate it with `for`
    (one loop in the IR) or `iter()`; its transformations run outside the function."""

    __ember_kind__ = "Dataset"

    def __init__(self, handle: SymbolicTensor, spec):
        self._handle, self._spec = handle, spec

    @property
    def element_spec(self):
        return self._spec

    def __iter__(self):
        return iterator_over(self)

    def __ember_staged_iter__(self):
        return iterator_over(self)

    def __tracing_type__(self, context):  # passed on to a nested em.function
        return DatasetTraceType("dataset", self._spec)

    def __ember_components__(self):
        return [self._handle]

    def __ember_rebuild__(self, parts):
        return rebuild("dataset", self._spec, parts)

    def __getattr__(self, name):
        if name in _DATASET_METHODS:
            raise TypeError(f"Dataset.{name} on a dataset passed to an em.function: inside "
                            "the function a dataset can only be iterated; apply "
                            f".{name}(...) before passing it in")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"<StagedDataset element_spec={self._spec}>"


def iterator_over(dataset) -> "StagedIterator":
    """`iter(dataset)` inside a trace: emits the host call making a fresh iterator (of
    the function's dataset parameter, or of a dataset the function captures)."""
    graph = current_graph()
    site = next(_numbers)
    if isinstance(dataset, StagedDataset):
        def make(handle):
            return (np.asarray(own(site, find(int(handle), "MakeIterator")), np.int64),)
        args = [dataset._handle]
    else:
        def make():
            return (np.asarray(own(site, dataset), np.int64),)
        args = []
    token, = emit_host_call(graph, make, args, [dtypes.int64], "dataset_iter", [()])
    return StagedIterator(token, dataset.element_spec, owned=True)


class StagedIteratorProtocol:
    """What an iterator inside a trace shares, whatever it iterates: it is its own staged
    iterator (`__ember_staged_iter__`), it is passed to a nested em.function as its int64
    token (`__ember_components__`), and Python's own iteration, which AutoGraph replaces,
    is an error naming `_what` it iterates."""

    _what = "an em.data dataset"

    def __ember_staged_iter__(self):
        return self

    def __ember_components__(self):
        return [self._token]

    def __iter__(self):
        raise TypeError(_unconverted(self._what))

    def __next__(self):
        raise TypeError(_unconverted(self._what))


def _unconverted(what: str) -> str:
    return (f"a Python `for` loop or next() over {what} or iterator inside an em.function "
            "runs only in code AutoGraph converts (it makes one loop in the IR); use "
            "em.function(autograph=True) (the default), or call it.get_next() / "
            "it.get_next_as_optional()")


class StagedIterator(StagedIteratorProtocol):
    """An iterator inside a trace: `get_next()` (`em.errors.OutOfRangeError` when the
    function runs past the end), `get_next_as_optional()`, `next(it)` in converted code,
    and `for x in it` (one loop in the IR)."""

    __ember_kind__ = "Iterator"

    def __init__(self, token: SymbolicTensor, spec, owned: bool, keep=None):
        self._token, self._spec, self._owned = token, spec, owned
        self._keep = keep  # an eager iterator the function captures: alive while it is

    @property
    def element_spec(self):
        return self._spec

    def get_next(self):
        """The next element; raises OutOfRangeError (when the function runs) at the end."""
        spec, keep = self._spec, self._keep

        def host(token):
            element = pull(int(token), spec, keep)
            if element is None:
                raise OutOfRangeError()
            return element
        return self._emit(host, [], "dataset_next")

    def get_next_as_optional(self) -> "StagedOptional":
        """The next element as an optional: `has_value()` is false at the end."""
        spec, keep = self._spec, self._keep

        def host(token):
            element = pull(int(token), spec, keep)
            if element is None:
                return (np.asarray(False),) + zeros(spec)
            return (np.asarray(True),) + element
        has, *leaves = self._emit(host, [(dtypes.bool_, ())], "dataset_next", packed=False)
        return StagedOptional(has, structure.pack_as(spec, leaves), spec)

    def _emit(self, host, head: list, label: str, packed: bool = True):
        if recording.replaying_now():
            raise ControlFlowError(
                "a gradient through a loop, branch or em.function call that pulls from an "
                "em.data dataset or iterator is not supported: its gradient traces the "
                "region (or the function) again, which would pull other elements. Take the "
                "gradient inside the loop body (open the em.GradientTape in the body of "
                "`for x in ds`), as a training step does, or pull the element outside the "
                "function and pass it in")
        specs = structure.flatten(self._spec)
        out = emit_host_call(current_graph(), host, [self._token],
                             [d for d, _ in head] + [s.dtype for s in specs], label,
                             [s for _, s in head] + [s.shape.dims for s in specs])
        return structure.pack_as(self._spec, out) if packed else out

    def close(self) -> None:
        """Releases an iterator the function made (a `for` loop's, once it ends)."""
        if self._owned:
            emit_host_call(current_graph(), lambda token: release(int(token)) or (),
                           [self._token], [], "dataset_release")

    def __tracing_type__(self, context):  # passed on to a nested em.function
        return DatasetTraceType("iterator", self._spec)

    def __ember_rebuild__(self, parts):
        return rebuild("iterator", self._spec, parts)

    def __repr__(self) -> str:
        return f"<StagedIterator element_spec={self._spec}>"


class StagedOptional:
    """`get_next_as_optional()`'s result inside a trace: `has_value()` a scalar bool tensor,
    `get_value()` the element (InvalidArgumentError when the function runs, if empty)."""

    def __init__(self, has: SymbolicTensor, value, spec):
        self._has, self._value, self._spec = has, value, spec

    @property
    def element_spec(self):
        return self._spec

    def has_value(self):
        return self._has

    def get_value(self):
        from ember.frontend.effects import assert_true
        assert_true(self._has, "the optional has no value (the iterator is at its end); "
                    "check has_value() first")
        return self._value
