"""The host side of datasets inside `em.function` (runtime/data/staged.py is the trace
side): the handles naming datasets and iterators to host calls, the iterators a function
makes, and the pull that checks each element against the element_spec.

Lifetime: a dataset or iterator passed in is registered weakly under its handle for as long
as the caller keeps it. An iterator a function makes lives in a slot per call site of the
calling thread: the next call at that site replaces it, a `for` loop releases its own at the
end, and a thread's go when the thread ends.
"""

from __future__ import annotations

import itertools
import threading
import weakref

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import InvalidArgumentError
from ember.frontend.tensor import Tensor, constant

from ember.runtime.data import structure
from ember.runtime.data.iterator import Iterator

_lock = threading.Lock()
_numbers = itertools.count(1)  # handles and tokens: never reused in a process
_objects: "weakref.WeakValueDictionary[int, object]" = weakref.WeakValueDictionary()
_made = threading.local()  # per thread: .iterators (token -> one a function made there)
# and .slots (call site -> the token made there last); a function's host calls all run on
# the thread that called it, and what a thread made goes when it ends


# -- handles --------------------------------------------------------------------------------

def handle_of(obj) -> Tensor:
    """The int64 scalar naming `obj` (a Dataset or an eager Iterator) to host calls."""
    number = obj.__dict__.get("_ember_handle")
    if number is None:
        with _lock:
            number = obj.__dict__.get("_ember_handle") or next(_numbers)
            obj._ember_handle = number
            _objects[number] = obj
    return constant(number, dtype=dtypes.int64)


def find(number: int, op: str):
    obj = _iterators().get(number) or _objects.get(number)
    if obj is None:
        raise InvalidArgumentError(op, f"no em.data dataset or iterator has handle {number}: "
                                   "it was deleted, or it was made by an earlier call of the "
                                   "function and has been replaced since")
    return obj


def _iterators() -> dict:
    if not hasattr(_made, "iterators"):
        _made.iterators, _made.slots = {}, {}
    return _made.iterators


def own(site: int, dataset) -> int:
    """A new iterator of `dataset` for call site `site` on this thread (replacing the one
    made there before)."""
    iterators = _iterators()
    with _lock:
        token = next(_numbers)
    iterators[token] = Iterator(dataset)
    iterators.pop(_made.slots.get(site), None)
    _made.slots[site] = token
    return token


def release(token: int) -> None:
    _iterators().pop(token, None)


def layout(node):
    """The nesting of an element_spec, hashable (leaves are '*')."""
    if isinstance(node, tuple):
        kind = type(node) if hasattr(node, "_fields") else tuple
        return kind, tuple(layout(item) for item in node)
    if isinstance(node, dict):
        return dict, tuple((key, layout(node[key])) for key in sorted(node))
    return "*"


def pull(token: int, spec, keep=None):
    """The next element of the iterator `token` (or `keep`, a captured one) as arrays
    matching `spec`, or None at the end."""
    iterator = keep if keep is not None else find(token, "IteratorGetNext")
    try:
        element = next(iterator)
    except StopIteration:
        return None
    leaves, specs = structure.flatten(element), structure.flatten(spec)
    if len(leaves) != len(specs) or layout(element) != layout(spec):
        raise InvalidArgumentError("IteratorGetNext", f"an element of {iterator!r} has "
                                   f"structure {layout(element)}, but its element_spec "
                                   f"{spec} has {layout(spec)}")
    arrays = []
    for i, (leaf, s) in enumerate(zip(leaves, specs)):
        if not isinstance(leaf, Tensor) or leaf.dtype is not s.dtype or \
                not s.shape.is_compatible_with(leaf.shape):
            raise InvalidArgumentError(
                "IteratorGetNext", f"component {i} of an element of {iterator!r} is "
                f"{leaf!r}, which does not match its element_spec {s}: a dataset's "
                "elements must keep the dtype and the shape its element_spec gives")
        arrays.append(leaf._numpy_array())
    return tuple(arrays)


def zeros(spec) -> tuple:
    """Placeholder arrays for the leaves of an absent element (open dims are 0)."""
    return tuple(np.zeros(() if s.shape.dims is None else
                          tuple(0 if d is None else d for d in s.shape.dims),
                          s.dtype.np_dtype) for s in structure.flatten(spec))
