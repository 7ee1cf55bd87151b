"""Lowering of `ember.dynamic_strided_slice` and `ember.slice`: slice bounds read at run
time.

Each begin/end element is a `tensor.extract` from its operand, cast to `index`; the
arithmetic is Python's `slice.indices` on `index` values, so bounds past a dim clamp:

  start = begin < 0 ? max(begin + n, 0) : min(begin, n)        (0 when begin_mask)
  stop  = end   < 0 ? max(end + n, 0)   : min(end, n)          (n when end_mask)
  size  = max(0, ceildiv(stop - start, stride))

An index (shrink_axis_mask) outside [-n, n) raises eager's OpShapeError at run time through
checks.check (its message names the index, as the type inference's does for a constant one);
a valid index i reads offset `i < 0 ? i + n : i`. Then one `tensor.extract_slice` drops the
indexed dims and new axes are a `tensor.expand_shape`, as for `ember.strided_slice`.

Strides must be constants when lowering (after folding); a negative one takes the same
elements with stride -step from the last one the slice visits and reverses them, as
`ember.strided_slice` does. Other slices run on the interpreter. Upstream equivalent:
TOSA's slice with dynamic start (`tosa.slice`).

Before:
    %s = "ember.dynamic_strided_slice"(%x, %b, %e, %st) {shrink_axis_mask = 1 : i64}
           : (tensor<4x6xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<6xf32>
After (check elided):
    %i = tensor.extract %b[%c0] : tensor<1xi32>
    %j = arith.index_cast %i : i32 to index
    %o = arith.select %neg, %wrapped, %j : index
    %s = tensor.extract_slice %x[%o, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<6xf32>
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, tensor

from ember.dialects.ember import elements
from ember.dialects.ember import indexing as I
from ember.dialects.ember import dtypes
from ember.dialects.ember.convert import known_value
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.builders import fitted, ranked, size_of
from ember.passes.conversions.ember_to_linalg.checks import check, shape_check
from ember.passes.conversions.ember_to_linalg.common import Lowering, LoweringError, \
    element_type, lowers
from ember.passes.conversions.ember_to_linalg.indexing import (_extract, _reverse,
                                                               reversed_slice, with_new_axes)
from ember.passes.ir_utils import as_operation

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
_I64 = TensorType(dtypes.int64, (1,))


@lowers(I.DynamicStridedSliceOp)
@fitted
def lower_dynamic_strided_slice(op, lw: Lowering):
    xt, bt, et_, st = lw.operand_types
    x, begin, end, strides_value = lw.operands
    shape, et = ranked(xt), element_type(xt.dtype)
    strides = _constant(strides_value, st)
    if strides is None or 0 in strides:
        raise LoweringError("strides must be nonzero constants (fold them first); "
                            "other slices with traced bounds run on the interpreter")
    masks = {k: lw.attrs[k] for k in _MASKS}
    index = I.slice_index([0] * len(strides), [0] * len(strides), strides, **masks)
    consumed = sum(1 for it in index if it is not None and it is not Ellipsis)
    offsets, sizes, steps, kept, new_axes, kept_at, flips = [], [], [], [], [], [], []

    def take(offset, size, step: int, keep: bool) -> None:
        offsets.append(offset)
        sizes.append(size)
        steps.append(step)
        if keep:
            kept_at.append(len(sizes) - 1)
            kept.append(size)

    dim = 0
    for k, it in enumerate(index):
        if it is None:
            new_axes.append(len(kept) + len(new_axes))
            continue
        if it is Ellipsis:
            for d in range(dim, dim + len(shape) - consumed):
                take(0, size_of(lw, x, xt, d), 1, True)
            dim += len(shape) - consumed
            continue
        if isinstance(it, int):
            take(_checked_index(lw, x, xt, dim, _bound(lw, begin, bt, k)), 1, 1, False)
        elif it.step > 0:
            n = _as_index(lw, size_of(lw, x, xt, dim))
            start = lw.index(0) if it.start is None else _clamp(lw, _bound(lw, begin, bt, k), n)
            stop = n if it.stop is None else _clamp(lw, _bound(lw, end, et_, k), n)
            size = arith.MaxSIOp(lw.index(0), arith.CeilDivSIOp(
                arith.SubIOp(stop, start).result, lw.index(it.step)).result).result
            take(start, size, it.step, True)
        else:
            n = _as_index(lw, size_of(lw, x, xt, dim))
            take(*reversed_slice(lw, n, None if it.start is None else _bound(lw, begin, bt, k),
                                 None if it.stop is None else _bound(lw, end, et_, k),
                                 it.step), -it.step, True)
            flips.append(len(kept) - 1)
        dim += 1
    for d in range(dim, len(shape)):  # dims after the last index item: whole
        take(0, size_of(lw, x, xt, d), 1, True)
    value = _extract(x, offsets, sizes, steps, kept, et, kept_at)
    if flips:
        value = _reverse(value, kept, flips, et)
    return [with_new_axes(value, kept, new_axes, et)]


@lowers(I.SliceOp)
@fitted
def lower_slice(op, lw: Lowering):
    """tf.slice: offsets `begin`, sizes `size` (-1: the rest), checked, not clamped:

      length = size == -1 ? n - begin : size
      bad    = begin < 0 | begin > n | length < 0 | length > n - begin

    Any bad dim raises eager's error through a shape site (checks.shape_check) that reports
    the bounds, so the op's inference names the same dim and values."""
    xt, bt, nt = lw.operand_types
    x, begin, size = lw.operands
    shape, et = ranked(xt), element_type(xt.dtype)
    declared = ranked(lw.result_types[0], "result")
    i1 = ir.IntegerType.get_signless(1)
    bad = arith.ConstantOp(i1, 0).result
    offsets, sizes = [], []
    for k in range(len(shape)):
        n = _as_index(lw, size_of(lw, x, xt, k))
        start, asked = _bound(lw, begin, bt, k), _bound(lw, size, nt, k)
        room = arith.SubIOp(n, start).result
        rest = arith.CmpIOp(arith.CmpIPredicate.eq, asked, lw.index(-1)).result
        length = arith.SelectOp(rest, room, asked).result
        for predicate, a, b in ((arith.CmpIPredicate.slt, start, lw.index(0)),
                                (arith.CmpIPredicate.sgt, start, n),
                                (arith.CmpIPredicate.slt, length, lw.index(0)),
                                (arith.CmpIPredicate.sgt, length, room)):
            bad = arith.OrIOp(bad, arith.CmpIOp(predicate, a, b).result).result
        offsets.append(start)
        sizes.append(length if declared[k] is None else declared[k])
    shape_check(lw, bad, valued=(1, 2))
    return [_extract(x, offsets, sizes, [1] * len(shape), sizes, et)]


def _constant_strides(op: ir.Operation) -> bool:
    """Whether the lowering can take `op`: its strides fold to nonzero constants."""
    strides = known_value(op.operands[3])
    return strides is not None and bool(np.all(strides != 0))


lower_dynamic_strided_slice.can_lower = _constant_strides


def _constant(value: ir.Value, t: TensorType):
    """The ints of a constant 1-D operand, else None."""
    op = as_operation(value.owner)
    if not isinstance(op, ir.Operation) or op.name not in ("arith.constant", "ember.constant"):
        return None
    try:
        return [int(v) for v in np.asarray(elements.to_numpy(op.attributes["value"], t))]
    except (TypeError, ValueError, KeyError):
        return None


def _as_index(lw: Lowering, size) -> ir.Value:
    return lw.index(size) if isinstance(size, int) else size


def _bound(lw: Lowering, vector: ir.Value, t: TensorType, k: int) -> ir.Value:
    """Element k of a bounds operand as an `index`."""
    element = tensor.ExtractOp(vector, [lw.index(k)]).result
    return arith.IndexCastOp(ir.IndexType.get(), element).result


def _clamp(lw: Lowering, bound: ir.Value, n: ir.Value) -> ir.Value:
    """Python's clamping of a slice bound into [0, n] (negative counts from the end)."""
    zero = lw.index(0)
    negative = arith.CmpIOp(arith.CmpIPredicate.slt, bound, zero).result
    wrapped = arith.MaxSIOp(arith.AddIOp(bound, n).result, zero).result
    return arith.SelectOp(negative, wrapped, arith.MinSIOp(bound, n).result).result


def _checked_index(lw: Lowering, x, xt: TensorType, dim: int, i: ir.Value) -> ir.Value:
    """The offset of index `i` into dim `dim`; raises eager's error (StridedSliceOp.infer)
    when `i` is outside [-n, n)."""
    i64 = ir.IntegerType.get_signless(64)
    n = _as_index(lw, size_of(lw, x, xt, dim))
    size = xt.shape[dim]
    wide_n = arith.IndexCastOp(i64, n).result
    as_tensor = tensor.FromElementsOp(ir.RankedTensorType.get([1], i64),
                                      [arith.IndexCastOp(i64, i).result]).result

    def is_bad(v):
        low = arith.CmpIOp(arith.CmpIPredicate.slt, v, arith.SubIOp(
            arith.ConstantOp(i64, 0).result, wide_n).result).result
        return arith.OrIOp(low, arith.CmpIOp(arith.CmpIPredicate.sge, v, wide_n).result).result
    bounds = (lambda a: (a < -size) | (a >= size)) if size is not None else (lambda a: a != a)
    check(lw, as_tensor, _I64, is_bad, bounds,
          f"index {{}} is out of bounds for dim {dim} of size "
          f"{'?' if size is None else size} in {xt}", error="OpShapeError")
    negative = arith.CmpIOp(arith.CmpIPredicate.slt, i, lw.index(0)).result
    return arith.SelectOp(negative, arith.AddIOp(i, n).result, i).result
