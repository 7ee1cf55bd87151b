"""Converted code on disk: a process that converts a function an earlier one converted loads
the code object (marshal) instead of reading, parsing and transforming the source again
(bench case B: ~1.8 ms of a warm start's first call).

An entry is keyed by everything the conversion reads: the function's file (path and its
size, mtime, ctime and inode: the source), where the function is in it (first line, name, free
variables; for a lambda, the positions of its code too), the Python version (bytecode and
marshal format) and the same stats of AutoGraph's own source files. Functions without a
file on disk (the REPL, `exec`), and files modified in the last seconds (a second write in
the same clock tick could keep their stats), are converted every time and not stored.
Entries live in the compile cache's directory (`$EMBER_CACHE_DIR`, `~/.cache/ember`; none
when `EMBER_CACHE_DISABLE=1`) under `autograph/`, written atomically and checksummed: one
that does not check out is converted again and overwritten.
"""

from __future__ import annotations

import functools
import importlib.util
import marshal
import os
import sys
import threading
import time
import types

from ember.dialects.ember import digest

MAGIC = b"EMBER-AG-2\n"


RACY_NS = 5_000_000_000  # files modified this recently are not trusted to their stats


def _directory() -> str | None:
    """The compile cache's directory (backends/cpu/cache.default_directory: the same
    rules, read here because the frontend imports no backend)."""
    if os.environ.get("EMBER_CACHE_DISABLE") == "1":
        return None
    if os.environ.get("EMBER_CACHE_DIR"):
        return os.environ["EMBER_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember")


@functools.lru_cache(maxsize=1)
def _converters() -> str | None:
    """The digest of (path, size, mtime, ctime, inode) of every source file of AutoGraph
    (what converts), or None while one of them is racily clean. (Its digest, not the
    stats: each entry's key hashes it, and the stats' text is ~2 KB.) The ctime sees an
    edit that kept the size and set the mtime back (`touch -d`, an archive's extraction)."""
    stats = _stats(os.path.dirname(os.path.abspath(__file__)), [])
    newest = max((max(s[2], s[3]) for s in stats), default=0)
    if newest >= time.time_ns() - RACY_NS:
        return None
    return digest.hexdigest(repr(stats).encode())


def fingerprint_converters() -> None:
    """Takes `_converters()` now, when `import ember` has imported the converters
    (runtime/startup.py), where there is a cache directory: the fingerprint then describes
    the code that converts in this process, and an edit to a converter made later (in a
    notebook's long-lived process) cannot key the output of the converters in memory with
    the edited files' stats. (A directory set later has it taken at the first conversion.)"""
    if _directory() is not None:
        try:
            _converters()
        except OSError:  # a file it cannot stat: `import ember` goes on, a conversion says so
            pass


def _stats(folder: str, out: list) -> list:
    """`out` plus the `.py` files of `folder` and then of its folders (but `__pycache__`),
    in name order: os.walk's order, with a third of its cost (~0.1 ms of a warm start)."""
    try:
        with os.scandir(folder) as found:
            entries = sorted(found, key=lambda e: e.name)
    except OSError:  # (os.walk skips a folder it cannot list)
        return out
    for entry in entries:
        if entry.name.endswith(".py") and not entry.is_dir():
            s = os.stat(entry.path)
            out.append((entry.path, s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino))
    for entry in entries:
        if entry.name != "__pycache__" and entry.is_dir() and not entry.is_symlink():
            _stats(entry.path, out)
    return out


def _path(code: types.CodeType) -> str | None:
    """The entry's file for the conversion of `code`, or None where none may be used."""
    directory = _directory()
    converters = _converters() if directory is not None else None
    if converters is None:
        return None
    try:
        s = os.stat(code.co_filename)
    except (OSError, ValueError):  # no file: "<stdin>", "<string>", a cell
        return None
    if s.st_mtime_ns >= time.time_ns() - RACY_NS:
        return None
    key = digest.hexdigest(repr((
        sys.version, importlib.util.MAGIC_NUMBER, converters, code.co_filename,
        s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino, code.co_firstlineno, code.co_name,
        code.co_qualname, code.co_freevars,
        # lambdas on one line share the rest: where each one's code is tells them apart
        tuple(code.co_positions()) if code.co_name == "<lambda>" else None)).encode())
    return os.path.join(directory, "autograph", key[:2], key + ".code")


def load(code: types.CodeType) -> tuple[types.CodeType | None, str | None]:
    """(the converted code stored for `code`, or None; the entry's path, for `store`)."""
    path = _path(code)
    if path is None:
        return None, None
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError:
        return None, path
    payload = blob[len(MAGIC) + 65:]
    if not blob.startswith(MAGIC) or \
            digest.hexdigest(payload).encode() != blob[len(MAGIC):len(MAGIC) + 64]:
        return None, path
    try:
        converted = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None, path
    return (converted, path) if isinstance(converted, types.CodeType) else (None, path)


def store(path: str | None, converted: types.CodeType) -> None:
    """Writes `converted` to `path` (from `load`) atomically; a disk that refuses only
    costs the next process the conversion."""
    if path is None:
        return
    payload = marshal.dumps(converted)
    blob = MAGIC + digest.hexdigest(payload).encode() + b"\n" + payload
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except OSError:
        try:
            os.remove(tmp)
        except OSError:
            pass
