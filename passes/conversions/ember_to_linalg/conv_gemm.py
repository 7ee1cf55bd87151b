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
A 1x1 window with stride 1 needs no patches: x collapses to [M, C] (`tensor.collapse_shape`),
the filter is a rank-reducing `tensor.extract_slice` [C, F], and the product's result
expands back (`tensor.expand_shape`).

Why copies and not reshapes around the product: the backend's `linalg-fuse-elementwise-ops`
moves reshapes into a product by expanding its dims (the named op becomes a generic), so a
patch tensor [N, OH, OW, KH, KW, C] collapsed into the product would come back as three
reduction dims (no GEMM call takes that), and an elementwise gather feeding the product
directly would be fused into it, rebuilding the convolution's loop nest. The copies in
1 and 2 write through maps that are not permutations, which that pass neither fuses nor
reshapes; the patches' innermost loop copies C contiguous elements.

Half floats are extended to f32 by the copies (f32 GEMM), the caller rounds once, as the
named op's f32 accumulation did (a product of two halves is exact in f32); the 1x1 shortcut
is for f32/f64 only. A static size of 0 in the output or in K is a zero fill. N and F may be
dynamic (`tensor.dim`); C, the window and OH, OW must be static (the caller keeps the named
op for a `?` channel count); a GEMM call needs static shapes (the JIT specialises them), so
a `?` product stays a loop nest. Upstream has `linalg::rewriteInIm2Col`
(transform.structured.convert_conv2d_to_img2col), whose gather reads with `tensor.extract`
in its body and whose reshapes meet the same fusion.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from ember.passes.conversions.ember_to_linalg.builders import (DYNAMIC, Size, amap, collapse,
                                                               expand, filled, generic,
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
    if window[:2] == (1, 1) and tuple(strides) == (1, 1) and elem == acc:
        # no gather: x is already [N * H * W, C]. The product becomes a generic over
        # (n, h, w, f, c) once the fusion pass moves the reshapes into it, still one GEMM.
        own = [None if d == DYNAMIC else d for d in ir.RankedTensorType(x.type).shape]
        a = collapse(x, own, acc, [[0, 1, 2], [3]])  # C may be `?` here, static in f
        c = window[2]
        b_sizes = [c, f_out if isinstance(f_out, int) else DYNAMIC]
        b = tensor.ExtractSliceOp(ir.RankedTensorType.get(b_sizes, elem), f, [],
                                  [] if isinstance(f_out, int) else [f_out], [],
                                  [0, 0, 0, 0], [1, 1] + b_sizes, [1, 1, 1, 1]).result
        y = linalg.matmul(a, b, outs=[filled([m, f_out], zero)])
        return expand(y, out_sizes, acc, [[0, 1, 2], [3]])
    a = _patches(x, elem, acc, m, (oh, ow), window, strides, dilations)
    b = _filter_rows(f, elem, acc, window, f_out)
    y = linalg.matmul(a, b, outs=[filled([m, f_out], zero)])
    # back to [N, OH, OW, F] by a copy (an expand_shape would turn the product into a
    # generic into which the filter's copy is then fused); elementwise consumers such as
    # a bias add fuse into this copy.
    ni, ohi, owi, fi = _dims(4)
    ident = ir.AffineMap.get_identity(4)
    return generic([y], [acc], [new_tensor(out_sizes, acc)],
                   [amap(4, [(ni * oh + ohi) * ow + owi, fi]), ident], [PARALLEL] * 4,
                   lambda v, _: [v])[0]
