"""`em.aot`: ahead-of-time compilation to a self-contained shared library.

`compile` writes a folder: `lib<name>.so` (needs only libc, libm and libpthread), `<name>.h`
(its C API), `<name>.json` (the manifest: signatures, versions, target, file hashes) and
`ember_aot_loader.py` (with `ember_aot_artifact.py`), with which a Python process that
has only numpy runs it. `load` reads such a folder back. The code lives in runtime/aot and backends/cpu/aot.
"""

from __future__ import annotations

from ember import aot_loader
from ember.runtime.aot.signature import parse_spec

__all__ = ["AotError", "ArtifactError", "compile", "load", "parse_spec"]


def compile(fn_or_concrete, signature=None, *, out_dir: str, name: str | None = None,
            target_cpu: str = "host", freeze_variables: bool = True) -> dict:
    """Compiles functions ahead of time into the folder `out_dir`; returns its manifest.

    Args:
      fn_or_concrete: an `em.function`, a Python function, a ConcreteFunction, or a dict
        of them by entry name (one C entry point `<name>_<entry>` each).
      signature: the tensor arguments, as em.TensorSpec or text (`"f32[?,784]"`); a `None`
        (`?`) dim stays dynamic: the C API takes it as a parameter. Defaults to the
        function's input_signature. For a dict, a dict of signatures.
      out_dir: the folder to write (created; an artifact there before is replaced).
      name: the library's name (`lib<name>.so`, C prefix `<name>_`); default: the first
        function's name.
      target_cpu: "host" (this machine's CPU and features), "x86-64-v3" (AVX2),
        "x86-64-v4" (AVX-512), or an x86-64 CPU by its LLVM name ("skylake-avx512",
        "znver3", ...: the list is backends/cpu/aot/targets.py). The manifest records the
        target's features; `load` refuses a machine that lacks one.
      freeze_variables: variables become constants (True), or buffers of the library
        that the caller can set by name (`<name>_set_variable`, `Library.set_variable`:
        the name given to em.Variable, "scale", or its tensor name "scale:0"),
        initialised to their values now (False). Functions that assign variables are
        refused.

    Raises:
      AotError: what cannot be compiled ahead of time and why (assigning variables,
        calling Python, no C compiler, an unknown target CPU).
      NotCompilable: an op with no CPU lowering (as the JIT would fall back for).
    """
    from ember.runtime.aot import compile as _compile  # loads the CPU backend: on first use
    return _compile.compile(fn_or_concrete, signature, out_dir=out_dir, loader=aot_loader,
                            name=name, target_cpu=target_cpu,
                            freeze_variables=freeze_variables)


def load(out_dir: str) -> aot_loader.Library:
    """The library in `out_dir`, checked before it is loaded (the manifest's checksum,
    format and target, each file's sha256; then its symbols and signatures): callable
    with the signature checks of a ConcreteFunction, one entry per function
    (`lib.<entry>(...)`, or `lib(...)` for a single one). Errors of compiled code are
    Ember's classes with the JIT's messages.

    Raises:
      ArtifactError: naming the file that is corrupt, changed or not for this machine.
    """
    from ember import errors
    classes = {name: getattr(errors, name) for name in errors.__all__}
    return aot_loader.load(out_dir, errors=classes)


def __getattr__(name: str):
    if name in ("AotError", "ArtifactError"):  # defined with the compiler: loaded on use
        from ember import errors
        return getattr(errors, name)
    raise AttributeError(f"module 'ember.aot' has no attribute {name!r}")
