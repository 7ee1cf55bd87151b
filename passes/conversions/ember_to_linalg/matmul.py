"""Lowering of `ember.matmul`: `linalg.matmul` (2-D, or batch dims folded into the rows of
a 2-D right operand) or `linalg.batch_matmul` (equal batch dims, collapsed to one) on a
zero-filled init; batch dims that broadcast become one `linalg.generic` contraction whose
indexing maps pin size-1 batch dims to 0, so no operand is copied. Half floats accumulate in
f32 (the named ops extend their inputs to the init's type) and are truncated at the end, as
the reference kernel computes in f32. transpose_a/b are `linalg.transpose`s of the operand.
Upstream equivalent: `tosa-to-linalg`'s matmul pattern.

Before:
    %c = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false}
           : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
After:
    %e = tensor.empty() : tensor<4x5xf32>
    %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>)
           outs(%i : tensor<4x5xf32>) -> tensor<4x5xf32>
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ember.dialects.ember import structure as S
from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.builders import (Size, amap, check_equal, collapse,
                                                               expand, filled, fitted, generic,
                                                               is_half, ranked, signless, size_of,
                                                               transpose, truncated)
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, REDUCTION, Lowering,
                                                             element_type, lowers)


def _swap_last(lw: Lowering, x: ir.Value, t: TensorType):
    rank = len(t.shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return transpose(lw, x, t, perm), t.with_shape(tuple(t.shape[p] for p in perm))


def _batch_sizes(lw, operands, nb: int) -> list[Size]:
    """The broadcast batch dims of the operands: a static size other than 1 if one has it,
    else `tensor.dim` of a dynamic one, else 1."""
    sizes = []
    for i in range(nb):
        dims = []
        for value, t in operands:
            j = i - (nb - (len(t.shape) - 2))
            if j >= 0:
                dims.append((t.shape[j], value, j))
        static = [d for d, _, _ in dims if d not in (None, 1)]
        dynamic = [(v, j) for d, v, j in dims if d is None]
        if static or not dynamic:
            sizes.append(static[0] if static else 1)
        else:
            sizes.append(tensor.DimOp(dynamic[0][0], lw.index(dynamic[0][1])).result)
    return sizes


@lowers(S.MatmulOp)
@fitted
def lower_matmul(op, lw: Lowering):
    (at, bt), out = lw.operand_types, lw.result_types[0]
    (a, b), d = lw.operands, out.dtype
    ranked(at), ranked(bt)
    if lw.attrs["transpose_a"]:
        a, at = _swap_last(lw, a, at)
    if lw.attrs["transpose_b"]:
        b, bt = _swap_last(lw, b, bt)
    if at.shape[-1] is None or bt.shape[-2] is None:  # contraction sizes met at run time
        check_equal(lw, size_of(lw, a, at, -1), size_of(lw, b, bt, -2))
    nb = max(len(at.shape), len(bt.shape)) - 2
    if None in at.shape[:-2] + bt.shape[:-2]:  # batch dims may broadcast at run time
        from ember.passes.conversions.ember_to_linalg.broadcast import broadcast_at_run_time
        (a, b), _ = broadcast_at_run_time(lw, [a, b], [at, bt],
                                          TensorType(d, out.shape[:nb]), tail=2)
    sizes = _batch_sizes(lw, [(a, at), (b, bt)], nb)
    sizes += [size_of(lw, a, at, -2), size_of(lw, b, bt, -1)]
    shape = [s if isinstance(s, int) else None for s in sizes]
    acc = ir.F32Type.get() if is_half(d) else element_type(d)
    zero = lw.scalar(0, d) if d.is_complex else arith.ConstantOp(
        acc, ir.FloatAttr.get(acc, 0.0) if d.is_floating else ir.IntegerAttr.get(acc, 0)).result
    init = filled(sizes, zero)
    if nb == 0:
        result = signless(linalg.matmul(a, b, outs=[init]))
    elif len(bt.shape) == 2:  # rows of every batch against one matrix: one 2-D matmul
        rows = collapse(a, at.shape, element_type(d), [list(range(nb + 1)), [nb + 1]])
        flat = collapse(init, shape, acc, [list(range(nb + 1)), [nb + 1]])
        product = signless(linalg.matmul(rows, b, outs=[flat]))
        result = expand(product, sizes, acc, [list(range(nb + 1)), [nb + 1]])
    elif at.shape[:-2] == bt.shape[:-2] and None not in at.shape[:-2]:
        if nb == 1:
            result = signless(linalg.batch_matmul(a, b, outs=[init]))
        else:  # one batch dim of their product
            groups = [list(range(nb)), [nb], [nb + 1]]
            lhs = collapse(a, at.shape, element_type(d), groups)
            rhs = collapse(b, bt.shape, element_type(d), groups)
            flat = collapse(init, shape, acc, groups)
            product = signless(linalg.batch_matmul(lhs, rhs, outs=[flat]))
            result = expand(product, sizes, acc, groups)
    else:
        result = _contraction(lw, a, at, b, bt, init, nb, d)
    return [truncated(result, sizes, d) if is_half(d) else result]


def _contraction(lw, a, at, b, bt, init, nb: int, d: DType) -> ir.Value:
    """out[..., m, n] += a[bcast(...), m, k] * b[bcast(...), k, n] as one linalg.generic."""
    rank = nb + 3
    m, n, k = nb, nb + 1, nb + 2

    def batch_exprs(t):
        lead = nb - (len(t.shape) - 2)
        return [ir.AffineConstantExpr.get(0) if s == 1 else ir.AffineDimExpr.get(lead + j)
                for j, s in enumerate(t.shape[:-2])]
    maps = [amap(rank, batch_exprs(at) + [m, k]), amap(rank, batch_exprs(bt) + [k, n]),
            amap(rank, list(range(nb)) + [m, n])]

    def body(x, y, acc):
        if d.is_complex:
            from mlir.dialects import complex as cx
            return [cx.AddOp(acc, cx.MulOp(x, y).result).result]
        if d.is_floating:
            if is_half(d):
                x, y = arith.ExtFOp(acc.type, x).result, arith.ExtFOp(acc.type, y).result
            return [arith.AddFOp(acc, arith.MulFOp(x, y).result).result]
        return [arith.AddIOp(acc, arith.MulIOp(x, y).result).result]
    et = element_type(d)
    return generic([a, b], [et, et], [init], maps, [PARALLEL] * (nb + 2) + [REDUCTION],
                   body)[0]
