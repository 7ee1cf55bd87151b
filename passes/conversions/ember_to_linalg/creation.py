"""Lowering of the ops that make tensors: constant, fill, range and shape.

- `ember.constant` becomes `arith.constant` with the same dense elements on the signless
  type (`ui8` bits reinterpreted as `i8`; bf16 and i1 as they are).
- `ember.fill` becomes `linalg.fill` of the scalar `tensor.extract`ed from the value operand;
  dynamic result dims are read from the `dims` operand, after a check that none is negative
  (eager's OpShapeError).
- `ember.range` becomes a `linalg.generic` computing `start + i * delta` from
  `linalg.index`: wrapping integer arithmetic in the element type, or f64 arithmetic rounded
  to the element type as numpy's `astype` does (`narrow_f64`), as the reference
  (`start + delta * np.arange(n)`) computes. A size that depends on run-time bounds is
  computed as numpy does, max(0, ceil((limit - start) / delta)), after checks that raise
  eager's error (a zero delta, a length that is not finite).
- `ember.shape` becomes an `arith.constant` of the static dims, or `tensor.from_elements`
  of the static dims and `tensor.dim`s when some dims are dynamic.

Upstream equivalents: `arith.constant`, `linalg.fill`, `tensor.dim`/`tensor.from_elements`.

Before:
    %z = "ember.fill"(%dims, %v) : (tensor<2xi64>, tensor<f32>) -> tensor<3x4xf32>
After:
    %s = tensor.extract %v[] : tensor<f32>
    %e = tensor.empty() : tensor<3x4xf32>
    %z = linalg.fill ins(%s : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, math, tensor

from ember.dialects.ember import creation as C
from ember.dialects.ember import dtypes
from ember.dialects.ember.types import MAX_BYTES, TensorType
from ember.passes.conversions.ember_to_linalg.checks import check, shape_check
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, Lowering,
                                                             LoweringError, element_type,
                                                             lowers, tensor_type)

F64 = dtypes.float64


@lowers(C.ConstantOp)
def lower_constant(op, lw: Lowering):
    out = lw.result_types[0]
    element_type(out.dtype)  # strings stay on the host
    attr = op.attributes["value"]
    if out.dtype is dtypes.uint8:
        attr = _signless_bytes(lw.attrs["value"], out)
    return [arith.ConstantOp(tensor_type(out), attr).result]


def _signless_bytes(array: np.ndarray, out: TensorType) -> ir.Attribute:
    """The dense attribute of a ui8 array on i8: the same bits."""
    shaped = tensor_type(out)
    flat = np.asarray(array).reshape(-1)
    if flat.size > 1 and np.all(flat == flat[0]):  # keep huge splats small
        one = ir.IntegerAttr.get(element_type(out.dtype), int(flat[0].view(np.int8)))
        return ir.DenseElementsAttr.get_splat(shaped, one)
    data = np.ascontiguousarray(array, dtype=np.uint8).view(np.int8)
    return ir.DenseElementsAttr.get(data, type=shaped.element_type, shape=list(out.shape))


@lowers(C.FillOp)
def lower_fill(op, lw: Lowering):
    dims, value = lw.operands
    out = lw.result_types[0]
    if out.shape is None:
        raise LoweringError(f"result {out} needs a known rank")
    if not out.is_static:
        check_dims(lw, dims, lw.operand_types[0], 0)
    scalar = _scalar(value, out.dtype)
    sizes = [d if d is not None else _dim_from(lw, dims, lw.operand_types[0], i)
             for i, d in enumerate(out.shape)]
    empty = tensor.EmptyOp(sizes, element_type(out.dtype)).result
    return [linalg.fill(scalar, outs=[empty])]


def check_dims(lw: Lowering, dims: ir.Value, dims_type: TensorType, operand: int) -> None:
    """Raises eager's error when the shape operand `dims` (operand number `operand`), read
    at run time, holds a negative dim (creation.NEGATIVE_DIM) or sizes whose elements would
    take more bytes than an int64 counts (the result type's: native code would allocate
    the wrapped-around size and write past it)."""
    zero = arith.ConstantOp(element_type(dims_type.dtype), 0).result
    check(lw, dims, dims_type,
          lambda d: arith.CmpIOp(arith.CmpIPredicate.slt, d, zero).result,
          lambda a: a < 0, C.NEGATIVE_DIM, error="OpShapeError")
    out, i64 = lw.result_types[0], ir.IntegerType.get_signless(64)
    wide = arith.ExtUIOp if dims_type.dtype.kind == "uint" else arith.ExtSIOp
    sizes = []
    for k, d in enumerate(out.shape):
        if d is None:
            v = tensor.ExtractOp(dims, [lw.index(k)]).result
            d = v if dims_type.dtype.bits == 64 else wide(i64, v).result
        sizes.append(d)
    shape_check(lw, too_large(sizes, out.dtype.np_dtype.itemsize or 1), valued=(operand,))


def too_large(sizes: list, itemsize: int) -> ir.Value:
    """Whether elements of `sizes` (ints, or i64 values not negative) would take more than
    MAX_BYTES (2**63 - 1) bytes, counted as TensorType counts them (dims > 1 only), without
    overflowing: `total * d` fits iff `d <= MAX_BYTES // total`."""
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    c = (lambda v: arith.ConstantOp(i64, v).result)
    total, bad = c(itemsize), arith.ConstantOp(i1, 0).result
    for d in sizes:
        if isinstance(d, int):
            if d <= 1:
                continue
            d = c(d)
        big = arith.CmpIOp(arith.CmpIPredicate.sgt, d, c(1)).result
        room = arith.DivSIOp(c(MAX_BYTES), total).result
        over = arith.AndIOp(big, arith.CmpIOp(arith.CmpIPredicate.sgt, d, room).result).result
        bad = arith.OrIOp(bad, over).result
        grow = arith.AndIOp(big, arith.XOrIOp(bad, arith.ConstantOp(i1, 1).result).result)
        total = arith.SelectOp(grow.result, arith.MulIOp(total, d).result, total).result
    return bad


def _scalar(value: ir.Value, dtype) -> ir.Value:
    """The element of a 0-d tensor, typed signless (a `ui8` argument is retyped to `i8`
    when the pass finishes, so its element is `i8` too)."""
    return tensor.ExtractOp(value, [], results=[element_type(dtype)]).result


def _dim_from(lw: Lowering, dims: ir.Value, dims_type: TensorType, i: int) -> ir.Value:
    """Element `i` of the shape operand as an index (negative sizes clamp to 0)."""
    d = tensor.ExtractOp(dims, [lw.index(i)]).result
    d = arith.MaxSIOp(d, lw.scalar(0, dims_type.dtype)).result
    return arith.IndexCastOp(ir.IndexType.get(), d).result


@lowers(C.RangeOp)
def lower_range(op, lw: Lowering):
    out = lw.result_types[0]
    dtype, et = out.dtype, element_type(out.dtype)
    start, limit, delta = (_scalar(lw.operands[k], dtype) for k in range(3))
    if dtype.is_floating and dtype is not F64:  # numpy computes in f64, then rounds
        start, limit, delta = (arith.ExtFOp(element_type(F64), v).result
                               for v in (start, limit, delta))
    size = out.shape[0] if out.is_static else _range_size(lw, start, limit, delta, dtype)
    generic = linalg.GenericOp(
        [tensor_type(out)], [], [tensor.EmptyOp([size], et).result],
        ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get_identity(1))]),
        ir.ArrayAttr.get([ir.Attribute.parse(PARALLEL)]))
    block = generic.regions[0].blocks.append(et)
    with ir.InsertionPoint(block):
        i = linalg.IndexOp(0).result
        if dtype.is_floating:
            n = arith.IndexCastOp(ir.IntegerType.get_signless(64), i).result
            n = arith.SIToFPOp(element_type(F64), n).result
            v = narrow_f64(arith.AddFOp(start, arith.MulFOp(delta, n).result).result, et)
        else:  # modular arithmetic: wrapping in the element type equals numpy's int64 + cast
            n = arith.IndexCastOp(et, i).result
            v = arith.AddIOp(start, arith.MulIOp(delta, n).result).result
        linalg.YieldOp([v])
    return [generic.result]


def _range_size(lw: Lowering, start, limit, delta, dtype) -> ir.Value:
    """The run-time length of a range, max(0, ceil((limit - start) / delta)), as numpy
    computes it; a zero delta or a length that is not finite raises eager's error (the
    site re-runs the op's inference on the run-time bounds)."""
    i1, i64 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(64)
    if dtype.is_floating:
        f64 = element_type(F64)
        length = math.CeilOp(arith.DivFOp(arith.SubFOp(limit, start).result,
                                          delta).result).result
        # ordered less-than: false for NaN and inf, and so is `delta == 0` (inf or NaN)
        finite = arith.CmpFOp(arith.CmpFPredicate.OLT, math.AbsFOp(length).result,
                              arith.ConstantOp(f64, float("inf")).result).result
        shape_check(lw, arith.XOrIOp(finite, arith.ConstantOp(i1, 1).result).result,
                    valued=(0, 1, 2))
        length = arith.MaximumFOp(length, arith.ConstantOp(f64, 0.0).result).result
        # 2**63 or more elements: too large, as eager says (fptosi of it would be poison)
        fits = arith.CmpFOp(arith.CmpFPredicate.OLT, length,
                            arith.ConstantOp(f64, float(2**63)).result).result
        shape_check(lw, arith.XOrIOp(fits, arith.ConstantOp(i1, 1).result).result,
                    valued=(0, 1, 2))
        length = arith.FPToSIOp(i64, arith.SelectOp(arith.AndIOp(finite, fits).result, length,
                                                    arith.ConstantOp(f64, 0.0).result).result
                                ).result
    else:
        wide = arith.ExtUIOp if dtype.kind == "uint" else arith.ExtSIOp
        start, limit, delta = (v if dtype.bits == 64 else wide(i64, v).result
                               for v in (start, limit, delta))
        c = (lambda v: arith.ConstantOp(i64, v).result)
        is_zero = arith.CmpIOp(arith.CmpIPredicate.eq, delta, c(0)).result
        shape_check(lw, is_zero, valued=(0, 1, 2))
        # |limit - start| and |delta| as unsigned: exact where the signed ones overflow
        # (range(-2**63, 2**63 - 1, 2**62) has 4 elements)
        up = arith.CmpIOp(arith.CmpIPredicate.sgt, delta, c(0)).result
        ahead = arith.CmpIOp(arith.CmpIPredicate.sgt, limit, start).result
        behind = arith.CmpIOp(arith.CmpIPredicate.slt, limit, start).result
        some = arith.SelectOp(up, ahead, behind).result
        span = arith.SelectOp(up, arith.SubIOp(limit, start).result,
                              arith.SubIOp(start, limit).result).result
        step = arith.SelectOp(up, delta, arith.SubIOp(c(0), delta).result).result
        step = arith.SelectOp(is_zero, c(1), step).result
        whole = arith.DivUIOp(span, step).result
        part = arith.CmpIOp(arith.CmpIPredicate.ne, arith.RemUIOp(span, step).result,
                            c(0)).result
        length = arith.AddIOp(whole, arith.ExtUIOp(i64, part).result).result
        length = arith.SelectOp(some, length, c(0)).result
        # more than 2**63 - 1 elements (unsigned): too large, as eager says
        huge = arith.CmpIOp(arith.CmpIPredicate.slt, length, c(0)).result
        shape_check(lw, huge, valued=(0, 1, 2))
    shape_check(lw, too_large([length], (dtype.np_dtype.itemsize or 1)), valued=(0, 1, 2))
    return arith.IndexCastOp(ir.IndexType.get(), length).result


def narrow_f64(x: ir.Value, et: ir.Type) -> ir.Value:
    """Rounds f64 `x` to float type `et` as numpy's `astype` does, without a libcall.

    LLVM lowers f64 -> f16/bf16 `truncf` to `__truncdfhf2`/`__truncdfbf2` calls that JIT and
    AOT links do not resolve, so both go through f32. numpy rounds f64 -> f16 once: the f32
    step rounds to odd (exact: f32 has more than 2 extra bits). ml_dtypes rounds
    f64 -> bf16 through f32 (twice, to nearest even), and so does this.
    """
    f32, f64 = ir.F32Type.get(), ir.F64Type.get()
    if et == f64:
        return x
    t = arith.TruncFOp(f32, x).result
    if et == f32:
        return t
    if et == ir.BF16Type.get():
        return arith.TruncFOp(et, t).result
    back = arith.ExtFOp(f64, t).result
    inexact = arith.CmpFOp(arith.CmpFPredicate.UNE, back, x).result
    away = arith.CmpFOp(arith.CmpFPredicate.OGT, math.AbsFOp(back).result,
                        math.AbsFOp(x).result).result
    i32 = ir.IntegerType.get_signless(32)
    bits = arith.BitcastOp(i32, t).result
    one = arith.ConstantOp(i32, 1).result
    bits = arith.SelectOp(away, arith.SubIOp(bits, one).result, bits).result  # toward zero
    bits = arith.SelectOp(inexact, arith.OrIOp(bits, one).result, bits).result  # sticky bit
    return arith.TruncFOp(et, arith.BitcastOp(f32, bits).result).result


@lowers(C.ShapeOp)
def lower_shape(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    if t.shape is None:
        raise LoweringError(f"the shape of unranked {t} is not known at compile time; run "
                            "ember-shape-refine first")
    et = element_type(out.dtype)
    if t.is_static:
        array = np.array(t.shape, dtype=out.dtype.np_dtype)
        attr = ir.DenseElementsAttr.get(array, type=et, shape=[len(t.shape)])
        return [arith.ConstantOp(tensor_type(out), attr).result]
    dims = []
    for i, d in enumerate(t.shape):
        if d is not None:
            dims.append(lw.scalar(d, out.dtype))
            continue
        size = tensor.DimOp(lw.operands[0], lw.index(i)).result
        dims.append(arith.IndexCastOp(et, size).result)
    return [tensor.FromElementsOp(tensor_type(out), dims).result]
