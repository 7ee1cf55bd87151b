"""What compile-cache keys say about this machine and its compiler, found without LLVM.

A key (cache.py) names the host's CPU and features as LLVM sees them, LLVM's version, the
library files that generate code (`file_stamp`) and a hash of Ember's compiler source. Asking
llvmlite costs its import (~70 ms), more than a whole warm call should; hashing the
source reads ~170 files. So both answers are remembered in the disk cache's directory:

- `host-<fingerprint>.json` holds LLVM's answers (CPU name, features, version) for one
  fingerprint of the machine: the CPU as the kernel describes it (/proc/cpuinfo: vendor,
  family, model, stepping, flags) and llvmlite's library file (path, size, mtime, inode).
  Written by any process that has asked llvmlite. A process that compiles anything checks
  it against llvmlite first (`verify`): a record that disagrees is rewritten and the
  compile retried with LLVM's answers, so code is only ever generated for what LLVM says
  the host is, and a wrong record can only cost a cache miss.
- `source-<stat hash>` holds the hash of the compiler's source files for one list of
  their (path, size, mtime, ctime, inode) stats: editing any file changes the stats (its
  ctime even where its size is kept and its mtime set back), hence the hash; while a file
  changed less than a few seconds ago (a second edit could keep its stats), the files are
  hashed and nothing is remembered.
- `files-<hash of the packages' folders>` holds the list of those files, with the inode and
  mtime of each folder listed: a file or folder added, removed or renamed changes its
  folder's mtime, so a warm start stats ~15 folders instead of listing them (the files'
  own stats, which an edit changes, are still taken one by one).

Without a cache directory, or off Linux, these are computed each time, as before.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import json
import operator
import os
import struct
import sys
import threading
import time
from typing import Optional

from ember.dialects.ember import digest

RACY_NS = 5_000_000_000  # files modified this recently are hashed, not looked up
_STATS = operator.attrgetter("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino")

_CPUINFO_KEYS = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags",
                 "cpu", "isa", "features", "cpu implementer", "cpu part", "cpu variant")


def _directory() -> Optional[str]:
    from ember.backends.cpu.cache import default_directory
    return default_directory()


@functools.lru_cache(maxsize=1)
def llvmlite_library() -> Optional[str]:
    spec = importlib.util.find_spec("llvmlite")
    if spec is None or not spec.origin:
        return None
    folder = os.path.join(os.path.dirname(spec.origin), "binding")
    for name in ("libllvmlite.so", "libllvmlite.dylib", "llvmlite.dll"):
        if os.path.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    return None


@functools.lru_cache(maxsize=1)
def machine_fingerprint() -> Optional[str]:
    """A hash of the CPU as the kernel describes it and of llvmlite's library; None where
    either is unknown (then LLVM is asked). Found once per process: a first call asks for
    it twice (`remembered`, then `host`), and both find llvmlite and read /proc/cpuinfo."""
    library = llvmlite_library()
    try:
        with open("/proc/cpuinfo", "rb") as f:
            info = f.read().decode("utf-8", "replace")
        stat = os.stat(library) if library else None
    except OSError:
        return None
    if stat is None:
        return None
    lines = set()
    for line in info.splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() in _CPUINFO_KEYS:
            lines.add(f"{name.strip().lower()}={value.strip()}")
    if not lines:
        return None
    h = digest.hasher()
    for part in (sys.platform, os.uname().machine, *sorted(lines), library,
                 str(stat.st_size), str(stat.st_mtime_ns), str(stat.st_ino)):
        h.update(part.encode() + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def binding():
    """llvmlite's binding, loaded and its native target initialised (once)."""
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()  # module-level asm (shared.py's thunks)
    return llvm


def measured() -> tuple[str, str, str]:
    """LLVM's answers, from llvmlite (loads it): host CPU name, features, LLVM version."""
    llvm = binding()
    return (llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten(),
            ".".join(map(str, llvm.llvm_version_info)))


def target_complaints(cpu: str | None, features: str | None) -> list[str]:
    """What LLVM says of a CPU name or feature string it does not know, once each: it only
    warns on stderr ("'x' is not a recognized processor for this target (ignoring
    processor)") and compiles for a generic CPU. Empty when it knows both."""
    import tempfile
    target = binding().Target.from_default_triple()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as said:
        os.dup2(said.fileno(), 2)
        try:
            target.create_target_machine(cpu=cpu or "", features=features or "")
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        said.seek(0)
        text = said.read().decode(errors="replace")
    return list(dict.fromkeys(line.strip() for line in text.splitlines()
                              if "is not a recognized" in line))


_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def host() -> tuple[str, str, str]:
    """(CPU name, features, LLVM version) of this host: the remembered record for this
    machine's fingerprint if there is one, else LLVM's answers (then remembered)."""
    record = _record_path()
    if record is not None:
        try:
            with open(record, encoding="utf-8") as f:
                value = json.load(f)
            if isinstance(value, list) and len(value) == 3 and \
                    all(isinstance(v, str) for v in value):
                return tuple(value)
        except (OSError, ValueError):
            pass
    value = measured()
    _write(record, json.dumps(list(value)))
    return value


def verify() -> bool:
    """Whether `host()` is what LLVM says (asks llvmlite). If not, the record is rewritten
    and `host()` forgets its answer: the caller resolves its options again."""
    with _lock:
        value = measured()
        if host() == value:
            return True
        _write(_record_path(), json.dumps(list(value)))
        host.cache_clear()
        return False


def _record_path() -> Optional[str]:
    directory = _directory()
    if directory is None:
        return None
    fingerprint = machine_fingerprint()
    return None if fingerprint is None else os.path.join(directory, f"host-{fingerprint}.json")


def _write(path: Optional[str], text: str) -> None:
    """Writes `text` to `path` atomically (a temporary file renamed); a disk that refuses
    only costs the next process the slow answer."""
    if path is None:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        import tempfile  # (and its `random`: ~1 ms) only where a record is written
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass


def source_hash(packages) -> str:
    """The digest of the `.py` files of `packages` (their names and contents, in order),
    remembered per list of the files' stats (size, mtime, ctime, inode: the ctime moves on
    any write even where the mtime is set back)."""
    directory = _directory()
    roots = [root for package in packages for root in package.__path__]
    files = _source_files(roots, directory)
    try:
        found = list(map(os.stat, files))
    except OSError:  # a file gone, its folder's mtime not moved (a clock set back): listed
        files = _source_files(roots, None)
        found = list(map(os.stat, files))
    numbers = list(itertools.chain.from_iterable(map(_STATS, found)))
    stats = digest.hasher()  # (the count, the names, the numbers packed: no text per file)
    stats.update(f"{len(files)}\0".encode() + "\0".join(files).encode())
    try:  # (one repeated code: a format of a code per field costs ~0.05 ms to compile)
        stats.update(struct.pack(f"<{len(numbers)}q", *numbers))
    except struct.error:  # an inode number of 2**63 or more: as text, as deterministic
        stats.update(repr(numbers).encode())
    # A file written in the last seconds may be written again within the same clock tick,
    # with the same size: its stats would not change. Such files are hashed, not trusted
    # to a record (git's "racily clean" entries). Any write or utime sets the ctime to now.
    settled = max(numbers[2::4], default=0) < time.time_ns() - RACY_NS
    record = os.path.join(directory, f"source-{stats.hexdigest()}") \
        if directory and settled else None
    if record is not None:
        try:
            with open(record, "rb") as f:  # (text mode's ASCII codec: ~0.4 ms to import)
                remembered = f.read().strip()
            if len(remembered) == digest.HEX_LENGTH and \
                    not remembered.strip(b"0123456789abcdef"):  # (no `re`)
                return remembered.decode()
        except OSError:
            pass
    h = digest.hasher()
    for path in files:
        with open(path, "rb") as f:
            h.update(os.path.basename(path).encode() + b"\0" + f.read())
    _write(record, h.hexdigest())
    return h.hexdigest()


def _source_files(roots: list[str], directory: Optional[str]) -> list[str]:
    """The `.py` files under `roots`, in the order `source_hash` reads them: the listing
    remembered in `directory` while every folder it lists keeps its stats (adding,
    removing or renaming a file or a folder changes its folder's mtime; editing one does
    not, and `source_hash` stats the files themselves), else listed (~15 folders: ~0.5 ms
    of a warm start) and remembered once its folders are settled."""
    record = os.path.join(directory, "files-" + digest.hexdigest(
        "\0".join(roots).encode())) if directory else None
    remembered = _listing(record) if record else None
    if remembered is not None:
        return remembered
    folders, files = [], []
    for root in roots:
        for folder, found in sorted(_source_folders(root), key=lambda f: f[0]):
            folders.append(folder)
            files += [entry.path for entry in sorted(found, key=lambda e: e.name)]
    stats = [_folder_stat(folder) for folder in folders]
    if record and all(s is not None and s[1] < time.time_ns() - RACY_NS for s in stats):
        _write(record, json.dumps({"folders": [[f, *s] for f, s in zip(folders, stats)],
                                   "files": files}))
    return files


def _folder_stat(folder: str) -> Optional[tuple[int, int]]:
    try:
        s = os.stat(folder)
    except OSError:
        return None
    return s.st_ino, s.st_mtime_ns


def _listing(record: str) -> Optional[list[str]]:
    """The files of the listing remembered in `record`, if each of its folders still has
    the inode and mtime it had then; else None."""
    try:
        with open(record, "rb") as f:
            value = json.loads(f.read())
        folders, files = value["folders"], value["files"]
        if not all(map(isinstance, files, itertools.repeat(str))) or \
                any(_folder_stat(folder) != (ino, mtime) for folder, ino, mtime in folders):
            return None
    except (OSError, ValueError, TypeError, KeyError):
        return None
    return files


def _source_folders(root: str) -> list:
    """(folder, its `.py` entries) for `root` and every folder under it but `__pycache__`
    (which holds no source: skipping it halves what a warm start lists)."""
    try:
        with os.scandir(root) as it:
            entries = list(it)
    except OSError:
        return []
    out = [(root, [e for e in entries if e.name.endswith(".py") and e.is_file()])]
    for e in entries:
        if e.name != "__pycache__" and e.is_dir():
            out += _source_folders(e.path)
    return out


def file_stamp(path: Optional[str]) -> str:
    """A library file as a cache key sees it: path, size, mtime and inode ("unknown" where
    there is no such file). Any other build or install of it changes the stamp."""
    try:
        s = os.stat(path) if path else None
    except OSError:
        s = None
    return "unknown" if s is None else f"{path}\0{s.st_size}\0{s.st_mtime_ns}\0{s.st_ino}"


@functools.lru_cache(maxsize=1)
def mlir_stamp() -> str:
    """The MLIR bindings' native libraries (the `_mlir` extension's folder: its `_mlir*`
    modules and `libMLIR*` libraries) stamped as `file_stamp` does. (Their version from
    the `.dist-info` folders on sys.path cost a warm start ~0.6 ms of listing.)"""
    import mlir._mlir_libs  # (loaded with `import ember`)
    folder = os.path.dirname(mlir._mlir_libs.__file__)
    try:
        names = sorted(n for n in os.listdir(folder)
                       if n.startswith(("_mlir.", "libMLIR")) and not n.endswith(".py"))
    except OSError:
        names = []
    return "\0".join([file_stamp(os.path.join(folder, n)) for n in names]) or "unknown"


def remembered() -> bool:
    """Whether this process or the disk cache already knows `host()` without asking LLVM.
    If not, no process compiled for this host with this cache directory, so neither cache
    can hold code for it (tiered compilation's tier 0 then skips looking, runtime/tiers.py)."""
    if host.cache_info().currsize:
        return True
    record = _record_path()
    return record is not None and os.path.exists(record)
