"""What converted code calls (`ag__.<name>`): each statement or operator runs as Python on
Python values and eager tensors, and is staged (`scf.if`, `scf.while`) when its condition
or iterable is a symbolic tensor of a trace.

Branches and loop bodies are functions of the state (the variables they may change, by
name) returning the new state, so a staged construct's results are exactly those
variables. Errors name the variable and the user's line: `where` is `file:line` of the
statement in the user's source, found from the converted code's frame.
"""

from __future__ import annotations

import sys

from ember.dialects.ember import dtypes
from ember.frontend import nest
from ember.frontend.autograph.undefined import (Undefined, UndefinedReturnValue,
                                                find_undefined, one_branch)
from ember.frontend.control_flow import ControlFlowError, trace_cond, trial_trace
from ember.frontend.while_loop import trace_while
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor_array import TensorArray
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tracing import SymbolicTensor

__all__ = ["ControlFlowError", "StagedIterable", "Undefined", "UndefinedReturnValue", "and_",
           "assert_stmt", "compare_chain", "for_stmt", "if_exp", "if_stmt", "ld", "not_",
           "or_", "python_only", "retval", "while_stmt"]


def _where(lineno: int) -> str:
    """`file:line` of the converted statement (its code runs in the user's file)."""
    frame = sys._getframe(2)
    return f"{frame.f_code.co_filename}:{lineno}"


def staged(value) -> bool:
    return isinstance(value, SymbolicTensor)


def ld(frame_locals: dict, names: tuple) -> tuple:
    """The current values of `names` (Undefined for one not bound yet)."""
    return tuple(frame_locals[n] if n in frame_locals else Undefined(n) for n in names)


def retval(value):
    """What the converted function returns: None where no `return` ran."""
    if isinstance(value, UndefinedReturnValue):
        return None
    missing = find_undefined(value)
    if missing is not None:
        raise missing.error()
    return value


# -- if --------------------------------------------------------------------------------


def if_stmt(test, body, orelse, state: tuple, names: tuple, lineno: int):
    """`if test:` body `else:` orelse, over the variables `names` (values `state`)."""
    if not staged(test):
        return body(*state) if test else orelse(*state)
    where = _where(lineno)
    return trace_cond(test, lambda: body(*state), lambda: orelse(*state),
                      _reconciler(names, where), "the `if` at " + where)


def if_exp(test, body, orelse, lineno: int):
    """`body() if test else orelse()`."""
    if not staged(test):
        return body() if test else orelse()
    where = _where(lineno)

    def reconcile(outs, enter):
        return list(_reconcile_one("the value", outs[0], outs[1], enter, where))
    return trace_cond(test, body, orelse, reconcile, "the conditional expression at " + where)


def _reconciler(names: tuple, where: str):
    def reconcile(outs, enter):
        true, false = list(outs[0]), list(outs[1])
        for k, name in enumerate(names):
            true[k], false[k] = _reconcile_one(name, true[k], false[k], enter, where)
        return [tuple(true), tuple(false)]
    return reconcile


_MISSING = Undefined("<missing>")  # one object: both branches yield it, and it merges


def _reconcile_one(name: str, a, b, enter, where: str):
    a_undef, b_undef = isinstance(a, Undefined), isinstance(b, Undefined)
    if a_undef and b_undef:
        return a, a  # the same value in both (undefined before and after)
    if a_undef or b_undef:
        if isinstance(a if a_undef else b, UndefinedReturnValue):
            return _placeholders(a, b, enter)
        return (one_branch(name, where, "false" if a_undef else "true"),) * 2
    if _is_tensorlike(a) or _is_tensorlike(b):
        if not (_is_tensorlike(a) and _is_tensorlike(b)):
            python = b if _is_tensorlike(a) else a
            if not _is_number(python):
                raise ControlFlowError(
                    f"'{name}' is a tensor in one branch of the `if` at {where} and the "
                    f"Python {type(python).__name__} {python!r} in the other; both "
                    f"branches are traced, so '{name}' must be a tensor in both")
        return _in_branch(a, 0, enter), _in_branch(b, 1, enter)
    if a is b or (_is_number(a) and _is_number(b) and a == b and type(a) is type(b)):
        return a, b
    if _is_number(a) and _is_number(b):  # different Python numbers: a tensor at run time
        return _in_branch(a, 0, enter), _in_branch(b, 1, enter)
    if nest.structure(a) == nest.structure(b) and nest.structure(a) != "*":
        pairs = [_reconcile_one(name, x, y, enter, where)
                 for x, y in zip(nest.flatten(a), nest.flatten(b))]
        return (nest.pack_sequence_as(a, [x for x, _ in pairs]),
                nest.pack_sequence_as(b, [y for _, y in pairs]))
    return a, b  # different structures: em.cond says how they differ


def _is_tensorlike(v) -> bool:
    return isinstance(v, Tensor) or (hasattr(v, "_as_tensor") and not isinstance(v, Undefined))


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float)) or type(v).__module__ == "numpy"


def _in_branch(value, i: int, enter):
    if isinstance(value, SymbolicTensor) or not (_is_number(value) or _is_tensorlike(value)):
        return value
    with enter(i):
        return convert_to_tensor(value)


def _placeholders(a, b, enter):
    """A return value set in one branch only: zeros of its type in the other, where the
    `do_return` flag guarantees it is never returned."""
    defined, i = (b, 0) if isinstance(a, UndefinedReturnValue) else (a, 1)
    defined = nest.map_structure(lambda v: _in_branch(v, 1 - i, enter), defined)
    types = nest.map_structure(_ZerosOf, defined)
    with enter(i):
        zeros = nest.map_structure(lambda z: z.make(), types)
    return (zeros, defined) if i == 0 else (defined, zeros)


# -- while and for ----------------------------------------------------------------------


def while_stmt(test, body, state: tuple, names: tuple, lineno: int, opts: dict | None = None):
    """`while test(*state): state = body(*state)`; staged once the test is a tensor."""
    while True:
        keep_going = test(*state)
        if staged(keep_going):
            return _staged_loop(test, body, state, names, _where(lineno), "while", opts)
        if not keep_going:
            return state
        state = body(*state)


def for_stmt(iterable, body, state: tuple, names: tuple, lineno: int, extra_test=None,
             opts: dict | None = None):
    """`for target in iterable: state = body(target, *state)`, stopping early when
    `extra_test(*state)` (break, return) is false."""
    if staged(iterable) or isinstance(iterable, StagedIterable) and \
            any(staged(t) for t in iterable.tensors):
        return _staged_for(iterable, body, state, names, _where(lineno), extra_test, opts)
    for item in iterable:
        if extra_test is not None:
            go_on = extra_test(*state)
            if staged(go_on):  # a tensor-dependent break: the rest runs under it
                state = trace_cond(go_on, lambda s=state, x=item: body(x, *s),
                                   lambda s=state: s, _reconciler(names, _where(lineno)))
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
    out = trace_while(lambda *s: test(*s), lambda *s: tuple(body(*s)), state,
                      _shape_invariants(opts, names, state), labels, relax,
                      opts.get("maximum_iterations"), f"the {kind} loop at {where}")
    return tuple(out)


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
            value = nest.map_structure(lambda t: _ZerosOf(t).make(), spec)
        elif isinstance(value, TensorArray) and not value.allocated:
            value = value.allocated_like(spec)
        out.append(value)
    return tuple(out)


def _is_set(value) -> bool:
    return not isinstance(value, UndefinedReturnValue) and not (
        isinstance(value, TensorArray) and not value.allocated)


class _ZerosOf:
    """Zeros of the dtype and (static) shape of a tensor or TensorSpec."""

    def __init__(self, value):
        t = value if isinstance(value, TensorSpec) else convert_to_tensor(value)
        self.dtype, self.dims = t.dtype, t.shape.dims

    def make(self):
        from ember.frontend.ops import zeros
        if self.dims is None or None in self.dims:
            raise ControlFlowError(
                "a `return` inside a staged loop returns a value of unknown shape "
                f"({self.dims}); set a variable before the loop, assign it in the loop, "
                "and return it after the loop instead")
        return zeros(self.dims, self.dtype)


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
        if not (_is_tensorlike(leaf) or _is_number(leaf)):
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
    and the buffers of growing TensorArrays (their first dimension)."""
    from ember.frontend.shape import TensorShape
    pairs = opts.get("shape_invariants") or []
    growing = any(isinstance(v, TensorArray) and v.dynamic_size for v in state)
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


# -- operators --------------------------------------------------------------------------


def and_(a_fn, b_fn):
    """`a and b`, short-circuiting: `b` is traced into a branch when `a` is a tensor."""
    a = a_fn()
    if not staged(a):
        return a and b_fn()
    return trace_cond(a, lambda: convert_to_tensor(b_fn()), lambda: a, None, "`and`")


def or_(a_fn, b_fn):
    a = a_fn()
    if not staged(a):
        return a or b_fn()
    return trace_cond(a, lambda: a, lambda: convert_to_tensor(b_fn()), None, "`or`")


_COMPARE = {"Lt": lambda a, b: a < b, "LtE": lambda a, b: a <= b, "Gt": lambda a, b: a > b,
            "GtE": lambda a, b: a >= b, "Eq": lambda a, b: a == b, "NotEq": lambda a, b: a != b,
            "Is": lambda a, b: a is b, "IsNot": lambda a, b: a is not b,
            "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b}


def compare_chain(first, *rest):
    """`first op1 b op2 c ...` (rest: (op name, lambda giving the operand)): each operand
    evaluated once, left to right; Python stops at the first false comparison, a tensor
    comparison combines the rest with logical_and (as `and` does on tensors)."""
    from ember.frontend.ops import logical_and
    left, result = first, None
    for op, operand in rest:
        right = operand()
        current = _COMPARE[op](left, right)
        if result is None:
            result = current
        elif staged(result) or staged(current):
            result = logical_and(convert_to_tensor(result), convert_to_tensor(current))
        else:
            result = result and current
        if not staged(result) and not result:
            return result
        left = right
    return result


def not_(a):
    if staged(a):
        from ember.frontend.ops import logical_not
        return logical_not(a)
    return not a


def assert_stmt(test, message_fn, lineno: int):
    """`assert test, message`: a tensor test is checked when the code runs."""
    if not staged(test):
        if not test:
            message = message_fn() if message_fn is not None else None
            raise AssertionError(*(() if message is None else (message,)))
        return
    from ember.frontend.effects import assert_true
    message = message_fn() if message_fn is not None else None
    assert_true(test, str(message) if message is not None else
                f"assertion failed at {_where(lineno)}")


def python_only(test, construct: str, lineno: int):
    """The test of a statement AutoGraph leaves as Python (it holds `construct`)."""
    if staged(test):
        raise ControlFlowError(
            f"the statement at {_where(lineno)} has a tensor condition but contains "
            f"{construct}, which AutoGraph cannot stage (both branches or every iteration "
            f"would be traced once, and {construct} would not run as written); move "
            f"{construct} out of it, or compute the condition in Python")
    return test
