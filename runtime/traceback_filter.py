"""Tracebacks without Ember's frames, as TensorFlow's and JAX's: an error raised through an
em.function call shows the user's frames (the call, and the lines of the function it traced),
not the tracer's, the dispatcher's and the backend's that it passed on its way out.

The entry points (`em.function`, `Function.__call__`, `Function.get_concrete_function`,
`ConcreteFunction.__call__`) re-raise what passes through them with `filtered`: a frame is
dropped if its module is Ember's, or if it is the standard library's or one of Ember's
dependencies' (numpy, the MLIR bindings, llvmlite) called from a dropped frame. The frame
of the entry point's own `raise` stays, as in TensorFlow. The exception, its message and
its chained causes are unchanged; only its `__traceback__` is.

`em.debugging.disable_traceback_filtering()` (or the environment variable
EMBER_TRACEBACK_FILTERING=off, read at each error) shows every frame, for reporting a bug in
Ember; the test suite turns it off so that failures show where they came from.
"""

from __future__ import annotations

import os
import types

ENV = "EMBER_TRACEBACK_FILTERING"
_enabled: bool | None = None  # None: the environment variable's (default on)
_STDLIB = tuple({d + os.sep for d in (os.path.dirname(os.__file__),
                                       os.path.realpath(os.path.dirname(os.__file__)))})
_DEPENDENCIES = frozenset({"numpy", "mlir", "llvmlite"})  # Ember's, which it calls


def enable_traceback_filtering() -> None:
    """Drops Ember's frames from the tracebacks of errors raised through em.function calls
    (the default)."""
    global _enabled
    _enabled = True


def disable_traceback_filtering() -> None:
    """Keeps every frame in tracebacks: Ember's too (to report a bug in Ember)."""
    global _enabled
    _enabled = False


def is_traceback_filtering_enabled() -> bool:
    """Whether tracebacks drop Ember's frames: as last set by `enable_traceback_filtering` /
    `disable_traceback_filtering`, else unless EMBER_TRACEBACK_FILTERING is off (or 0)."""
    if _enabled is not None:
        return _enabled
    return os.environ.get(ENV, "on").strip().lower() not in ("off", "0", "false", "no")


def _ember(frame: types.FrameType) -> bool:
    name = frame.f_globals.get("__name__")
    return isinstance(name, str) and (name == "ember" or name.startswith("ember."))


def _library(frame: types.FrameType) -> bool:
    """The standard library's or one of Ember's dependencies' (a user's library is kept)."""
    name = frame.f_globals.get("__name__")
    filename = frame.f_code.co_filename
    return (isinstance(name, str) and name.partition(".")[0] in _DEPENDENCIES) or \
        filename.startswith("<frozen ") or (filename.startswith(_STDLIB)
                                            and "-packages" + os.sep not in filename)


def filtered(error: BaseException) -> BaseException:
    """`error` with the Ember frames (and the library frames they called) dropped from its
    traceback, where filtering is enabled."""
    if not is_traceback_filtering_enabled():
        return error
    kept, dropping, tb = [], False, error.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if _ember(frame) or (dropping and _library(frame)):
            dropping = True
        else:
            kept.append(tb)
            dropping = False
        tb = tb.tb_next
    chain = None
    for tb in reversed(kept):
        chain = types.TracebackType(chain, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return error.with_traceback(chain)
