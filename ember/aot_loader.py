"""Loads an Ember AOT artifact (lib<name>.so, <name>.h, <name>.json) and calls it from Python.

This module and ember/aot_artifact.py are self-contained (the standard library, numpy and
ctypes; no Ember, no MLIR): `em.aot.compile` copies them into the artifact's folder (as
ember_aot_loader.py and ember_aot_artifact.py), so a process with only numpy can run it:

    import sys; sys.path.insert(0, "model_dir")
    import ember_aot_loader
    predict = ember_aot_loader.load("model_dir")
    y = predict(x)

`em.aot.load` imports this same module and passes Ember's exception classes, so errors
raised by compiled code are `em.errors.*` there; here they are stand-ins of the same names
and bases (`InvalidArgumentError` is a ValueError, `AssertionFailedError` also an
AssertionError, ...), with the same messages.

Before the library is loaded, the manifest, the target and the files are checked
(aot_artifact.py); after, each entry point must exist and the library's own statement of
its signatures must equal the manifest's. Any mismatch is an `ArtifactError` naming the
file.
"""

from __future__ import annotations

import ctypes
import json
import os
import re

import numpy as np

if __package__:  # ember.aot_loader
    from . import aot_artifact as artifact
else:  # ember_aot_loader.py in an artifact's folder, next to ember_aot_artifact.py
    import ember_aot_artifact as artifact

FORMAT, ArtifactError, read_manifest = artifact.FORMAT, artifact.ArtifactError, \
    artifact.read_manifest
canonical, checksum, file_sha256 = artifact.canonical, artifact.checksum, artifact.file_sha256


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
        lib = artifact.dlopen(path, record["files"][record["library"]])
    except OSError as e:
        raise classes["ArtifactError"](f"{path} does not load: {e}") from None
    return Library(lib, record, path, manifest, classes)


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

    def __repr__(self) -> str:
        entries = "; ".join(_signature(e.spec) for e in self.entries.values())
        variables = f", variables {', '.join(self.variables)}" if self.variables else ""
        return f"<Library {self._record['name']} ({self.path}): {entries}{variables}>"

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
        """The manifest record of the variable `name`: the name given to em.Variable
        ("scale") or its tensor name ("scale:0", as TensorFlow's Variable.name; tfcompile
        names a variable by its node, without the output index)."""
        spec = self.variables.get(name) if isinstance(name, str) else None
        if spec is None and isinstance(name, str):
            spec = self.variables.get(f"{name}:0")
        if spec is None:
            known = ", ".join(repr(_plain(n)) for n in self.variables)
            raise KeyError(f"{self._record['name']} has no variable {name!r}; its variables: "
                           f"{known or 'none (frozen into constants)'} (each also by its "
                           "tensor name, with ':0')")
        return spec

    def get_variable(self, name: str) -> np.ndarray:
        spec = self._variable(name)
        out = np.empty(spec["shape"], _dtype(spec["dtype"]))
        code = self._get(spec["name"].encode(), out.ctypes.data, out.nbytes)
        if code:
            self.raise_error(code)
        return out

    def set_variable(self, name: str, value) -> None:
        spec = self._variable(name)
        dtype = _dtype(spec["dtype"])
        array = np.asarray(_scalar(value, dtype) if _is_number(value) else value,
                           order="C")  # (np.ascontiguousarray makes a scalar 1-d)
        if array.dtype != dtype or list(array.shape) != spec["shape"]:
            raise ValueError(f"variable {name!r} is {_kind(dtype, spec['shape'])}, got "
                             f"{_kind(array.dtype, array.shape)}")
        code = self._set(spec["name"].encode(), array.ctypes.data, array.nbytes)
        if code:
            self.raise_error(code)


def _plain(name: str) -> str:
    """A variable's tensor name without the output index: "dense/kernel:0" -> "dense/kernel"."""
    return name[:-2] if name.endswith(":0") else name


def _kind(dtype: np.dtype, shape) -> str:
    """`float32[3, 4]`, or `a float32 scalar`."""
    return f"{dtype.name}{list(shape)}" if len(shape) else f"a {dtype.name} scalar"


def _signature(spec: dict) -> str:
    """`predict(x: float32[?, 784]) -> (float32[?, 10])` of an entry's manifest record."""
    def text(t):
        return t["dtype"] + "[" + ", ".join("?" if d is None else str(d)
                                            for d in t["shape"]) + "]"
    return (f"{spec['name']}(" + ", ".join(f"{i['name']}: {text(i)}" for i in spec["inputs"])
            + ") -> (" + ", ".join(text(o) for o in spec["outputs"]) + ")")


def _dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError("bfloat16 arrays need the ml_dtypes package") from None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _is_number(value) -> bool:
    """A Python number (not numpy's: np.float64 is a float, and keeps its dtype)."""
    return isinstance(value, (bool, int, float)) and not isinstance(value, np.generic)


def _scalar(value, dtype: np.dtype) -> np.ndarray:
    """A Python number as em.convert_to_tensor makes it for an input of `dtype`: of that
    dtype if it holds the value, else Ember's default (int32, int64 if too large; float32)."""
    if isinstance(value, bool) or isinstance(value, int) and dtype.kind not in "iufc":
        return np.asarray(value)
    if isinstance(value, int):
        if dtype.kind in "iu" and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
            dtype = np.dtype(np.int32 if -2**31 <= value < 2**31 else np.int64)
    elif dtype.kind not in "fc":
        dtype = np.dtype(np.float32)
    with np.errstate(over="ignore"):
        return np.asarray(value, dtype)


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

    def __repr__(self) -> str:
        return f"<Entry {self._library._record['name']}_{_signature(self.spec)}>"

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
        if isinstance(value, (list, tuple, dict)):  # as a ConcreteFunction refuses them
            traced = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1
                                                                else "") + ")"
            raise TypeError(f"{self.name}({', '.join(self._names)}): argument {name} has "
                            f"structure {value!r}, but it was traced with <ember.Tensor "
                            f"'{name}:0' shape={traced} dtype={dtype.name}>")
        array = _scalar(value, dtype) if _is_number(value) else np.asarray(value)
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

