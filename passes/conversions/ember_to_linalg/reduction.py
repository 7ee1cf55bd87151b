"""Lowering of reductions: `reduce_*` over axes and `argmax`/`argmin` over one axis.

Each reduction is one `linalg.generic` whose reduced dims are `reduction` iterators, over an
init tensor `linalg.fill`ed with the identity (0, 1, -inf or the lowest integer, +inf or the
highest, false, true), as `linalg.reduce` would be; `keepdims` re-inserts the size-1 dims
with `tensor.expand_shape`. Upstream equivalent: `tosa-to-linalg`'s reductions.

Numerics follow the reference kernels: 16-bit floats accumulate in f32 and round once at the
end; float max/min propagate NaN (`arith.maximumf`); integer `reduce_mean` sums in i64 and
divides truncating toward zero (0 for an empty reduction); float sums over more than 128
elements of adjacent dims add in blocks (blocked_sum.py), so their error does not grow
with the count (axes apart add in loop order).
`argmax`/`argmin` carry (value, index) pairs and prefer, on ties, the smaller index — an
order-independent rule, so the first index wins however the loop is later split; a NaN
beats any number (numpy returns the first NaN).

Before:
    %s = "ember.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = true}
           : (tensor<2x3xf32>) -> tensor<2x1xf32>
After:
    %e = tensor.empty() : tensor<2xf32>
    %i = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
    %r = linalg.generic {indexing_maps = [(d0, d1) -> (d0, d1), (d0, d1) -> (d0)],
           iterator_types = ["parallel", "reduction"]} ins(%x) outs(%i) {addf}
    %s = tensor.expand_shape %r [[0, 1]] output_shape [2, 1]
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ember.dialects.ember import dtypes
from ember.dialects.ember import reduction as R
from ember.dialects.ember.base import REGISTRY
from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.blocked_sum import blocked
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, REDUCTION, Lowering,
                                                             LoweringError, element_type,
                                                             lowers, tensor_type)

F32 = dtypes.float32


def _half(dtype: DType) -> bool:
    return dtype in (dtypes.float16, dtypes.bfloat16)


def _accumulator(dtype: DType) -> DType:
    return F32 if _half(dtype) else dtype


def _ranked(t: TensorType, name: str) -> TensorType:
    if t.shape is None:
        raise LoweringError(f"{name} of unranked {t} needs a known rank; run "
                            "ember-shape-refine first")
    return t


def _size(lw: Lowering, x: ir.Value, t: TensorType, dim: int):
    """Dim `dim` of `x`: an int when static, else an index value."""
    d = t.shape[dim]
    return d if d is not None else tensor.DimOp(x, lw.index(dim)).result


def _reduce(lw: Lowering, x: ir.Value, t: TensorType, axes: tuple, acc: DType, init,
            combine: Callable[[ir.Value, ir.Value], ir.Value]) -> ir.Value:
    """One reduction generic: `acc`-typed result of rank - len(axes), initialised to `init`
    (an `arith` scalar) and updated by `combine(element, accumulator)`."""
    rank = len(t.shape)
    kept = [i for i in range(rank) if i not in axes]
    sizes = [_size(lw, x, t, i) for i in kept]
    out = TensorType(acc, tuple(t.shape[i] for i in kept))
    if not axes:
        # No axis to reduce: combine(x, init) per element, as numpy does (0 + -0.0 is
        # +0.0), as a plain elementwise op. The reduction generic without reduction
        # iterators (all-parallel, reading its `outs`) was miscompiled once fused with a
        # consumer: in x + reduce_sum(scalar) each element of x got the scalar once more
        # than the one before.
        return lw.elementwise([x], [t], out, lambda v: combine(v, init))
    empty = tensor.EmptyOp(sizes, element_type(acc)).result
    filled = linalg.fill(init, outs=[empty])
    maps = [ir.AffineMap.get_identity(rank),
            ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(i) for i in kept])]
    iterators = [REDUCTION if i in axes else PARALLEL for i in range(rank)]
    generic = linalg.GenericOp(
        [tensor_type(out)], [x], [filled],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
        ir.ArrayAttr.get([ir.Attribute.parse(i) for i in iterators]))
    block = generic.regions[0].blocks.append(element_type(t.dtype), element_type(acc))
    with ir.InsertionPoint(block):
        linalg.YieldOp([combine(block.arguments[0], block.arguments[1])])
    return generic.result


def _keepdims(lw: Lowering, value: ir.Value, x: ir.Value, t: TensorType,
              axes: tuple) -> ir.Value:
    """`tensor.expand_shape` of a reduced value back to rank(x), reduced dims of size 1."""
    rank = len(t.shape)
    kept = [i for i in range(rank) if i not in axes]
    groups: list[list[int]] = [[] for _ in kept]  # none for a 0-d value
    for i in range(rank if kept else 0):  # a reduced dim joins the kept dim before it
        before = [g for g, k in enumerate(kept) if k <= i]
        groups[before[-1] if before else 0].append(i)
    dynamic = ir.ShapedType.get_dynamic_size()
    static = [1 if i in axes else (t.shape[i] if t.shape[i] is not None else dynamic)
              for i in range(rank)]
    sizes = [tensor.DimOp(x, lw.index(i)).result for i in range(rank)
             if i not in axes and t.shape[i] is None]
    reassociation = ir.ArrayAttr.get([
        ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i) for i in g])
        for g in groups])
    result = ir.RankedTensorType.get(static, ir.RankedTensorType(value.type).element_type)
    return tensor.ExpandShapeOp(result, value, reassociation, sizes,
                                ir.DenseI64ArrayAttr.get(static)).result


def _cast_back(lw: Lowering, value: ir.Value, acc: DType, dtype: DType) -> ir.Value:
    """Rounds an f32 accumulator of a 16-bit float reduction back to `dtype`."""
    if acc is dtype or not acc.is_floating:
        return value
    vt = ir.RankedTensorType(value.type)
    shape = tuple(None if vt.is_dynamic_dim(i) else vt.get_dim_size(i) for i in range(vt.rank))
    return lw.elementwise([value], [TensorType(acc, shape)], TensorType(dtype, shape),
                          lambda v: arith.TruncFOp(element_type(dtype), v).result)


def _widen(x: ir.Value, src: DType, acc: DType) -> ir.Value:
    if src is acc:
        return x
    if acc.is_floating:
        return arith.ExtFOp(element_type(acc), x).result
    return (arith.ExtUIOp if src.kind == "uint" else arith.ExtSIOp)(element_type(acc), x).result


def _identity(lw: Lowering, spec, dtype: DType):
    """The init value of a reduction of `dtype`: what an empty reduction gives."""
    if spec in (R.ReduceSumOp, R.ReduceMeanOp, R.ReduceAnyOp):
        return lw.scalar(0, dtype)
    if spec in (R.ReduceProdOp, R.ReduceAllOp):
        return lw.scalar(1, dtype)
    if spec is R.ReduceMaxOp:
        return lw.scalar(-np.inf if dtype.is_floating else dtype.min, dtype)
    return lw.scalar(np.inf if dtype.is_floating else dtype.max, dtype)


def _combiner(spec, src: DType, acc: DType):
    """combine(element, accumulator) of reduction `spec` over elements of `src`."""
    flt, unsigned = acc.is_floating, src.kind == "uint"
    table = {
        R.ReduceSumOp: arith.AddFOp if flt else arith.AddIOp,
        R.ReduceMeanOp: arith.AddFOp if flt else arith.AddIOp,
        R.ReduceProdOp: arith.MulFOp if flt else arith.MulIOp,
        R.ReduceMaxOp: arith.MaximumFOp if flt else (arith.MaxUIOp if unsigned
                                                     else arith.MaxSIOp),
        R.ReduceMinOp: arith.MinimumFOp if flt else (arith.MinUIOp if unsigned
                                                     else arith.MinSIOp),
        R.ReduceAnyOp: arith.OrIOp, R.ReduceAllOp: arith.AndIOp,
    }
    ctor = table[spec]
    return lambda x, a: ctor(_widen(x, src, acc), a).result


@lowers(R.ReduceSumOp, R.ReduceProdOp, R.ReduceMaxOp, R.ReduceMinOp, R.ReduceAnyOp,
        R.ReduceAllOp, R.ReduceMeanOp)
def lower_reduce(op, lw: Lowering):
    spec = REGISTRY[op.name]
    t, x = _ranked(lw.operand_types[0], op.name), lw.operands[0]
    axes = R.reduce_axes(spec, len(t.shape), lw.attrs["axes"])
    acc = _accumulator(t.dtype)
    if spec is R.ReduceMeanOp and t.dtype.is_integer:
        acc = dtypes.int64  # the reference sums integers in int64
    init, combine = _identity(lw, spec, acc), _combiner(spec, t.dtype, acc)
    value = None
    if spec in (R.ReduceSumOp, R.ReduceMeanOp) and acc.is_floating and lw.blocked_sums:
        value = blocked(lw, x, t, axes, acc, init, combine, _reduce)  # many elements
    if value is None:
        value = _reduce(lw, x, t, axes, acc, init, combine)
    if spec is R.ReduceMeanOp:
        value = _divide_by_count(lw, value, x, t, axes, acc)
    value = _cast_back(lw, value, acc, t.dtype)
    if not lw.attrs["keepdims"] or not axes:  # no axes: the shape is already the input's
        return [value]
    return [_keepdims(lw, value, x, t, axes)]


def _divide_by_count(lw: Lowering, total: ir.Value, x: ir.Value, t: TensorType, axes: tuple,
                     acc: DType) -> ir.Value:
    """mean = total / count: float division (0/0 is NaN, as numpy), or integer division
    truncating toward zero and narrowed to the input dtype (an empty mean is 0)."""
    static = int(np.prod([t.shape[a] for a in axes if t.shape[a] is not None]))
    count = lw.index(static)
    for a in axes:
        if t.shape[a] is None:
            count = arith.MulIOp(count, tensor.DimOp(x, lw.index(a)).result).result
    count = arith.IndexCastOp(ir.IntegerType.get_signless(64), count).result
    shape = tuple(t.shape[i] for i in range(len(t.shape)) if i not in axes)
    in_type = TensorType(acc, shape)
    if acc.is_floating:
        n = arith.SIToFPOp(element_type(acc), count).result
        return lw.elementwise([total], [in_type], in_type, lambda s: arith.DivFOp(s, n).result)
    zero = lw.scalar(0, dtypes.int64)
    empty = arith.CmpIOp(arith.CmpIPredicate.eq, count, zero).result
    safe = arith.SelectOp(empty, lw.scalar(1, dtypes.int64), count).result

    def mean(s):
        q = arith.DivSIOp(s, safe).result  # truncates toward zero; 0 / 1 when empty
        if t.dtype is dtypes.int64:
            return q
        return arith.TruncIOp(element_type(t.dtype), q).result
    return lw.elementwise([total], [in_type], TensorType(t.dtype, shape), mean)


@lowers(R.ArgMaxOp, R.ArgMinOp)
def lower_arg_reduce(op, lw: Lowering):
    largest = REGISTRY[op.name] is R.ArgMaxOp
    t, out = _ranked(lw.operand_types[0], op.name), lw.result_types[0]
    x, rank = lw.operands[0], len(t.shape)
    axis = lw.attrs["axis"] % rank
    acc = _accumulator(t.dtype)
    kept = [i for i in range(rank) if i != axis]
    sizes = [_size(lw, x, t, i) for i in kept]
    index_et = element_type(out.dtype)
    start = lw.scalar(-np.inf if largest else np.inf, acc) if acc.is_floating else \
        lw.scalar(acc.min if largest else acc.max, acc)
    values = linalg.fill(start, outs=[tensor.EmptyOp(sizes, element_type(acc)).result])
    # Larger than any index: an init-valued element still replaces the init.
    indices = linalg.fill(lw.scalar(out.dtype.max, out.dtype),
                          outs=[tensor.EmptyOp(sizes, index_et).result])
    out_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(i) for i in kept])
    maps = [ir.AffineMap.get_identity(rank), out_map, out_map]
    iterators = [REDUCTION if i == axis else PARALLEL for i in range(rank)]
    value_type = TensorType(acc, tuple(t.shape[i] for i in kept))
    generic = linalg.GenericOp(
        [tensor_type(value_type), tensor_type(out)], [x], [values, indices],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
        ir.ArrayAttr.get([ir.Attribute.parse(i) for i in iterators]))
    block = generic.regions[0].blocks.append(element_type(t.dtype), element_type(acc),
                                             index_et)
    with ir.InsertionPoint(block):
        v, best, best_i = block.arguments
        v = _widen(v, t.dtype, acc)
        i = arith.IndexCastOp(index_et, linalg.IndexOp(axis).result).result
        gt, eq = _order(v, best, largest, t.dtype)
        earlier = arith.CmpIOp(arith.CmpIPredicate.slt, i, best_i).result
        better = arith.OrIOp(gt, arith.AndIOp(eq, earlier).result).result
        linalg.YieldOp([arith.SelectOp(better, v, best).result,
                        arith.SelectOp(better, i, best_i).result])
    return [generic.results[1]]


def _order(v, best, largest: bool, dtype: DType):
    """(v beats best, v ties best) for argmax (`largest`) or argmin; NaN beats numbers."""
    if not dtype.is_floating:
        unsigned = dtype.kind == "uint"
        pred = ("ugt" if unsigned else "sgt") if largest else ("ult" if unsigned else "slt")
        return (arith.CmpIOp(getattr(arith.CmpIPredicate, pred), v, best).result,
                arith.CmpIOp(arith.CmpIPredicate.eq, v, best).result)
    pred = arith.CmpFPredicate.OGT if largest else arith.CmpFPredicate.OLT
    v_nan = arith.CmpFOp(arith.CmpFPredicate.UNO, v, v).result
    best_num = arith.CmpFOp(arith.CmpFPredicate.ORD, best, best).result
    gt = arith.OrIOp(arith.CmpFOp(pred, v, best).result,
                     arith.AndIOp(v_nan, best_num).result).result
    both_nan = arith.AndIOp(v_nan, arith.XOrIOp(best_num, _true()).result).result
    eq = arith.OrIOp(arith.CmpFOp(arith.CmpFPredicate.OEQ, v, best).result, both_nan).result
    return gt, eq


def _true() -> ir.Value:
    return arith.ConstantOp(ir.IntegerType.get_signless(1), 1).result
