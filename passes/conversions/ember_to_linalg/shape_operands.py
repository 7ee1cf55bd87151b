"""Lowering of the ops whose shape is an operand: dynamic_reshape, dynamic_broadcast_to,
dynamic_random_uniform and dynamic_random_normal.

Their result type says what inference knows of the shape operand (dialects/ember/partial.py):
after specialisation to a call's static shapes it is static whenever the shape was computed
from shapes (`em.shape(x)`, Python ints), and then the op is its attribute form with that
shape, lowered by the same rule. A result still `?` depends on run-time values: a reshape
reads its sizes from the operand when it runs (checked: eager's errors) and copies the
elements into them, the random ops read such dims from the operand; a broadcast_to to
run-time sizes is not lowered (`unlowerable_ops` names it: the function runs on the
interpreter).

Before:
    %r = "ember.dynamic_reshape"(%x, %s) : (tensor<3x4x2xf32>, tensor<2xi32>) -> tensor<3x8xf32>
After: what `"ember.reshape"(%x) {shape = array<i64: 3, 8>}` lowers to.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ember.dialects.ember import creation as C
from ember.dialects.ember import structure as S
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.builders import collapse, size_of
from ember.passes.conversions.ember_to_linalg.creation import check_dims, too_large
from ember.passes.ir_utils import constant_of
from ember.passes.conversions.ember_to_linalg.checks import shape_check
from ember.passes.conversions.ember_to_linalg.common import (LOWERINGS, PARALLEL, Lowering,
                                                             LoweringError, element_type,
                                                             lowers, tensor_type)
from ember.passes.conversions.ember_to_linalg.random import random_values


def _as_static(static_spec):
    """The rule that lowers an op with a shape operand as `static_spec` with shape = its
    (static) result shape."""
    def rule(op, lw: Lowering):
        out = lw.result_types[0]
        if not out.is_static:
            raise LoweringError(f"its result {out} depends on the value of its shape operand")
        inner = Lowering(op, lw.operand_types[:-1], lw.result_types,
                         dict(lw.attrs, shape=tuple(out.shape)), lw.fusion)
        inner.operands = lw.operands[:-1]
        return LOWERINGS[static_spec](op, inner)
    rule.can_lower = _static_result
    return rule


def _static_result(op: ir.Operation) -> bool:
    return all(type_from_mlir(r.type).is_static for r in op.results)


_static_broadcast_to = _as_static(S.BroadcastToOp)


def _check_sizes(lw: Lowering, shape: ir.Value, st, dims: tuple) -> None:
    """A site (eager's error, from the op's inference on the run-time shape) unless the
    shape operand holds no negative size and `dims`' static sizes where it has them."""
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    bad = arith.ConstantOp(i1, 0).result
    wide = arith.ExtUIOp if st.dtype.kind == "uint" else arith.ExtSIOp
    sizes = []
    for k, d in enumerate(dims):
        v = tensor.ExtractOp(shape, [lw.index(k)]).result
        v = v if st.dtype.bits == 64 else wide(i64, v).result
        want, predicate = (d, arith.CmpIPredicate.ne) if d is not None else \
            (0, arith.CmpIPredicate.slt)
        bad = arith.OrIOp(bad, arith.CmpIOp(predicate, v, arith.ConstantOp(i64, want).result)
                          .result).result
        sizes.append(arith.MaxSIOp(v, arith.ConstantOp(i64, 0).result).result)
    itemsize = lw.result_types[0].dtype.np_dtype.itemsize or 1
    shape_check(lw, arith.OrIOp(bad, too_large(sizes, itemsize)).result, valued=(1,))


@lowers(S.DynamicBroadcastToOp)
def lower_dynamic_broadcast_to(op, lw: Lowering):
    """Its attribute form when the result is static; else the input broadcast (run-time
    broadcasting of elementwise ops, broadcast.py) against an empty tensor of the sizes the
    shape operand holds when it runs, then checked to have exactly those sizes: a site
    re-running the op's inference on the run-time shape raises eager's error."""
    out = lw.result_types[0]
    (xt, st), (x, shape) = lw.operand_types, lw.operands
    if out.is_static:  # inference may know the sizes the shape must hold: check them
        if constant_of(shape) is None:
            _check_sizes(lw, shape, st, out.shape)
        return _static_broadcast_to(op, lw)
    if xt.shape is None or out.shape is None or len(xt.shape) > len(out.shape):
        raise LoweringError(f"broadcasting {xt} to {out} needs known ranks")
    _check_sizes(lw, shape, st, out.shape)  # the known ones, and none negative
    index = ir.IndexType.get()
    sizes = [d if d is not None else arith.IndexCastOp(index, tensor.ExtractOp(
        shape, [lw.index(k)]).result).result for k, d in enumerate(out.shape)]
    target = tensor.EmptyOp(sizes, element_type(xt.dtype)).result
    lead = len(out.shape) - len(xt.shape)
    # what broadcasting x against the target gives: x's static dims other than 1 win
    joined = TensorType(xt.dtype, tuple(
        d if k < lead or xt.shape[k - lead] in (None, 1) else xt.shape[k - lead]
        for k, d in enumerate(out.shape)))
    plain = Lowering(op, lw.operand_types, lw.result_types, lw.attrs)  # no fusion
    value = plain.elementwise([x, target], [xt, out], joined, lambda a, b: a)
    i1 = ir.IntegerType.get_signless(1)
    bad = arith.ConstantOp(i1, 0).result
    for k, size in enumerate(sizes):
        if not isinstance(size, int):
            got = tensor.DimOp(value, lw.index(k)).result
            bad = arith.OrIOp(bad, arith.CmpIOp(arith.CmpIPredicate.ne, got, size)
                              .result).result
    shape_check(lw, bad, valued=(1,))
    return [tensor.CastOp(tensor_type(out), value).result]


@lowers(S.DynamicReshapeOp)
def lower_dynamic_reshape(op, lw: Lowering):
    """Its attribute form when the result is static; else the sizes the shape operand
    holds when it runs, a -1 among them taking what is left of the element count. A shape
    the elements do not fit (or with two -1s, or another negative size) calls a site that
    re-runs the op's inference on the run-time shape: eager's error."""
    if lw.result_types[0].is_static:
        return _static_reshape(op, lw)
    (t, st), out = lw.operand_types, lw.result_types[0]
    x, shape = lw.operands
    if t.shape is None or st.shape is None or out.shape is None:
        raise LoweringError(f"{out} needs a known rank")
    if st.shape[0] is None:  # (a call's compile has it: its arguments' shapes are static)
        raise LoweringError(f"its shape operand {st} has a length known only when it runs; "
                            "compile it for inputs of static shapes, or reshape to a shape "
                            "of fixed length (a list, or a shape tensor of static size)")
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    c = (lambda v: arith.ConstantOp(i64, v).result)
    false = arith.ConstantOp(i1, 0).result
    total = c(1)
    for i, d in enumerate(t.shape):
        size = size_of(lw, x, t, i) if d is None else lw.index(d)
        total = arith.MulIOp(total, arith.IndexCastOp(i64, size).result).result
    wide = arith.ExtUIOp if st.dtype.kind == "uint" else arith.ExtSIOp
    entries, inferred_at, negative, known, count = [], [], false, c(1), c(0)
    for i in range(st.shape[0]):
        v = tensor.ExtractOp(shape, [lw.index(i)]).result
        v = v if st.dtype.bits == 64 else wide(i64, v).result
        is_minus = arith.CmpIOp(arith.CmpIPredicate.eq, v, c(-1)).result
        negative = arith.OrIOp(negative, arith.CmpIOp(arith.CmpIPredicate.slt, v, c(-1))
                               .result).result
        count = arith.AddIOp(count, arith.ExtUIOp(i64, is_minus).result).result
        known = arith.MulIOp(known, arith.SelectOp(is_minus, c(1), v).result).result
        entries.append(v)
        inferred_at.append(is_minus)
    has_minus = arith.CmpIOp(arith.CmpIPredicate.ne, count, c(0)).result
    known_zero = arith.CmpIOp(arith.CmpIPredicate.eq, known, c(0)).result
    safe = arith.SelectOp(known_zero, c(1), known).result
    rest = arith.RemSIOp(total, safe).result
    bad_inferred = arith.OrIOp(known_zero, arith.CmpIOp(arith.CmpIPredicate.ne, rest, c(0))
                               .result).result
    bad_count = arith.CmpIOp(arith.CmpIPredicate.ne, known, total).result
    bad = arith.OrIOp(arith.OrIOp(negative, arith.CmpIOp(arith.CmpIPredicate.sgt, count, c(1))
                                  .result).result,
                      arith.SelectOp(has_minus, bad_inferred, bad_count).result).result
    shape_check(lw, bad, valued=(1,))
    inferred = arith.DivSIOp(total, safe).result
    sizes = [arith.IndexCastOp(ir.IndexType.get(), arith.SelectOp(m, inferred, v).result).result
             for v, m in zip(entries, inferred_at)]
    et = element_type(t.dtype)
    flat = x if len(t.shape) == 1 else collapse(x, t.shape, et, [list(range(len(t.shape)))])
    if not sizes:
        flat = tensor.CastOp(ir.RankedTensorType.get([1], et), flat).result
        return [tensor.CollapseShapeOp(tensor_type(out), flat, []).result]
    if len(sizes) == 1:
        return [tensor.CastOp(tensor_type(out), flat).result]
    return [tensor.CastOp(tensor_type(out), _unflatten(flat, sizes, et)).result]


def _unflatten(flat: ir.Value, sizes: list, et: ir.Type) -> ir.Value:
    """`flat` (1-D) read in row-major order into a tensor of run-time `sizes`: a copy by
    linalg.generic, as upstream's memref.expand_shape allows one run-time size per group
    (expand-strided-metadata asserts on more)."""
    rank = len(sizes)
    strides = [None] * rank
    step = None
    for k in reversed(range(rank)):
        strides[k] = step
        step = sizes[k] if step is None else arith.MulIOp(step, sizes[k]).result
    dynamic = ir.ShapedType.get_dynamic_size()
    result = ir.RankedTensorType.get([dynamic] * rank, et)
    generic = linalg.GenericOp(
        [result], [], [tensor.EmptyOp(sizes, et).result],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))]),
        ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL)] * rank))
    block = generic.regions[0].blocks.append(et)
    with ir.InsertionPoint(block):
        at = None
        for k in range(rank):
            i = linalg.IndexOp(k).result
            term = i if strides[k] is None else arith.MulIOp(i, strides[k]).result
            at = term if at is None else arith.AddIOp(at, term).result
        linalg.YieldOp([tensor.ExtractOp(flat, [at]).result])
    return generic.result


_static_reshape = _as_static(S.ReshapeOp)


@lowers(C.DynamicRandomUniformOp, C.DynamicRandomNormalOp)
def lower_dynamic_random(op, lw: Lowering):
    """The random numbers of the sizes the shape operand holds: a dim the result type leaves
    `?` is read from it, after a check that none is negative (eager's error)."""
    out, (shape, shape_type) = lw.result_types[0], (lw.operands[1], lw.operand_types[1])
    if out.shape is None:
        raise LoweringError(f"result {out} needs a known rank")
    if not out.is_static:
        check_dims(lw, shape, shape_type, 1)
    sizes = tuple(d if d is not None else arith.IndexCastOp(ir.IndexType.get(), tensor.ExtractOp(
        shape, [lw.index(i)]).result).result for i, d in enumerate(out.shape))
    return [random_values(lw, sizes)]
