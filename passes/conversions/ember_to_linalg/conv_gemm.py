"""Float conv2d as one matrix product (im2col + `linalg.matmul`), which `ember-prepare-blas`
and `ember-linalg-to-blas` turn into a call of `@ember_sgemm`/`@ember_dgemm`.

`linalg.conv_2d_nhwc_hwcf` becomes a 7-deep scalar loop nest under `convert-linalg-to-loops`
(about 1 GMAC/s); a GEMM runs at the speed of the matrix kernels. With the input already
padded (SAME) to [N, Hp, Wp, C] and the output [N, OH, OW, F]:

  1. a `linalg.generic` gathers the patches into [N, OH, OW, KH, KW, C]:
       patches[n, oh, ow, i, j, c] = x[n, oh * sh + i * dh, ow * sw + j * dw, c]
     (strides and dilations are affine expressions of the input's indexing map);
  2. `tensor.collapse_shape` to [N * OH * OW, KH * KW * C], and the filter (HWIO) to
     [KH * KW * C, F]: HWIO's row-major order is exactly the patches' (i, j, c) order;
  3. `linalg.matmul` into a zero fill of [N * OH * OW, F], then `tensor.expand_shape` back
     to [N, OH, OW, F].
A 1x1 filter with stride 1 needs no gather: the input itself collapses to [N * H * W, C].
Half floats are extended to f32 while gathering (the filter by an elementwise
`arith.extf`), so the product is an f32 GEMM; the caller rounds the result once, as the
named op's f32 accumulation did (each product of two halves is exact in f32).

An output or a contraction with a static size of 0 is a zero fill (no empty reshapes:
see builders.collapse). Dynamic N, C and F are read with `tensor.dim`; the GEMM call
needs static shapes (the JIT specialises them), a `?` product stays a loop nest.
Upstream equivalent: `linalg::rewriteInIm2Col` (transform.structured.convert_conv2d_to_img2col),
whose gather indexes a collapsed [N, OH * OW, ...] space with div/mod.
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


def _patches(x: ir.Value, f: ir.Value, elem: ir.Type, acc: ir.Type, m: Size, out_hw,
             window, strides, dilations) -> ir.Value:
    """The [M, K] patch matrix of the padded input `x`: row (n, oh, ow), column (i, j, c).

    Loops (m, i, j, c): the innermost copies C contiguous elements, the div/mod of m is
    per row. The filter is an operand read at (i, j, 0, 0) only so that the sizes of loops
    i and j are known (the body does not use it). The output map is not a permutation, so
    `linalg-fuse-elementwise-ops` neither fuses this copy into the product (which would
    rebuild the convolution's loop nest) nor propagates reshapes through it."""
    (oh, ow), (kh, kw, c) = out_hw, window
    mi, i, j, ci = _dims(4)
    n_i, oh_i, ow_i = ir.AffineExpr.get_floor_div(mi, oh * ow), \
        ir.AffineExpr.get_floor_div(mi, ow) % oh, mi % ow
    read = amap(4, [n_i, oh_i * strides[0] + i * dilations[0],
                    ow_i * strides[1] + j * dilations[1], ci])
    zero = ir.AffineConstantExpr.get(0)
    write = amap(4, [mi, (i * kw + j) * c + ci])
    return generic([x, f], [elem, elem], [new_tensor([m, kh * kw * c], acc)],
                   [read, amap(4, [i, j, zero, zero]), write], [PARALLEL] * 4,
                   lambda v, _f, _: [_extend(v, elem, acc)])[0]


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
        a = collapse(x, x_shape, acc, [[0, 1, 2], [3]])
        c = window[2]
        b_sizes = [c, f_out if isinstance(f_out, int) else DYNAMIC]
        b = tensor.ExtractSliceOp(ir.RankedTensorType.get(b_sizes, elem), f, [],
                                  [] if isinstance(f_out, int) else [f_out], [],
                                  [0, 0, 0, 0], [1, 1] + b_sizes, [1, 1, 1, 1]).result
        y = linalg.matmul(a, b, outs=[filled([m, f_out], zero)])
        return expand(y, out_sizes, acc, [[0, 1, 2], [3]])
    a = _patches(x, f, elem, acc, m, (oh, ow), window, strides, dilations)
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
