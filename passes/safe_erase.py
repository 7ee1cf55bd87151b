"""`Operation.erase` that refuses an op whose results are still used, instead of aborting.

The MLIR bindings are built with assertions: erasing an op whose results have uses ends the
process ("LLVM ERROR: operation destroyed but still has uses"), with no Python frame to
say which pass or op. Pattern passes cannot get there (rewrite.py checks replacements),
but a pass's `run` may call `op.erase()` itself. Importing this module (passes/base.py
does) replaces the bindings' `erase` with one that checks first and raises
`EraseInUseError`, naming the op, its location and its first user, and saying what to do:
every `erase` in the process is checked, which costs one look at each result's uses.
"""

from __future__ import annotations

from mlir import ir

from ember.dialects.ember.errors import EmberError


class EraseInUseError(EmberError, ValueError):
    """An op erased while its results are still used (the bindings would abort)."""


def _describe(op) -> str:
    loc = str(op.location)
    return f"'{op.name}'" + (f" at {loc[4:-1]}" if loc.startswith("loc(") else "")


def _users(op):
    for i, result in enumerate(op.results):
        for use in result.uses:
            yield i, use.owner


def _checked(erase):
    def checked_erase(self) -> None:
        op = getattr(self, "operation", self)
        first = next(_users(op), None)
        if first is not None:
            index, user = first
            count = sum(1 for _ in _users(op))
            raise EraseInUseError(
                f"cannot erase {_describe(op)}: its result #{index} is still used by "
                f"{_describe(user)} ({count} use(s) in all). Replace the uses first "
                "(`op.results[i].replace_all_uses_with(new_value)`) or erase the users "
                "before the op; erasing a used op would abort the process")
        erase(self)
    checked_erase.__doc__ = erase.__doc__
    checked_erase.ember_checked = True
    return checked_erase


def install() -> None:
    """Replaces the bindings' `erase` by the checked one (once)."""
    base = ir.Operation.__mro__[1]  # _OperationBase: Operation and OpView share its erase
    if not getattr(base.erase, "ember_checked", False):
        base.erase = _checked(base.erase)


install()
