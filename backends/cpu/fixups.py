"""Workarounds for four MLIR 22 failures on the tensor -> LLVM path (the first three abort,
segfault or jump to a null address, so they must be avoided before the pipeline runs, not
caught after):

- `buffer-results-to-out-params{hoist-static-allocs}` segfaults on `return %1, %1` when %1
  is computed in the function: `copy_repeated_results` returns a copy for each repeat.
- `finalize-memref-to-llvm` asserts on i1 element types ("integralElementType.getWidth()
  >= 8"): `widen_bool_memrefs` stores bool buffers as bytes (numpy's layout anyway).
- non-contiguous `memref.copy` lowers to a call of `memrefCopy`, a runtime library function
  this process lacks (the JIT would jump to a null address): `copies_to_linalg`.
- bufferizing `tensor.concat` with an operand of size 0 along the concatenated dim fails
  ("offset 4 is out-of-bounds" for the empty slice at the end): `drop_empty_concat_operands`.

And one adaptation: `buffer-results-to-out-params` turns a result of dynamic shape into an
out-param too, which no caller can allocate (its size is known only at the end of the call):
`unrank_dynamic_results` returns such results unranked, which that pass leaves alone.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ember.passes.ir_utils import as_operation, symbol_name


def copy_repeated_results(module: ir.Module) -> None:
    """Returns a `linalg.copy` for each repeat of a value a function already returns:
    `buffer-results-to-out-params{hoist-static-allocs}` crashes (segfault) on
    `return %1, %1` when %1 is computed in the function."""
    for fn in module.body.operations:
        if fn.operation.name != "func.func" or not fn.operation.regions[0].blocks:
            continue
        for block in fn.operation.regions[0].blocks:
            ret = block.operations[len(block.operations) - 1]
            if ret.name != "func.return":
                continue
            seen = []
            for i, value in enumerate(list(ret.operands)):
                if isinstance(value, ir.BlockArgument) or not any(value == v for v in seen):
                    seen.append(value)
                    continue
                if not isinstance(value.type, ir.RankedTensorType):
                    continue  # scalars (i1, index) are returned by value, not in a buffer
                with ir.InsertionPoint(ret), ret.location:
                    t = ir.RankedTensorType(value.type)
                    sizes = [tensor.DimOp(value, arith.ConstantOp(ir.IndexType.get(), k)
                                          .result).result if t.is_dynamic_dim(k) else d
                             for k, d in enumerate(t.shape)]
                    empty = tensor.EmptyOp(sizes, t.element_type).result
                    ret.operands[i] = linalg.copy(value, outs=[empty])


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


def drop_empty_concat_operands(module: ir.Module) -> None:
    """Removes the operands of size 0 along the concatenated dim from each `tensor.concat`
    (they add nothing); a concat left with one operand becomes that operand."""
    ops = []
    module.operation.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
    for op in ops:
        if op.name != "tensor.concat":
            continue
        dim = ir.IntegerAttr(op.attributes["dim"]).value
        keep = [v for v in op.operands if ir.RankedTensorType(v.type).shape[dim] != 0]
        if len(keep) == len(op.operands):
            continue
        result = op.results[0]
        if not keep:  # nothing to copy (upstream's slices of a size-0 dim fail to verify)
            with ir.InsertionPoint(op), op.location:
                new = _empty_like(op.operands[0], ir.RankedTensorType(result.type))
            result.replace_all_uses_with(new)
        elif len(keep) == 1 and keep[0].type == result.type:
            result.replace_all_uses_with(keep[0])
        else:
            with ir.InsertionPoint(op), op.location:
                new = tensor.ConcatOp(result.type, dim, keep)
            result.replace_all_uses_with(new.result)
        op.erase()


def _empty_like(source: ir.Value, t: ir.RankedTensorType) -> ir.Value:
    """`tensor.empty` of type `t`, its dynamic sizes read from `source` (same rank)."""
    sizes = [tensor.DimOp(source, arith.ConstantOp(ir.IndexType.get(), i).result).result
             if t.is_dynamic_dim(i) else d for i, d in enumerate(t.shape)]
    return tensor.EmptyOp(sizes, t.element_type).result


def _widened(t: ir.Type):
    """memref<...xi1> as memref<...xi8> (same layout), else None."""
    if not isinstance(t, ir.MemRefType) or str(t.element_type) != "i1":
        return None
    return ir.MemRefType.get(t.shape, ir.IntegerType.get_signless(8), t.layout, t.memory_space)


def widen_bool_memrefs(module: ir.Module) -> None:
    """Stores i1 buffers as bytes: memref<...xi1> -> memref<...xi8>, loads `trunci`,
    stores `extui`. MLIR 22's memref-to-llvm asserts on sub-byte element types
    ("integralElementType.getWidth() >= 8"), and numpy bools are bytes anyway."""
    i1, i8 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(8)
    ops = []
    module.operation.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)
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


def copies_to_linalg(module: ir.Module) -> None:
    """Rewrites `memref.copy` as `linalg.copy` (which becomes loops): finalize-memref-to-llvm
    turns a copy between non-contiguous buffers into a call of the `memrefCopy` runtime
    function, which no library in this process provides — the JIT would jump to nowhere."""
    copies = []
    module.operation.walk(lambda op: (copies.append(op) if op.name == "memref.copy" else None)
                          or ir.WalkResult.ADVANCE)
    for op in copies:
        source, target = op.operands[0], op.operands[1]
        with ir.InsertionPoint(op), op.location:
            linalg.copy(source, outs=[target])
        op.erase()
