"""Float conv2d as one matrix product (im2col + `linalg.matmul`), which `ember-prepare-blas`
and `ember-linalg-to-blas` turn into a call of `@ember_sgemm`/`@ember_dgemm`.

`linalg.conv_2d_nhwc_hwcf` becomes a 7-deep scalar loop nest under `convert-linalg-to-loops`
(64x28x28x32 by 3x3x32x64, SAME: 680 ms, 1.4 GMAC/s; 45 ms as below). With the input
padded (SAME) to [N, Hp, Wp, C] and the output [N, OH, OW, F], M = N * OH * OW and
K = KH * KW * C:

  1. patches [M, K]: a `linalg.generic` over (m, i, j, c) with
       patches[m, (i * KW + j) * C + c] = x[n, oh * sh + i * dh, ow * sw + j * dw, c]
     where (n, oh, ow) = (m floordiv (OH * OW), (m floordiv OW) mod OH, m mod OW);
  2. the HWIO filter as [K, F] (row (i * KW + j) * C + c), a copy;
  3. `linalg.matmul` into a zero fill of [M, F], then a copy to [N, OH, OW, F] (read at
     row (n * OH + oh) * OW + ow), into which elementwise consumers (bias, activation) fuse.
A 1x1 window with stride 1 needs no patches: x itself is [M, C], copied as such (loops
(n, h, w, c), no div/mod), for the reason below.

Why copies and not reshapes around the product: the backend's `linalg-fuse-elementwise-ops`
moves reshapes into a product by expanding its dims (the named op becomes a generic), so a
patch tensor [N, OH, OW, KH, KW, C] collapsed into the product would come back as three
reduction dims (no GEMM call takes that), and an elementwise op feeding the generic
product is fused into it: the patch gather (rebuilding the convolution's loop nest), or,
for a 1x1 window whose input is collapsed, the activation that produced x (relu then a
1x1 conv of 16x28x28x256 by 256: 0.8-1.0 s fused, 36-40 ms with the copy). The copies
write through maps that are not permutations, which that pass neither fuses nor
reshapes (it fuses an activation into them instead); the patches' innermost loop copies
C contiguous elements.

Half floats are extended to f32 by the copies (f32 GEMM), the caller rounds once, as the
named op's f32 accumulation did (a product of two halves is exact in f32). A static size
of 0 in the output or in K is a zero fill. N and F may be dynamic (`tensor.dim`); C, the
window and OH, OW must be static (the caller keeps the named op for a `?` channel count);
a GEMM call needs static shapes (the JIT specialises them), so a `?` product stays a loop
nest. Upstream has `linalg::rewriteInIm2Col`
(transform.structured.convert_conv2d_to_img2col), whose gather reads with `tensor.extract`
in its body and whose reshapes meet the same fusion.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg

from ember.passes.conversions.ember_to_linalg.builders import (Size, amap, filled, generic,
                                                               new_tensor)
from ember.passes.conversions.ember_to_linalg.common import PARALLEL


def _extend(v: ir.Value, elem: ir.Type, acc: ir.Type) -> ir.Value:
    return v if elem == acc else arith.ExtFOp(acc, v).result


def _dims(n: int) -> list:
    return [ir.AffineDimExpr.get(i) for i in range(n)]


def _patches(x: ir.Value, elem: ir.Type, acc: ir.Type, m: Size, out_hw, window, strides,
             dilations) -> ir.Value:
    """The [M, K] patch matrix of the padded input `x`: row (n, oh, ow), column (i, j, c).

    Loops (m, i, j, c): the innermost copies C contiguous elements, the div/mod of m is
    per row. A constant [KH, KW] operand (a global, unused by the body) gives loops i and j
    their sizes, which no other map names alone. The output map is not a permutation, so
    `linalg-fuse-elementwise-ops` neither fuses this copy into the product (which would
    rebuild the convolution's loop nest) nor propagates reshapes through it."""
    (oh, ow), (kh, kw, c) = out_hw, window
    mi, i, j, ci = _dims(4)
    n_i, oh_i, ow_i = ir.AffineExpr.get_floor_div(mi, oh * ow), \
        ir.AffineExpr.get_floor_div(mi, ow) % oh, mi % ow
    read = amap(4, [n_i, oh_i * strides[0] + i * dilations[0],
                    ow_i * strides[1] + j * dilations[1], ci])
    write = amap(4, [mi, (i * kw + j) * c + ci])
    i8 = ir.IntegerType.get_signless(8)
    taps_type = ir.RankedTensorType.get([kh, kw], i8)
    taps = arith.ConstantOp(taps_type, ir.DenseElementsAttr.get_splat(
        taps_type, ir.IntegerAttr.get(i8, 0))).result
    return generic([x, taps], [elem, i8], [new_tensor([m, kh * kw * c], acc)],
                   [read, amap(4, [i, j]), write], [PARALLEL] * 4,
                   lambda v, _t, _: [_extend(v, elem, acc)])[0]


def _rows(x: ir.Value, elem: ir.Type, acc: ir.Type, m: Size, hw, c: int) -> ir.Value:
    """x [N, H, W, C] as [N * H * W, C], for a 1x1 window with stride 1: a copy, not a
    collapse_shape, which the fusion pass would move into the product, turning it into a
    generic into which a single-use elementwise producer of x (an activation) then fuses:
    no GEMM call takes that."""
    ni, hi, wi, ci = _dims(4)
    return generic([x], [elem], [new_tensor([m, c], acc)],
                   [ir.AffineMap.get_identity(4), amap(4, [(ni * hw[0] + hi) * hw[1] + wi, ci])],
                   [PARALLEL] * 4, lambda v, _: [_extend(v, elem, acc)])[0]


def _filter_rows(f: ir.Value, elem: ir.Type, acc: ir.Type, window, f_out: Size) -> ir.Value:
    """The HWIO filter as a [KH * KW * C, F] matrix (a copy that, like `_patches`, is
    never fused into the product; a collapse_shape would make the fusion pass split the
    product's one reduction dim into three, which no GEMM call takes)."""
    kh, kw, c = window
    i, j, ci, fi = _dims(4)
    return generic([f], [elem], [new_tensor([kh * kw * c, f_out], acc)],
                   [ir.AffineMap.get_identity(4), amap(4, [(i * kw + j) * c + ci, fi])],
                   [PARALLEL] * 4, lambda v, _: [_extend(v, elem, acc)])[0]


def conv2d_as_gemm(x: ir.Value, x_shape, f: ir.Value, f_shape, out_sizes: list[Size],
                   strides, dilations, elem: ir.Type, acc: ir.Type) -> ir.Value:
    """conv2d of the padded input `x` ([N, Hp, Wp, C], static-or-None `x_shape`) with the
    HWIO filter `f` (of `f_shape`) into an `acc` tensor of `out_sizes` [N, OH, OW, F].

    H, W, C, KH, KW, OH and OW must be static; N and F may be `index` values. `elem` is
    the operands' element type, `acc` the product's (f32 or f64)."""
    zero = arith.ConstantOp(acc, ir.FloatAttr.get(acc, 0.0)).result
    window = (f_shape[0], f_shape[1], x_shape[3])
    if any(isinstance(s, int) and s == 0 for s in out_sizes) or 0 in window:
        return filled(out_sizes, zero)
    n, oh, ow, f_out = out_sizes
    m = n * oh * ow if isinstance(n, int) else \
        arith.MulIOp(n, arith.ConstantOp(ir.IndexType.get(), oh * ow).result).result
    if window[:2] == (1, 1) and tuple(strides) == (1, 1):
        a = _rows(x, elem, acc, m, (oh, ow), window[2])
    else:
        a = _patches(x, elem, acc, m, (oh, ow), window, strides, dilations)
    b = _filter_rows(f, elem, acc, window, f_out)
    y = linalg.matmul(a, b, outs=[filled([m, f_out], zero)])
    # back to [N, OH, OW, F] by a copy (an expand_shape would turn the product into a
    # generic into which the copies above are then fused); elementwise consumers such as
    # a bias add fuse into this copy.
    ni, ohi, owi, fi = _dims(4)
    ident = ir.AffineMap.get_identity(4)
    return generic([y], [acc], [new_tensor(out_sizes, acc)],
                   [amap(4, [(ni * oh + ohi) * ow + owi, fi]), ident], [PARALLEL] * 4,
                   lambda v, _: [v])[0]
