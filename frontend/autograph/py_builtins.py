"""The Python builtins converted code stages (TensorFlow's autograph/operators/py_builtins.py):
`ag__.converted_call(f, ...)` hands a call of one of them to its overload here.

An overload stages the call when its tensor argument is a symbolic tensor of the trace, or
a variable inside a trace (read when the function runs, as TensorFlow treats a tf.Variable
as a tensor); on anything else, eager tensors included, Python's own builtin runs, so code
on Python values is unchanged and an eager tensor gives a Python value known at trace time.

    range(n)            em.range(n): a `for` over it is one staged loop
    len(x)              x's first dimension: a Python int where the trace knows it, else a
                        scalar int32 tensor; an em.TensorArray's size() (also eagerly)
    enumerate(x)        a staged `for` over (index, row); over a dataset, its loop counts
    zip(x, y, ...)      a staged `for` over the rows of each; over datasets, one loop
                        pulling from each
    next(it)            a dataset iterator's staged pull
    int(x), float(x)    em.cast(x, em.int32) / em.cast(x, em.float32), elementwise, as
                        TensorFlow (int truncates toward zero, as Python's does)
    any(x), all(x)      em.reduce_any / em.reduce_all of the truth of x's rows (x != 0 for
                        numbers): Python's any/all iterate x's rows and test each
    sorted(x, key=..., reverse=...)   em.sort of a rank-1 x (stable, as Python's); with a
                        `key`, x gathered in the order em.argsort gives key's values (an
                        eager x inside a trace too: Python's cannot compare its elements)

`abs(x)` and operators need nothing here (a tensor's `__abs__` stages it). `print` and
`isinstance` stay Python's, as in TensorFlow (tf.function converts `print` only with
Feature.BUILTIN_FUNCTIONS): `print` runs while tracing, `em.print` on every call.
TensorFlow's AutoGraph converts `any`/`all` only for tf.data datasets (on a tensor inside
tf.function, Python's fails); Ember reduces a tensor's rows instead, with Python's meaning.
"""

from __future__ import annotations

import builtins
import types

from ember.dialects.ember import dtypes
from ember.frontend.autograph import iterator_loops, loops
from ember.frontend.autograph.operators import staged, tensor_of
from ember.frontend.tensor import Tensor
from ember.frontend.tensor_array import TensorArray
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
    if len(args) == 1 and not kwargs and isinstance(args[0], TensorArray):
        return args[0].size()  # (as TensorFlow's: a scalar int32 tensor)
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


def int_(*args, **kwargs):
    t = _cast_argument("int", args, kwargs)
    if t is None:
        return builtins.int(*args, **kwargs)
    from ember.frontend.ops import cast
    return cast(t, dtypes.int32)


def float_(*args, **kwargs):
    t = _cast_argument("float", args, kwargs)
    if t is None:
        return builtins.float(*args, **kwargs)
    from ember.frontend.ops import cast
    return cast(t, dtypes.float32)


def _cast_argument(name: str, args: tuple, kwargs: dict):
    """The staged tensor of `int(x)` / `float(x)`, or None. (`int(x, base)` is Python's:
    its error for a value that is not a string, as for an eager tensor.)"""
    t = _staged_only_argument(args, kwargs)
    if t is not None and t.dtype is dtypes.string:
        raise TypeError(f"{name}() of the string tensor {t}: Ember has no string-to-number "
                        "op (TensorFlow's tf.strings.to_number); parse the string in Python "
                        "before the em.function, or pass numbers")
    return t


def any_(*args, **kwargs):
    t = _staged_only_argument(args, kwargs)
    if t is None:
        return builtins.any(*args, **kwargs)
    from ember.frontend.ops import reduce_any
    return reduce_any(_row_truth("any", t))


def all_(*args, **kwargs):
    t = _staged_only_argument(args, kwargs)
    if t is None:
        return builtins.all(*args, **kwargs)
    from ember.frontend.ops import reduce_all
    return reduce_all(_row_truth("all", t))


def _row_truth(name: str, t: Tensor) -> Tensor:
    """The truth of each row of `t`, which Python's any/all take by iterating it: a row
    must be one element (a rank-1 tensor, or rows of shape (1, ..., 1))."""
    reduce = f"em.reduce_{name}(x)"
    if t.shape.rank is None:
        raise TypeError(f"{name}() of {t}, whose rank is unknown while tracing: Python's "
                        f"{name} iterates the rows of a rank-1 tensor; use {reduce} over all "
                        "elements, or give the tensor a known rank")
    if t.shape.rank == 0:
        raise TypeError(f"{name}() of the scalar tensor {t}: Python's {name} iterates its "
                        f"argument, and a scalar has no rows; use bool(x) in a condition, "
                        f"or {reduce}")
    if any(d != 1 for d in t.shape.dims[1:]):
        raise TypeError(f"{name}() of {t}: Python's {name} tests each row's truth, and a row "
                        f"of shape {t.shape.dims[1:]} is not one value; use {reduce} over "
                        f"all elements, or em.reduce_{name}(x, axis=...)")
    if t.dtype is dtypes.bool_:
        return t
    if not t.dtype.is_numeric:
        raise TypeError(f"{name}() of the {t.dtype.name} tensor {t}: AutoGraph stages "
                        f"{name} of bool and number tensors only")
    from ember.frontend.ops import not_equal
    return not_equal(t, 0)


def sorted_(*args, **kwargs):
    t = tensor_of(args[0]) if len(args) == 1 else None
    # (an eager tensor too: inside a trace its elements' comparisons are staged, so
    # Python's sorted cannot order them)
    if not isinstance(t, Tensor) or current_graph() is None or \
            set(kwargs) - {"key", "reverse"}:
        return builtins.sorted(*args, **kwargs)
    key, reverse = kwargs.get("key"), kwargs.get("reverse", False)
    if staged(tensor_of(reverse)):
        raise TypeError(f"sorted({t}, reverse={reverse}): `reverse` must be known while "
                        "tracing (a Python bool); use em.sort(x, direction=...) with em.cond")
    if t.shape.rank != 1:
        raise TypeError(f"sorted() of {t}: AutoGraph sorts rank-1 tensors (as TensorFlow's "
                        f"does); use em.sort(x, axis=...) for a tensor of rank "
                        f"{t.shape.rank if t.shape.rank is not None else 'unknown'}")
    from ember.frontend import ops, sort_ops
    from ember.frontend.functional_ops import map_fn
    direction = "DESCENDING" if reverse else "ASCENDING"
    if key is None:
        return sort_ops.sort(t, direction=direction)
    keys = map_fn(key, t)
    if keys.shape.rank != 1:
        raise TypeError(f"sorted() of {t}: its key gives values of shape {keys.shape.dims[1:]}"
                        "; a key must give one number per element")
    return ops.gather(t, sort_ops.argsort(keys, direction=direction))


_OVERLOADS = {builtins.range: range_, builtins.len: len_, builtins.enumerate: enumerate_,
              builtins.zip: zip_, builtins.next: next_, builtins.int: int_,
              builtins.float: float_, builtins.any: any_, builtins.all: all_,
              builtins.sorted: sorted_}
