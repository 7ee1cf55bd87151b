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


def user_frame():
    """The innermost stack frame outside Ember (the user's code), or None."""
    frame = sys._getframe(1)
    internal = _internal_files
    while frame is not None:
        name = frame.f_code.co_filename
        is_internal = internal.get(name)
        if is_internal is None:
            is_internal = internal[name] = name.startswith(_INTERNAL) or name in _SKIP
        if not is_internal:
            return frame
        frame = frame.f_back
    return None


_internal_files: dict[str, bool] = {}


def user_location() -> tuple[str, int]:
    frame = user_frame()
    return ("<unknown>", 0) if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def definition_site(fn) -> tuple[str, int] | None:
    """Where `fn` is defined (file, first line), or None (a partial, a builtin)."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return None if code is None else (code.co_filename, code.co_firstlineno)
