"""The loops converted code calls (`ag__.while_stmt`, `ag__.for_stmt`): Python loops on
Python values and eager tensors, `scf.while` over the loop's state once a test or an
iterable is a symbolic tensor. Every loop variable is then a tensor of fixed dtype and
shape (set_loop_options relaxes shapes); a return value or a TensorArray the loop sets
first gets its type from a trial trace of the body.
"""

from __future__ import annotations

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import OpError, OpTypeError
from ember.frontend import nest
from ember.frontend.autograph.operators import (ZerosOf, and_, is_number, is_tensorlike,
                                                reconciler, staged, tensor_of, where_of)
from ember.frontend.autograph.undefined import Undefined, UndefinedReturnValue
from ember.frontend.autograph.iterator_loops import iterator_for, staged_iterator
from ember.frontend.control_flow import ControlFlowError, trace_cond, trial_trace
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tensor_array import TensorArray
from ember.frontend.while_loop import trace_while

__all__ = ["StagedIterable", "for_stmt", "while_stmt"]


def while_stmt(test, body, state: tuple, names: tuple, lineno: int, opts: dict | None = None):
    """`while test(*state): state = body(*state)`; staged once the test is a tensor."""
    while True:
        keep_going = tensor_of(test(*state))  # (a variable: read in each iteration)
        if staged(keep_going):
            return _staged_loop(test, body, state, names, where_of(lineno), "while", opts)
        if not keep_going:
            return state
        state = body(*state)


def for_stmt(iterable, body, state: tuple, names: tuple, lineno: int, extra_test=None,
             opts: dict | None = None):
    """`for target in iterable: state = body(target, *state)`, stopping early when
    `extra_test(*state)` (break, return) is false."""
    iterable = tensor_of(iterable)
    iterator = staged_iterator(iterable)  # a dataset or iterator: one loop pulling elements
    if iterator is not None:
        return iterator_for(iterable, iterator, body, state, names, where_of(lineno),
                            extra_test, opts, _staged_loop)
    if staged(iterable) or isinstance(iterable, StagedIterable) and \
            any(staged(t) for t in iterable.tensors):
        return _staged_for(iterable, body, state, names, where_of(lineno), extra_test, opts)
    for item in iterable:
        if extra_test is not None:
            go_on = extra_test(*state)
            if staged(go_on):  # a tensor-dependent break: the rest runs under it
                state = trace_cond(go_on, lambda s=state, x=item: body(x, *s),
                                   lambda s=state: s, reconciler(names, where_of(lineno)))
                continue
            if not go_on:
                break
        state = body(item, *state)
    return state


class StagedIterable:
    """`enumerate(t)` or `zip(t, u, ...)` over tensors of which one is symbolic: what a
    staged `for` iterates, item by item (converted_call makes it)."""

    def __init__(self, kind: str, tensors: list, start=0):
        self.kind, self.tensors, self.start = kind, tensors, start

    def __iter__(self):  # eagerly (all tensors eager): Python's own
        if self.kind == "enumerate":
            return enumerate(self.tensors[0], self.start)
        return zip(*self.tensors)

    def item(self, i):
        if self.kind == "enumerate":
            return (i + self.start, self.tensors[0][i])
        return tuple(t[i] for t in self.tensors)


def _staged_for(iterable, body, state, names, where, extra_test, opts):
    from ember.frontend.ops import minimum, shape
    tensors = iterable.tensors if isinstance(iterable, StagedIterable) else [iterable]
    sizes = []
    for t in tensors:
        t = convert_to_tensor(t)
        if t.shape.rank == 0:
            raise ControlFlowError(f"the `for` loop at {where} iterates over a scalar tensor "
                                   f"{t!r}; iterate over a tensor with at least one "
                                   f"dimension, or over em.range(n)")
        known = t.shape[0] if t.shape.rank is not None else None
        sizes.append(known if known is not None else shape(t)[0])
    n = sizes[0]
    for size in sizes[1:]:  # zip stops at the shortest
        n = min(n, size) if isinstance(n, int) and isinstance(size, int) else minimum(n, size)
    index = convert_to_tensor(0, dtype=dtypes.int32)
    item = iterable.item if isinstance(iterable, StagedIterable) else iterable.__getitem__

    def test(i, *s):
        more = i < n
        if extra_test is None:
            return more
        return and_(lambda: more, lambda: extra_test(*s))

    def step(i, *s):
        return (i + 1,) + tuple(body(item(i), *s))
    out = _staged_loop(test, step, (index,) + tuple(state), ("<index>",) + tuple(names),
                       where, "for", opts)
    return tuple(out[1:])


def _staged_loop(test, body, state: tuple, names: tuple, where: str, kind: str,
                 opts: dict | None):
    """The loop as `scf.while` over its state, every variable a tensor."""
    numbers = {n: v for n, v in zip(names, state) if is_number(v)}
    state = tuple(v if not _is_set(v) else _loop_value(n, v, where, kind)
                  for n, v in zip(names, state))
    if not all(_is_set(v) for v in state):
        state = _fill_unset(body, state)
    kept = [k for k, v in enumerate(state) if _is_set(v)]
    if len(kept) < len(state):  # a return the body never reaches: not carried
        return _without(test, body, state, names, kept, where, kind, opts)
    labels, leaf_names = [], []
    for name, value in zip(names, state):
        count = len(nest.flatten(value))
        labels += [f"loop variable '{name}' of the {kind} loop at {where}"] * count
        leaf_names += [name] * count
    opts = dict(opts or {})
    unknown = set(opts) - {"shape_invariants", "maximum_iterations"}
    if unknown:
        raise TypeError(f"set_loop_options of the {kind} loop at {where}: unknown option(s) "
                        f"{', '.join(sorted(unknown))}")

    def relax(i: int, shape: str) -> str:
        return (f"make em.autograph.experimental.set_loop_options(shape_invariants=[("
                f"{leaf_names[i]}, em.TensorShape({shape}))]) the loop body's first "
                f"statement")
    def traced_body(*s):
        try:
            return tuple(body(*s))
        except OpTypeError as e:
            _explain_numbers(e, numbers, state, names, f"the {kind} loop at {where}")
            raise
    out = trace_while(lambda *s: test(*s), traced_body, state,
                      _shape_invariants(opts, names, state), labels, relax,
                      opts.get("maximum_iterations"), f"the {kind} loop at {where}")
    return tuple(out)


def _explain_numbers(error: OpTypeError, numbers: dict, state: tuple, names: tuple,
                     loop: str) -> None:
    """Adds to a dtype error in a loop body, in place (its traceback stays the user's), which
    loop variables were Python numbers before the loop: the loop carries each as a tensor of
    the default dtype (int32 for an int), and a loop variable keeps its dtype, so `i = 0`
    then `i = i + 0.5` fails where Python would make `i` a float."""
    found = [(n, numbers[n], v.dtype) for n, v in zip(names, state)
             if n in numbers and isinstance(v, Tensor) and v.dtype.mlir in error.detail]
    if not found:
        return
    said = "; ".join(f"'{n}' was the Python {type(p).__name__} {p!r} before {loop}, so the "
                     f"loop carries it as {'an' if d.name.startswith('int') else 'a'} "
                     f"{d.name} tensor" for n, p, d in found)
    OpError.__init__(error, error.op_name, error.detail + (
        f" ({said}: a loop variable keeps its dtype, so give it a value of the dtype it takes "
        "in the loop before the loop, such as 0.0 for a float, or cast what the loop assigns "
        "to it with em.cast)"))  # (the message in OpError's own form)


def _without(test, body, state: tuple, names: tuple, kept: list, where, kind, opts):
    """The loop carrying only the variables at `kept`; the others (a return value that no
    `return` in the body sets, as its trial trace found) pass through unchanged."""
    def full(carried):
        values = list(state)
        for k, v in zip(kept, carried):
            values[k] = v
        return values

    def inner_test(*carried):
        return test(*full(carried))

    def inner_body(*carried):
        out = tuple(body(*full(carried)))
        return tuple(out[k] for k in kept)
    out = _staged_loop(inner_test, inner_body, tuple(state[k] for k in kept),
                       tuple(names[k] for k in kept), where, kind, opts)
    return tuple(full(out))


def _fill_unset(body, state: tuple) -> tuple:
    """`state` with what has no tensor yet made one of the type the body gives it: a
    return value not yet set (zeros: the `do_return` flag guarantees they are never
    returned) and a TensorArray not yet written (its buffer). The body is traced once
    more, into a dropped region, to learn those types (its trace-time side effects happen
    twice)."""
    specs = trial_trace(lambda *s: tuple(body(*s)), list(state))
    out = []
    for value, spec in zip(state, specs):
        if isinstance(value, UndefinedReturnValue) and not isinstance(spec, Undefined):
            value = nest.map_structure(lambda t: ZerosOf(t).make(), spec)
        elif isinstance(value, TensorArray) and not value.allocated:
            value = value.allocated_like(spec)
        out.append(value)
    return tuple(out)


def _is_set(value) -> bool:
    return not isinstance(value, UndefinedReturnValue) and not (
        isinstance(value, TensorArray) and not value.allocated)


def _loop_value(name: str, value, where: str, kind: str):
    if isinstance(value, Undefined):
        raise ControlFlowError(
            f"'{name}' is assigned in the {kind} loop at {where}, whose {_driver(kind)} "
            f"is a tensor, and used after it or in its next iteration, but has no value before "
            f"the loop; a staged loop carries its variables from one iteration to the "
            f"next, so give '{name}' a value (of the dtype and shape it will have) before "
            f"the loop")
    leaves = nest.flatten(value)
    for leaf in leaves:
        if not (is_tensorlike(leaf) or is_number(leaf)):
            raise ControlFlowError(
                f"'{name}' changes in the {kind} loop at {where}, whose {_driver(kind)} is "
                f"a tensor, but holds the Python {type(leaf).__name__} {leaf!r}: a staged "
                f"loop can only carry tensors (and Python numbers, which become tensors); "
                f"collect values in an em.TensorArray or a tensor instead")
    return nest.map_structure(lambda v: v if isinstance(v, Tensor) else convert_to_tensor(v),
                              value)


def _driver(kind: str) -> str:
    return "iterable" if kind == "for" else "condition"


def _shape_invariants(opts: dict, names: tuple, state: tuple):
    """The loop variables' shapes: as they enter, except those `set_loop_options` relaxes
    and the buffers of TensorArrays that grow (their first dimension) or hold elements of
    different shapes (TensorArray.loop_invariants)."""
    from ember.frontend.shape import TensorShape
    pairs = opts.get("shape_invariants") or []
    growing = any(isinstance(v, TensorArray) and v.changes_shape_in_loops for v in state)
    if not pairs and not growing:
        return None
    invariants = [v.loop_invariants() if isinstance(v, TensorArray) else
                  nest.map_structure(lambda t: TensorShape(t.shape.dims), v) for v in state]
    for var, shape in pairs:
        for k, value in enumerate(state):
            if value is var:
                invariants[k] = shape if isinstance(shape, TensorShape) else TensorShape(shape)
                break
        else:
            raise ControlFlowError(f"set_loop_options: {var!r} is not a variable of the "
                                   f"loop ({', '.join(n for n in names if n[0] != '<')})")
    return tuple(invariants)
