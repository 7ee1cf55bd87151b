"""What the CPU backend can compile: the checks that raise `NotCompilable` (backends/base.py)
on a specialised module before anything is lowered: ops that run only
on the host, ops without a CPU lowering, result ranks that depend on run-time values,
string tensors, tensors larger than 2**62 bytes.
"""

from __future__ import annotations

from mlir import ir

from ember.backends.base import NotCompilable
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.types import TensorType
from ember.dialects.ember.verifier import find_op, iter_ops, where
from ember.passes.ir_utils import symbol_name, symbol_table


def check_compilable(module: ir.Module, symbol: str,
                     host_calls: bool = False) -> list[TensorType]:
    """The (ranked) result types of `@symbol`, or NotCompilable naming what stands in the
    way. Host callbacks (py_function, dataset loops) are compiled only with `host_calls`
    (the CPU compiler, host_call_lowering.py), and then only where their types are ranked."""
    fn = function_named(module, symbol)
    _check_no_strings(fn)
    if host_calls:
        from ember.backends.cpu import host_call_lowering  # the lowering's: not on a cache hit
        host_call_lowering.check(module, fn)
    else:  # nested calls are inlined: a call left is a host callback
        call = find_op(fn, lambda op: op.name == "func.call")
        if call is not None:
            raise NotCompilable(f"'{call.name}' (at {where(call.location)}) runs on the host",
                                NotCompilable.Reason.HOST_ONLY)
    _no_giant_tensors(fn)
    _no_rank_from_values(fn)
    # the conversions' registry: imported when code is compiled, not when the cache has it
    from ember.passes.conversions.ember_to_linalg import unlowerable_ops
    blocked = unlowerable_ops(module)
    if blocked:
        op = blocked[0]
        raise NotCompilable(f"'{op.name}' (at {where(op.location)}) has no CPU lowering for "
                            "these types")
    results = []
    for t in ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).results:
        rt = type_from_mlir(t)
        if not isinstance(rt, TensorType) or rt.shape is None:
            raise NotCompilable(f"the rank of result type {rt} depends on run-time values")
        results.append(rt)
    return results


def _no_rank_from_values(fn: ir.Operation) -> None:
    """NotCompilable naming the first op whose result rank is unknown until its operands'
    sizes are: its traced result has `?` dims, but its operand types of this call give a
    different rank (squeeze of `?` dims, which drops the dims that turn out to be 1). A
    buffer of unknown rank has no loop nest to fill it, so the interpreter runs it."""
    from ember.dialects.ember.base import REGISTRY, OpError
    from ember.passes.ir_utils import decoded_attrs
    for op in iter_ops(fn):
        spec = REGISTRY.get(op.name)
        if spec is None or spec.upstream or all(
                not isinstance(r.type, ir.RankedTensorType) or r.type.has_static_shape
                for r in op.results):
            continue
        operands = tuple(type_from_mlir(v.type) for v in op.operands)
        if any(isinstance(t, TensorType) and t.shape is None for t in operands):
            continue
        try:
            inferred = spec.infer_types(operands, decoded_attrs(op))
        except (OpError, TypeError, ValueError, KeyError):
            continue  # raised when the op runs (the lowering's checks.fail)
        for r, t in zip(op.results, inferred):
            declared = type_from_mlir(r.type)
            if isinstance(t, TensorType) and isinstance(declared, TensorType) and \
                    t.shape is not None and declared.shape is not None and \
                    len(t.shape) != len(declared.shape):
                raise NotCompilable(f"'{op.name}' (at {where(op.location)}): the rank of "
                                    f"its result {declared} depends on run-time values")


def _check_no_strings(fn: ir.Operation) -> None:
    """NotCompilable if any value of `fn` (an op's operand or result, a region's argument,
    the function's argument or result) is of a string type: buffers of strings have no
    memref type, whatever op makes them, and a function may hold no op at all (one that
    returns its string argument). The first op touching a string is named, else the
    signature's."""
    for op in iter_ops(fn):
        if op.name == "func.return":  # the signature below says it better
            continue
        values = list(op.operands) + list(op.results) + [
            a for r in op.regions for b in r.blocks for a in b.arguments]
        if any(_is_string(v.type) for v in values):
            raise NotCompilable(f"'{op.name}' (at {where(op.location)}) works on string "
                                "tensors, which only the host runs")
    signature = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    for kind, types in (("argument", signature.inputs), ("result", signature.results)):
        for i, t in enumerate(types):
            if _is_string(t):
                raise NotCompilable(f"{kind} {i} of @{symbol_name(fn)} is a string tensor ({t}); "
                                    "string tensors run only on the host")


def _is_string(t: ir.Type) -> bool:
    return "!ember.string" in str(t)




# Byte sizes from here on do not fit the i64 arithmetic of buffer sizes and strides (MLIR
# asserts on an element count that overflows; a byte count that wraps would allocate too
# little). No machine can allocate this much: the interpreter raises eager's error instead.
MAX_TENSOR_BYTES = 1 << 62


def _no_giant_tensors(fn: ir.Operation) -> None:
    """NotCompilable naming the first op whose result has MAX_TENSOR_BYTES or more."""
    for op in iter_ops(fn):
        for result in op.results:
            t = result.type
            if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
                continue
            count = 1
            for d in t.shape:
                count *= d
            if count * max(getattr(t.element_type, "width", 8) // 8, 1) >= MAX_TENSOR_BYTES:
                raise NotCompilable(f"'{op.name}' (at {where(op.location)}) makes a {t}, "
                                    f"of 2**62 bytes or more")


def function_named(module: ir.Module, symbol: str) -> ir.Operation:
    """The function `@symbol` of `module` (NotCompilable if there is none)."""
    op = symbol_table(module).get(symbol)
    if op is not None and op.name == "func.func":
        return op
    raise NotCompilable(f"no function @{symbol} in the module",
                        NotCompilable.Reason.BAD_ARGUMENTS)
