"""The Python builtins converted code stages (TensorFlow's autograph/operators/py_builtins.py):
`ag__.converted_call(f, ...)` hands a call of one of them to its overload here.

An overload stages the call when its tensor argument is a symbolic tensor of the trace, or
a variable inside a trace (read when the function runs, as TensorFlow treats a tf.Variable
as a tensor); on anything else, eager tensors included, Python's own builtin runs, so code
on Python values is unchanged and an eager tensor gives a Python value known at trace time.

    range(n)            em.range(n): a `for` over it is one staged loop
    len(x)              x's first dimension: a Python int where the trace knows it, else a
                        scalar int32 tensor
    enumerate(x)        a staged `for` over (index, row); over a dataset, its loop counts
    zip(x, y, ...)      a staged `for` over the rows of each; over datasets, one loop
                        pulling from each
    next(it)            a dataset iterator's staged pull

`abs(x)` and operators need nothing here (a tensor's `__abs__` stages it). `print` and
`isinstance` stay Python's, as in TensorFlow (tf.function converts `print` only with
Feature.BUILTIN_FUNCTIONS): `print` runs while tracing, `em.print` on every call.
"""

from __future__ import annotations

import builtins
import types

from ember.frontend.autograph import iterator_loops, loops
from ember.frontend.autograph.operators import staged, tensor_of
from ember.frontend.tensor import Tensor
from ember.frontend.tracing import current_graph


def overload_of(f):
    """The overload of the builtin `f`, or None (not a builtin Ember stages)."""
    if not isinstance(f, (type, types.BuiltinFunctionType)):
        return None
    try:
        return _OVERLOADS.get(f)
    except TypeError:  # (an unhashable type)
        return None


def _staged_only_argument(args: tuple, kwargs: dict):
    """The tensor a call's one positional argument stands for, when it is staged and the
    call has no other arguments; else None (Python's builtin runs)."""
    if len(args) != 1 or kwargs:
        return None
    value = tensor_of(args[0])
    return value if staged(value) else None


def range_(*args, **kwargs):
    values = [tensor_of(a) for a in args]
    if not any(staged(v) for v in values):
        return builtins.range(*args, **kwargs)
    from ember.frontend.ops import range as em_range
    return em_range(*values, **kwargs)


def len_(*args, **kwargs):
    t = _staged_only_argument(args, kwargs)
    if t is None:
        return builtins.len(*args, **kwargs)
    if not t.shape.rank or t.shape[0] is not None:
        return builtins.len(t)  # a Python int, or the tensor's own error (scalar, rank ?)
    from ember.frontend.ops import shape
    return shape(t)[0]


def enumerate_(*args, **kwargs):
    first = tensor_of(args[0]) if args else None
    if staged(first):
        start = args[1:2] + ((kwargs["start"],) if "start" in kwargs else ())
        return loops.StagedIterable("enumerate", [first], *start)
    if args and hasattr(type(args[0]), "__ember_staged_iter__") and \
            current_graph() is not None:  # a dataset: its loop counts
        return iterator_loops.Enumerated(*args, **kwargs)
    return builtins.enumerate(*args, **kwargs)


def zip_(*args, **kwargs):
    if args and not kwargs and current_graph() is not None and all(
            hasattr(type(a), "__ember_staged_iter__") for a in args):  # datasets
        return iterator_loops.Zipped(*args)
    values = [tensor_of(a) for a in args]
    if not kwargs and any(staged(v) for v in values) and \
            all(isinstance(v, Tensor) for v in values):
        return loops.StagedIterable("zip", values)
    return builtins.zip(*args, **kwargs)


def next_(*args, **kwargs):
    if len(args) == 1 and not kwargs and hasattr(args[0], "__next__"):
        iterator = iterator_loops.staged_iterator(args[0])
        if iterator is not None:  # a dataset's iterator: the pull is staged
            return iterator.get_next()
    return builtins.next(*args, **kwargs)


_OVERLOADS = {builtins.range: range_, builtins.len: len_, builtins.enumerate: enumerate_,
              builtins.zip: zip_, builtins.next: next_}
