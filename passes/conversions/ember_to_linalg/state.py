"""Lowering of variables and print: the lowered function stays pure on tensors.

Variables are threaded through the function as values by `variables.thread_variables`,
which `convert-ember-to-linalg` runs on each function before the per-op rules: every read
and write is gone by the time rules run. The rules registered here for them only report a
state op that threading could not reach (its resource is not an argument of the function).

Print. `ember.print(%x)` becomes `func.call @ember_print_<k>(%x)` of a private declaration,
one per print site, that carries the site's `ember.format`, `ember.end`, `ember.stream` and
`ember.type` (the ember tensor type: `ui8` is `i8` in the signature) attributes and
`llvm.emit_c_interface`; the runtime binds `_mlir_ciface_ember_print_<k>` to
a host callback that receives a pointer to the memref descriptor, formats it with
`dialects.ember.state.format_value` and writes it. The argument is marked
`bufferization.access = "read"` so bufferization does not copy it. String tensors raise
`LoweringError` (host only).

Before:
    "ember.print"(%x) {end = "\n", format = "x={}", stream = "stdout"} : (tensor<2xi32>) -> ()
After:
    func.func private @ember_print_0(tensor<2xi32> {bufferization.access = "read"})
        attributes {ember.format = "x={}", ..., llvm.emit_c_interface}
    ...
    func.call @ember_print_0(%x) : (tensor<2xi32>) -> ()
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func

from ember.dialects.ember import state as S
from ember.passes.conversions.ember_to_linalg.variables import VARIABLES_ATTR  # noqa: F401
from ember.passes.conversions.ember_to_linalg.common import (Lowering, LoweringError,
                                                             element_type, fresh_symbol,
                                                             lowers, tensor_type)



@lowers(S.ReadVariableOp, S.AssignVariableOp, S.AssignAddVariableOp, S.AssignSubVariableOp)
def lower_state(op, lw: Lowering):
    raise LoweringError("variable reads and writes are threaded through their function "
                        "before lowering (variables.py), which needs the variable to be an "
                        "argument of that function: inline nested functions first")


@lowers(S.AssertOp)
def lower_assert(op, lw: Lowering):
    """A run-time check (checks.py) that raises AssertionFailedError (an
    InvalidArgumentError) with the message where the condition has a false element."""
    from ember.passes.conversions.ember_to_linalg.checks import check
    (t,) = lw.operand_types
    message = lw.attrs["message"].replace("{}", "{ }")  # `{}` would stand for a value
    check(lw, lw.operands[0], t, lambda x: arith.XOrIOp(x, _true()).result,
          lambda a: ~a.astype(bool), message, "AssertionFailedError")
    return []


def _true() -> ir.Value:
    return arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result


@lowers(S.PrintOp)
def lower_print(op, lw: Lowering):
    (t,), a = lw.operand_types, lw.attrs
    element_type(t.dtype)  # string tensors print on the host only
    fn, name = fresh_symbol(op, "ember_print_")
    arg_type = tensor_type(t)
    with ir.InsertionPoint(fn):
        decl = func.FuncOp(name, ir.FunctionType.get([arg_type], []), visibility="private")
    decl.attributes["ember.type"] = ir.TypeAttr.get(ir.Type.parse(str(t)))  # ui8 vs i8
    for key in ("format", "end", "stream"):
        decl.attributes[f"ember.{key}"] = ir.StringAttr.get(a[key])
    decl.attributes["ember.summarize"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                            a["summarize"])
    decl.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    decl.attributes["arg_attrs"] = ir.ArrayAttr.get(
        [ir.DictAttr.get({"bufferization.access": ir.StringAttr.get("read")})])
    func.CallOp([], ir.FlatSymbolRefAttr.get(name), [lw.operands[0]])
    return []
