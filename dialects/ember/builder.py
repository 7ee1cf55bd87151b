"""Building ember IR from Python: `emit(AddOp, x, y)` and `build_function`.

`emit` validates everything before it touches MLIR (the bindings are built with assertions,
so a bad operand could abort the interpreter): operand kinds and types go through the spec's
type inference, attributes through its normaliser, and the result types come from inference.
This is what the tracer uses; the demo and tests use it directly.
"""

from __future__ import annotations

from typing import Callable, Sequence

from mlir import ir
from mlir.dialects import func

from ember.dialects.ember.base import Op, OpTypeError
from ember.dialects.ember.convert import attr_to_mlir, type_from_mlir, type_to_mlir
from ember.dialects.ember.partial import known_operands
from ember.dialects.ember.types import IRType


def emit(spec: type[Op], operands: Sequence[ir.Value] = (), attrs: dict | None = None, *,
         loc: ir.Location | None = None):
    """Appends one `spec` op at the current insertion point.

    Returns its single result, a tuple of results, or None for ops without results.

    Raises:
      OpError: if the operands or attributes are not accepted by `spec`.
    """
    results, _ = emit_typed(spec, operands, attrs, loc=loc)
    if not results:
        return None
    return results[0] if len(results) == 1 else results


def emit_typed(spec: type[Op], operands: Sequence[ir.Value] = (), attrs: dict | None = None,
               *, loc: ir.Location | None = None,
               operand_types: Sequence[IRType] | None = None,
               ip: ir.InsertionPoint | None = None) -> tuple[tuple, tuple]:
    """`emit`, returning (results, their ember types) as tuples. A caller that knows the
    operands' ember types (the tracer does) passes them as `operand_types`, which saves
    reading each back from MLIR; `ip` inserts there instead of at the current insertion
    point."""
    for i, v in enumerate(operands):
        if not isinstance(v, ir.Value):
            raise OpTypeError(spec.name, f"operand #{i} must be an MLIR value, got "
                              f"{type(v).__name__}")
    attrs = spec.normalize_attrs(attrs or {})
    types = tuple(operand_types) if operand_types is not None else \
        tuple(type_from_mlir(v.type) for v in operands)
    values = known_operands(spec, operands) if spec.uses_values else None
    result_types = spec.infer_types(types, attrs, values)
    mlir_attrs = {name: attr_to_mlir(spec.attrs[name], value) for name, value in attrs.items()}
    op = ir.Operation.create(spec.name, results=[type_to_mlir(t) for t in result_types],
                             operands=list(operands), attributes=mlir_attrs, loc=loc, ip=ip)
    return tuple(op.results), tuple(result_types)


def build_function(module: ir.Module, name: str, arg_types: Sequence[IRType],
                   body: Callable[..., Sequence[ir.Value] | ir.Value | None]) -> func.FuncOp:
    """Adds `func.func @name(args) -> results` to `module`, with `body(*args)` as its body.

    `body` returns the values to return (one value, a sequence, or None).
    """
    inputs = [type_to_mlir(t) for t in arg_types]
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp(name, ir.FunctionType.get(inputs, []))
    block = fn.add_entry_block()
    with ir.InsertionPoint(block):
        out = body(*block.arguments)
        values = [] if out is None else ([out] if isinstance(out, ir.Value) else list(out))
        func.ReturnOp(values)
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(inputs, [v.type for v in values]))
    return fn
