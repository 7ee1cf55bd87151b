"""Re-tracing a region for its gradient with the values it closed over when it was traced.

The gradient of an `scf.if` or `scf.while` traces the branch or loop body again (control.py).
Python closures bind late: a branch function reads the enclosing function's variables when it
runs, and by the time the gradient is taken the enclosing code may have rebound them (AutoGraph
turns `y = ...` after an `if` into a rebinding of the cell the branch reads). `frozen(fn)`
records the contents of the closure cells `fn` reaches (through the functions it closes over)
when it is made, and puts them back for the duration of each call.
"""

from __future__ import annotations

import functools
import types

_EMPTY = object()


def _cells(fn) -> list:
    """(cell, value) for each closure cell reachable from `fn`, once each."""
    out, seen_fns, seen_cells, stack = [], set(), set(), [fn]
    while stack:
        f = stack.pop()
        if id(f) in seen_fns:
            continue
        seen_fns.add(id(f))
        f = getattr(f, "python_function", f)
        if isinstance(f, types.MethodType):
            f = f.__func__
        if isinstance(f, functools.partial):
            stack.append(f.func)
            continue
        for cell in getattr(f, "__closure__", None) or ():
            if id(cell) in seen_cells:
                continue
            seen_cells.add(id(cell))
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not yet bound
                value = _EMPTY
            out.append((cell, value))
            if isinstance(value, (types.FunctionType, types.MethodType, functools.partial)):
                stack.append(value)
    return out


def _put(cell, value) -> None:
    if value is _EMPTY:
        try:
            del cell.cell_contents
        except ValueError:
            pass
    else:
        cell.cell_contents = value


def frozen(fn):
    """`fn`, called with its closure cells holding what they hold now (see the module
    docstring); the cells' later values are restored after each call."""
    cells = _cells(fn)
    if not cells:
        return fn

    def call(*args, **kwargs):
        now = []
        for cell, value in cells:
            try:
                now.append(cell.cell_contents)
            except ValueError:
                now.append(_EMPTY)
            _put(cell, value)
        try:
            return fn(*args, **kwargs)
        finally:
            for (cell, _), value in zip(cells, now):
                _put(cell, value)
    return call
