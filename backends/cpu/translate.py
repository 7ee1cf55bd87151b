"""LLVM-dialect module -> LLVM IR text, through the MLIR C API (no Python wrapper exists).

`mlirTranslateModuleToLLVMIRToString` is exported by the bindings' `libMLIRPythonCAPI.so`;
it takes the module operation's C pointer (inside the `_CAPIPtr` capsule) and returns a
malloc'ed string that we free.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os

from mlir import ir
from mlir._mlir_libs import _mlir

from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.verifier import where


class TranslationError(EmberError, RuntimeError):
    """The LLVM-dialect module could not be translated (it still has non-LLVM ops)."""


@functools.lru_cache(maxsize=1)
def _capi():
    here = os.path.dirname(_mlir.__file__)
    found = sorted(glob.glob(os.path.join(here, "libMLIRPythonCAPI.so*")))
    if not found:
        raise TranslationError(f"libMLIRPythonCAPI.so not found next to {_mlir.__file__}")
    lib = ctypes.CDLL(found[0])
    fn = lib.mlirTranslateModuleToLLVMIRToString
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_void_p]
    capsule = ctypes.pythonapi.PyCapsule_GetPointer
    capsule.restype = ctypes.c_void_p
    capsule.argtypes = [ctypes.py_object, ctypes.c_char_p]
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [ctypes.c_void_p]
    return fn, capsule, libc.free


def to_llvm_ir(module: ir.Module, allowed: tuple[str, ...] = ()) -> str:
    """The LLVM IR of a module that contains only LLVM-dialect operations, and those named
    in `allowed` that MLIR translates too (the CUDA host's gpu.launch_func and gpu.binary:
    launches become mgpu* calls, the binaries constants)."""
    found: list[str] = []  # a nested non-LLVM op would crash the C API, not fail it

    def check(op) -> ir.WalkResult:
        if op.name.startswith("llvm.") or op == module.operation or op.name in allowed:
            return ir.WalkResult.ADVANCE
        found.append(f"'{op.name}' (at {where(op.location)})")
        return ir.WalkResult.INTERRUPT

    module.operation.walk(check, ir.WalkOrder.PRE_ORDER)
    if found:
        raise TranslationError(f"cannot translate {found[0]} to LLVM IR: lower the module to "
                               "the LLVM dialect first")
    translate, capsule, free = _capi()
    pointer = capsule(module.operation._CAPIPtr, b"mlir.ir.Operation._CAPIPtr")
    raw = translate(pointer)
    if not raw:
        raise TranslationError("MLIR could not translate the module to LLVM IR")
    try:
        return ctypes.string_at(raw).decode("utf-8")
    finally:
        free(raw)
