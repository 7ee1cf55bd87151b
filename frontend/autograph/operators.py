"""What converted code calls (`ag__.<name>`, the loops in loops.py): each statement or
operator runs as Python on Python values and eager tensors, and is staged (`scf.if`) when
its condition is a symbolic tensor of a trace, or a variable (`em.Variable`, a distributed
one) inside a trace: that is read when the function runs, as TensorFlow's AutoGraph treats
a tf.Variable as the tensor it holds (`tensor_of`).

Branches and loop bodies are functions of the state (the variables they may change, by
name) returning the new state, so a staged construct's results are exactly those
variables. Errors name the variable and the user's line: `where` is `file:line` of the
statement in the user's source, found from the converted code's frame.
"""

from __future__ import annotations

import sys

from ember.frontend import nest
from ember.frontend.autograph.undefined import (Undefined, UndefinedReturnValue,
                                                find_undefined, one_branch)
from ember.frontend.control_flow import ControlFlowError, trace_cond
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tensor_array import TensorArray
from ember.frontend.tracing import SymbolicTensor, current_graph

__all__ = ["ControlFlowError", "Undefined", "UndefinedReturnValue", "and_",
           "assert_stmt", "compare_chain", "if_exp", "if_stmt", "ld", "ldc", "not_", "or_",
           "python_only", "retval", "retval_or_none", "stc"]


def where_of(lineno: int) -> str:
    """`file:line` of the converted statement (its code runs in the user's file)."""
    frame = sys._getframe(2)
    return f"{frame.f_code.co_filename}:{lineno}"


def staged(value) -> bool:
    return isinstance(value, SymbolicTensor)


def tensor_of(value):
    """`value`, except a variable inside a trace: its read (a symbolic tensor), which is
    what decides a condition or a loop when the function runs. Outside a trace a variable
    stays itself; Python reads it where it needs a value (`bool`, `__index__`)."""
    if isinstance(value, Tensor) or current_graph() is None:
        return value
    if callable(getattr(type(value), "_as_tensor", None)) and not isinstance(value, Undefined):
        return value._as_tensor()
    return value


def ld(frame_locals: dict, names: tuple) -> tuple:
    """The current values of `names` (Undefined for one not bound yet)."""
    return tuple(frame_locals[n] if n in frame_locals else Undefined(n) for n in names)


def ldc(load, name: str):
    """The value of a compound symbol (`self.total`, `l[0]`): `load()`, or Undefined where
    the attribute, key or index does not exist yet."""
    try:
        return load()
    except (AttributeError, KeyError, IndexError):
        return Undefined(name)


def stc(owner, slot, value, attribute: bool) -> None:
    """Sets the compound symbol `owner.slot` (`attribute`) or `owner[slot]` to `value`; an
    undefined value removes the attribute (or dict key) that a traced branch set, except
    one set in only one branch of a staged `if`: using it raises that error."""
    if not isinstance(value, Undefined) or value.kind is ControlFlowError:
        if attribute:
            setattr(owner, slot, value)
        else:
            owner[slot] = value
    elif attribute and slot in getattr(owner, "__dict__", {}):
        delattr(owner, slot)
    elif not attribute and isinstance(owner, dict):
        owner.pop(slot, None)


def retval(value):
    """What the converted function returns: None where no `return` ran."""
    if isinstance(value, UndefinedReturnValue):
        return None
    missing = find_undefined(value)
    if missing is not None:
        raise missing.error()
    return value


def retval_or_none(value, returned, lineno: int):
    """`retval` for a function that may run off its end (Python returns None there):
    None where no `return` ran. Which of the two happens must be known while tracing: a
    tensor that decides it is an error (a traced function returns one structure), as in
    TensorFlow, instead of a placeholder value returned on the path that ran off."""
    if staged(returned):
        raise ControlFlowError(
            f"the function defined at {where_of(lineno)} returns a value on some paths and "
            "runs off its end (returning None) on others, and a tensor decides which: a "
            "traced function returns one structure on every path. Add a `return` at its "
            "end (or an `else:` branch that returns) with a value of the same structure")
    if isinstance(returned, Tensor):
        returned = bool(returned)  # an eager tensor: decided now, as Python would
    return retval(value) if returned else None


# -- if --------------------------------------------------------------------------------


def if_stmt(test, body, orelse, state: tuple, names: tuple, lineno: int):
    """`if test:` body `else:` orelse, over the variables `names` (values `state`)."""
    test = tensor_of(test)
    if not staged(test):
        return body(*state) if test else orelse(*state)
    where = where_of(lineno)
    return trace_cond(test, lambda: body(*state), lambda: orelse(*state),
                      reconciler(names, where), "the `if` at " + where)


def if_exp(test, body, orelse, lineno: int):
    """`body() if test else orelse()`."""
    test = tensor_of(test)
    if not staged(test):
        return body() if test else orelse()
    where = where_of(lineno)

    def reconcile(outs, enter):
        return list(_reconcile_one("the value", outs[0], outs[1], enter, where))
    return trace_cond(test, body, orelse, reconcile, "the conditional expression at " + where)


def reconciler(names: tuple, where: str):
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
    if isinstance(a, TensorArray) and isinstance(b, TensorArray) and \
            a.allocated != b.allocated:  # first written in one branch: empty in the other
        a, b = _allocated_alike(a, b, enter)
    if is_tensorlike(a) or is_tensorlike(b):
        if not (is_tensorlike(a) and is_tensorlike(b)):
            python = b if is_tensorlike(a) else a
            if not is_number(python):
                raise ControlFlowError(
                    f"'{name}' is a tensor in one branch of the `if` at {where} and the "
                    f"Python {type(python).__name__} {python!r} in the other; both "
                    f"branches are traced, so '{name}' must be a tensor in both")
        return _one_dtype(name, _in_branch(a, 0, enter), _in_branch(b, 1, enter), where)
    if a is b or (is_number(a) and is_number(b) and a == b and type(a) is type(b)):
        return a, b
    if is_number(a) and is_number(b):  # different Python numbers: a tensor at run time
        return _one_dtype(name, _in_branch(a, 0, enter), _in_branch(b, 1, enter), where)
    if nest.structure(a) == nest.structure(b) and nest.structure(a) != "*":
        pairs = [_reconcile_one(name, x, y, enter, where)
                 for x, y in zip(nest.flatten(a), nest.flatten(b))]
        return (nest.pack_sequence_as(a, [x for x, _ in pairs]),
                nest.pack_sequence_as(b, [y for _, y in pairs]))
    return a, b  # different structures: em.cond says how they differ


def _one_dtype(name: str, a, b, where: str):
    """(a, b), which must be tensors of one dtype if both are tensors: the error names the
    variable (or the return value) and the user's line, not the staged `if`'s outputs."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or a.dtype == b.dtype:
        return a, b
    if name.startswith("retval_"):  # return_statements.py's variable: which branch is
        raise ControlFlowError(   # which depends on how the returns were rewritten
            f"the function returns {a.dtype.name} on one path and {b.dtype.name} on another "
            f"(the `return`s around {where}); a traced function returns one dtype: cast "
            f"the values returned to one (em.cast)")
    raise ControlFlowError(
        f"'{name}' is {a.dtype.name} in the true branch of the `if` at {where} and "
        f"{b.dtype.name} in the false branch; both branches are traced, so '{name}' must "
        f"have one dtype: cast one of them (em.cast)")


def _allocated_alike(a: TensorArray, b: TensorArray, enter):
    """(a, b) with the array nothing was written to in its branch given the (empty)
    buffer of the other's elements there, so both branches yield one type."""
    i, written, empty = (1, a, b) if a.allocated else (0, b, a)
    with enter(i):
        empty = empty.allocated_as(written)
    return (a, empty) if i == 1 else (empty, b)


def is_tensorlike(v) -> bool:
    return isinstance(v, Tensor) or (hasattr(v, "_as_tensor") and not isinstance(v, Undefined))


def is_number(v) -> bool:
    return isinstance(v, (bool, int, float)) or type(v).__module__ == "numpy"


def _in_branch(value, i: int, enter):
    if isinstance(value, SymbolicTensor) or not (is_number(value) or is_tensorlike(value)):
        return value
    with enter(i):
        return convert_to_tensor(value)


def _placeholders(a, b, enter):
    """A return value set in one branch only: zeros of its type in the other, where the
    `do_return` flag guarantees it is never returned."""
    defined, i = (b, 0) if isinstance(a, UndefinedReturnValue) else (a, 1)
    defined = nest.map_structure(lambda v: _in_branch(v, 1 - i, enter), defined)
    types = nest.map_structure(ZerosOf, defined)
    with enter(i):  # a `?` dim is 0 there: the branches merge to `?`
        zeros = nest.map_structure(lambda z: z.make(unknown_dims_empty=True), types)
    return (zeros, defined) if i == 0 else (defined, zeros)


class ZerosOf:
    """Zeros of the dtype and (static) shape of a tensor or TensorSpec."""

    def __init__(self, value):
        t = value if isinstance(value, TensorSpec) else convert_to_tensor(value)
        self.dtype, self.dims = t.dtype, t.shape.dims

    def make(self, unknown_dims_empty: bool = False):
        """The zeros; a `?` dim of size 0 with `unknown_dims_empty` (a branch's placeholder,
        whose type merges with the other branch's), else an error (a loop variable keeps
        its type)."""
        from ember.frontend.ops import zeros
        if unknown_dims_empty and self.dims is not None:
            return zeros([0 if d is None else d for d in self.dims], self.dtype)
        if self.dims is None or None in self.dims:
            raise ControlFlowError(
                "a `return` inside a staged loop returns a value of unknown shape "
                f"({self.dims}); set a variable before the loop, assign it in the loop, "
                "and return it after the loop instead")
        return zeros(self.dims, self.dtype)


# -- operators --------------------------------------------------------------------------


def and_(a_fn, b_fn):
    """`a and b`, short-circuiting: `b` is traced into a branch when `a` is a tensor."""
    a = tensor_of(a_fn())
    if not staged(a):
        return a and b_fn()
    return trace_cond(a, lambda: convert_to_tensor(b_fn()), lambda: a, None, "`and`")


def or_(a_fn, b_fn):
    a = tensor_of(a_fn())
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
    a = tensor_of(a)
    if staged(a):
        from ember.frontend.ops import logical_not
        return logical_not(a)
    return not a


def assert_stmt(test, message_fn, lineno: int):
    """`assert test, message`: a tensor test is checked when the code runs."""
    test = tensor_of(test)
    if not staged(test):
        if not test:
            message = message_fn() if message_fn is not None else None
            raise AssertionError(*(() if message is None else (message,)))
        return
    from ember.frontend.effects import assert_true
    message = message_fn() if message_fn is not None else None
    assert_true(test, str(message) if message is not None else
                f"assertion failed at {where_of(lineno)}")


def python_only(test, construct: str, lineno: int):
    """The test of a statement AutoGraph leaves as Python (it holds `construct`)."""
    if staged(tensor_of(test)):
        raise ControlFlowError(
            f"the statement at {where_of(lineno)} has a tensor condition but contains "
            f"{construct}, which AutoGraph cannot stage (both branches or every iteration "
            f"would be traced once, and {construct} would not run as written); move "
            f"{construct} out of it, or compute the condition in Python")
    return test
