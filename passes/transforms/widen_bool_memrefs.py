"""ember-widen-bool-memrefs: store bool (i1) buffers as bytes.

Works around `finalize-memref-to-llvm` asserting on sub-byte element types
("integralElementType.getWidth() >= 8", MLIR 22.1; no upstream issue found in the stored
issue threads); numpy stores bools as bytes anyway. It can go, with its step in the CPU
backend's loops pipeline, once that lowering handles i1 memrefs.

Algorithm:
  1. Retype every memref<...xi1> value (block arguments, results) to memref<...xi8>.
  2. `memref.load` of i1 loads i8 and truncates; `memref.store` of i1 extends first;
     i1 globals get byte initial values; function types follow.

Before:
    %v = memref.load %m[%i] : memref<4xi1>
After:
    %b = memref.load %m[%i] : memref<4xi8>
    %v = arith.trunci %b : i8 to i1
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
from mlir import ir
from mlir.dialects import arith

from ember.dialects.ember.verifier import iter_ops
from ember.passes.base import Pass, Statistics


@dataclasses.dataclass(frozen=True)
class WidenBoolMemrefsPass(Pass):
    name: ClassVar[str] = "ember-widen-bool-memrefs"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        with ir.Location.unknown():
            widen_bool_memrefs(module)


def _widened(t: ir.Type):
    """memref<...xi1> as memref<...xi8> (same layout), memref<*xi1> as memref<*xi8>
    (a bool result of dynamic shape), else None."""
    if isinstance(t, ir.UnrankedMemRefType) and str(t.element_type) == "i1":
        return ir.UnrankedMemRefType.get(ir.IntegerType.get_signless(8), t.memory_space)
    if not isinstance(t, ir.MemRefType) or str(t.element_type) != "i1":
        return None
    return ir.MemRefType.get(t.shape, ir.IntegerType.get_signless(8), t.layout, t.memory_space)


def widen_bool_memrefs(module: ir.Module) -> None:
    """Stores i1 buffers as bytes: memref<...xi1> -> memref<...xi8>, loads `trunci`,
    stores `extui`. MLIR 22's memref-to-llvm asserts on sub-byte element types
    ("integralElementType.getWidth() >= 8"), and numpy bools are bytes anyway."""
    i1, i8 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(8)
    ops = iter_ops(module.operation)
    for op in ops:
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    if (wide := _widened(arg.type)) is not None:
                        arg.set_type(wide)
        for result in op.results:
            if (wide := _widened(result.type)) is not None:
                result.set_type(wide)
    for op in ops:  # every type is widened now
        name = op.name
        if name == "memref.load" and op.results[0].type == i1:
            op.results[0].set_type(i8)
            with ir.InsertionPoint.after(op), op.location:
                narrow = arith.TruncIOp(i1, op.results[0])
            op.results[0].replace_all_uses_except(narrow.result, narrow.operation)
        elif name == "memref.store" and op.operands[0].type == i1:
            with ir.InsertionPoint(op), op.location:
                op.operands[0] = arith.ExtUIOp(i8, op.operands[0]).result
        elif name == "memref.global" and (wide := _widened(
                ir.TypeAttr(op.attributes["type"]).value)) is not None:
            op.attributes["type"] = ir.TypeAttr.get(wide)
            value = op.attributes["initial_value"] if "initial_value" in op.attributes \
                else None
            if isinstance(value, ir.DenseElementsAttr):
                bits = np.full(wide.shape, bool(value.get_splat_value().value), np.int8) \
                    if value.is_splat else np.array(value).astype(np.int8)
                op.attributes["initial_value"] = ir.DenseElementsAttr.get(
                    np.ascontiguousarray(bits.reshape(wide.shape)), type=i8, shape=wide.shape)
        elif name == "func.func":
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            fix = [_widened(t) or t for t in ftype.inputs]
            op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                fix, [_widened(t) or t for t in ftype.results]))
