"""Lowering of `ember.fft`, `ifft`, `rfft`, `irfft`: a direct DFT over the innermost dim.

Each transform is one `linalg.generic` with the output dims parallel and the summed input
index a reduction: out[..., k] += x[..., j] * w, w = exp(-+2 pi i t / n), t = (j * k) mod n
taken exactly in integers and the twiddle's cos/sin computed in f64 (then rounded to the
part type), so long transforms keep their accuracy. The cost is O(n^2) per transform:
correct for every length (no radix-2 restriction), not a fast FFT. Inverses divide by n.
`rfft` reads min(len, fft_length) input samples (the rest are the zero padding); `irfft`
sums the first fft_length // 2 + 1 frequencies with Hermitian weights (2 for the ones
whose mirror image is implied, 1 for the zero and Nyquist ones, whose imaginary parts it
ignores, as numpy).

Before:
    %y = "ember.fft"(%x) : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
After:
    %y = linalg.generic {iterator_types = ["parallel", "reduction"]} ins(%x) outs(%zeros) {
      ... %t = arith.remui (k * j), n ... math.cos/math.sin ... complex.create ...
      %s = complex.add %acc, (complex.mul %xj, %w)
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
    dyn = ir.ShapedType.get_dynamic_size()
    result = ir.RankedTensorType.get([s if isinstance(s, int) else dyn for s in sizes],
                                     element_type(t.dtype))
    offsets, strides = [0] * len(sizes), [1] * len(sizes)
    out = tensor.ExtractSliceOp(result, x, [], [s for s in sizes if not isinstance(s, int)],
                                [], offsets, [s if isinstance(s, int) else dyn for s in sizes],
                                strides).result
    return out, sizes


def _twiddle(lw: Lowering, n: ir.Value, out_dim: int, sum_dim: int, sign: float):
    """(cos, sign * sin) of 2 pi ((k * j) mod n) / n in f64, k and j the loop indices."""
    k, j = linalg.IndexOp(out_dim).result, linalg.IndexOp(sum_dim).result
    t = arith.RemUIOp(arith.MulIOp(k, j).result, n).result
    i64, f64 = ir.IntegerType.get_signless(64), ir.F64Type.get()
    as_f64 = [arith.UIToFPOp(f64, arith.IndexCastOp(i64, v).result).result for v in (t, n)]
    theta = arith.MulFOp(arith.DivFOp(*as_f64).result, lw.scalar(2 * pymath.pi, F64)).result
    return math.CosOp(theta).result, arith.MulFOp(math.SinOp(theta).result,
                                                 lw.scalar(sign, F64)).result


def _part(value: ir.Value, part) -> ir.Value:
    return value if str(part) == "f64" else arith.TruncFOp(part, value).result


def _dft(lw: Lowering, x: ir.Value, xt: TensorType, sum_size: Size, out_sizes: list,
         out: TensorType, n: ir.Value, term):
    """The generic: out[..., k] = sum over j < sum_size of term(x[..., j], cos, sin)."""
    rank = len(out_sizes)
    x, _ = _crop(lw, x, xt, sum_size)
    zero = lw.scalar(0, out.dtype)
    init = filled(out_sizes, zero)
    maps = [amap(rank + 1, list(range(rank - 1)) + [rank]), amap(rank + 1, list(range(rank)))]

    def body(v, acc):
        c, s = _twiddle(lw, n, rank - 1, rank, -1.0 if term.forward else 1.0)
        return [term(v, acc, c, s)]
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
    et, part = element_type(t.dtype), element_type(t.dtype.real_dtype)

    def term(v, acc, c, s):
        w = cx.CreateOp(et, _part(c, part), _part(s, part)).result
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
    et, part = element_type(out.dtype), element_type(t.dtype)

    def term(v, acc, c, s):
        w = cx.CreateOp(et, arith.MulFOp(v, _part(c, part)).result,
                        arith.MulFOp(v, _part(s, part)).result).result
        return cx.AddOp(acc, w).result
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
    part = element_type(out.dtype)

    def term(v, acc, c, s):
        k = linalg.IndexOp(len(sizes)).result
        # weight 1 for the zero frequency and (n even) the Nyquist one, else 2 (its mirror)
        edge = arith.OrIOp(
            arith.CmpIOp(arith.CmpIPredicate.eq, k, lw.index(0)).result,
            arith.CmpIOp(arith.CmpIPredicate.eq, arith.MulIOp(k, lw.index(2)).result,
                         nv).result).result
        one, two = lw.scalar(1, out.dtype), lw.scalar(2, out.dtype)
        weight = arith.SelectOp(edge, one, two).result
        re = arith.MulFOp(cx.ReOp(v).result, _part(c, part)).result
        im = arith.MulFOp(cx.ImOp(v).result, _part(s, part)).result
        im = arith.SelectOp(edge, lw.scalar(0, out.dtype), im).result
        return arith.AddFOp(acc, arith.MulFOp(weight, arith.SubFOp(re, im).result).result).result
    term.forward = False
    value = _dft(lw, x, t, _min(lw, m, half), sizes, out, nv, term)
    return [_scaled(lw, value, sizes, out, nv)]
