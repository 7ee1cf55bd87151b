"""Checks of an Ember AOT artifact before its library is loaded, and the loading: the
manifest's own checksum (written in a canonical form, so any changed byte is caught), its
format, the target against this machine (architecture, and every instruction-set feature
the manifest records against /proc/cpuinfo: a missing one would be SIGILL), the sha256 of
every file it lists. Any mismatch is an `ArtifactError` naming the file.

Self-contained (the standard library only), as ember/aot_loader.py, which uses it:
`em.aot.compile` copies both into the artifact's folder (as ember_aot_artifact.py and
ember_aot_loader.py).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import platform
import shutil

FORMAT = "ember-aot/1"
MANIFEST_SUFFIX = ".json"


class ArtifactError(ValueError):
    """An AOT artifact that is corrupt, changed after compilation, or not for this machine."""


def canonical(record: dict) -> bytes:
    """The bytes a manifest is written as: sorted keys, no spaces, one final newline."""
    return (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()


def checksum(record: dict) -> str:
    """The manifest's own sha256: of its canonical form without the `sha256` field."""
    body = {k: v for k, v in record.items() if k != "sha256"}
    return hashlib.sha256(canonical(body)).hexdigest()


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# CPU features that x86-64 micro-architecture levels imply (LLVM's names; for manifests
# that list no features)
_LEVELS = {"x86-64-v2": ("sse4.2", "popcnt", "ssse3"),
           "x86-64-v3": ("sse4.2", "popcnt", "avx", "avx2", "fma", "bmi2", "f16c"),
           "x86-64-v4": ("sse4.2", "popcnt", "avx", "avx2", "fma", "bmi2", "f16c",
                         "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")}
# the instruction-set features checked, by LLVM name: their flag in /proc/cpuinfo
_CPUINFO = {f: f for f in ("sse", "sse2", "ssse3", "popcnt", "cx16", "avx", "avx2", "fma",
                           "bmi2", "f16c", "movbe", "aes", "adx", "gfni", "vaes",
                           "vpclmulqdq", "avx512f", "avx512bw", "avx512cd", "avx512dq",
                           "avx512vl", "avx512ifma", "avx512vbmi")}
_CPUINFO.update({"sse3": "pni", "sse4.1": "sse4_1", "sse4.2": "sse4_2", "bmi": "bmi1",
                 "lzcnt": "abm", "pclmul": "pclmulqdq", "sha": "sha_ni",
                 "avx512vnni": "avx512_vnni", "avx512bf16": "avx512_bf16",
                 "avx512fp16": "avx512_fp16", "avx512vbmi2": "avx512_vbmi2",
                 "avx512bitalg": "avx512_bitalg", "avx512vpopcntdq": "avx512_vpopcntdq",
                 "avx512vp2intersect": "avx512_vp2intersect", "avxvnni": "avx_vnni",
                 "amx-tile": "amx_tile", "amx-int8": "amx_int8", "amx-bf16": "amx_bf16",
                 "amx-fp16": "amx_fp16"})


def _host_flags() -> set | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def missing_features(target: dict) -> list[str]:
    """The CPU features the target needs that this machine lacks (as far as it can tell)."""
    wanted = set(_LEVELS.get(target.get("cpu", ""), ()))
    wanted |= {f[1:] for f in target.get("features", "").split(",") if f.startswith("+")}
    flags = _host_flags()
    if flags is None:
        return []
    return sorted(f for f in wanted & set(_CPUINFO) if _CPUINFO[f] not in flags)


def read_manifest(folder: str) -> tuple[dict, str]:
    """The manifest of the artifact in `folder` (checked: checksum, format, target and the
    files' hashes) and its path; ArtifactError naming the file otherwise."""
    found = [n for n in sorted(os.listdir(folder)) if n.endswith(MANIFEST_SUFFIX)]
    if len(found) != 1:
        raise ArtifactError(f"{folder} should hold one <name>.json manifest of an Ember AOT "
                            f"artifact, found {found or 'none'}")
    path = os.path.join(folder, found[0])
    with open(path, "rb") as f:
        raw = f.read()
    try:
        record = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise ArtifactError(f"{path} is corrupt: not JSON ({e})") from None
    if not isinstance(record, dict) or canonical(record) != raw or \
            record.get("sha256") != checksum(record):
        raise ArtifactError(f"{path} is corrupt or was edited: its content does not match "
                            "its checksum; compile the artifact again")
    if record.get("format") != FORMAT:
        raise ArtifactError(f"{path} is an artifact of format {record.get('format')!r}; this "
                            f"loader reads {FORMAT!r}: load it with the Ember that made it")
    _check_target(path, record.get("target", {}))
    for name, digest in record.get("files", {}).items():
        where = os.path.join(folder, name)
        if not os.path.isfile(where):
            raise ArtifactError(f"{where} is missing ({path} lists it)")
        if file_sha256(where) != digest:
            raise ArtifactError(f"{where} does not match its sha256 in {path}: the file is "
                                "corrupt or was changed after compilation")
    return record, path


def _check_target(path: str, target: dict) -> None:
    arch = target.get("triple", "").split("-")[0]
    here = platform.machine().lower().replace("amd64", "x86_64").replace("arm64", "aarch64")
    if arch != here:
        raise ArtifactError(f"{path}: the library was compiled for {arch}, this machine is "
                            f"{here}")
    lacking = missing_features(target)
    if lacking:
        raise ArtifactError(f"{path}: the library was compiled for CPU {target.get('cpu')} "
                            f"and needs {', '.join(lacking)}, which this CPU lacks; compile "
                            "with target_cpu=\"x86-64-v3\" (or \"host\" on this machine)")


# library path -> the sha256 of what this process loaded from it; (path, sha256) -> a
# library loaded from a copy
_loaded: dict = {}


def dlopen(path: str, digest: str):
    """The library at `path` (of sha256 `digest`, checked). dlopen returns the library it
    loaded before from the same path, so a library compiled again into the same folder is
    loaded from a private copy (deleted once loaded) instead: edit, compile and load again
    works in one process."""
    if _loaded.setdefault(path, digest) == digest:
        return ctypes.CDLL(path)
    if (path, digest) in _loaded:
        return _loaded[path, digest]
    import tempfile  # on use: ~5 ms of import ember
    folder = tempfile.mkdtemp(prefix=f"ember-aot-{digest[:16]}-")
    copy = os.path.join(folder, os.path.basename(path))
    try:
        shutil.copyfile(path, copy)
        if file_sha256(copy) != digest:
            raise OSError(f"{path} changed while it was being loaded")
        _loaded[path, digest] = ctypes.CDLL(copy)
        return _loaded[path, digest]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
