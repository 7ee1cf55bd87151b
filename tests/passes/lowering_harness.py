"""Compile-and-run for lowering tests: ember IR -> linalg -> LLVM -> MLIR's ExecutionEngine.

The lowered module goes through the tensor -> LLVM pipeline of DESIGN.md §10 and runs in
process, so tests can compare compiled numerics with the numpy reference kernels without the
CPU backend. Shapes must be static: results become out-parameters (allocated here).

    results = run_ember(TEXT, [x, y])          # list of numpy arrays, one per result
"""

from __future__ import annotations

import ctypes

import numpy as np
from mlir import ir, passmanager
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import get_ranked_memref_descriptor

from ember.dialects.ember import dtypes
from ember.backends.cpu import native
from ember.passes.transforms.copy_repeated_results import copy_repeated_results
from ember.passes.transforms.widen_bool_memrefs import widen_bool_memrefs
from ember.dialects.ember.irdl import make_context
from ember.passes.pipeline import run_pipeline

# DESIGN.md §10's pipeline, cut in two: `widen_bool_memrefs` runs between the halves.
TO_LOOPS = ("builtin.module(one-shot-bufferize{bufferize-function-boundaries "
            "function-boundary-type-conversion=identity-layout-map},"
            "buffer-results-to-out-params{hoist-static-allocs modify-public-functions},"
            "convert-linalg-to-loops,convert-scf-to-cf,expand-strided-metadata,lower-affine)")
LOOPS_TO_LLVM = ("builtin.module(finalize-memref-to-llvm,convert-math-to-llvm,"
                 "convert-math-to-libm,convert-arith-to-llvm,"
                 "func.func(llvm-request-c-wrappers),convert-func-to-llvm,convert-cf-to-llvm,"
                 "reconcile-unrealized-casts)")
# Same-size integer views for element types whose numpy dtype has no plain ctype.
_VIEW = {1: np.uint8, 2: np.uint16}


def lower(text: str, context: ir.Context | None = None) -> ir.Module:
    """Parses ember IR and runs `convert-ember-to-linalg` on it (verified)."""
    context = context or make_context()
    with context, ir.Location.unknown():
        module = ir.Module.parse(text)
        run_pipeline(module, "convert-ember-to-linalg")
        module.operation.verify()
    return module


def _result_dtypes(fn: ir.Operation) -> list[tuple[np.dtype, tuple]]:
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    out = []
    for t in ftype.results:
        shaped = ir.RankedTensorType(t)
        if not shaped.has_static_shape:
            raise ValueError(f"result type {t} must be static to run in the harness")
        out.append((dtypes.from_mlir(str(shaped.element_type)).np_dtype, tuple(shaped.shape)))
    return out


class Compiled:
    """A lowered module compiled to native code; call `run(name, inputs)`."""

    def __init__(self, linalg: ir.Module):
        self.linalg_text = str(linalg)
        self._signatures = {}
        for op in linalg.body.operations:
            if op.operation.name == "func.func" and op.operation.regions[0].blocks:
                name = ir.StringAttr(op.operation.attributes["sym_name"]).value
                self._signatures[name] = _result_dtypes(op.operation)
        with linalg.context, ir.Location.unknown():
            copy_repeated_results(linalg)
        passmanager.PassManager.parse(TO_LOOPS, linalg.context).run(linalg.operation)
        with linalg.context, ir.Location.unknown():
            widen_bool_memrefs(linalg)
        passmanager.PassManager.parse(LOOPS_TO_LLVM, linalg.context).run(linalg.operation)
        with linalg.context, ir.Location.unknown():
            native.install(linalg)  # defines the run-time checks' error sites
        self.module = linalg  # the engine needs the module alive
        self.engine = ExecutionEngine(linalg, opt_level=2)
        self._callbacks = []

    def register(self, name: str, callback) -> None:
        """Binds the external function `name` (C interface) to a ctypes callback."""
        self._callbacks.append(callback)
        self.engine.register_runtime(name, callback)

    def run(self, name: str, inputs: list) -> list[np.ndarray]:
        """Calls function `name`; returns its results as numpy arrays (ui8 reads as int8)."""
        inputs = [np.ascontiguousarray(x) for x in inputs]
        outputs = [np.zeros(shape, dtype) for dtype, shape in self._signatures[name]]
        args = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(_plain(a))))
                for a in inputs + outputs]
        self.engine.invoke(name, *args)
        return outputs


def _plain(a: np.ndarray) -> np.ndarray:
    """A view ctypes can describe: bool, f16 and bf16 as unsigned ints of the same size."""
    if a.dtype == np.bool_ or a.dtype.kind == "V" or a.dtype == np.float16 or \
            a.dtype == dtypes.bfloat16.np_dtype:
        return a.view(_VIEW[a.dtype.itemsize])
    return a


def compile_ember(text: str, context: ir.Context | None = None) -> Compiled:
    """Lowers ember IR text to linalg, then to LLVM, and JIT-compiles it."""
    return Compiled(lower(text, context))


def run_ember(text: str, inputs: list, name: str = "main") -> list[np.ndarray]:
    """Compiles ember IR text and runs function `name` once on numpy `inputs`."""
    return compile_ember(text).run(name, inputs)
