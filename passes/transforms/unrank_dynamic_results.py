"""ember-unrank-dynamic-results: return each result of dynamic shape unranked.

An adaptation rather than a bug: `buffer-results-to-out-params` turns a result of dynamic
shape into an out-parameter too, which no caller can allocate (its size is known only at the
end of the call), and leaves unranked results alone. It stays as long as the CPU backend
returns results through out-parameters.

Algorithm:
  1. For each public function, for each `func.return` operand of a ranked, not static
     tensor type: copy it first if it is an argument or a view of one (ownership-based
     deallocation would return an unranked clone of it, which does not lower).
  2. Return it through a `tensor.cast` to the unranked type, and retype the function.

Before:
    func.func @f(...) -> tensor<?xf32> { ... return %r : tensor<?xf32> }
After:
    func.func @f(...) -> tensor<*xf32> {
      %u = tensor.cast %r : tensor<?xf32> to tensor<*xf32>
      return %u : tensor<*xf32> }
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ember.passes.base import Pass, Statistics
from ember.passes.ir_utils import as_operation, symbol_name


@dataclasses.dataclass(frozen=True)
class UnrankDynamicResultsPass(Pass):
    name: ClassVar[str] = "ember-unrank-dynamic-results"

    def run(self, module: ir.Module, stats: Statistics) -> None:
        with ir.Location.unknown():
            unrank_dynamic_results(module)


_VIEWS = ("tensor.cast", "tensor.collapse_shape", "tensor.expand_shape",
          "tensor.extract_slice", "tensor.reshape")


def _views_argument(value: ir.Value) -> bool:
    """Whether `value` is an argument or a view of one: ownership-based deallocation would
    return an unranked clone of it, which does not lower to LLVM here."""
    while not isinstance(value, ir.BlockArgument):
        owner = value.owner
        owner = as_operation(owner)
        if isinstance(owner, ir.Operation) and owner.name == "scf.if":  # either branch's
            k = ir.OpResult(value).result_number
            return any(_views_argument(list(block.operations)[-1].operands[k])
                       for region in owner.regions for block in region.blocks)
        if not isinstance(owner, ir.Operation) or owner.name not in _VIEWS:
            return False
        value = owner.operands[0]
    return True


def _copy(value: ir.Value) -> ir.Value:
    """A `linalg.copy` of ranked `value` into a new tensor of its sizes."""
    t = ir.RankedTensorType(value.type)
    sizes = [tensor.DimOp(value, arith.ConstantOp(ir.IndexType.get(), k).result).result
             if t.is_dynamic_dim(k) else d for k, d in enumerate(t.shape)]
    return linalg.copy(value, outs=[tensor.EmptyOp(sizes, t.element_type).result])


def unrank_dynamic_results(module: ir.Module) -> list[str]:
    """Returns each result of dynamic shape of every public function as an unranked tensor
    (`tensor.cast` to `tensor<*x..>`); returns the names of the functions changed.

    `buffer-results-to-out-params` leaves unranked results alone, and `convert-func-to-llvm`
    returns them as `{i64 rank, ptr descriptor}` with the descriptor copied to malloc'ed
    memory: the caller (jit.entry_wrapper, jit.Executable) reads sizes, strides and buffer
    from it and frees both. One-shot bufferization returns a buffer the function allocated
    or a clone of it (ownership-based deallocation never frees what is returned; a result
    aliasing an argument is cloned), so the caller owns every such buffer."""
    changed = []
    for fn in module.body.operations:
        fn = fn.operation
        if fn.name != "func.func" or not fn.regions[0].blocks or \
                "sym_visibility" in fn.attributes:
            continue
        ret = fn.regions[0].blocks[0].operations[len(fn.regions[0].blocks[0].operations) - 1]
        if ret.name != "func.return":
            continue
        dynamic = False
        for i, value in enumerate(list(ret.operands)):
            t = value.type
            if not isinstance(t, ir.RankedTensorType) or t.has_static_shape:
                continue
            with ir.InsertionPoint(ret), ret.location:
                if _views_argument(value):  # a fresh buffer, not an unranked clone of it
                    value = _copy(value)
                ret.operands[i] = tensor.CastOp(
                    ir.UnrankedTensorType.get(t.element_type), value).result
            dynamic = True
        if dynamic:
            ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                list(ftype.inputs), [v.type for v in ret.operands]))
            changed.append(symbol_name(fn))
    return changed
