"""Process-wide switches (the only module that holds global settings; see STYLE.md)."""

from __future__ import annotations

import threading

_lock = threading.Lock()
_run_eagerly = False


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Makes every em.function run its Python body on each call, untraced (for debugging)."""
    global _run_eagerly
    with _lock:
        _run_eagerly = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    """Whether em.functions currently run their Python bodies eagerly."""
    return _run_eagerly


_verify_passes = False


def set_pass_verification(enabled: bool) -> None:
    """Verifies the IR after every optimisation pass of every trace (slower; tests use it)."""
    global _verify_passes
    _verify_passes = bool(enabled)


def verify_passes() -> bool:
    return _verify_passes
