"""Lowering of variables and print: the lowered function stays pure on tensors.

Variables. A function's `!ember.resource<tensor<T>>` arguments become values passed in and
out: each resource argument is retyped in place to `tensor<T>` (its value on entry), and the
function gets one extra result per resource argument, after its own results and in argument
order (its value on exit). The function attribute `ember.variables = array<i64: i, j, ...>`
lists the argument numbers of those extra results, so the runtime can pass each variable's
value in and store the returned value back. The current value is threaded in program order,
kept as the matching operand of `func.return`:

  - `read_variable(%r)` becomes the current value;
  - `assign_variable(%r, %v)` makes `%v` the current value (`tensor.cast` to the variable's
    type when the shapes differ); `assign_add/sub_variable` make it `current +/- %v`, one
    elementwise `linalg.generic`.

Reads may sit inside `scf.if`/`scf.while` regions (the current value is defined before the
region op). Writes inside regions would have to be threaded as region results or
loop-carried values; they raise `LoweringError` instead (the runtime then runs the function
in the interpreter). A resource argument used by anything but these ops (e.g. passed to
`func.call`) also raises: inline first (`ember-inline`). The upstream analogue is
bufferization's `buffer-results-to-out-params`, one level up.

Print. `ember.print(%x)` becomes `func.call @ember_print_<k>(%x)` of a private declaration,
one per print site, that carries the site's `ember.format`, `ember.end`, `ember.stream` and
`ember.type` (the ember tensor type: `ui8` is `i8` in the signature) attributes and
`llvm.emit_c_interface`; the runtime binds `_mlir_ciface_ember_print_<k>` to
a host callback that receives a pointer to the memref descriptor, formats it with
`dialects.ember.state.format_value` and writes it. The argument is marked
`bufferization.access = "read"` so bufferization does not copy it. String tensors raise
`LoweringError` (host only).

Before:
    func.func @step(%r: !ember.resource<tensor<2xf32>>, %d: tensor<2xf32>) -> tensor<2xf32> {
      "ember.assign_add_variable"(%r, %d) : (...) -> ()
      %v = "ember.read_variable"(%r) : (!ember.resource<tensor<2xf32>>) -> tensor<2xf32>
      return %v : tensor<2xf32>
    }
After:
    func.func @step(%r: tensor<2xf32>, %d: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
        attributes {ember.variables = array<i64: 0>} {
      %new = linalg.generic ... ins(%r, %d) ... { arith.addf } -> tensor<2xf32>
      return %new, %new : tensor<2xf32>, tensor<2xf32>
    }
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, tensor

from ember.dialects.ember import state as S
from ember.dialects.ember.base import REGISTRY
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.types import ResourceType, TensorType
from ember.passes.conversions.ember_to_linalg.common import (Lowering, LoweringError,
                                                             element_type, lowers,
                                                             tensor_type)

VARIABLES_ATTR = "ember.variables"
_STATE_OPS = frozenset({S.ReadVariableOp.name, S.AssignVariableOp.name,
                        S.AssignAddVariableOp.name, S.AssignSubVariableOp.name})


def _enclosing(op: ir.Operation, name: str) -> ir.Operation:
    parent = op.parent
    while parent is not None and parent.name != name:
        parent = parent.parent
    if parent is None:
        raise LoweringError(f"'{op.name}' is not inside a {name}")
    return parent.operation


def _resource_type(value: ir.Value):
    try:
        t = type_from_mlir(value.type)
    except TypeError:
        return None
    return t if isinstance(t, ResourceType) else None


def _thread_variables(fn: ir.Operation) -> None:
    """Retypes fn's resource arguments to tensors and returns their values as extra
    results (initially their entry values); records the argument numbers in the function."""
    if len(fn.regions[0].blocks) != 1:
        raise LoweringError("variables can only be threaded through a function with one "
                            "block (structured control flow)")
    block = fn.regions[0].blocks[0]
    resources = [(a, t) for a in block.arguments if (t := _resource_type(a)) is not None]
    for arg, _ in resources:
        for use in arg.uses:
            if use.owner.name not in _STATE_OPS:
                raise LoweringError(
                    f"variable argument #{arg.arg_number} is used by '{use.owner.name}'; only "
                    "read/assign ops can use it after lowering (run ember-inline first)")
    for arg, t in resources:
        arg.set_type(tensor_type(t.value))
    old = block.operations[len(block.operations) - 1]
    with ir.InsertionPoint(old), old.location:
        func.ReturnOp(list(old.operands) + [a for a, _ in resources])
    old.erase()
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    results = list(ftype.results) + [tensor_type(t.value) for _, t in resources]
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], results))
    if "res_attrs" in fn.attributes:
        extra = [ir.DictAttr.get({}) for _ in resources]
        fn.attributes["res_attrs"] = ir.ArrayAttr.get(list(fn.attributes["res_attrs"]) + extra)
    fn.attributes[VARIABLES_ATTR] = ir.DenseI64ArrayAttr.get(
        [a.arg_number for a, _ in resources])


def _slot(op: ir.Operation, lw: Lowering) -> tuple[ir.Operation, int]:
    """(fn's return op, index of the operand holding the variable's current value)."""
    fn = _enclosing(op, "func.func")
    r = lw.operands[0]
    entry = fn.regions[0].blocks[0]
    if not isinstance(r, ir.BlockArgument) or r.owner != entry:
        raise LoweringError("the variable must be an argument of the enclosing function "
                            "(inline nested functions first)")
    if VARIABLES_ATTR not in fn.attributes:
        _thread_variables(fn)
    variables = list(ir.DenseI64ArrayAttr(fn.attributes[VARIABLES_ATTR]))
    ret = entry.operations[len(entry.operations) - 1]
    first_extra = len(ret.operands) - len(variables)
    return ret, first_extra + variables.index(r.arg_number)


@lowers(S.ReadVariableOp)
def lower_read(op, lw: Lowering):
    ret, index = _slot(op, lw)
    return [ret.operands[index]]


@lowers(S.AssignVariableOp, S.AssignAddVariableOp, S.AssignSubVariableOp)
def lower_assign(op, lw: Lowering):
    if op.parent.name != "func.func":
        raise LoweringError(f"a variable write inside '{op.parent.name}' is not lowered yet "
                            "(it would be threaded as a region result); move the write out "
                            "of the region or run this function in the interpreter")
    spec = REGISTRY[op.name]
    ret, index = _slot(op, lw)
    var, vt = lw.operand_types[0].value, lw.operand_types[1]
    current, value = ret.operands[index], lw.operands[1]
    if spec is S.AssignVariableOp:
        new = value if vt.shape == var.shape else \
            tensor.CastOp(tensor_type(var), value).result
    else:
        new = lw.elementwise([current, value], [var, vt], var,
                             _update(spec is S.AssignAddVariableOp, var))
    ret.operands[index] = new
    return []


def _update(add: bool, var: TensorType):
    if var.dtype.is_floating:
        ctor = arith.AddFOp if add else arith.SubFOp
    else:
        ctor = arith.AddIOp if add else arith.SubIOp  # wraps, as numpy
    return lambda old, delta: ctor(old, delta).result


@lowers(S.PrintOp)
def lower_print(op, lw: Lowering):
    (t,), a = lw.operand_types, lw.attrs
    element_type(t.dtype)  # string tensors print on the host only
    fn = _enclosing(op, "func.func")
    module = _enclosing(fn, "builtin.module")
    taken = {ir.StringAttr(o.operation.attributes["sym_name"]).value
             for o in module.regions[0].blocks[0].operations if "sym_name" in o.attributes}
    k = 0
    while f"ember_print_{k}" in taken:
        k += 1
    name, arg_type = f"ember_print_{k}", tensor_type(t)
    with ir.InsertionPoint(fn):
        decl = func.FuncOp(name, ir.FunctionType.get([arg_type], []), visibility="private")
    decl.attributes["ember.type"] = ir.TypeAttr.get(ir.Type.parse(str(t)))  # ui8 vs i8
    for key in ("format", "end", "stream"):
        decl.attributes[f"ember.{key}"] = ir.StringAttr.get(a[key])
    decl.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
    decl.attributes["arg_attrs"] = ir.ArrayAttr.get(
        [ir.DictAttr.get({"bufferization.access": ir.StringAttr.get("read")})])
    func.CallOp([], ir.FlatSymbolRefAttr.get(name), [lw.operands[0]])
    return []
