"""Lowering of neural-network ops: conv2d, depthwise_conv2d, max_pool2d, avg_pool2d, softmax,
log_softmax.

Windows follow the dialect's `window_geometry` (TensorFlow's SAME/VALID): SAME padding is a
`tensor.pad` of the input, then
  - conv2d is one matrix product (conv_gemm.py): the patches [N * OH * OW, KH * KW * C]
    times the filter as [KH * KW * C, F], a `linalg.matmul` that ember-linalg-to-blas makes
    a GEMM call (a 1x1 window with stride 1 needs no patches: x is copied as rows); with a
    `?` channel count it is `linalg.conv_2d_nhwc_hwcf` (HWIO is HWCF) on a zero-filled
    init, a scalar loop nest;
  - depthwise_conv2d is `linalg.depthwise_conv_2d_nhwc_hwcm` into [N, OH, OW, C, M], then a
    `tensor.collapse_shape` of (C, M) into the C * M output channels (c * M + m, TF's order);
    it stays a loop nest (per channel it is a product of K = KH * KW, too short for a GEMM);
  - max_pool2d pads with the lowest value (-inf, INT_MIN, 0 for ui8) and is
    `linalg.pooling_nhwc_max` (`_unsigned` for ui8) on an init filled with it;
  - avg_pool2d pads with 0, sums with `linalg.pooling_nhwc_sum`, and divides by the number of
    real (unpadded) elements in each window — a constant [oh, ow] tensor, computed here for
    static shapes (a scalar where every window is full). Integers average in f64 and
    truncate toward zero, as the reference kernel does.
Half floats compute in f32 (the named ops extend inputs to the init's type) and round once.

softmax and log_softmax along `axis` are three `linalg.generic`s, numerically stable like the
reference: m = max(x) (NaN-propagating, -inf for an empty axis; a non-finite m shifts by 0),
s = sum(exp(x - m)), then exp(x - m) / s or (x - m) - log(s).

Spatial dims must be static (a LoweringError says so); N and C may be dynamic. Upstream
equivalents: `tosa-to-linalg-named`'s conv and pooling, `linalg.softmax` decomposition.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, math

from ember.dialects.ember import dtypes
from ember.dialects.ember import nn as N
from ember.dialects.ember.dtypes import DType
from ember.passes.conversions.ember_to_linalg.builders import (amap, collapse, filled, fitted,
                                                               generic, is_half, map_values,
                                                               new_tensor,
                                                               ranked, signless, size_of, sizes_of,
                                                               truncated)
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, REDUCTION, Lowering,
                                                             LoweringError, element_type,
                                                             lowers)
from ember.passes.conversions.ember_to_linalg.conv_gemm import conv2d_as_gemm
from ember.passes.conversions.ember_to_linalg.elementwise import convert_scalar
from ember.passes.conversions.ember_to_linalg.pad import pad_tensor


def _constant(et: ir.Type, value) -> ir.Value:
    """An `arith.constant` of element type `et` (a float or an integer type)."""
    attr = ir.FloatAttr.get(et, float(value)) if str(et) in ("f16", "bf16", "f32", "f64") \
        else ir.IntegerAttr.get(et, int(value))
    return arith.ConstantOp(et, attr).result


def _compute_type(d: DType) -> ir.Type:
    """Where arithmetic happens: f32 for half floats, f64 for integers (avg_pool2d)."""
    if is_half(d):
        return ir.F32Type.get()
    return element_type(d) if d.is_floating else ir.F64Type.get()


def _int_to_float(value: ir.Value, sizes, src: DType, dst: ir.Type) -> ir.Value:
    """Integer tensor `value` converted elementwise to float type `dst`."""
    conv = arith.UIToFPOp if src.kind == "uint" else arith.SIToFPOp
    return map_values(value, element_type(src), sizes, dst, lambda x: conv(dst, x).result)


# -- windows -----------------------------------------------------------------------------


def _geometry(t, ksize, strides, dilations, padding, name: str):
    """[(out, pad before, pad after)] for H and W; they must be static."""
    shape = ranked(t, "input")
    if len(shape) != 4 or shape[1] is None or shape[2] is None:
        raise LoweringError(f"{name} needs an input of rank 4 with static height and width, "
                            f"got {t}; run ember-shape-refine or give static shapes")
    return [N.window_geometry(shape[1 + i], ksize[i], strides[i], dilations[i], padding)
            for i in range(2)]


def _padded(x, t, geometry, et, value) -> ir.Value:
    """`x` with the SAME padding of `geometry` on H and W, filled with scalar `value`."""
    (_, top, bottom), (_, left, right) = geometry
    if not (top or bottom or left or right):
        return x
    return pad_tensor(x, t.shape, et, _constant(et, value), [0, top, left, 0],
                      [0, bottom, right, 0])


@lowers(N.Conv2DOp)
@fitted
def lower_conv2d(op, lw: Lowering):
    (xt, ft), out = lw.operand_types, lw.result_types[0]
    (x, f), d = lw.operands, out.dtype
    strides, dilations = list(lw.attrs["strides"]), list(lw.attrs["dilations"])
    geometry = _geometry(xt, ranked(ft, "filter")[:2], strides, dilations,
                         lw.attrs["padding"], "conv2d")
    acc = _compute_type(d)
    sizes = [size_of(lw, x, xt, 0), geometry[0][0], geometry[1][0], size_of(lw, f, ft, 3)]
    x = _padded(x, xt, geometry, element_type(d), 0)
    channels = xt.shape[3] if xt.shape[3] is not None else ranked(ft, "filter")[2]
    if channels is not None:  # a GEMM (conv_gemm.py); a `?` channel count: the named op
        shape = [xt.shape[0], xt.shape[1] + geometry[0][1] + geometry[0][2],
                 xt.shape[2] + geometry[1][1] + geometry[1][2], channels]
        y = conv2d_as_gemm(x, shape, f, ranked(ft, "filter"), sizes, strides, dilations,
                           element_type(d), acc)
    else:
        init = filled(sizes, _constant(acc, 0))
        y = linalg.conv_2d_nhwc_hwcf(x, f, outs=[init], strides=strides, dilations=dilations)
    return [truncated(y, sizes, d) if is_half(d) else y]


@lowers(N.DepthwiseConv2DOp)
@fitted
def lower_depthwise_conv2d(op, lw: Lowering):
    (xt, ft), out = lw.operand_types, lw.result_types[0]
    (x, f), d = lw.operands, out.dtype
    strides, dilations = list(lw.attrs["strides"]), list(lw.attrs["dilations"])
    fshape = ranked(ft, "filter")
    geometry = _geometry(xt, fshape[:2], strides, dilations, lw.attrs["padding"],
                         "depthwise_conv2d")
    acc = _compute_type(d)
    sizes = [size_of(lw, x, xt, 0), geometry[0][0], geometry[1][0], size_of(lw, f, ft, 2),
             size_of(lw, f, ft, 3)]
    x = _padded(x, xt, geometry, element_type(d), 0)
    init = filled(sizes, _constant(acc, 0))
    y = linalg.depthwise_conv_2d_nhwc_hwcm(x, f, outs=[init], strides=strides,
                                           dilations=dilations)
    y = truncated(y, sizes, d) if is_half(d) else y
    shape = [xt.shape[0], geometry[0][0], geometry[1][0], fshape[2], fshape[3]]
    return [collapse(y, shape, element_type(d), [[0], [1], [2], [3, 4]])]


def _lowest(d: DType):
    """The identity of max: -inf, the lowest signed integer, or 0 for unsigned."""
    if d.is_floating:
        return -np.inf
    return 0 if d.kind == "uint" else d.min


@lowers(N.MaxPool2DOp)
@fitted
def lower_max_pool2d(op, lw: Lowering):
    (t,) = lw.operand_types
    x, d = lw.operands[0], t.dtype
    ksize, strides = list(lw.attrs["ksize"]), list(lw.attrs["strides"])
    geometry = _geometry(t, ksize, strides, (1, 1), lw.attrs["padding"], "max_pool2d")
    et = element_type(d)
    sizes = [size_of(lw, x, t, 0), geometry[0][0], geometry[1][0], size_of(lw, x, t, 3)]
    x = _padded(x, t, geometry, et, _lowest(d))
    pool = linalg.pooling_nhwc_max_unsigned if d.kind == "uint" else linalg.pooling_nhwc_max
    init = filled(sizes, _constant(et, _lowest(d)))
    y = pool(x, new_tensor(ksize, et), outs=[init], strides=strides, dilations=[1, 1])
    return [signless(y)]


def window_counts(size: int, k: int, stride: int, before: int, out: int) -> np.ndarray:
    """How many real (unpadded) positions each of the `out` windows of one dim covers."""
    starts = np.arange(out) * stride - before
    return np.clip(starts + k, 0, size) - np.clip(starts, 0, size)


@lowers(N.AvgPool2DOp)
@fitted
def lower_avg_pool2d(op, lw: Lowering):
    (t,) = lw.operand_types
    x, d = lw.operands[0], t.dtype
    ksize, strides = list(lw.attrs["ksize"]), list(lw.attrs["strides"])
    geometry = _geometry(t, ksize, strides, (1, 1), lw.attrs["padding"], "avg_pool2d")
    acc = _compute_type(d)
    in_sizes = sizes_of(lw, x, t)
    if d.is_integer:  # the named op would extend integers, not convert them
        x = _int_to_float(x, in_sizes, d, acc)
        d_in = acc
    else:
        d_in = element_type(d)
    x = _padded(x, t, geometry, d_in, 0)
    sizes = [in_sizes[0], geometry[0][0], geometry[1][0], in_sizes[3]]
    init = filled(sizes, _constant(acc, 0))
    total = linalg.pooling_nhwc_sum(x, new_tensor(ksize, acc), outs=[init], strides=strides,
                                    dilations=[1, 1])
    counts = np.outer(*[window_counts(t.shape[1 + i], ksize[i], strides[i], geometry[i][1],
                                      geometry[i][0]) for i in range(2)])
    return [_divide(lw, total, counts, sizes, acc, d)]


def _divide(lw: Lowering, total, counts: np.ndarray, sizes, acc: ir.Type, d: DType):
    """total / counts (broadcast over N and C), converted to `d`."""
    compute = dtypes.float32 if str(acc) == "f32" else dtypes.float64

    def finish(q):
        if d.is_floating:
            return arith.TruncFOp(element_type(d), q).result if is_half(d) else q
        return convert_scalar(lw, q, compute, d)
    init = new_tensor(sizes, element_type(d))
    ident = ir.AffineMap.get_identity(4)
    if counts.size and np.all(counts == counts.flat[0]):
        return generic([total], [acc], [init], [ident, ident], [PARALLEL] * 4, lambda s, _: [
            finish(arith.DivFOp(s, _constant(acc, counts.flat[0])).result)])[0]
    ctype = ir.RankedTensorType.get(list(counts.shape), acc)
    table = arith.ConstantOp(ctype, ir.DenseElementsAttr.get(
        counts.astype(compute.np_dtype), type=ctype)).result
    return generic([total, table], [acc, acc], [init], [ident, amap(4, [1, 2]), ident],
                   [PARALLEL] * 4, lambda s, c, _: [finish(arith.DivFOp(s, c).result)])[0]


# -- softmax -----------------------------------------------------------------------------


@lowers(N.SoftmaxOp, N.LogSoftmaxOp)
@fitted
def lower_softmax(op, lw: Lowering):
    (t,) = lw.operand_types
    x, d = lw.operands[0], t.dtype
    rank = len(ranked(t))
    axis = lw.attrs["axis"] % rank
    log = op.name == N.LogSoftmaxOp.name
    et, acc = element_type(d), _compute_type(d)
    sizes = sizes_of(lw, x, t)
    kept = [i for i in range(rank) if i != axis]
    reduced = [sizes[i] for i in kept]
    ident, rmap = ir.AffineMap.get_identity(rank), amap(rank, kept)
    iterators = [REDUCTION if i == axis else PARALLEL for i in range(rank)]

    def wide(v):
        return arith.ExtFOp(acc, v).result if is_half(d) else v

    def shifted(v, m):  # x - m, where a non-finite max shifts by 0 (as the reference)
        inf = _constant(acc, np.inf)
        finite = arith.CmpFOp(arith.CmpFPredicate.OLT, math.AbsFOp(m).result, inf).result
        return arith.SubFOp(wide(v), arith.SelectOp(finite, m, _constant(acc, 0)).result).result

    peak = generic([x], [et], [filled(reduced, _constant(acc, -np.inf))], [ident, rmap],
                   iterators, lambda v, m: [arith.MaximumFOp(m, wide(v)).result])[0]
    total = generic([x, peak], [et, acc], [filled(reduced, _constant(acc, 0))],
                    [ident, rmap, rmap], iterators, lambda v, m, s: [
                        arith.AddFOp(s, math.ExpOp(shifted(v, m)).result).result])[0]

    def normalise(v, m, s, _):
        z = shifted(v, m)
        y = arith.SubFOp(z, math.LogOp(s).result).result if log else \
            arith.DivFOp(math.ExpOp(z).result, s).result
        return [arith.TruncFOp(et, y).result if is_half(d) else y]
    return generic([x, peak, total], [et, acc, acc], [new_tensor(sizes, et)],
                   [ident, rmap, rmap, ident], [PARALLEL] * rank, normalise)
