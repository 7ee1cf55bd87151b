"""Values of variables that converted code cannot give a value: not yet assigned, assigned
in only one branch of a staged `if`, or a return value not yet set.

An `Undefined` stands where Python would have no binding. It raises as soon as the program
uses it (any operation, `bool`, iteration, conversion to a tensor), with the error Python
or AutoGraph would give and the user's line; until then it is inert, so a variable that is
only a temporary of one branch costs nothing.
"""

from __future__ import annotations

from ember.frontend.control_flow import ControlFlowError


class Undefined:
    """A variable with no value; `error()` is what using it raises."""

    __slots__ = ("name", "message", "kind")

    def __init__(self, name: str, message: str | None = None, kind: type = UnboundLocalError):
        self.name = name
        self.kind = kind
        self.message = message or (f"cannot access local variable '{name}' where it is not "
                                   "associated with a value")

    def error(self) -> Exception:
        return self.kind(self.message)

    def _raise(self, *args, **kwargs):
        raise self.error()

    def __repr__(self) -> str:
        return f"<undefined '{self.name}'>"

    def _as_tensor(self, *args, **kwargs):
        raise self.error()

    __bool__ = __len__ = __iter__ = __call__ = __getitem__ = __setitem__ = _raise
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _raise
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _raise
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __neg__ = __pos__ = __abs__ = _raise
    __lt__ = __le__ = __gt__ = __ge__ = __and__ = __rand__ = __or__ = __ror__ = _raise
    __xor__ = __rxor__ = __invert__ = __int__ = __float__ = __index__ = _raise
    __str__ = __format__ = __eq__ = __ne__ = __contains__ = _raise
    __hash__ = object.__hash__  # (identity: an Undefined may be kept in a set or dict)

    def __getattr__(self, attr: str):
        if attr.startswith("__"):  # protocols probed by copy, pickle, numpy: not uses
            raise AttributeError(attr)
        raise self.error()


class UndefinedReturnValue(Undefined):
    """`retval_` before a `return` set it: the function returns None if none does."""

    def __init__(self):
        super().__init__("retval_", "the function's return value is used before a return "
                         "statement set it", ControlFlowError)


def one_branch(name: str, where: str, defined_in: str) -> Undefined:
    return Undefined(name, f"'{name}' is assigned only in the {defined_in} branch of the "
                     f"`if` at {where}, whose condition is a tensor, and used after it: "
                     f"both branches are traced, so give '{name}' a value before the `if` "
                     f"or in both branches", ControlFlowError)


def find_undefined(value) -> Undefined | None:
    """The first Undefined in a (nested) structure, or None."""
    from ember.frontend import nest
    for leaf in nest.flatten(value):
        if isinstance(leaf, Undefined):
            return leaf
    return None
