"""Loads an Ember AOT artifact (lib<name>.so, <name>.h, <name>.json) and calls it from Python.

This module is self-contained (the standard library, numpy and ctypes; no Ember, no
MLIR): `em.aot.compile` copies it into the artifact's folder, so a process with only
numpy can run the model:

    import sys; sys.path.insert(0, "model_dir")
    import ember_aot_loader
    predict = ember_aot_loader.load("model_dir")
    y = predict(x)

`em.aot.load` imports this same module and passes Ember's exception classes, so errors
raised by compiled code are `em.errors.*` there; here they are stand-ins of the same names
and bases (`InvalidArgumentError` is a ValueError, `AssertionFailedError` also an
AssertionError, ...), with the same messages.

Before the library is loaded, the manifest is checked (its own checksum, written in a
canonical form, so any changed byte is caught), then its format and target against this
machine, then the sha256 of every file it lists; after, each entry point must exist and
the library's own statement of its signatures must equal the manifest's. Any mismatch is
an `ArtifactError` naming the file.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import platform
import re
import shutil
import tempfile

import numpy as np

FORMAT = "ember-aot/1"
MANIFEST_SUFFIX = ".json"


class ArtifactError(ValueError):
    """An AOT artifact that is corrupt, changed after compilation, or not for this machine."""


class OpError(Exception):
    def __init__(self, op_name: str, message: str):
        self.op_name, self.detail = op_name, message
        super().__init__(f"'{op_name}' op {message}")


# Ember's classes of errors of compiled code (ember/errors.py), by name and bases
OpTypeError = type("OpTypeError", (OpError, TypeError), {})
OpShapeError = type("OpShapeError", (OpError, ValueError), {})
OpAttributeError = type("OpAttributeError", (OpError, ValueError), {})
InvalidArgumentError = type("InvalidArgumentError", (OpError, ValueError), {})
AssertionFailedError = type("AssertionFailedError", (InvalidArgumentError, AssertionError), {})


STAND_INS = {c.__name__: c for c in (ArtifactError, OpError, OpTypeError, OpShapeError,
                                     OpAttributeError, InvalidArgumentError,
                                     AssertionFailedError)}
_OP_ERRORS = ("OpError", "OpTypeError", "OpShapeError", "OpAttributeError",
              "InvalidArgumentError", "AssertionFailedError")
STAND_INS.update(MemoryError=MemoryError, RuntimeError=RuntimeError, ValueError=ValueError)


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


def load(folder: str, errors: dict | None = None) -> "Library":
    """The library in `folder`, checked (module docstring). `errors`: exception classes by
    name to raise in place of this module's stand-ins (em.aot.load passes Ember's)."""
    folder = os.path.abspath(folder)
    classes = {**STAND_INS, **(errors or {})}
    try:
        record, manifest = read_manifest(folder)
    except ArtifactError as e:
        raise classes["ArtifactError"](str(e)) from None
    path = os.path.join(folder, record["library"])
    try:
        lib = _dlopen(path, record["files"][record["library"]])
    except OSError as e:
        raise classes["ArtifactError"](f"{path} does not load: {e}") from None
    return Library(lib, record, path, manifest, classes)


# library path -> the sha256 of what this process loaded from it; (path, sha256) -> a
# library loaded from a copy
_loaded: dict = {}


def _dlopen(path: str, digest: str):
    """The library at `path` (of sha256 `digest`, checked). dlopen returns the library it
    loaded before from the same path, so a library compiled again into the same folder is
    loaded from a private copy (deleted once loaded) instead: edit, compile and load again
    works in one process."""
    if _loaded.setdefault(path, digest) == digest:
        return ctypes.CDLL(path)
    if (path, digest) in _loaded:
        return _loaded[path, digest]
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


def _symbol(lib, name: str, path: str, manifest: str, classes: dict):
    try:
        return getattr(lib, name)
    except AttributeError:
        raise classes["ArtifactError"](f"{path} has no symbol {name}, which {manifest} "
                                       "lists: the library and its manifest do not belong "
                                       "together") from None


class Library:
    """An AOT library: one callable per entry (`lib.predict(x)`, or `lib(x)` when there is
    only one), and its variables (`get_variable`, `set_variable`) when not frozen."""

    def __init__(self, lib, record: dict, path: str, manifest: str, classes: dict):
        self._lib, self._record, self.path, self._classes = lib, record, path, classes
        name = record["name"]
        stated = _symbol(lib, f"{name}_signature", path, manifest, classes)
        stated.restype = ctypes.c_char_p
        if json.loads(stated().decode()) != record["entries"]:
            raise classes["ArtifactError"](
                f"{path} states signatures that differ from {manifest}: the library and its "
                "manifest do not belong together (wrong signature)")
        self._error = _symbol(lib, f"{name}_last_error", path, manifest, classes)
        self._error.restype = ctypes.c_char_p
        self._free = _symbol(lib, f"{name}_free", path, manifest, classes)
        self._free.argtypes, self._free.restype = [ctypes.c_void_p], None
        self.entries = {e["name"]: Entry(self, e, _symbol(lib, f"{name}_{e['name']}", path,
                                                          manifest, classes))
                        for e in record["entries"]}
        self.variables = {v["name"]: v for v in record.get("variables", ())}
        for entry_name, entry in self.entries.items():
            if not hasattr(type(self), entry_name):
                setattr(self, entry_name, entry)
        if self.variables:
            self._set = _symbol(lib, f"{name}_set_variable", path, manifest, classes)
            self._get = _symbol(lib, f"{name}_get_variable", path, manifest, classes)
            for fn in (self._set, self._get):
                fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int64]

    @property
    def manifest(self) -> dict:
        return json.loads(json.dumps(self._record))

    def __call__(self, *args, **kwargs):
        if len(self.entries) != 1:
            raise TypeError(f"{self.path} has entries {', '.join(self.entries)}: call one "
                            "of them by name")
        return next(iter(self.entries.values()))(*args, **kwargs)

    def raise_error(self, code: int) -> None:
        message = (self._error() or b"").decode("utf-8", "replace")
        name = self._record["codes"][code] if 0 < code < len(self._record["codes"]) \
            else "RuntimeError"
        cls = self._classes.get(name, RuntimeError)
        match = re.fullmatch(r"'([^']+)' op (.*)", message, re.S)
        if name in _OP_ERRORS and match:
            raise cls(match.group(1), match.group(2))
        raise cls(message)

    def _variable(self, name: str) -> dict:
        if name not in self.variables:
            raise KeyError(f"no variable {name!r}; the variables: "
                           f"{', '.join(self.variables) or 'none (frozen into constants)'}")
        return self.variables[name]

    def get_variable(self, name: str) -> np.ndarray:
        spec = self._variable(name)
        out = np.empty(spec["shape"], _dtype(spec["dtype"]))
        code = self._get(name.encode(), out.ctypes.data, out.nbytes)
        if code:
            self.raise_error(code)
        return out

    def set_variable(self, name: str, value) -> None:
        spec = self._variable(name)
        array = np.ascontiguousarray(value)
        if array.dtype != _dtype(spec["dtype"]) or list(array.shape) != spec["shape"]:
            raise ValueError(f"variable {name!r} is {spec['dtype']}{spec['shape']}, got "
                             f"{array.dtype}{list(array.shape)}")
        code = self._set(name.encode(), array.ctypes.data, array.nbytes)
        if code:
            self.raise_error(code)


def _dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError("bfloat16 arrays need the ml_dtypes package") from None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


class _Owned:
    """An output the library allocated; freed with the library's free when the last array
    over it goes."""

    __slots__ = ("_free", "_pointer", "__array_interface__")

    def __init__(self, free, pointer: int, nbytes: int):
        self._free, self._pointer = free, pointer
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "version": 3,
                                    "data": (pointer if nbytes else 0, False)}

    def __del__(self):
        self._free(self._pointer)


class Entry:
    """One entry point: called with its tensor arguments (positionally or by name), checked
    as a ConcreteFunction checks them; returns an array, or a tuple of them."""

    def __init__(self, library: Library, spec: dict, fn):
        self._library, self.spec, self._fn = library, spec, fn
        self.name = spec["name"]
        self._names = [i["name"] for i in spec["inputs"]]
        self._in = [(_dtype(i["dtype"]), i["shape"]) for i in spec["inputs"]]
        self._out = [(_dtype(o["dtype"]), o["shape"]) for o in spec["outputs"]]
        argtypes = []
        for _, shape in self._in:
            argtypes += [ctypes.c_void_p] + [ctypes.c_int64] * shape.count(None)
        for _, shape in self._out:
            argtypes += [ctypes.c_void_p] if None not in shape else \
                [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64)]
        fn.argtypes, fn.restype = argtypes, ctypes.c_int

    def _error(self, text: str):
        return self._library._classes["InvalidArgumentError"](self.name, text)

    def _bind(self, args, kwargs) -> list:
        given = dict(zip(self._names, args))
        if len(args) > len(self._names):
            raise TypeError(f"{self.name}({', '.join(self._names)}) takes {len(self._names)} "
                            f"tensor arguments but {len(args)} were given")
        for key, value in kwargs.items():
            if key not in self._names or key in given:
                raise TypeError(f"{self.name}({', '.join(self._names)}) got an unexpected or "
                                f"repeated keyword argument: {key}")
            given[key] = value
        missing = [n for n in self._names if n not in given]
        if missing:
            raise TypeError(f"{self.name}({', '.join(self._names)}) is missing tensor "
                            f"arguments: {', '.join(missing)}")
        return [self._check(i, given[n]) for i, n in enumerate(self._names)]

    def _check(self, i: int, value) -> np.ndarray:
        dtype, shape = self._in[i]
        name = self._names[i]
        if isinstance(value, (np.ndarray, np.generic)):
            array = np.asarray(value)
        else:
            array = np.asarray(value)
            if array.dtype.kind in "biuf" and (array.dtype.kind == dtype.kind or
                                               array.dtype.kind in "iu" and
                                               dtype.kind in "iuf"):
                array = array.astype(dtype)
        if array.dtype != dtype:
            raise self._error(f"cannot compute {self.name} as input #{i} ({name}, zero-based) "
                              f"was expected to be a {dtype.name} tensor but is a "
                              f"{array.dtype.name} tensor")
        if len(array.shape) != len(shape) or any(
                d is not None and d != n for d, n in zip(shape, array.shape)):
            traced = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1
                                                                else "") + ")"
            raise self._error(f"input #{i} ({name}) has shape {tuple(array.shape)}, "
                              f"incompatible with the traced shape {traced}")
        return np.ascontiguousarray(array)

    def __call__(self, *args, **kwargs):
        arrays = self._bind(args, kwargs)
        call = []
        for array, (_, shape) in zip(arrays, self._in):
            call.append(array.ctypes.data)
            call += [n for d, n in zip(shape, array.shape) if d is None]
        outs, pending = [], []
        for dtype, shape in self._out:
            if None not in shape:
                outs.append(np.empty(shape, dtype))
                call.append(outs[-1].ctypes.data)
            else:
                pointer, sizes = ctypes.c_void_p(), (ctypes.c_int64 * len(shape))()
                outs.append(None)
                pending.append((len(outs) - 1, pointer, sizes, dtype))
                call += [ctypes.byref(pointer), sizes]
        code = self._fn(*call)
        if code:
            self._library.raise_error(code)
        for k, pointer, sizes, dtype in pending:
            shape = tuple(sizes)
            nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            raw = np.asarray(_Owned(self._library._free, pointer.value or 0, nbytes))
            outs[k] = np.ndarray(shape, dtype, buffer=raw) if nbytes else np.empty(shape,
                                                                                  dtype)
            if not nbytes:
                del raw
        if self.spec.get("structure") == "single":
            return outs[0]
        return tuple(outs)

