"""tf.debugging's checks of types, ranks, shapes and closeness that math_composites.py does not
hold: `assert_near`, `assert_type`, `assert_integer`, `assert_scalar`,
`assert_rank_at_least`, `assert_rank_in` and `assert_shapes`.

What the static types already decide (a dtype, a known rank, two known dims) is checked at
once, eagerly and while tracing, with TensorFlow's exception (TypeError, ValueError); what
only the values decide (a `?` dim, closeness) is an `ember.assert`, raising
InvalidArgumentError where the code runs, as the other em.debugging checks do.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.creation_ops import rank as rank_of
from ember.frontend.creation_ops import shape as shape_of
from ember.frontend.effects import assert_true
from ember.frontend.tensor import convert_to_tensor


def _message(message, default: str) -> str:
    return default if message is None else f"{message}: {default}"


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """Raises (at run time in compiled code) unless |x - y| <= atol + rtol * |y| everywhere
    (broadcasting); `rtol` and `atol` default to 10 machine epsilons of x's dtype, as
    TensorFlow's."""
    x = convert_to_tensor(x)
    y = convert_to_tensor(y, dtype=x.dtype)
    if not x.dtype.is_floating:
        raise TypeError(f"em.debugging.assert_near compares floating-point tensors, got "
                        f"{x.dtype.name}")
    eps = 10 * float(np.finfo(x.dtype.np_dtype).eps)
    rtol = eps if rtol is None else float(rtol)
    atol = eps if atol is None else float(atol)
    close = ops.less_equal(ops.abs(ops.subtract(x, y)),
                           ops.add(atol, ops.multiply(rtol, ops.abs(y))))
    assert_true(ops.reduce_all(close), _message(
        message, f"x and y not equal to tolerance rtol = {rtol:g}, atol = {atol:g}"))


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError unless `tensor`'s dtype is `tf_type` (a static check)."""
    tensor, expected = convert_to_tensor(tensor), dtypes.as_dtype(tf_type)
    if tensor.dtype != expected:
        raise TypeError(_message(message, f"the tensor must be of type {expected.name}, got "
                                          f"{tensor.dtype.name}"))


def assert_integer(x, message=None, name=None):
    """TypeError unless `x` has an integer dtype (a static check)."""
    x = convert_to_tensor(x)
    if not x.dtype.is_integer:
        raise TypeError(_message(message, f"expected an integer tensor, got dtype "
                                          f"{x.dtype.name}"))


def assert_scalar(tensor, message=None, name=None):
    """`tensor`, after checking that its rank is known to be 0: ValueError otherwise."""
    tensor = convert_to_tensor(tensor)
    if tensor.shape.rank != 0:
        raise ValueError(_message(message, f"expected a scalar, got shape {tensor.shape}"))
    return tensor


def _assert_rank(x, holds, wanted: str, message):
    x = convert_to_tensor(x)
    known = x.shape.rank
    if known is not None:
        if not holds(known):
            raise ValueError(_message(message, f"the tensor must have rank {wanted}, but its "
                                               f"shape is {x.shape} (rank {known})"))
        return
    assert_true(holds(rank_of(x)), _message(message, f"the tensor must have rank {wanted}"))


def _int(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"em.debugging.{what}: rank must be a Python int, got {value!r}")
    return int(value)


def assert_rank_at_least(x, rank, message=None, name=None):
    """As assert_rank, for a rank of at least `rank`."""
    rank = _int(rank, "assert_rank_at_least")
    _assert_rank(x, lambda r: r >= rank if isinstance(r, int) else ops.greater_equal(r, rank),
                 f"at least {rank}", message)


def assert_rank_in(x, ranks, message=None, name=None):
    """As assert_rank, for a rank among `ranks`."""
    ranks = [_int(r, "assert_rank_in") for r in ranks]

    def holds(r):
        if isinstance(r, int):
            return r in ranks
        return ops.reduce_any(ops.equal(r, convert_to_tensor(ranks, dtype=r.dtype)))
    _assert_rank(x, holds, f"in {ranks}", message)


def _entries(spec, where: str) -> tuple[bool, list]:
    """(whether the spec starts with `...`/'*', its size entries: int, None or a symbol)."""
    spec = list(spec)
    outer = bool(spec) and (spec[0] is Ellipsis or spec[0] == "*")
    entries = []
    for entry in spec[1:] if outer else spec:
        if entry is None or entry == ".":
            entries.append(None)
        elif isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
            entries.append(int(entry))
        elif isinstance(entry, str) and entry.lstrip("-").isdigit():
            entries.append(int(entry))
        elif isinstance(entry, str):
            entries.append(entry)
        else:
            raise TypeError(f"{where}: a size entry is an int, a symbol (a string), None or "
                            f"'.', got {entry!r} in {spec!r}")
    return outer, entries or [1]  # a spec of length zero is one dim of size 1, as TF's


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Checks each tensor's shape against its spec and the specs' symbols against each other
    (tf.debugging.assert_shapes): `shapes` is a list of (tensor, spec) pairs, or a dict; a
    spec is a sequence of sizes (an int), symbols (any other string: every dim named by
    one symbol has one size) and None or '.' (any size), optionally led by `...` or '*' (any
    outer dims). A scalar counts as one dim of size 1. What the static shapes decide raises
    ValueError at once; `?` dims are checked when the code runs (InvalidArgumentError)."""
    where = "em.debugging.assert_shapes"
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    bound: dict = {}  # symbol -> (its size: int or a scalar tensor, where it was bound)
    for index, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise TypeError(f"{where}: shapes must be (tensor, spec) pairs, got {pair!r}")
        x, spec = convert_to_tensor(pair[0]), pair[1]
        outer, entries = _entries(spec, where)
        label = f"tensor {index} (shape {x.shape})"
        if x.shape.rank == 0:
            x = ops.reshape(x, [1])
        _assert_rank(x, (lambda r, n=len(entries): r >= n if isinstance(r, int)
                         else ops.greater_equal(r, n)) if outer else
                     (lambda r, n=len(entries): r == n if isinstance(r, int)
                      else ops.equal(r, n)),
                     f"{'at least ' if outer else ''}{len(entries)}",
                     _message(message, f"{where}: {label}"))
        if x.shape.rank is None:
            continue  # (its rank is checked when the code runs; its dims are not known)
        dims = x.shape.as_list()[x.shape.rank - len(entries):]
        for offset, (dim, entry) in enumerate(zip(dims, entries)):
            axis = x.shape.rank - len(entries) + offset
            size = dim if dim is not None else shape_of(x)[axis]
            here = f"{label} dimension {axis}"
            if entry is None:
                continue
            if isinstance(entry, str) and entry not in bound:
                bound[entry] = (size, here)
                continue
            want, of = (entry, "") if isinstance(entry, int) else (
                bound[entry][0], f"the size of {bound[entry][1]} (symbol {entry!r})")
            if isinstance(want, int) and isinstance(size, int):
                if want != size:
                    raise ValueError(_message(message, f"{where}: {here} must have size "
                                                       f"{want}{', ' if of else ''}{of}; it "
                                                       f"has {size}"))
                continue
            assert_true(ops.equal(convert_to_tensor(size, dtype=dtypes.int32),
                                  convert_to_tensor(want, dtype=dtypes.int32)),
                        _message(message, f"{where}: {here} must have "
                                          f"{of or f'size {want}'}"))
