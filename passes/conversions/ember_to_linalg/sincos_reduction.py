"""Payne-Hanek argument reduction for f32 sin and cos of large |x|, in integer arith ops.

fastmath's Cody-Waite reduction (x - j * pi/2 in f64) is exact only while j < 2**29 (|x| <
8.4e8); numpy's libm reduces every float exactly. Beyond, the reduction multiplies x's 24-bit
mantissa by the 96 bits of 2/pi that matter for x's exponent (bits above them only add
multiples of 4 quadrants, bits below are too small), in 64-bit fixed point with 62 fraction
bits, as in ARM's optimized-routines (`sinf.c`, `reduce_large`; MIT/Apache-2.0):

  1. e = the exponent field of |x| (x >= 2**28 here): the window of 2/pi starts at byte
     (e >> 3) & 15 of `_INV_PIO4`, and the mantissa m (implicit bit set) is shifted left
     by e & 7;
  2. p = m * window, keeping the 64 bits from 2 integer bits down: the lowest word needs
     only its low 32 bits (m * w0 mod 2**32), the others their full 64-bit products;
  3. n = p rounded to a multiple of 2**62 (the quadrant), r = (p - n * 2**62) as a signed
     integer times pi/2 * 2**-62: |r| <= pi/4, accurate to about 2**-33 relative, which
     f32 sin/cos need.

Branchless, like the rest of fastmath: each table word is picked by `select`s on the
exponent byte (13 values occur for 2**28 <= |x| < 2**128), so the loop still vectorises.
`x` may be a scalar f32 or a vector of them (fastmath_vector.py): the same ops, lane-wise.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ember.passes.conversions.ember_to_linalg.fastmath_vector import is_vector, shaped

# The fraction bits of 2/pi (0x0.a2f9836e4e44...) as 24 overlapping 32-bit words, each one
# byte further on (the first three padded with zeros above): optimized-routines'
# `__inv_pio4`.
_INV_PIO4 = [0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415,
             0x4e441529, 0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1, 0x2757d1f5,
             0x57d1f534, 0xd1f534dd, 0xf534ddc0, 0x34ddc0db, 0xddc0db62, 0xc0db6295,
             0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041]
_PI63 = float.fromhex("0x1.921FB54442D18p-62")  # pi/2 * 2**-62
LARGE = 2.0 ** 28  # the smallest |x| this reduction is used for (exponent byte >= 3)
_FIRST = 3  # (e >> 3) & 15 for |x| >= LARGE


def _const(t: ir.Type, v: int) -> ir.Value:
    """Integer constant `v` of type `t` (i32 or i64, or a vector of them: a splat)."""
    element = ir.VectorType(t).element_type if is_vector(t) else t
    width = ir.IntegerType(element).width
    v &= (1 << width) - 1
    v = v - (1 << width) if v >> (width - 1) else v  # the two's-complement pattern
    attr = ir.IntegerAttr.get(element, v)
    if element != t:
        attr = ir.DenseElementsAttr.get_splat(t, attr)
    return arith.ConstantOp(t, attr).result


def _word(byte: ir.Value, offset: int, i32: ir.Type) -> ir.Value:
    """`_INV_PIO4[byte + offset]` for byte in [_FIRST, 15], as a chain of selects."""
    word = _const(i32, _INV_PIO4[_FIRST + offset])
    for k in range(_FIRST + 1, 16):
        hit = arith.CmpIOp(arith.CmpIPredicate.eq, byte, _const(i32, k)).result
        word = arith.SelectOp(hit, _const(i32, _INV_PIO4[k + offset]), word).result
    return word


def reduce_large(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(r as f64, n as i64) with |x| = n * pi/2 + r (n mod 4 exact, |r| <= pi/4), for f32
    `x` with LARGE <= |x| < inf (other inputs give unspecified values)."""
    i32 = shaped(x.type, ir.IntegerType.get_signless(32))
    i64 = shaped(x.type, ir.IntegerType.get_signless(64))
    bits = arith.BitcastOp(i32, x).result
    byte = arith.AndIOp(arith.ShRUIOp(bits, _const(i32, 26)).result, _const(i32, 15)).result
    shift = arith.AndIOp(arith.ShRUIOp(bits, _const(i32, 23)).result, _const(i32, 7)).result
    mantissa = arith.OrIOp(arith.AndIOp(bits, _const(i32, 0xffffff)).result,
                           _const(i32, 0x800000)).result
    m = arith.ShLIOp(mantissa, shift).result  # < 2**31
    w0, w1, w2 = (_word(byte, offset, i32) for offset in (0, 4, 8))
    low = arith.ExtUIOp(i64, arith.MulIOp(m, w0).result).result  # mod 2**32
    m64 = arith.ExtUIOp(i64, m).result
    mid = arith.MulIOp(m64, arith.ExtUIOp(i64, w1).result).result
    high = arith.MulIOp(m64, arith.ExtUIOp(i64, w2).result).result
    p = arith.OrIOp(arith.ShRUIOp(high, _const(i64, 32)).result,
                    arith.ShLIOp(low, _const(i64, 32)).result).result
    p = arith.AddIOp(p, mid).result
    n = arith.ShRUIOp(arith.AddIOp(p, _const(i64, 1 << 61)).result, _const(i64, 62)).result
    frac = arith.SubIOp(p, arith.ShLIOp(n, _const(i64, 62)).result).result
    f64 = shaped(x.type, ir.F64Type.get())
    pi63 = ir.FloatAttr.get(ir.F64Type.get(), _PI63)
    pi63 = arith.ConstantOp(f64, pi63 if f64 == pi63.type else
                            ir.DenseElementsAttr.get_splat(f64, pi63)).result
    r = arith.MulFOp(arith.SIToFPOp(f64, frac).result, pi63).result
    return r, n
