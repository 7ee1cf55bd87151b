"""Lowering of indexing ops: strided_slice, gather, one_hot (pad: pad.py).

strided_slice decodes its masks with the dialect's `slice_index` (the numpy index the
reference kernel applies), then emits one `tensor.extract_slice` whose result drops the
shrunk dims; negative strides take the same elements with a positive stride and reverse
them with a `linalg.generic` (map `d -> n - 1 - d`); new axes are a `tensor.expand_shape`.
Slices of dynamic dims compute their bounds from the run-time size as Python's
`slice.indices` does (reversed ones too: `reversed_slice`).

gather and one_hot are a `linalg.generic` over the result: gather reads `params` with
`tensor.extract` at the index it loads, one_hot compares `linalg.index` of the new axis with
it.

Out-of-range indices: a gather index outside [0, n) raises the kernel's
InvalidArgumentError, naming the first such index: a check over the indices runs before the
gather (checks.py), which then reads only valid positions. A strided_slice index that this
compile's static shapes put out of bounds raises eager's OpShapeError when the op runs (the
pass's `op_error`, checks.fail); one into a dim still dynamic then (a boolean_mask's result,
a loop variable under a shape invariant) is checked when the op runs (`shape_check`).
Upstream equivalents: `tosa-to-linalg`'s gather, slice, reverse and pad patterns.
"""

from __future__ import annotations

import functools

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ember.dialects.ember import indexing as I
from ember.passes.conversions.ember_to_linalg.builders import (DYNAMIC, amap, collapse, expand,
                                                               fitted,
                                                               generic, new_tensor, ranked,
                                                               signless, size_of, sizes_of,
                                                               unit_groups)
from ember.passes.conversions.ember_to_linalg.checks import check, shape_check
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering,
                                                             element_type, lowers)

_MASKS = ("begin", "end", "strides", "begin_mask", "end_mask", "ellipsis_mask",
          "new_axis_mask", "shrink_axis_mask")


def _index(v) -> ir.Value:
    return linalg.IndexOp(v).result if isinstance(v, int) else v


# -- strided_slice -----------------------------------------------------------------------


def _items(index: tuple, rank: int) -> list:
    """The numpy index with `...` expanded and trailing dims as full slices."""
    consumed = sum(1 for it in index if it is not None and it is not Ellipsis)
    items = []
    for it in index:
        items.extend([slice(None)] * (rank - consumed) if it is Ellipsis else [it])
    if not any(it is Ellipsis for it in index):
        items.extend([slice(None)] * (rank - consumed))
    return items


def _dim_slice(lw: Lowering, x, t, dim: int, it):
    """(offset, size, stride, reversed) that take slice `it` of dim `dim`."""
    size = t.shape[dim]
    if size is not None:
        start, stop, step = it.indices(size)
        n = len(range(start, stop, step))
        if n == 0:
            return 0, 0, 1, False
        if step > 0:
            return start, n, step, False
        return start + (n - 1) * step, n, -step, True
    step = 1 if it.step is None else it.step
    n = size_of(lw, x, t, dim)
    if step == 1 and it.stop is None and (it.start or 0) >= 0:  # [b:]: the common case
        if not it.start:
            return 0, n, 1, False
        offset = arith.MinUIOp(lw.index(it.start), n).result
        return offset, arith.SubIOp(n, offset).result, 1, False
    if step < 0:  # [::-k] visits n-1, n-1-k, ...
        bounds = [None if v is None else lw.index(v) for v in (it.start, it.stop)]
        return (*reversed_slice(lw, n, *bounds, step), -step, True)
    return _run_time_slice(lw, n, it.start, it.stop, step)


def reversed_slice(lw: Lowering, n: ir.Value, start, stop, step: int) -> tuple:
    """(offset, size) of slice [start:stop:step] (index values or None; step < 0) of a dim
    of run-time size `n`, taken with stride -step and then reversed: Python clamps a bound
    into [-1, n - 1] for a negative step (start n - 1, stop "before 0" when None); the
    first element taken is the last one the slice visits, start + (size - 1) * step (any
    offset in [0, n] when size is 0)."""
    sub, one, zero = (lambda a, b: arith.SubIOp(a, b).result), lw.index(1), lw.index(0)
    last = sub(n, one)

    def clamp(bound):
        negative = arith.CmpIOp(arith.CmpIPredicate.slt, bound, zero).result
        wrapped = arith.MaxSIOp(arith.AddIOp(bound, n).result, lw.index(-1)).result
        return arith.SelectOp(negative, wrapped, arith.MinSIOp(bound, last).result).result
    first = last if start is None else clamp(start)
    end = lw.index(-1) if stop is None else clamp(stop)
    stride = lw.index(-step)
    size = arith.MaxSIOp(zero, arith.CeilDivSIOp(sub(first, end), stride).result).result
    low = sub(first, arith.MulIOp(sub(size, one), stride).result)
    return arith.MinSIOp(arith.MaxSIOp(low, zero).result, n).result, size


def _run_time_slice(lw: Lowering, n: ir.Value, start, stop, step: int):
    """(offset, size, stride, reversed) of slice [start:stop:step] (Python ints or None,
    step > 0) of a dim of run-time size `n`, clamped as Python clamps (`slice.indices`)."""
    zero = lw.index(0)
    sub, add = (lambda a, b: arith.SubIOp(a, b).result), (lambda a, b: arith.AddIOp(a, b).result)
    low, high = zero, n  # where a bound clamps to

    def bound(value, default):
        if value is None:
            return default
        if value >= 0:
            return arith.MinSIOp(lw.index(value), high).result
        return arith.MaxSIOp(add(n, lw.index(value)), low).result
    first = bound(start, zero)
    size = arith.MaxSIOp(zero, arith.CeilDivSIOp(sub(bound(stop, n), first),
                                                 lw.index(step)).result).result
    return first, size, step, False


def _dim_index(lw: Lowering, x, t, dim: int, i: int, bad: list):
    """Offset of integer index `i` (negative counts from the end) into dim `dim`. Into a
    `?` dim, it appends to `bad` whether `i` is out of range when the op runs (raising
    eager's error: `shape_check`), and the offset is clamped into the dim, so that IR whose
    size later folds to a constant stays valid (the read never runs)."""
    if t.shape[dim] is not None:
        return i if i >= 0 else t.shape[dim] + i
    n, zero = size_of(lw, x, t, dim), lw.index(0)
    if i >= 0:
        bad.append(arith.CmpIOp(arith.CmpIPredicate.sle, n, lw.index(i)).result)
        last = arith.MaxSIOp(arith.SubIOp(n, lw.index(1)).result, zero).result
        return arith.MinSIOp(lw.index(i), last).result
    bad.append(arith.CmpIOp(arith.CmpIPredicate.slt, n, lw.index(-i)).result)
    return arith.MaxSIOp(arith.AddIOp(n, lw.index(i)).result, zero).result


@lowers(I.StridedSliceOp)
@fitted
def lower_strided_slice(op, lw: Lowering):
    (t,) = lw.operand_types
    x, shape, et = lw.operands[0], ranked(t), element_type(t.dtype)
    items = _items(I.slice_index(**{k: lw.attrs[k] for k in _MASKS}), len(shape))
    offsets, sizes, strides, kept, flips, new_axes, kept_at = [], [], [], [], [], [], []
    bad: list = []  # out-of-range flags of indices into `?` dims
    dim = 0
    for it in items:
        if it is None:
            new_axes.append(len(kept) + len(new_axes))
            continue
        if isinstance(it, int):
            offsets.append(_dim_index(lw, x, t, dim, it, bad))
            sizes.append(1)
            strides.append(1)
        else:
            offset, n, stride, flip = _dim_slice(lw, x, t, dim, it)
            offsets.append(offset)
            sizes.append(n)
            strides.append(stride)
            if flip:
                flips.append(len(kept))
            kept_at.append(len(sizes) - 1)
            kept.append(n)
        dim += 1
    if bad:
        shape_check(lw, functools.reduce(lambda a, b: arith.OrIOp(a, b).result, bad))
    value = x
    whole = len(kept) == len(shape) and all(
        isinstance(o, int) and o == 0 and s == 1 and (d is None or n == d)
        for o, n, s, d in zip(offsets, sizes, strides, shape))
    if not whole:
        value = _extract(x, offsets, sizes, strides, kept, et, kept_at)
    if flips:
        value = _reverse(value, kept, flips, et)
    return [with_new_axes(value, kept, new_axes, et)]


def with_new_axes(value: ir.Value, kept: list, new_axes: list, et: ir.Type) -> ir.Value:
    """`value` (of sizes `kept`) with a size-1 dim inserted at each of `new_axes`."""
    if not new_axes:
        return value
    rank = len(kept) + len(new_axes)
    final = list(kept)
    for a in new_axes:
        final.insert(a, 1)
    return expand(value, final, et, unit_groups(rank, [i for i in range(rank)
                                                       if i not in new_axes]))


def _extract(x, offsets, sizes, strides, kept, et, kept_at=None) -> ir.Value:
    """`tensor.extract_slice` whose result keeps only the `kept` sizes (drops shrunk dims;
    `kept_at`: where the kept ones are among `sizes`). A slice of static size 0 reads
    nothing: a `tensor.empty` (MLIR's verifier rejects any offset into a dim of size 0).

    A slice that drops dims and steps by more than 1 is taken at full rank and the dropped
    (unit) dims collapsed after: bufferized as one rank-reducing `memref.subview`, MLIR
    cannot always tell which unit dims it drops and aborts (`getDroppedDims`: "unable to
    find unused dims of subview", LLVM 22.1; `x[0:-2:-3, -1]` of a 1x1 `x`)."""
    if 0 in sizes:
        return new_tensor(kept, et)
    def split(values):
        return ([v for v in values if not isinstance(v, int)],
                [v if isinstance(v, int) else DYNAMIC for v in values])
    (do, so), (ds, ss), (dt, st) = split(offsets), split(sizes), split(strides)
    static = [k if isinstance(k, int) else DYNAMIC for k in kept]
    if kept_at is not None and len(kept) < len(sizes) and any(s != 1 for s in strides):
        full = [s if isinstance(s, int) else DYNAMIC for s in sizes]
        value = tensor.ExtractSliceOp(ir.RankedTensorType.get(full, et), x, do, ds, dt, so,
                                      ss, st).result
        if not kept:
            return tensor.CollapseShapeOp(ir.RankedTensorType.get([], et), value, []).result
        return collapse(value, [None if s == DYNAMIC else s for s in full], et,
                        unit_groups(len(sizes), kept_at))
    rtype = ir.RankedTensorType.get(static, et)
    return tensor.ExtractSliceOp(rtype, x, do, ds, dt, so, ss, st).result


def _reverse(value, kept, flips, et) -> ir.Value:
    """`value` (of sizes `kept`, ints or run-time index values) reversed along `flips`."""
    rank = len(kept)
    init = new_tensor(kept, et)
    if all(isinstance(kept[i], int) for i in flips):
        exprs = [ir.AffineConstantExpr.get(kept[i] - 1) - ir.AffineDimExpr.get(i)
                 if i in flips else ir.AffineDimExpr.get(i) for i in range(rank)]
        return generic([value], [et], [init], [amap(rank, exprs),
                                               ir.AffineMap.get_identity(rank)],
                       [PARALLEL] * rank, lambda v, _: [v])[0]

    def body(_):  # a run-time size: read element n-1-i of each flipped dim
        coords = []
        for i in range(rank):
            j = linalg.IndexOp(i).result
            if i in flips:
                last = kept[i] - 1 if isinstance(kept[i], int) else arith.SubIOp(
                    kept[i], arith.ConstantOp(ir.IndexType.get(), 1).result).result
                if isinstance(last, int):
                    last = arith.ConstantOp(ir.IndexType.get(), last).result
                j = arith.SubIOp(last, j).result
            coords.append(j)
        return [tensor.ExtractOp(value, coords).result]
    return generic([], [], [init], [ir.AffineMap.get_identity(rank)], [PARALLEL] * rank,
                   body)[0]


# -- gather and one_hot ------------------------------------------------------------------


@lowers(I.GatherOp)
@fitted
def lower_gather(op, lw: Lowering):
    (pt, it) = lw.operand_types
    params, indices = lw.operands
    prank, irank = len(ranked(pt, "params")), len(ranked(it, "indices"))
    axis = lw.attrs["axis"] % prank
    sizes = sizes_of(lw, params, pt)
    out_sizes = sizes[:axis] + sizes_of(lw, indices, it) + sizes[axis + 1:]
    rank = len(out_sizes)
    index_type = ir.IndexType.get()
    _check_gather_indices(lw, indices, it, sizes[axis])

    def body(i, _):
        k = arith.IndexCastOp(index_type, i).result
        coords = [_index(d) for d in range(axis)] + [k] + \
            [_index(d) for d in range(axis + irank, rank)]
        return [signless(tensor.ExtractOp(params, coords).result)]
    et = element_type(pt.dtype)
    maps = [amap(rank, list(range(axis, axis + irank))), ir.AffineMap.get_identity(rank)]
    return generic([indices], [element_type(it.dtype)], [new_tensor(out_sizes, et)], maps,
                   [PARALLEL] * rank, body)


def _check_gather_indices(lw: Lowering, indices, it, size) -> None:
    """Raises (at run time) for the first index outside [0, size), as the kernel does
    (message: dialects/ember/indexing.py GatherOp.reference)."""
    et = element_type(it.dtype)
    static = isinstance(size, int)
    n = arith.ConstantOp(et, size).result if static else arith.IndexCastOp(et, size).result

    def bad(i):
        lo = arith.CmpIOp(arith.CmpIPredicate.slt, i, arith.ConstantOp(et, 0).result).result
        return arith.OrIOp(lo, arith.CmpIOp(arith.CmpIPredicate.sge, i, n).result).result

    def bad_numpy(i):  # a constant with a dynamic size is checked at run time
        return (i < 0) | (i >= size) if static else np.ones(i.shape, bool)
    if static:
        check(lw, indices, it, bad, bad_numpy, f"gather index {{}} is out of range [0, {size})")
        return
    wide = arith.IndexCastOp(ir.IntegerType.get_signless(64), size).result  # reported too
    check(lw, indices, it, bad, bad_numpy, "gather index {} is out of range [0, {})",
          extra=(wide,))


@lowers(I.OneHotOp)
@fitted
def lower_one_hot(op, lw: Lowering):
    (it, vt, _) = lw.operand_types
    indices, on, off = lw.operands
    irank = len(ranked(it, "indices"))
    axis = lw.attrs["axis"] % (irank + 1)
    sizes = sizes_of(lw, indices, it)
    sizes.insert(axis, lw.attrs["depth"])
    rank, i64 = irank + 1, ir.IntegerType.get_signless(64)

    def body(i, hot, cold, _):
        if it.dtype.bits < 64:
            i = (arith.ExtUIOp if it.dtype.kind == "uint" else arith.ExtSIOp)(i64, i).result
        pos = arith.IndexCastOp(i64, linalg.IndexOp(axis).result).result
        return [arith.SelectOp(arith.CmpIOp(arith.CmpIPredicate.eq, i, pos).result,
                               hot, cold).result]
    et = element_type(vt.dtype)
    maps = [amap(rank, [d for d in range(rank) if d != axis]), amap(rank, []), amap(rank, []),
            ir.AffineMap.get_identity(rank)]
    return generic([indices, on, off], [element_type(it.dtype), et, et],
                   [new_tensor(sizes, et)], maps, [PARALLEL] * rank, body)
