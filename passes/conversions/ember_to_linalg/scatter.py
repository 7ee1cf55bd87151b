"""Lowering of the scatter ops: tensor_scatter and where_indices.

tensor_scatter is an `scf.for` over the rows of `indices` (collapsed to [n, k]) carrying the
destination tensor, which starts as the `tensor` operand (destination passing: bufferization
updates one buffer in place, copying `tensor` only if it is read later). Each iteration
checks the row's k components against their dims (an out-of-range component calls the op's
error site with the row, column, value and size: eager's message, dialects/ember/scatter.py
OUT_OF_RANGE), then combines the row's slice of `updates` into the destination: a
`tensor.extract`/`tensor.insert` of one element when k is the tensor's rank, else the
slice of shape tensor.shape[k:] through `tensor.extract_slice`, a `linalg.generic`
combining it in place (outs = the destination's slice) and `tensor.insert_slice`.
Rows run in order, so for `update` the last duplicate wins. `?` dims of updates that must
equal dims of indices or tensor are checked first (checks.shape_check: eager's error).

where_indices counts the trues in one loop nest, makes a `tensor.empty` of that many rows
and fills it in a second loop nest carrying the next free row.
Upstream equivalents: none in-tree (`tensor.scatter` has no lowering and no combining).
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, func, scf, tensor

from ember.dialects.ember import scatter as S
from ember.passes.conversions.ember_to_linalg.builders import (DYNAMIC, check_equal, collapse,
                                                               expand, fitted, generic,
                                                               ranked, signless, sizes_of,
                                                               tensor_of)
from ember.passes.conversions.ember_to_linalg.checks import declare_site
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering,
                                                             element_type, lowers)

_FLOAT = {"add": arith.AddFOp, "sub": arith.SubFOp, "mul": arith.MulFOp,
          "max": arith.MaximumFOp, "min": arith.MinimumFOp}
_SIGNED = {"add": arith.AddIOp, "sub": arith.SubIOp, "mul": arith.MulIOp,
           "max": arith.MaxSIOp, "min": arith.MinSIOp}
_UNSIGNED = _SIGNED | {"max": arith.MaxUIOp, "min": arith.MinUIOp}


def _combiner(mode: str, dtype):
    """(old, update) -> new element, for `mode` on elements of `dtype`."""
    if mode == "update":
        return lambda old, new: new
    table = _FLOAT if dtype.is_floating else _UNSIGNED if dtype.kind == "uint" else _SIGNED
    return lambda old, new: table[mode](old, new).result


def _split(values):
    """(SSA values, static list with DYNAMIC) of a mixed list of ints and values."""
    return ([v for v in values if not isinstance(v, int)],
            [v if isinstance(v, int) else DYNAMIC for v in values])


def _extract_slice(source, offsets, sizes, kept, et) -> ir.Value:
    (do, so), (ds, ss) = _split(offsets), _split(sizes)
    return tensor.ExtractSliceOp(tensor_of(kept, et), source, do, ds, [], so, ss,
                                 [1] * len(sizes)).result


def _insert_slice(source, dest, offsets, sizes) -> ir.Value:
    (do, so), (ds, ss) = _split(offsets), _split(sizes)
    return tensor.InsertSliceOp(source, dest, do, ds, [], so, ss, [1] * len(sizes)).result


def _rows(lw: Lowering, value, t, et, lead: int):
    """`value` with its first `lead` dims collapsed into one (a new unit dim if lead is 0),
    and that dim's size."""
    shape = ranked(t)
    if lead == 0:
        groups = [[0, 1]] + [[i + 1] for i in range(1, len(shape))] if shape else []
        return expand(value, [1] + sizes_of(lw, value, t), et, groups), 1
    groups = [list(range(lead))] + [[i] for i in range(lead, len(shape))]
    rows = value if lead == 1 else collapse(value, shape, et, groups)
    lead_shape = shape[:lead]
    if None not in lead_shape:
        return rows, math.prod(lead_shape)
    return rows, tensor.DimOp(rows, lw.index(0)).result


def _check_updates_shape(lw: Lowering, tt, it, ut) -> None:
    """Run-time check that the `?` dims of updates, indices and tensor agree."""
    t, idx, upd = lw.operands
    tsizes, isizes, usizes = sizes_of(lw, t, tt), sizes_of(lw, idx, it), sizes_of(lw, upd, ut)
    k = it.shape[-1]
    want = isizes[:-1] + tsizes[k:]
    pairs = []
    for u, w in zip(usizes, want):
        if not (isinstance(u, int) and isinstance(w, int)):
            pairs += [u, w]
    if pairs:
        check_equal(lw, *pairs)


@lowers(S.TensorScatterOp)
@fitted
def lower_tensor_scatter(op, lw: Lowering):
    tt, it, ut = lw.operand_types
    t, idx, upd = lw.operands
    shape, k = ranked(tt), ranked(it, "indices")[-1]
    et, it_et = element_type(tt.dtype), element_type(it.dtype)
    _check_updates_shape(lw, tt, it, ut)
    lead = len(it.shape) - 1
    idx_rows, n = _rows(lw, idx, it, it_et, lead)
    upd_rows, _ = _rows(lw, upd, ut, et, lead)
    tsizes = sizes_of(lw, t, tt)
    slice_sizes = tsizes[k:]
    combine = _combiner(lw.attrs["mode"], tt.dtype)
    site = declare_site(lw, "InvalidArgumentError", S.OUT_OF_RANGE, 5)
    zero, one = lw.index(0), lw.index(1)
    loop = scf.ForOp(zero, n if not isinstance(n, int) else lw.index(n), one, [t])
    with ir.InsertionPoint(loop.body):
        r, dest = loop.induction_variable, loop.inner_iter_args[0]
        coords = [_component(lw, idx_rows, r, j, tsizes[j], it.dtype, site)
                  for j in range(k)]
        if 0 in slice_sizes:  # nothing to write (and no slice may start in a size-0 dim)
            out = dest
        elif k == len(shape):
            old = signless(tensor.ExtractOp(dest, coords).result)
            new = signless(tensor.ExtractOp(upd_rows, [r]).result)
            out = tensor.InsertOp(combine(old, new), dest, coords).result
        else:
            zeros = [0] * len(slice_sizes)
            piece = _extract_slice(upd_rows, [r] + zeros, [1] + slice_sizes, slice_sizes, et)
            if lw.attrs["mode"] != "update":
                old = _extract_slice(dest, coords + zeros, [1] * k + slice_sizes,
                                     slice_sizes, et)
                rank = len(slice_sizes)
                ident = ir.AffineMap.get_identity(rank)
                piece = generic([piece], [et], [old], [ident, ident], [PARALLEL] * rank,
                                lambda new, old_: [combine(old_, new)])[0]
            out = _insert_slice(piece, dest, coords + zeros, [1] * k + slice_sizes)
        scf.YieldOp([out])
    return [loop.results[0]]


def _component(lw: Lowering, rows, r, j: int, size, dtype, site: str) -> ir.Value:
    """Component j of row r of the indices as an index, checked to lie in [0, size)."""
    i64 = ir.IntegerType.get_signless(64)
    v = signless(tensor.ExtractOp(rows, [r, lw.index(j)]).result)
    if dtype.bits < 64:
        v = arith.ExtSIOp(i64, v).result
    n = arith.ConstantOp(i64, size).result if isinstance(size, int) else \
        arith.IndexCastOp(i64, size).result
    low = arith.CmpIOp(arith.CmpIPredicate.slt, v, arith.ConstantOp(i64, 0).result).result
    high = arith.CmpIOp(arith.CmpIPredicate.sge, v, n).result
    branch = scf.IfOp(arith.OrIOp(low, high).result)
    with ir.InsertionPoint(branch.then_block):
        column = arith.ConstantOp(i64, j).result
        func.CallOp([], ir.FlatSymbolRefAttr.get(site),
                    [arith.IndexCastOp(i64, r).result, column, v, n, column])
        scf.YieldOp([])
    return arith.IndexCastOp(ir.IndexType.get(), v).result


# -- where_indices -------------------------------------------------------------------------


def _nest(lw: Lowering, sizes, carried: list, body) -> list:
    """Nested `scf.for` loops over `sizes` carrying `carried`; `body(coords, *carried)`
    returns the new carried values."""
    zero, one = lw.index(0), lw.index(1)

    def loop(dim: int, coords: list, values: list) -> list:
        if dim == len(sizes):
            return body(coords, *values)
        size = sizes[dim]
        for_op = scf.ForOp(zero, lw.index(size) if isinstance(size, int) else size, one, values)
        with ir.InsertionPoint(for_op.body):
            scf.YieldOp(loop(dim + 1, coords + [for_op.induction_variable],
                             list(for_op.inner_iter_args)))
        return list(for_op.results)
    return loop(0, [], carried)


def _is_true(lw: Lowering, x: ir.Value, dtype) -> ir.Value:
    if dtype.is_bool:
        return x
    if dtype.is_floating:  # NaN is non-zero: true, as numpy and TensorFlow
        zero = arith.ConstantOp(x.type, 0.0).result
        return arith.CmpFOp(arith.CmpFPredicate.UNE, x, zero).result
    return arith.CmpIOp(arith.CmpIPredicate.ne, x, arith.ConstantOp(x.type, 0).result).result


@lowers(S.WhereIndicesOp)
@fitted
def lower_where_indices(op, lw: Lowering):
    (ct,) = lw.operand_types
    cond = lw.operands[0]
    rank, dtype = len(ranked(ct)), ct.dtype
    sizes = sizes_of(lw, cond, ct)
    index, i64 = ir.IndexType.get(), ir.IntegerType.get_signless(64)

    def element(coords):
        return _is_true(lw, signless(tensor.ExtractOp(cond, coords).result), dtype)

    def count(coords, n):
        step = arith.IndexCastOp(index, arith.ExtUIOp(i64, element(coords)).result).result
        return [arith.AddIOp(n, step).result]
    (total,) = _nest(lw, sizes, [lw.index(0)], count)
    out = tensor.EmptyOp([total, rank], i64).result

    def fill(coords, result, row):
        branch = scf.IfOp(element(coords), [result.type, index], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            new = result
            for j, c in enumerate(coords):
                new = tensor.InsertOp(arith.IndexCastOp(i64, c).result, new,
                                      [row, lw.index(j)]).result
            scf.YieldOp([new, arith.AddIOp(row, lw.index(1)).result])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([result, row])
        return list(branch.results)
    filled, _ = _nest(lw, sizes, [out, lw.index(0)], fill)
    return [filled]
