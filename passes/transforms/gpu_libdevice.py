"""ember-gpu-libdevice: the libm functions Ember's lowering calls become libdevice's.

A few special functions have no `math` op, so Ember's ember→linalg lowering calls libm
through a private declaration (`@lgammaf`, `@lgamma`: passes/conversions/ember_to_linalg/
special.py). On an NVIDIA GPU there is no libm; NVIDIA's libdevice, which
`gpu-module-to-binary` links into every kernel module, has the same functions under the
`__nv_` prefix. The CUDA backend runs this pass before outlining (every loop nest is a
kernel by then), so the outlined kernels call, and ptxas finds, `__nv_lgammaf`.

Algorithm:
  1. Each private, body-less `func.func` named in LIBDEVICE (unary) becomes an `llvm.func`
     declaration of the libdevice name (unless the module defines that name already).
  2. Each `func.call` of it becomes an `llvm.call` of that name: convert-gpu-to-nvvm would
     give a `func.func` declaration a `_mlir_ciface_` wrapper, which libdevice lacks.

Before:
    func.func private @lgammaf(f32) -> f32
    %y = func.call @lgammaf(%x) : (f32) -> f32
After:
    llvm.func @__nv_lgammaf(f32) -> f32
    %y = llvm.call @__nv_lgammaf(%x) : (f32) -> f32
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir
from mlir.dialects import llvm

from ember.passes.base import Pass, Statistics

# libm name -> libdevice name (https://docs.nvidia.com/cuda/libdevice-users-guide/).
LIBDEVICE = {"lgammaf": "__nv_lgammaf", "lgamma": "__nv_lgamma"}


@dataclasses.dataclass(frozen=True)
class GpuLibdevicePass(Pass):
    name: ClassVar[str] = "ember-gpu-libdevice"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        body = module.body.operations
        defined = {ir.StringAttr(op.attributes["sym_name"]).value
                   for op in body if "sym_name" in op.attributes}
        renamed = {}
        for op in list(body):
            op = op.operation
            if op.name != "func.func" or "sym_name" not in op.attributes:
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            target = LIBDEVICE.get(name)
            if target is None or target in defined or len(op.regions[0].blocks):
                continue
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            if len(ftype.inputs) != 1 or len(ftype.results) != 1:
                continue
            scalar = ftype.results[0]
            with ir.InsertionPoint(op), op.location:
                llvm.LLVMFuncOp(target, ir.TypeAttr.get(
                    ir.Type.parse(f"!llvm.func<{scalar}({ftype.inputs[0]})>")),
                    linkage=ir.Attribute.parse("#llvm.linkage<external>"))
            op.erase()
            renamed[name] = (target, scalar)
        if not renamed:
            return
        calls = []

        def visit(op):
            if op.name == "func.call" and \
                    ir.FlatSymbolRefAttr(op.attributes["callee"]).value in renamed:
                calls.append(op.operation)
            return ir.WalkResult.ADVANCE
        module.operation.walk(visit)
        for call in calls:  # a direct LLVM call: convert-gpu-to-nvvm adds no C wrapper
            target, scalar = renamed[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
            with ir.InsertionPoint(call), call.location:
                new = llvm.CallOp(scalar, list(call.operands), [], [],
                                  callee=ir.FlatSymbolRefAttr.get(target))
            call.results[0].replace_all_uses_with(new.result)
            call.erase()
            stats.add("calls")
        stats.add("declarations", len(renamed))
