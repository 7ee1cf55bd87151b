"""convert-ember-to-linalg: every ember op becomes linalg/tensor/arith/math on tensors.

Upstream equivalent: `convert-elementwise-to-linalg`, `tosa-to-linalg`. Control flow stays
`scf`, with its bodies converted in place; `tensor.concat` stays (upstream bufferizes it).

Algorithm:
  1. Collect every ember op of every function with its ember operand/result types and
     decoded attributes — before anything changes, so rules see ember dtypes (`ui8`).
  2. In program order, call the op's `@lowers` rule at the op; replace its results by the
     rule's values and erase it. An op without a rule is a hard error naming it.
  3. Retype what is left of `ui8` (arguments, region results) to signless `i8`.

Before:
    %0 = "ember.add"(%x, %y) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
After:
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [(d0) -> (d0), (d0) -> (), (d0) -> (d0)], ...}
           ins(%x, %y : tensor<4xf32>, tensor<f32>) outs(%e : tensor<4xf32>) {
         ^bb0(%a: f32, %b: f32, %o: f32):
           %s = arith.addf %a, %b : f32
           linalg.yield %s : f32
         } -> tensor<4xf32>
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from mlir import ir

from ember.dialects.ember.base import REGISTRY
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.types import TensorType
from ember.dialects.ember.verifier import Diagnostic, iter_ops
from ember.passes.base import Pass, Statistics
from ember.passes.bufferizable import PassFailure
from ember.passes.conversions.ember_to_linalg import elementwise  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import structure  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import matmul  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import indexing  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import pad  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import nn  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import reduction  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import creation  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import dynamic_slice  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import shape_operands  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import random  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import philox  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import state  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import scatter  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import scan  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import special  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import sorting  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import unique  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import complex_math  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import signal  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg import bitwise  # noqa: F401 (rules)
from ember.passes.conversions.ember_to_linalg.common import (LOWERINGS, Lowering,
                                                             LoweringError, build_generic,
                                                             lowers, retype_ui8)
from ember.passes.conversions.ember_to_linalg.fusion import Fusion
from ember.passes.conversions.ember_to_linalg.variables import thread_variables
from ember.passes.ir_utils import symbol_name
from ember.passes.analysis.effects import op_error
from ember.passes.conversions.ember_to_linalg.checks import cut_after, fail
from ember.passes.conversions.ember_to_linalg.structure import check_concat
from ember.passes.ir_utils import decoded_attrs, functions, op_id, replace_op

__all__ = ["ConvertEmberToLinalgPass", "LOWERINGS", "LoweringError", "lowers",
           "unlowerable_ops"]


def unlowerable_ops(module: ir.Module) -> list[ir.Operation]:
    """The ember ops in `module` that no rule lowers (or that only the host can run)."""
    found = []
    for fn in functions(module):
        for op in iter_ops(fn):
            spec = REGISTRY.get(op.name)
            if spec is None or spec.upstream:
                continue
            types = [type_from_mlir(v.type) for v in list(op.operands) + list(op.results)]
            if spec not in LOWERINGS or any(getattr(t, "dtype", None) is not None and
                                            t.dtype.is_string for t in types):
                found.append(op)
            elif not getattr(LOWERINGS[spec], "can_lower", lambda _: True)(op):
                found.append(op)  # e.g. a shape operand not known when compiling
    return found


@dataclasses.dataclass(frozen=True)
class ConvertEmberToLinalgPass(Pass):
    name: ClassVar[str] = "convert-ember-to-linalg"

    fuse_elementwise: bool = True  # see fusion.py
    blocked_sums: bool = True  # float sums of many elements in blocks (blocked_sum.py)

    def run(self, module: ir.Module, stats: Statistics) -> None:
        for fn in list(functions(module)):  # lowering may add functions (fastmath.call)
            fusion = Fusion() if self.fuse_elementwise else None
            try:
                with ir.Location.unknown():
                    thread_variables(fn)  # reads and writes become values (variables.py)
            except LoweringError as e:
                raise _failure(fn, "cannot lower the variables of "
                               f"@{symbol_name(fn)}: {e}") from None
            concats, work, failing = [], [], []
            for op in iter_ops(fn):
                spec = REGISTRY.get(op.name)
                if op.name == "tensor.concat":  # stays, checked (structure.check_concat)
                    types = [type_from_mlir(v.type) for v in op.operands]
                    attrs = decoded_attrs(op)
                    # a specialisation's static types can make the concat invalid (eager's
                    # error when it runs, as for ember ops below)
                    invalid = op_error(op, spec, types, attrs)
                    concats.append((op_id(op), op, types, attrs, invalid))
                    failing += [op] if invalid else []
                if spec is None or spec.upstream:
                    continue
                if spec not in LOWERINGS:
                    raise _failure(op, f"no lowering to linalg for '{op.name}'; add a "
                                   f"@lowers({spec.__name__}) rule")
                operand_types = [type_from_mlir(v.type) for v in op.operands]
                result_types = [type_from_mlir(r.type) for r in op.results]
                unranked = _unranked(operand_types, result_types)
                if unranked:
                    raise _failure(op, f"cannot lower '{op.name}': {unranked} is unranked; "
                                   "lowering needs ranked types: run ember-shape-refine "
                                   "first, or give the function ranked arguments")
                attrs = decoded_attrs(op)
                invalid = op_error(op, spec, operand_types, attrs)
                work.append((op_id(op), op, spec, operand_types, result_types, attrs, invalid))
                failing += [op] if invalid else []
            erased = cut_after(failing) if failing else set()  # what follows never runs
            for key, op, types, attrs, invalid in concats:
                if key in erased:
                    continue
                lw = Lowering(op, types, [type_from_mlir(op.results[0].type)], attrs)
                if invalid or any(isinstance(t, TensorType) and t.shape and None in t.shape
                                  for t in types):  # else `?` dims are checked
                    with ir.InsertionPoint(op), op.location:
                        if invalid:
                            replace_op(op, fail(lw, invalid))
                        else:
                            check_concat(op, lw)
            for key, op, spec, operand_types, result_types, attrs, invalid in work:
                if key in erased:
                    continue
                lw = Lowering(op, operand_types, result_types, attrs, fusion)
                lw.blocked_sums = self.blocked_sums
                try:
                    with ir.InsertionPoint(op), op.location:
                        values = fail(lw, invalid) if invalid else LOWERINGS[spec](op, lw)
                except LoweringError as e:
                    raise _failure(op, f"cannot lower '{op.name}': {e}") from None
                replace_op(op, values)
                stats.add("lowered")
                if fusion is not None:
                    stats.add("fused", fusion.erase_fused())
                    fusion.materialize(build_generic, only_for_non_ember_users=True)
            if fusion is not None:
                fusion.materialize(build_generic, only_for_non_ember_users=False)
            _signless(fn)


def _unranked(operand_types: list, result_types: list) -> str:
    """Names the first unranked tensor among an op's types ("result #0 tensor<*xf32>"),
    or returns ""."""
    for what, types in (("operand", operand_types), ("result", result_types)):
        for i, t in enumerate(types):
            if isinstance(t, TensorType) and t.shape is None:
                return f"{what} #{i} of type {t}"
    return ""


def _failure(op: ir.Operation, message: str) -> Exception:
    """A PassFailure located at `op`, so the tools print `file:line:col: error: ...`."""
    return PassFailure(f"{op.location}: {message}", [Diagnostic.at(op.location, message)])


def _signless(fn: ir.Operation) -> None:
    """Retypes what is left of `ui8` in `fn` (arguments, ops, regions) to signless `i8`
    (same bits, signless arith), and its signature to match."""
    retype_ui8(fn)
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    inputs = [a.type for a in fn.regions[0].blocks[0].arguments] if fn.regions[0].blocks \
        else list(ftype.inputs)
    results = [ir.Type.parse(str(t).replace("ui8>", "i8>")) for t in ftype.results]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))
