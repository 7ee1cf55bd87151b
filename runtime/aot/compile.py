"""`em.aot.compile`: traced functions -> an artifact folder with lib<name>.so, <name>.h,
<name>.json and the loader (ember/aot_loader.py), which needs only numpy.

  1. Each function becomes a ConcreteFunction for its signature (one entry point each).
  2. Its optimised module, signature tensors and extra arguments (variables, large
     captured constants) go to backends/cpu/aot/build.py, for the chosen target CPU.
  3. The C API (capi.py) is generated and linked with the objects (link.py), and with
     Ember's GEMM kernels for the target when an entry multiplies matrices
     (kernels.library_object).
  4. The header and the loader are written, then the manifest, last: signatures, dtypes,
     shapes (`null` for a `?` dim), versions, target, the sha256 of each file, and its
     own checksum (ember/aot_loader.py reads and checks it).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
import json
import os
import re
import shutil
import tempfile

import llvmlite.binding as llvm

from ember.backends.cpu import kernels
from ember.backends.cpu.aot import capi
from ember.backends.cpu.aot.build import AotError, Extra, build_entry
from ember.backends.cpu.aot.link import link
from ember.backends.cpu.aot.targets import named_cpu_features
from ember.backends.cpu.backend import CpuBackend, CpuOptions
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.types import TensorType
from ember.frontend.shape import TensorSpec
from ember.frontend.tracing import SymbolicTensor
from ember.runtime.aot.signature import parse_spec
from ember.runtime.concrete import ConcreteFunction
from ember.runtime.decorator import function
from ember.runtime.function import Function

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# names a C parameter cannot take: keywords, the entry's locals, and the types and libc
# functions its body uses
_C_KEYWORDS = frozenset(
    "auto bool break case char const continue default do double else enum extern float for "
    "goto if inline int long register restrict return short signed sizeof static struct "
    "switch typedef union unsigned void volatile while data code sites status lost free "
    "malloc memcpy snprintf int8_t int16_t int32_t int64_t uint8_t uint16_t intptr_t "
    "size_t NULL".split())
# what the C API defines as `<lib>_<suffix>` besides the entries (capi.py)
_API = ("last_error", "error_name", "free", "signature", "set_gemm_threads", "set_variable",
        "get_variable")


class ArtifactError(EmberError, ValueError):
    """An AOT artifact that is corrupt, changed after compilation, or not for this machine
    (raised by em.aot.load)."""


def compile(fn_or_concrete, signature=None, *, out_dir: str, loader, name: str | None = None,
            target_cpu: str = "host", freeze_variables: bool = True) -> dict:
    """Compiles functions ahead of time into `out_dir` (em.aot.compile); returns the
    manifest. See ember/aot.py for the arguments; `loader` is the loader module
    (ember/aot_loader.py), copied into the folder with its `artifact` module, and whose
    manifest format is written."""
    entries = concretes(fn_or_concrete, signature)
    name = name or entries[0][0]
    _check_identifier(name, "name")
    backend = CpuBackend(_options(target_cpu))
    variables, owners, built, arg_names, sigs = [], [], [], [], []
    for entry_name, _ in entries:
        _check_entry_name(name, entry_name)
    for entry_name, cf in entries:
        entry, names, py_names = _build(entry_name, cf, backend, freeze_variables,
                                        variables, owners, name)
        built.append(entry)
        arg_names.append(names)
        sig = capi.signature(entry, py_names, variables, names)
        sig["structure"] = "single" if isinstance(cf.structured_outputs, SymbolicTensor) \
            else "tuple"
        sigs.append(sig)
    os.makedirs(out_dir, exist_ok=True)
    _remove_old_artifact(out_dir, loader.FORMAT)
    target = {"requested": target_cpu, "triple": llvm.get_default_triple(),
              "cpu": backend.options.cpu, "features": backend.options.features or ""}
    about = f"compiled by Ember {_version('ember')} for {target['cpu']} ({target['triple']})"
    library, header = f"lib{name}.so", f"{name}.h"
    with tempfile.TemporaryDirectory(prefix="ember-aot-") as work:
        files = []
        for k, v in enumerate(variables):
            files.append(os.path.join(work, f"var{k}.bin"))
            with open(files[-1], "wb") as f:
                f.write(v.value.tobytes())
        objects = [e.obj for e in built]
        if any(b"openblas" in obj for obj in objects):  # gemm="ember" never retargets
            raise AotError("an entry calls OpenBLAS; an AOT library must not (this is a bug "
                           "in Ember: the entries are compiled with gemm=\"ember\")")
        elements = tuple(e for e, symbol in kernels.ENTRY.items()
                         if any(symbol.encode() in obj for obj in objects))
        gemm = bool(elements)
        if gemm:  # the kernels of the element types the entries multiply
            objects.append(kernels.library_object(backend.options.cpu,
                                                  backend.options.features or "", elements))
        with open(os.path.join(work, header), "w") as f:
            f.write(capi.header(name, built, arg_names, variables, about, gemm))
        source = capi.source(name, built, arg_names, variables, files,
                             capi.signatures_json(sigs), gemm)
        link(os.path.join(out_dir, library), source, objects, work, [f"{name}_*"])
        shutil.copyfile(os.path.join(work, header), os.path.join(out_dir, header))
    shutil.copyfile(loader.__file__, os.path.join(out_dir, "ember_aot_loader.py"))
    shutil.copyfile(loader.artifact.__file__, os.path.join(out_dir, "ember_aot_artifact.py"))
    record = {"format": loader.FORMAT, "name": name, "library": library, "header": header,
              "loader": "ember_aot_loader.py", "entries": sigs, "target": target,
              "frozen": bool(freeze_variables),
              "variables": [{"name": v.name, "dtype": v.ttype.dtype.name,
                             "shape": list(v.ttype.shape)} for v in variables],
              "codes": [cls or "OK" for _, cls in capi.CODES],
              "versions": {"ember": _version("ember"), "llvm": ".".join(
                  map(str, llvm.llvm_version_info)), "llvmlite": _version("llvmlite"),
                  "mlir": _version("xtc-mlir-python-bindings")},
              "files": {f: loader.file_sha256(os.path.join(out_dir, f))
                        for f in (library, header, "ember_aot_loader.py",
                                  "ember_aot_artifact.py")}}
    record["sha256"] = loader.checksum(record)
    with open(os.path.join(out_dir, f"{name}.json"), "wb") as f:
        f.write(loader.canonical(record))
    return record


def concretes(fn, signature) -> list[tuple[str, ConcreteFunction]]:
    """(entry name, concrete function) for each function to compile (step 1: tracing,
    which runs the user's code; ember-compile tells its errors from Ember's by this)."""
    if isinstance(fn, dict):
        if not fn:
            raise AotError("em.aot.compile got an empty dict of functions")
        if signature is not None and not isinstance(signature, dict):
            raise AotError("with a dict of functions, signature must be a dict of "
                           "signatures by the same names (or None)")
        out = []
        for key, value in fn.items():
            _check_identifier(key, "an entry name")
            out.append((key, _concrete(value, (signature or {}).get(key))[1]))
        return out
    return [_concrete(fn, signature)]


def _concrete(fn, signature) -> tuple[str, ConcreteFunction]:
    if isinstance(fn, ConcreteFunction):
        if signature is not None:
            raise AotError("a ConcreteFunction has its signature already: pass signature="
                           "None, or pass the em.function")
        return _entry_name(fn.name), fn
    if not isinstance(fn, Function):
        if not callable(fn):
            raise TypeError(f"em.aot.compile needs an em.function, a ConcreteFunction or a "
                            f"Python function, got {fn!r}")
        fn = function(fn)
    specs = fn.input_signature if signature is None else \
        [parse_spec(s) if isinstance(s, str) else s for s in signature]
    if specs is None:
        raise AotError(f"'{fn.__name__}' has no input_signature: pass signature=[em."
                       "TensorSpec(...), ...], or --signature 'f32[?,784]' to ember-compile "
                       "(a `None` or `?` dim stays dynamic in the library)")
    for s in specs:
        if not isinstance(s, TensorSpec):
            raise AotError(f"signature entries must be em.TensorSpec or 'f32[?,784]' "
                           f"strings, got {s!r}")
    if signature is not None and fn.input_signature is not None:
        # the specs asked for, not the input_signature's wider ones (InputSignatureError
        # for a spec wider than it): 'f32[4,3]' of a [?,3] signature compiles [4,3]
        fn.get_concrete_function(*specs)
        fn = Function(fn.python_function, input_signature=specs, autograph=fn._autograph,
                      backend=fn._backend, jit_compile=fn._jit_compile, name=fn._name,
                      pipeline=fn._pipeline_text)
    return _entry_name(fn.__name__), fn.get_concrete_function(*specs)


def _entry_name(name: str) -> str:
    return re.sub(r"\W", "_", name) if name else "function"


def _check_identifier(name: str, what: str) -> None:
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise AotError(f"{what} {name!r} must be a C identifier (letters, digits, _)")


def _check_entry_name(lib: str, entry: str) -> None:
    """AotError if entry point `<lib>_<entry>` would clash with a name of the C API."""
    clash = f"{lib}_{entry}"
    if entry in _API or entry.startswith("rt_"):
        what = "a function of the library's C API" if entry in _API else \
            "a prefix of the library's internal names"
    elif any(clash == f"{lib.upper()}_{code}" for code, _ in capi.CODES):
        what = "an error code macro of its header"
    else:
        return
    raise AotError(f"entry '{entry}' would be the C function {clash}, which is {what}: "
                   "give the entry another name (a key of the dict of functions)")


def _c_names(graph, lib: str) -> list[str]:
    """The C parameter names of the graph's inputs: no keyword, local or libc name of the
    entry's body (`in_` before it), none starting with `out` or `<lib>_`, and none equal
    to another's (a `?` dim's parameter `x_dim0` included: `_1`, `_2` after it)."""
    taken, names = set(), []
    for t in graph.inputs:
        base = re.sub(r"\W", "_", t._name) or "arg"
        if base[0].isdigit() or base.startswith(("out", f"{lib}_")) or base in _C_KEYWORDS:
            base = f"in_{base}"
        shape = t._ttype.shape or ()
        name, k = base, 0
        while name in taken or any(f"{name}_dim{i}" in taken
                                   for i, d in enumerate(shape) if d is None):
            k += 1
            name = f"{base}_{k}"
        names.append(name)
        taken |= {name} | {f"{name}_dim{i}" for i, d in enumerate(shape) if d is None}
    return names


def _build(entry_name: str, cf: ConcreteFunction, backend, freeze: bool, variables: list,
           owners: list, lib: str):
    """Step 2 for one concrete function: (entry, its inputs' C names, their Python
    names). Appends the variables it keeps as buffers to `variables` and their
    em.Variables to `owners` (one buffer per variable, whichever entries read it)."""
    graph = cf._graph
    if graph.callbacks:
        raise AotError(f"'{cf.name}' calls Python (em.py_function or a print to a Python "
                       "stream): an AOT library has no Python to call")
    if not isinstance(cf.structured_outputs, SymbolicTensor) and not (
            isinstance(cf.structured_outputs, (tuple, list)) and
            all(isinstance(o, SymbolicTensor) for o in cf.structured_outputs)):
        raise AotError(f"'{cf.name}' returns {cf.structured_outputs!r}: an entry returns a "
                       "tensor or a flat tuple or list of tensors")
    inputs = [t._ttype for t in graph.inputs]
    names, py_names = _c_names(graph, lib), [t._name for t in graph.inputs]
    extras, index = [], {}
    for kind, obj in graph.extra_args:
        if kind == "tensor":
            raise AotError(f"'{cf.name}' uses a tensor of an enclosing trace: compile the "
                           "outer function")
        if kind == "constant":
            extras.append(Extra(obj._value, TensorType(obj.dtype, obj._value.shape)))
            continue
        value = obj._numpy_array()
        extras.append(Extra(value, TensorType(obj.dtype, value.shape), obj.name))
        index[len(extras) - 1] = obj
    entry = build_entry(entry_name, cf._optimized_text(), graph.symbol, inputs, extras,
                        freeze, backend, str(cf._pipeline) if cf._pipeline else "")
    kept = []
    for k in entry.variables:
        found = [i for i, owner in enumerate(owners) if owner is index[k]]
        if not found:  # named when kept: two of one name in an entry differ too
            variables.append(dataclasses.replace(
                extras[k], name=_variable_name(extras[k].name, variables)))
            owners.append(index[k])
            found = [len(variables) - 1]
        kept.append(found[0])
    return dataclasses.replace(entry, variables=tuple(kept)), names, py_names


def _variable_name(base: str, taken: list) -> str:
    """The variable's name (`dense/kernel:0`), made unique among the `taken` variables' as
    TensorFlow does on a collision: `dense/kernel_1:0`, `dense/kernel_2:0`, ... (a name
    the caller could not tell apart from another's could not be set)."""
    names = {v.name for v in taken}
    stem, colon, index = base.rpartition(":")
    if not colon or not index.isdigit():
        stem, index = base, None
    k = 0
    name = base
    while name in names:
        k += 1
        name = f"{stem}_{k}" + (f":{index}" if index is not None else "")
    return name


def _options(target_cpu: str) -> CpuOptions:
    """Code-generation options for `target_cpu`: the host's CPU and features, or a named
    x86-64 CPU (an x86-64 level or a CPU of targets.FEATURES) with the features it
    implies, which the manifest records (the loader refuses a machine that lacks one).
    Products call Ember's own GEMM kernels (gemm="ember", linked into the library): an
    AOT library never calls OpenBLAS."""
    if target_cpu == "host":
        return CpuOptions(gemm="ember", threads=1)
    features = named_cpu_features(target_cpu)  # AotError before LLVM sees a bad name
    if not llvm.get_default_triple().startswith("x86_64"):
        raise AotError(f"target_cpu {target_cpu!r} is an x86-64 CPU and this machine is "
                       f"{llvm.get_default_triple()}: use target_cpu=\"host\"")
    return CpuOptions(cpu=target_cpu, features=features, gemm="ember", threads=1)


def _remove_old_artifact(out_dir: str, form: str) -> None:
    """Removes the files of an artifact compiled into `out_dir` before (as its manifest
    lists them), so that the folder holds one artifact."""
    for entry in os.listdir(out_dir):
        if not entry.endswith(".json"):
            continue
        path = os.path.join(out_dir, entry)
        with contextlib.suppress(OSError, ValueError):
            with open(path) as f:
                record = json.load(f)
            if isinstance(record, dict) and str(record.get("format", "")).startswith(
                    form.split("/")[0]):
                for name in record.get("files", {}):
                    with contextlib.suppress(OSError):
                        os.remove(os.path.join(out_dir, os.path.basename(name)))
                os.remove(path)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
