"""Variables as values: a function's resource arguments threaded through it in SSA form.

`convert-ember-to-linalg` runs this on each function before its per-op rules, so the lowered
function stays pure on tensors. Each `!ember.resource<tensor<T>>` argument is retyped in
place to `tensor<T>` (the variable's value on entry) and the function gets one extra result
per resource argument, after its own results and in argument order (its value on exit);
`ember.variables = array<i64: i, j, ...>` lists their argument numbers, so the runtime
passes each variable's value in and stores the returned one back (runtime/executor.py).

The walk keeps the current value of every variable, in program order (mem2reg for
resources):
  - `read_variable(%r)` is replaced by the current value;
  - `assign_variable(%r, %v)` makes `%v` the current value (`tensor.cast` to the variable's
    type when the shapes differ); `assign_add/sub_variable` make it `ember.add/sub(current,
    %v)`, lowered (and fused) like any elementwise op;
  - an `scf.if` that writes a variable in a branch gets one more result per written
    variable; each branch yields its value at the end of the branch (an `else` that did not
    exist is added, yielding the values from before the `if`);
  - an `scf.while` that writes a variable gets it as one more loop-carried value: an init
    operand, an argument of both regions, forwarded by `scf.condition` and yielded by the
    body; after the loop the variable's value is the loop's extra result.
Reads inside regions that write nothing use the value from before the region.

A resource used by anything but these ops (passed to `func.call`, say) is a LoweringError:
inline first (`ember-inline`). The upstream analogue is `mem2reg` with
`buffer-results-to-out-params` for the function boundary.

Before:
    func.func @step(%r: !ember.resource<tensor<2xf32>>, %c: tensor<i1>) {
      %p = tensor.extract %c[] : tensor<i1>
      scf.if %p {
        %one = "ember.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
        "ember.assign_add_variable"(%r, %one) : (...) -> ()
      }
      return
    }
After:
    func.func @step(%r: tensor<2xf32>, %c: tensor<i1>) -> tensor<2xf32>
        attributes {ember.variables = array<i64: 0>} {
      %p = tensor.extract %c[] : tensor<i1>
      %v = scf.if %p -> (tensor<2xf32>) {
        %one = "ember.constant"() ...
        %s = "ember.add"(%r, %one) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
        scf.yield %s : tensor<2xf32>
      } else {
        scf.yield %r : tensor<2xf32>
      }
      return %v : tensor<2xf32>
    }
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func, scf, tensor

from ember.dialects.ember import elementwise as E
from ember.dialects.ember import state as S
from ember.dialects.ember.builder import emit
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.types import ResourceType
from ember.passes.analysis.effects import assigned_variables
from ember.passes.conversions.ember_to_linalg.common import LoweringError
from ember.passes.conversions.runtime_attrs import VARIABLES_ATTR
from ember.passes.ir_utils import as_operation

_READ = S.ReadVariableOp.name
_WRITES = {S.AssignVariableOp.name: None, S.AssignAddVariableOp.name: E.AddOp,
           S.AssignSubVariableOp.name: E.SubOp}


def _resource_type(value: ir.Value):
    try:
        t = type_from_mlir(value.type)
    except TypeError:
        return None
    return t if isinstance(t, ResourceType) else None



def thread_variables(fn: ir.Operation) -> None:
    """Rewrites `fn` as the module docstring says; a function without resource arguments
    is left alone."""
    if not fn.regions[0].blocks:
        return
    block = fn.regions[0].blocks[0]
    resources = [(a, t) for a in block.arguments if (t := _resource_type(a)) is not None]
    if not resources:
        return
    if len(fn.regions[0].blocks) != 1:
        raise LoweringError("variables can only be threaded through a function with one "
                            "block (structured control flow)")
    for arg, _ in resources:
        for use in arg.uses:
            owner = as_operation(use.owner)
            if owner.name != _READ and owner.name not in _WRITES:
                raise LoweringError(
                    f"variable argument #{arg.arg_number} is used by '{owner.name}'; only "
                    "read/assign ops can use it after lowering (run ember-inline first)")
    types = {arg.arg_number: t.value for arg, t in resources}
    for arg, t in resources:
        arg.set_type(ir.Type.parse(str(t.value)))
    current = {arg.arg_number: arg for arg, _ in resources}
    _Threader(types).block(block, current)
    ret = as_operation(block.operations[len(block.operations) - 1])
    with ir.InsertionPoint(ret), ret.location:
        func.ReturnOp(list(ret.operands) + [current[a.arg_number] for a, _ in resources])
    ret.erase()
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    results = list(ftype.results) + [ir.Type.parse(str(t.value)) for _, t in resources]
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], results))
    if "res_attrs" in fn.attributes:
        extra = [ir.DictAttr.get({}) for _ in resources]
        fn.attributes["res_attrs"] = ir.ArrayAttr.get(list(fn.attributes["res_attrs"]) + extra)
    fn.attributes[VARIABLES_ATTR] = ir.DenseI64ArrayAttr.get(
        [a.arg_number for a, _ in resources])


class _Threader:
    def __init__(self, types: dict):
        self.types = types  # argument number -> the variable's TensorType

    def _key(self, resource: ir.Value) -> int:
        if not isinstance(resource, ir.BlockArgument) or resource.arg_number not in self.types:
            raise LoweringError("the variable must be an argument of the enclosing function "
                                "(inline nested functions first)")
        return resource.arg_number

    def _written(self, op: ir.Operation) -> list[int]:
        """The variables written anywhere inside `op`'s regions, in argument order."""
        return sorted({self._key(v) for v in assigned_variables(op)})

    def block(self, block: ir.Block, current: dict) -> None:
        """Threads `block` in program order, updating `current` in place."""
        for op in list(block.operations):
            op = as_operation(op)
            if op.name == _READ:
                op.results[0].replace_all_uses_with(current[self._key(op.operands[0])])
                op.erase()
            elif op.name in _WRITES:
                self._write(op, current)
            elif op.name == "scf.if" and self._written(op):
                self._if(op, current)
            elif op.name == "scf.while" and self._written(op):
                self._while(op, current)
            elif op.regions and self._written(op):
                raise LoweringError(f"a variable is written inside '{op.name}'; only "
                                    "scf.if and scf.while can carry variables out of regions")
            else:
                for region in op.regions:  # reads only: the values from before the op
                    for inner in region.blocks:
                        self.block(inner, dict(current))

    def _write(self, op: ir.Operation, current: dict) -> None:
        key = self._key(op.operands[0])
        var, value = self.types[key], op.operands[1]
        with ir.InsertionPoint(op), op.location:
            update = _WRITES[op.name]
            if update is not None:
                value = emit(update, [current[key], value])
            if str(value.type) != str(var):
                value = tensor.CastOp(ir.Type.parse(str(var)), value).result
        current[key] = value
        op.erase()

    def _types(self, keys: list[int]) -> list[ir.Type]:
        return [ir.Type.parse(str(self.types[k])) for k in keys]

    def _if(self, op: ir.Operation, current: dict) -> None:
        keys = self._written(op)
        old_results = list(op.results)
        with ir.InsertionPoint(op), op.location:
            new = scf.IfOp(op.operands[0], [r.type for r in old_results] + self._types(keys),
                           has_else=True)
        for old_region, new_region in zip(op.regions, new.regions):
            branch = dict(current)
            target = new_region.blocks[0]
            if old_region.blocks:
                source = old_region.blocks[0]
                old_yield = as_operation(source.operations[len(source.operations) - 1])
                with ir.InsertionPoint(target), old_yield.location:
                    anchor = scf.YieldOp(list(old_yield.operands))
                for inner in list(source.operations)[:-1]:
                    as_operation(inner).move_before(anchor)
                self.block(target, branch)
                with ir.InsertionPoint(anchor), old_yield.location:
                    scf.YieldOp(list(anchor.operands) + [branch[k] for k in keys])
                anchor.operation.erase()
            else:  # no else: the values from before the if
                with ir.InsertionPoint(target), op.location:
                    scf.YieldOp([current[k] for k in keys])
        for old, fresh in zip(old_results, new.results):
            old.replace_all_uses_with(fresh)
        for j, k in enumerate(keys):
            current[k] = new.results[len(old_results) + j]
        op.erase()

    def _while(self, op: ir.Operation, current: dict) -> None:
        keys = self._written(op)
        extra = self._types(keys)
        old_results = list(op.results)
        with ir.InsertionPoint(op), op.location:
            new = scf.WhileOp([r.type for r in old_results] + extra,
                              list(op.operands) + [current[k] for k in keys])
        for old_region, new_region in zip(op.regions, new.regions):
            source = old_region.blocks[0]
            target = new_region.blocks.append(*([a.type for a in source.arguments] + extra))
            n = len(source.arguments)
            for old_arg, new_arg in zip(source.arguments, target.arguments):
                old_arg.replace_all_uses_with(new_arg)
            for inner in list(source.operations):  # in order, to the end of the new block
                inner = as_operation(inner)
                inner.detach_from_parent()
                ir.InsertionPoint(target).insert(inner)
            inside = dict(current)
            for j, k in enumerate(keys):
                inside[k] = target.arguments[n + j]
            self.block(target, inside)
            term = as_operation(target.operations[len(target.operations) - 1])
            with ir.InsertionPoint(term), term.location:
                if term.name == "scf.condition":
                    operands = list(term.operands)
                    scf.ConditionOp(operands[0], operands[1:] + [inside[k] for k in keys])
                else:
                    scf.YieldOp(list(term.operands) + [inside[k] for k in keys])
            term.erase()
        for old, fresh in zip(old_results, new.results):
            old.replace_all_uses_with(fresh)
        for j, k in enumerate(keys):
            current[k] = new.results[len(old_results) + j]
        op.erase()
