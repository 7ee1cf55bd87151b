"""Where in the user's code an op comes from: the innermost stack frame outside Ember.

Ops carry it as their location (`file:line`), and errors name it. Frames of Ember's own
packages, and of `contextlib` and `threading` that its context managers pass through, are
skipped; the verdict per file is cached.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import threading

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INTERNAL = tuple(os.path.join(_ROOT, d) + os.sep for d in
                  ("frontend", "runtime", "dialects", "backends", "passes", "ember", "tools"))
_SKIP = (contextlib.__file__, threading.__file__)


def user_frame(frame=None):
    """The innermost stack frame outside Ember (the user's code) from `frame` (default: the
    caller's) outwards, or None."""
    frame = frame or sys._getframe(1)
    verdicts = _internal_files
    while frame is not None:
        name = frame.f_code.co_filename
        is_internal = verdicts.get(name)  # `_is_internal`, inlined: a trace asks once per op
        if is_internal is None:
            is_internal = _is_internal(name)
        if not is_internal:
            return frame
        frame = frame.f_back
    return None


_internal_files: dict[str, bool] = {}


def user_stacklevel() -> int:
    """The `stacklevel` that makes a warning raised by the caller point at the user's code."""
    frame, level = sys._getframe(2), 2
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level


def _is_internal(name: str) -> bool:
    is_internal = _internal_files.get(name)
    if is_internal is None:
        is_internal = _internal_files[name] = name.startswith(_INTERNAL) or name in _SKIP
    return is_internal


def user_location() -> tuple[str, int]:
    """(file, line) of `user_frame()` from the caller (Ember's code), or ("<unknown>", 0)."""
    frame = user_frame(sys._getframe(1))
    return ("<unknown>", 0) if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def user_located(error):
    """`error` (an OpError raised eagerly by Ember's code) naming the user's line, where
    there is one: as the same error raised while tracing or by compiled code does."""
    file, line = user_location()
    return error.located(f"{file}:{line}") if line else error


def definition_site(fn) -> tuple[str, int] | None:
    """Where `fn` is defined (file, first line), or None (a partial, a builtin)."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return None if code is None else (code.co_filename, code.co_firstlineno)
