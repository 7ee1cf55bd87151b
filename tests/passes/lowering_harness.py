"""Compile-and-run for lowering tests: ember IR -> `convert-ember-to-linalg` -> the shipped
CPU backend (its bufferized, llvm and llvmir stages, then the llvmlite JIT).

The lowered module goes through `CpuBackend.lower(..., start="bufferized")` and runs as the
runtime runs compiled code (`jit.Executable` through an entry wrapper), so tests compare
the conversion's numerics with the numpy reference kernels on the path users get, without
the fusion and clean-up of the backend's linalg stage. Arguments may be declared with
dynamic sizes: the entry is built for the shapes of the arrays a call passes (one JIT per
function and input types).

    results = run_ember(TEXT, [x, y])          # list of numpy arrays, one per result
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from ember import backends
from ember.backends.cpu.backend import CpuBackend
from ember.backends.cpu.jit import Executable, entry_wrapper, jit_compile
from ember.backends.cpu.native_ir import error_sites
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.types import TensorType, parse_type
from ember.passes.ir_utils import functions, symbol_name
from ember.passes.pipeline import run_pipeline


def lower(text: str, context: ir.Context | None = None) -> ir.Module:
    """Parses ember IR and runs `convert-ember-to-linalg` on it (verified)."""
    context = context or make_context()
    with context, ir.Location.unknown():
        module = ir.Module.parse(text)
        run_pipeline(module, "convert-ember-to-linalg")
        module.operation.verify()
    return module


def _signature(fn: ir.Operation) -> tuple[list[TensorType], list[TensorType]]:
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    return [parse_type(str(t)) for t in ftype.inputs], [parse_type(str(t))
                                                        for t in ftype.results]


class Compiled:
    """A lowered (linalg on tensors) module, compiled by the CPU backend for the input
    shapes of each call; `run(name, inputs)`."""

    def __init__(self, linalg: ir.Module, backend: CpuBackend | None = None):
        self.linalg_text = str(linalg)
        self._context = linalg.context  # each compile parses the text anew, in this context
        self._backend = backend or backends.get("cpu").stages()  # as ember-compile
        self._signatures = {symbol_name(fn): _signature(fn) for fn in functions(linalg)
                            if fn.regions[0].blocks}
        self._executables: dict = {}

    def _executable(self, name: str, arg_types: list[TensorType]) -> Executable:
        key = (name, tuple(arg_types))
        if key not in self._executables:
            _, results = self._signatures[name]
            with self._context:
                module = ir.Module.parse(self.linalg_text)
                errors = error_sites(module)
                llvm_ir = self._backend.lower(module, "llvmir", start="bufferized")
            llvm_ir += entry_wrapper(name, arg_types + results)
            exe = Executable(jit_compile(self._backend, llvm_ir), name, arg_types, results)
            exe.errors = errors
            self._executables[key] = exe
        return self._executables[key]

    def run(self, name: str, inputs: list) -> list[np.ndarray]:
        """Calls function `name` on numpy `inputs`; returns its results as numpy arrays
        of the lowered types (linalg's integers are signless: ui8 reads as int8)."""
        declared, _ = self._signatures[name]
        arg_types = [TensorType(t.dtype, tuple(np.shape(x))) for t, x in zip(declared, inputs)]
        arrays = [_as(np.array(x, order="C", copy=None), t.dtype.np_dtype, name)
                  for x, t in zip(inputs, arg_types)]
        return self._executable(name, arg_types)(arrays)


def _as(x: np.ndarray, dtype: np.dtype, name: str) -> np.ndarray:
    """`x` viewed as `dtype`: an unsigned array where the lowered type is signless."""
    if x.dtype == dtype:
        return x
    if x.dtype.kind in "iu" and np.dtype(dtype).kind in "iu" and \
            x.dtype.itemsize == np.dtype(dtype).itemsize:
        return x.view(dtype)
    raise TypeError(f"@{name}: an argument of element type {np.dtype(dtype)} given as a "
                    f"{x.dtype} array")


def compile_ember(text: str, context: ir.Context | None = None) -> Compiled:
    """Lowers ember IR text to linalg; it compiles for each call's input shapes."""
    return Compiled(lower(text, context))


def run_ember(text: str, inputs: list, name: str = "main") -> list[np.ndarray]:
    """Compiles ember IR text and runs function `name` once on numpy `inputs`."""
    return compile_ember(text).run(name, inputs)

