"""Building ember IR from Python: `emit(AddOp, x, y)` and `build_function`.

`emit` validates everything before it touches MLIR (the bindings are built with assertions,
so a bad operand could abort the interpreter): operand kinds and types go through the spec's
type inference, attributes through its normaliser, and the result types come from inference.
This is what the tracer uses; the demo and tests use it directly.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Sequence

from mlir import ir
from mlir.dialects import func

from ember.dialects.ember.base import Op, OpError, OpTypeError
from ember.dialects.ember.convert import attr_to_mlir, type_from_mlir, type_to_mlir
from ember.dialects.ember.partial import known_operands
from ember.dialects.ember.types import IRType
from ember.dialects.ember.verifier import has_file, where


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


# what SSA values are: checking `type(v)` against them first costs a fifth of `isinstance`
_VALUE_CLASSES = frozenset((ir.OpResult, ir.BlockArgument))


def emit_typed(spec: type[Op], operands: Sequence[ir.Value] = (), attrs: dict | None = None,
               *, loc: ir.Location | None = None,
               operand_types: Sequence[IRType] | None = None,
               ip: ir.InsertionPoint | None = None) -> tuple[tuple, tuple]:
    """`emit`, returning (results, their ember types) as tuples. A caller that knows the
    operands' ember types (the tracer does) passes them as `operand_types`, which saves
    reading each back from MLIR; `ip` inserts there instead of at the current insertion
    point."""
    for i, v in enumerate(operands):
        if type(v) not in _VALUE_CLASSES and not isinstance(v, ir.Value):
            raise OpTypeError(spec.name, f"operand #{i} must be an MLIR value, got "
                              f"{type(v).__name__}")
    op, result_types = emit_operation(spec, operands, attrs, loc=loc,
                                      operand_types=operand_types, ip=ip)
    return ((op.result,) if len(result_types) == 1 else tuple(op.results)), result_types


def emit_operation(spec: type[Op], operands: Sequence[ir.Value] = (), attrs: dict | None = None,
                   *, loc: ir.Location | None = None,
                   operand_types: Sequence[IRType] | None = None,
                   ip: ir.InsertionPoint | None = None) -> tuple[ir.Operation, tuple]:
    """`emit_typed`'s op itself (an `ir.Operation`) and its results' ember types, for a
    caller that reads the op's attributes: asking a result for its `owner` instead makes
    the bindings look up a Python class for the op's dialect (a failed import the first
    time, ~0.1 ms of a warm start). The operands must be MLIR values (emit_typed checks)."""
    if attrs or spec.uses_values or operand_types is None:
        known = _inferred(spec, operands, operand_types, attrs, loc)
    else:
        known = inferred_plain(spec, operands, operand_types, loc)
    result_types, mlir_types, mlir_attrs = known
    op = ir.Operation.create(spec.name, mlir_types, list(operands), mlir_attrs, None, 0, loc, ip)
    return op, result_types


def inferred_plain(spec: type[Op], operands: Sequence[ir.Value], operand_types: Sequence[IRType],
                   loc: ir.Location | None) -> tuple:
    """(result types, their MLIR types, the MLIR attributes) of `spec` given no attributes,
    on operands of `operand_types` (whose values its inference does not read), remembered;
    raises what the spec's checks raise."""
    key = (ir.Context.current if loc is None else loc.context, spec, tuple(operand_types))
    known = _INFERRED.get(key)
    if known is None:
        known = _inferred(spec, operands, key[2], None, loc)
        if len(_INFERRED) >= 4096:  # bounded: it keeps the contexts of its types alive
            _INFERRED.clear()
        _INFERRED[key] = known
    return known


# (context, spec, operand types) -> what `_inferred` returns, for ops given no attributes
# whose inference reads no operand values: then it is a function of these alone, and a
# trace emits the same few ops on the same types again and again (bench case B: 150 ops,
# 3 kinds). Only the tracer's calls (which pass `operand_types`) use it.
_INFERRED: dict = {}


def _inferred(spec: type[Op], operands, operand_types, attrs: dict | None,
              loc: ir.Location | None) -> tuple:
    """(result types, their MLIR types, the MLIR attributes) of `spec` on these operands,
    built in `loc`'s context (else the current one); raises what the spec's checks raise,
    naming the source line of `loc` as the compiled code's errors do ("(at f.py:12)")."""
    with loc if loc is not None else contextlib.nullcontext():
        try:
            attrs = spec.normalize_attrs(attrs or {})
            types = tuple(operand_types) if operand_types is not None else \
                tuple(type_from_mlir(v.type) for v in operands)
            values = known_operands(spec, operands) if spec.uses_values else None
            result_types = tuple(spec.infer_types(types, attrs, values))
        except OpError as e:
            if loc is None or not has_file(loc):
                raise
            raise e.located(where(loc)) from None
        mlir_attrs = {name: attr_to_mlir(spec.attrs[name], value)
                      for name, value in attrs.items()}
        return result_types, [type_to_mlir(t) for t in result_types], mlir_attrs


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
