"""The compile cache: machine code per (module, function, input types, options, versions),
in memory and on disk.

Keys hash everything that changes the output: the module (the traced text and the
optimisation pipeline when that pipeline is Ember's own, so that a hit needs no
optimisation; the optimised text when it has a user's pass), the function, the static input
types, the specialisation pipeline, the backend options (target CPU and features,
optimisation level, BLAS, threads), ember's version, the MLIR bindings' and llvmlite's
library files (path, size, mtime, inode), LLVM's version, and a hash of the compiler's own
source files (host_target.py finds the host's and LLVM's part without loading LLVM, and
remembers the source hash per list of file stats).
Entries are object files plus the result types and, where the code links and loads as one,
the same code as a shared library (shared.py: a warm start loads it without LLVM). On
disk (default `~/.cache/ember`, or `$EMBER_CACHE_DIR`; `EMBER_CACHE_DISABLE=1` turns it
off) each entry is written to a temporary file and renamed into place, so readers never see
half an entry and processes can share the directory; each carries digests of its parts
(BLAKE2b: dialects/ember/digest.py; its header's digest first, the header holding those of
the object and of the library) and the key it was stored under, and an entry that does
not check out (truncated, corrupted, stored under another key) is deleted and rebuilt,
never loaded. A part is checked before it is used, and only then: a warm start that loads
the library never hashes the object, which is as big (~0.1 ms for bench case B's). An
entry that checks out but still cannot be used (its object holds another function, its
metadata does not fit: see compiler.py) is discarded and rebuilt the same way, once;
`DiskCache.discarded` counts both.

The disk cache is bounded (`EMBER_CACHE_MAX_MB`, default 2048; 0: no bound), least recently
used first: a hit touches its entry's mtime, and a store that takes the entries of its
group of folders (the key's first hex digit: 16 groups, as ccache bounds its 16) over a
sixteenth of the bound deletes that group's oldest until it fits again, never the entry
just stored. A store scans one group, so its cost does not grow with the whole cache.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import threading
import time
import weakref
from typing import Optional

from ember.backends.cpu import host_target
from ember.dialects.ember import digest

MAGIC = b"EMBER-OBJ-4\n"
MAX_SIZE_ENV = "EMBER_CACHE_MAX_MB"
DEFAULT_MAX_MB = 2048
GROUPS = 16  # the bound holds per group of folders: a key's first hex digit
STALE_TMP_S = 24 * 3600  # a temporary entry this old was left by a writer that died


@functools.lru_cache(maxsize=1)
def compiler_fingerprint() -> str:
    """A hash of the compiler's own source (dialect, passes, backend): any change to how
    code is generated invalidates cached objects, even without a version bump. Taken once
    per process, when `ember` is imported where there is a disk cache (runtime/startup.py)."""
    import ember.backends
    import ember.dialects
    import ember.passes
    return host_target.source_hash((ember.dialects, ember.passes, ember.backends))


@functools.lru_cache(maxsize=1)
def versions() -> tuple:
    """What a key says of the code generators: Ember (its version and source), the MLIR
    bindings' and llvmlite's library files (host_target.file_stamp) and LLVM's version."""
    import ember
    return ("ember", ember.__version__, compiler_fingerprint(), "mlir",
            host_target.mlir_stamp(), "llvmlite",
            host_target.file_stamp(host_target.llvmlite_library()), "llvm",
            host_target.host()[2])


def cache_key(*parts) -> str:
    """A hex digest naming one compiled artifact."""
    h = digest.hasher()
    for part in parts + versions():
        h.update(repr(part).encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def default_directory() -> Optional[str]:
    if os.environ.get("EMBER_CACHE_DISABLE") == "1":
        return None
    if os.environ.get("EMBER_CACHE_DIR"):
        return os.environ["EMBER_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember")


def max_bytes(raw: Optional[str] = None) -> Optional[int]:
    """The disk cache's bound in bytes: `raw` MiB, by default `EMBER_CACHE_MAX_MB` (unset:
    DEFAULT_MAX_MB); None for no bound ("0"). ValueError for anything else than a number
    >= 0."""
    raw = os.environ.get(MAX_SIZE_ENV, "") if raw is None else raw
    if not raw.strip():
        return DEFAULT_MAX_MB << 20
    try:
        mb = float(raw)
    except ValueError:
        mb = -1.0
    if not 0 <= mb < float("inf"):  # (NaN fails too)
        raise ValueError(f"{MAX_SIZE_ENV}={raw!r} is not a size: give the disk cache's bound "
                         "in MiB (a number >= 0; 0 means no bound), or unset it for "
                         f"{DEFAULT_MAX_MB}")
    return None if mb == 0 else max(1, int(mb * (1 << 20)))


class DiskCache:
    """Object files on disk, one per key, written atomically and checksummed, at most
    `limit` bytes of them (None: no bound; see the module doc)."""

    def __init__(self, directory: Optional[str], limit: Optional[int] = None):
        self.directory = directory
        self.limit = limit
        self.discarded = 0  # unusable entries found and removed (for tests and stats)
        self.last_discard_reason: Optional[str] = None
        self.evicted = 0  # entries deleted to keep within `limit`

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".obj")

    def load(self, key: str, check_object: bool = True) -> Optional[tuple[bytes, dict]]:
        """The entry of `key`: its object code and its metadata (`meta["shared"]`: the same
        code as a shared library, if stored), each checked; None if there is none or it
        does not check out (then it is discarded). Without `check_object`, an entry with a
        library comes with None for its object, unread: a caller whose library does not
        load loads the entry again, checked."""
        if self.directory is None:
            return None
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                blob = f.read()
        except OSError:
            return None
        entry = _unpack(blob, check_object)
        if entry is None:
            self.discard(key, "checksum or format mismatch")
            return None
        if entry[1].pop("key", None) != key:  # a valid entry, copied from another key
            self.discard(key, "stored under another key")
            return None
        code, meta = entry
        size = meta.pop("shared_bytes", 0)
        if size:  # the object, then the same code linked into a shared library
            code, meta["shared"] = code[:len(code) - size], bytes(code[len(code) - size:])
        if self.limit is not None:
            try:  # used now: the last entry of its group to go (a read-only cache: kept)
                os.utime(path)
            except OSError:
                pass
        return (bytes(code) if check_object or not size else None), meta

    def discard(self, key: str, reason: str) -> None:
        """Removes the entry of `key` (it cannot be used: `reason`), so it is rebuilt."""
        self.discarded += 1
        self.last_discard_reason = reason
        if self.directory is None:
            return
        try:
            os.remove(self._path(key))
        except OSError:
            pass

    def store(self, key: str, obj: bytes, meta: dict, shared: Optional[bytes] = None) -> None:
        """Stores object code `obj` with its metadata `meta` (JSON) and, if given, the
        same code linked into a shared library (shared.py; `load` returns it as
        `meta["shared"]`)."""
        if self.directory is None:
            return
        path = self._path(key)
        record = {**meta, "key": key}
        if shared:
            record["shared_bytes"] = len(shared)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            import tempfile  # where entries are stored: not on a warm start's path
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(_encode(obj + (shared or b""), record))
            os.replace(tmp, path)
            if self.limit is not None:
                self._bound(key)
        except OSError:  # a read-only or full disk only costs the next process a compile
            pass

    def _bound(self, key: str) -> None:
        """Deletes the least recently used entries of `key`'s group (never `key`'s) while
        the group holds more than its share of `limit`; and temporary files of writers
        that died (STALE_TMP_S old)."""
        entries, total = [], 0
        keep = self._path(key)
        stale = time.time() - STALE_TMP_S
        for digit in "0123456789abcdef":
            try:
                found = os.scandir(os.path.join(self.directory, key[0] + digit))
            except OSError:
                continue
            with found:
                for e in found:
                    try:
                        s = e.stat(follow_symlinks=False)
                    except OSError:  # removed meanwhile (another process's bound)
                        continue
                    if e.name.endswith(".obj"):
                        total += s.st_size
                        if e.path != keep:
                            entries.append((s.st_mtime_ns, e.path, s.st_size))
                    elif e.name.endswith(".tmp") and s.st_mtime < stale:
                        _remove(e.path)
        share = self.limit // GROUPS
        entries.sort()
        for _, path, size in entries:
            if total <= share:
                break
            if _remove(path):
                self.evicted += 1
            total -= size


def _remove(path: str) -> bool:
    try:
        os.remove(path)
        return True
    except OSError:  # gone already (another process), or not ours to remove
        return False


def _encode(code: bytes, meta: dict) -> bytes:
    """An entry's bytes: `code` is its object then, if `meta["shared_bytes"]` says so, its
    shared library; the header (`meta` and the digests of both) comes first, digested."""
    size = meta.get("shared_bytes", 0)
    view = memoryview(code)
    parts = {"object_digest": digest.hexdigest(view[:len(code) - size])}
    if size:
        parts["shared_digest"] = digest.hexdigest(view[len(code) - size:])
    header = json.dumps({**meta, **parts}, sort_keys=True).encode("utf-8")
    head = len(header).to_bytes(8, "little") + header
    return MAGIC + digest.hexdigest(head).encode() + b"\n" + head + code


def _decode(blob: bytes) -> Optional[tuple[bytes, dict]]:
    """The payload's code and metadata, or None if `blob` does not check out."""
    entry = _unpack(blob)
    return None if entry is None else (bytes(entry[0]), entry[1])


def _unpack(blob: bytes, check_object: bool = True) -> Optional[tuple[memoryview, dict]]:
    """As `_decode`, the code a view into `blob` (a warm start copies its object and its
    library out of the file's bytes once, not once per slice). The header is checked
    first, then the library; the object only with `check_object` or without a library."""
    start = len(MAGIC) + 65
    if not blob.startswith(MAGIC) or len(blob) < start + 8:
        return None
    view = memoryview(blob)
    end = start + 8 + int.from_bytes(view[start:start + 8], "little")
    if end > len(blob) or digest.hexdigest(view[start:end]).encode() != \
            blob[len(MAGIC):len(MAGIC) + 64]:
        return None
    try:
        meta = json.loads(bytes(view[start + 8:end]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(meta, dict):
        return None
    code = view[end:]
    size = meta.get("shared_bytes", 0)
    if not isinstance(size, int) or not 0 <= size <= len(code):
        return None
    split = len(code) - size
    if size and digest.hexdigest(code[split:]) != meta.pop("shared_digest", None):
        return None
    if (check_object or not size) and \
            digest.hexdigest(code[:split]) != meta.get("object_digest"):
        return None
    meta.pop("object_digest", None)
    return code, meta


SHARED_EXECUTABLES = 64


class MemoryCache:
    """Compiled executables of this process, by key (thread-safe), for sharing code
    between traces that compile to the same key and skipping the disk on a recompile.

    It never keeps code alive on its own for long: it finds every executable that is still
    in use somewhere (weakly: the runtime's per-trace caches own them), and holds strongly
    only the `capacity` most recently used ones (an LRU), so that code whose trace went
    away is freed once `capacity` newer entries have been used.
    """

    def __init__(self, capacity: int = SHARED_EXECUTABLES):
        self._live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self._recent: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity

    def get(self, key: str):
        with self._lock:
            value = self._live.get(key)
            if value is not None and self.capacity:
                self._recent[key] = value
                self._recent.move_to_end(key)
                self._trim()
            return value

    def put(self, key: str, value) -> None:
        with self._lock:
            self._live[key] = value
            if self.capacity:
                self._recent[key] = value
                self._recent.move_to_end(key)
            self._trim()

    def resize(self, capacity: int) -> None:
        """Keeps at most `capacity` (>= 0) unused executables alive from now on."""
        with self._lock:
            self.capacity = capacity
            self._trim()

    def _trim(self) -> None:
        while len(self._recent) > self.capacity:
            self._recent.popitem(last=False)

    def __len__(self) -> int:
        return len(self._live)


memory_cache = MemoryCache()
_disk: Optional[DiskCache] = None
_disk_lock = threading.Lock()


def disk_cache() -> DiskCache:
    """The disk cache for the current environment (re-read when EMBER_CACHE_DIR or
    EMBER_CACHE_MAX_MB changes; ValueError for a malformed EMBER_CACHE_MAX_MB)."""
    global _disk
    directory = default_directory()
    limit = max_bytes() if directory is not None else None
    with _disk_lock:
        if _disk is None or _disk.directory != directory or _disk.limit != limit:
            _disk = DiskCache(directory, limit)
        return _disk
