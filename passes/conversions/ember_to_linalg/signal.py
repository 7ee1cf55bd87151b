"""Lowering of `ember.fft`, `ifft`, `rfft`, `irfft`: a direct DFT over the innermost dim.

Each transform is one `linalg.generic` with the output dims parallel and the summed input
index a reduction: out[..., k] += x[..., j] * w[t], t = (j * k) mod n taken exactly in
integers, from a table of the n twiddles w[t] = exp(-+2 pi i t / n) whose cos/sin are
computed in f64 (then rounded to the part type), so long transforms keep their accuracy.
The cost is O(n^2) per transform: correct for every length (no radix-2 restriction), not a
fast FFT. Inverses divide by n.
`rfft` reads min(len, fft_length) input samples (the rest are the zero padding); `irfft`
sums the first fft_length // 2 + 1 frequencies with Hermitian weights (2 for the ones
whose mirror image is implied, 1 for the zero and Nyquist ones, whose imaginary parts it
ignores, as numpy).

Before:
    %y = "ember.fft"(%x) : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
After:
    %w = linalg.generic {iterator_types = ["parallel"]} outs(%e) { math.cos/math.sin of
           2 pi t / n in f64, complex.create }            // the n twiddles, once
    %y = linalg.generic {iterator_types = ["parallel", "reduction"]} ins(%x) outs(%zeros) {
      %t = arith.remui (k * j), n;  %wt = tensor.extract %w[%t]
      %s = complex.add %acc, (complex.mul %xj, %wt)
    }
"""

from __future__ import annotations

import math as pymath

from mlir import ir
from mlir.dialects import arith, linalg, math, tensor
from mlir.dialects import complex as cx

from ember.dialects.ember import dtypes
from ember.dialects.ember import signal as S
from ember.dialects.ember.base import REGISTRY
from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg.builders import (Size, amap, filled, fitted,
                                                               generic, map_values, size_of)
from ember.passes.conversions.ember_to_linalg.common import (PARALLEL, REDUCTION, Lowering,
                                                             element_type, lowers)

F64 = dtypes.float64


def _index(lw: Lowering, size: Size) -> ir.Value:
    return lw.index(size) if isinstance(size, int) else size


def _min(lw: Lowering, a: Size, b: Size) -> Size:
    if a is b:
        return a
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return arith.MinSIOp(_index(lw, a), _index(lw, b)).result


def _crop(lw: Lowering, x: ir.Value, t: TensorType, length: Size) -> tuple[ir.Value, list]:
    """`x` with its innermost dim cut to `length` (<= its size), and the new sizes."""
    sizes = [size_of(lw, x, t, i) for i in range(len(t.shape))]
    if length is sizes[-1] or (isinstance(length, int) and length == t.shape[-1]):
        return x, sizes
    sizes[-1] = length
    if 0 in t.shape:  # nothing to read, and a slice at offset 0 of a size-0 dim is invalid
        return tensor.EmptyOp(sizes, element_type(t.dtype)).result, sizes
    dyn = ir.ShapedType.get_dynamic_size()
    result = ir.RankedTensorType.get([s if isinstance(s, int) else dyn for s in sizes],
                                     element_type(t.dtype))
    offsets, strides = [0] * len(sizes), [1] * len(sizes)
    out = tensor.ExtractSliceOp(result, x, [], [s for s in sizes if not isinstance(s, int)],
                                [], offsets, [s if isinstance(s, int) else dyn for s in sizes],
                                strides).result
    return out, sizes


def _twiddles(lw: Lowering, n: ir.Value, sign: float, part: DType) -> ir.Value:
    """The n twiddles exp(sign * 2 pi i t / n), t < n, as a tensor<?xcomplex<part>>: cos
    and sin computed once per t in f64 (then rounded), not once per product."""
    f64, i64 = ir.F64Type.get(), ir.IntegerType.get_signless(64)
    et = element_type(dtypes.complex_of(part))
    nf = arith.UIToFPOp(f64, arith.IndexCastOp(i64, n).result).result
    step = arith.DivFOp(lw.scalar(2 * pymath.pi, F64), nf).result

    def body(_):
        t = arith.IndexCastOp(i64, linalg.IndexOp(0).result).result
        theta = arith.MulFOp(arith.UIToFPOp(f64, t).result, step).result
        sin = arith.MulFOp(math.SinOp(theta).result, lw.scalar(sign, F64)).result
        parts = [_part(v, element_type(part)) for v in (math.CosOp(theta).result, sin)]
        return [cx.CreateOp(et, *parts).result]
    empty = tensor.EmptyOp([n], et).result
    return generic([], [], [empty], [amap(1, [0])], [PARALLEL], body)[0]


def _part(value: ir.Value, part) -> ir.Value:
    return value if str(part) == "f64" else arith.TruncFOp(part, value).result


def _dft(lw: Lowering, x: ir.Value, xt: TensorType, sum_size: Size, out_sizes: list,
         out: TensorType, n: ir.Value, term):
    """The generic: out[..., k] = sum over j < sum_size of term(x[..., j], w) with w the
    twiddle of (j * k) mod n."""
    rank = len(out_sizes)
    x, _ = _crop(lw, x, xt, sum_size)
    table = _twiddles(lw, n, -1.0 if term.forward else 1.0, out.dtype.real_dtype)
    init = filled(out_sizes, lw.scalar(0, out.dtype))
    maps = [amap(rank + 1, list(range(rank - 1)) + [rank]), amap(rank + 1, list(range(rank)))]

    def body(v, acc):
        k, j = linalg.IndexOp(rank - 1).result, linalg.IndexOp(rank).result
        t = arith.RemUIOp(arith.MulIOp(k, j).result, n).result
        return [term(v, acc, tensor.ExtractOp(table, [t]).result)]
    return generic([x], [element_type(xt.dtype)], [init], maps,
                   [PARALLEL] * rank + [REDUCTION], body)[0]


def _scaled(lw: Lowering, value: ir.Value, sizes: list, out: TensorType, n: ir.Value):
    """`value` / n, part by part for complex values."""
    et = element_type(out.dtype)
    part = element_type(out.dtype.real_dtype)
    i64 = ir.IntegerType.get_signless(64)
    nf = arith.UIToFPOp(part, arith.IndexCastOp(i64, n).result).result

    def div(v):
        if not out.dtype.is_complex:
            return arith.DivFOp(v, nf).result
        parts = [arith.DivFOp(p, nf).result for p in (cx.ReOp(v).result, cx.ImOp(v).result)]
        return cx.CreateOp(et, *parts).result
    return map_values(value, et, sizes, et, div)


@lowers(S.FftOp, S.IfftOp)
@fitted
def lower_fft(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    x = lw.operands[0]
    inverse = REGISTRY[op.name] is S.IfftOp
    sizes = [size_of(lw, x, t, i) for i in range(len(t.shape))]
    n = _index(lw, sizes[-1])
    def term(v, acc, w):
        return cx.AddOp(acc, cx.MulOp(v, w).result).result
    term.forward = not inverse
    value = _dft(lw, x, t, sizes[-1], sizes, out, n, term)
    return [_scaled(lw, value, sizes, out, n) if inverse else value]


@lowers(S.RfftOp)
@fitted
def lower_rfft(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    x = lw.operands[0]
    length = size_of(lw, x, t, -1)
    fft_length = lw.attrs["fft_length"]
    n = length if fft_length == S.DEFAULT_LENGTH else fft_length
    sizes = [size_of(lw, x, t, i) for i in range(len(t.shape) - 1)]
    sizes.append(n // 2 + 1 if isinstance(n, int) else arith.AddIOp(
        arith.DivUIOp(n, lw.index(2)).result, lw.index(1)).result)
    et = element_type(out.dtype)

    def term(v, acc, w):
        scaled = cx.CreateOp(et, arith.MulFOp(v, cx.ReOp(w).result).result,
                             arith.MulFOp(v, cx.ImOp(w).result).result).result
        return cx.AddOp(acc, scaled).result
    term.forward = True
    return [_dft(lw, x, t, _min(lw, length, n), sizes, out, _index(lw, n), term)]


@lowers(S.IrfftOp)
@fitted
def lower_irfft(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    x = lw.operands[0]
    m = size_of(lw, x, t, -1)
    fft_length = lw.attrs["fft_length"]
    if fft_length != S.DEFAULT_LENGTH:
        n = fft_length
    elif isinstance(m, int):
        n = S.default_irfft_length(m)
    else:  # 2 * max(m - 1, 0)
        less = arith.MaxSIOp(arith.SubIOp(m, lw.index(1)).result, lw.index(0)).result
        n = arith.MulIOp(less, lw.index(2)).result
    sizes = [size_of(lw, x, t, i) for i in range(len(t.shape) - 1)] + [n]
    half = n // 2 + 1 if isinstance(n, int) else arith.AddIOp(
        arith.DivUIOp(n, lw.index(2)).result, lw.index(1)).result
    nv = _index(lw, n)

    def term(v, acc, w):
        k = linalg.IndexOp(len(sizes)).result
        # weight 1 for the zero frequency and (n even) the Nyquist one, else 2 (its mirror)
        edge = arith.OrIOp(
            arith.CmpIOp(arith.CmpIPredicate.eq, k, lw.index(0)).result,
            arith.CmpIOp(arith.CmpIPredicate.eq, arith.MulIOp(k, lw.index(2)).result,
                         nv).result).result
        one, two = lw.scalar(1, out.dtype), lw.scalar(2, out.dtype)
        weight = arith.SelectOp(edge, one, two).result
        re = arith.MulFOp(cx.ReOp(v).result, cx.ReOp(w).result).result
        im = arith.MulFOp(cx.ImOp(v).result, cx.ImOp(w).result).result
        im = arith.SelectOp(edge, lw.scalar(0, out.dtype), im).result
        return arith.AddFOp(acc, arith.MulFOp(weight, arith.SubFOp(re, im).result).result).result
    term.forward = False
    value = _dft(lw, x, t, _min(lw, m, half), sizes, out, nv, term)
    return [_scaled(lw, value, sizes, out, nv)]
