"""fastmath's sin and cos (f32): an f32 Cody-Waite reduction with fused multiply-adds for
|x| < 2**20, Cody-Waite's in f64 up to 2**28, Payne-Hanek's beyond (sincos_reduction.py),
two short polynomials. See `sin` for the method and its accuracy, and fastmath.py for the
conventions all its builders share.

The builders take a scalar f32 or a vector of f32 (fastmath_vector.py): `sin`/`cos` are
exact for every float and branchless; `sincos_moderate` skips Payne-Hanek's reduction,
which is meant only for vectors where `large_arguments` is false in every lane, and
`sincos_small` the f64 one too, for vectors where `beyond_small` is false in every lane (the
CPU backend's vector variants branch on those, backends/cpu/vector_variants.py).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math

from ember.passes.conversions.ember_to_linalg import sincos_reduction
from ember.passes.conversions.ember_to_linalg.fastmath_kit import INF, Kit
from ember.passes.conversions.ember_to_linalg.fastmath_vector import kit

__all__ = ["sin", "cos", "sincos_moderate", "sincos_small", "large_arguments",
           "beyond_small"]

# ---- sin and cos --------------------------------------------------------------------------

# pi/2 = _PIO2[0] + _PIO2[1] + _PIO2[2]: 24 + 24 + 53 significant bits, so j * _PIO2[i] is
# exact in f64 for the first two parts while |j| < 2**29.
_PIO2 = [1.5707963705062866, -4.371138828673793e-08, -1.7151244994428829e-15]
_2_OVER_PI = 0.6366197723675814
# The f32 reduction (`_cody_waite_f32`, |x| < SMALL): pi/2 in three f32 parts, 2/pi in f32.
_PIO2_F32 = [1.5707963705062866, -4.371138828673793e-08, -1.7151245100058819e-15]
_2_OVER_PI_F32 = 0.6366197466850281
SMALL = 2.0 ** 20
# sin(r) = r + r z S(z), cos(r) = 1 - z/2 + z^2 C(z), z = r^2, |r| <= pi/4 (+1e-3):
# fitted relative errors 2^-28.0 and 2^-33.0.
_SIN_S = [-0.16666655242443085, 0.008332154713571072, -0.00019514454470481724]
_COS_C = [0.04166664555668831, -0.0013887308305129409, 2.4432209102087654e-05]


def _cody_waite(x, k: Kit, kd: Kit, fma: bool = False):
    """(r as f64, j as i64) with x = j * pi/2 + r, |r| <= pi/4 + tiny: exact reduction while
    |j| < 2**29 (|x| < 8.4e8); NaN and +-inf give a NaN r. `fma`: j * _PIO2[0] and
    j * _PIO2[1] fused into their subtractions, one op for two and the same bits: with 24
    and 23 significant bits the products are exact while |j| < 2**29, so the fused op
    rounds once where the subtraction did."""
    xd = arith.ExtFOp(kd.ft, x).result
    j, ji = kd.round_int(kd.mul(xd, kd.c(_2_OVER_PI)))
    r = xd
    for i, part in enumerate(_PIO2):
        if fma and i < 2:
            r = math.FmaOp(j, kd.c(-part), r).result
        else:
            r = kd.sub(r, kd.mul(j, kd.c(part)))
    return r, ji


def _cody_waite_f32(x, k: Kit):
    """(r, j as i32) with x = j * pi/2 + r for |x| < SMALL, all in f32 with fused
    multiply-adds: j = x * 2/pi rounded by the shifter inside one fma (|j| <= 2**14, off by
    one only where x * 2/pi is within 2**-11 of a half, so |r| <= pi/4 + 5e-4, inside the
    polynomials' range); r = x - j * P1 is exact (j * P1 and x are multiples of the same
    2**-23, or 2**-24 for x < 1, and their difference is below 1), then j * P2 and j * P3
    are taken off with one rounding each."""
    shifted = math.FmaOp(x, k.c(_2_OVER_PI_F32), k.c(k.shifter)).result
    j = k.sub(shifted, k.c(k.shifter))
    ji = arith.SubIOp(k.bits(shifted), k.bits(k.c(k.shifter))).result
    r = x
    for part in _PIO2_F32:
        r = math.FmaOp(j, k.c(-part), r).result
    return r, ji


def beyond_small(x):
    """The i1 (per lane) saying where `sincos_small` is not meant to be used: |x| >= SMALL,
    +-inf and NaN."""
    k = kit(x.type)
    return k.cmp("UGE", k.abs(x), k.c(SMALL))


def _large(x, k: Kit):
    """The lanes Cody-Waite cannot reduce exactly: finite |x| >= 2**28."""
    ax = k.abs(x)
    return arith.AndIOp(k.cmp("OGE", ax, k.c(sincos_reduction.LARGE)),
                        k.cmp("OLT", ax, k.c(INF))).result


def _narrow(r, ji, k: Kit):
    """The f64 reductions' (r, j) as f32 and i32."""
    return arith.TruncFOp(k.ft, r).result, arith.TruncIOp(k.it, ji).result


def _sincos_of(x, rf, q, cosine: bool, k: Kit):
    """sin or cos of x from its reduction: r and the quadrant j (f32 and i32)."""
    # |r| <= pi/4 + 2**-24 from the f64 reductions (j is x * 2/pi correctly rounded in f64,
    # |x| < 2**28 for Cody-Waite), pi/4 + 5e-4 from the f32 one: inside the polynomials'
    # fitted range, no clamp needed.
    if cosine:
        q = arith.AddIOp(q, k.i(1)).result
    z = k.mul(rf, rf)
    s = k.add(rf, k.mul(k.mul(rf, z), k.poly(z, _SIN_S)))
    c = k.add(k.sub(k.c(1.0), k.mul(z, k.c(0.5))), k.mul(k.mul(z, z), k.poly(z, _COS_C)))
    # q odd: its low bit moved to the sign (vectors: a blend on the sign bit, where a
    # truncation to i1 costs a chain of packs and shuffles)
    odd = arith.CmpIOp(arith.CmpIPredicate.slt, arith.ShLIOp(q, k.i(31)).result,
                       k.i(0)).result
    y = k.select(odd, c, s)
    flip = arith.ShLIOp(arith.AndIOp(q, k.i(2)).result, k.i(30)).result
    y = k.from_bits(arith.XOrIOp(k.bits(y), flip).result)
    if not cosine:  # sin(-0) = -0
        y = k.select(k.cmp("OEQ", x, k.c(0.0)), x, y)
    return y


def _sincos(x, cosine: bool):
    """sin or cos of f32 `x` (or a vector of f32: fastmath_vector.py), exact reduction for
    every float: Cody-Waite, and Payne-Hanek's selected where `_large`."""
    k = kit(x.type)
    if k.wide:
        raise TypeError("sin and cos are built for f32 only")
    kd = kit(x.type, "f64")
    r, ji = _cody_waite(x, k, kd)
    # Finite |x| >= 2**28 take Payne-Hanek's reduction of |x| (negated for x < 0); NaN and
    # +-inf keep Cody-Waite's, which gives NaN (inf - inf).
    large = _large(x, k)
    r_big, n_big = sincos_reduction.reduce_large(x)
    negative = k.cmp("OLT", x, k.c(0.0))
    r_big = kd.select(negative, kd.neg(r_big), r_big)
    n_big = kd.select(negative, arith.SubIOp(kd.i(0), n_big).result, n_big)
    r, ji = kd.select(large, r_big, r), kd.select(large, n_big, ji)
    return _sincos_of(x, *_small_or(x, _narrow(r, ji, k), k), cosine, k)


def _small_or(x, reduced, k: Kit):
    """The f32 reduction where |x| < SMALL, `reduced` (f32, i32) elsewhere."""
    small = k.cmp("OLT", k.abs(x), k.c(SMALL))
    r, ji = _cody_waite_f32(x, k)
    return k.select(small, r, reduced[0]), arith.SelectOp(small, ji, reduced[1]).result


def sincos_moderate(x, cosine: bool, fma: bool = False):
    """`sin` or `cos` (by `cosine`) without Payne-Hanek's reduction: the same values where
    no lane of `x` is `large_arguments` (vector variants branch to `_sincos` otherwise).
    `fma` (targets with fused multiply-add): two of Cody-Waite's steps fused, exact there
    (`_cody_waite`)."""
    k = kit(x.type)
    reduced = _narrow(*_cody_waite(x, k, kit(x.type, "f64"), fma), k)
    return _sincos_of(x, *_small_or(x, reduced, k), cosine, k)


def sincos_small(x, cosine: bool):
    """`sin` or `cos` (by `cosine`) by the f32 reduction alone: the same values where no
    lane of `x` is `beyond_small` (vector variants branch to the others otherwise)."""
    k = kit(x.type)
    return _sincos_of(x, *_cody_waite_f32(x, k), cosine, k)


def large_arguments(x):
    """The i1 (per lane) saying where `sincos_moderate` is not meant to be used: |x| >= 2**28
    (not exact there), +-inf and NaN (one unordered comparison; `sin` gives them NaN too)."""
    k = kit(x.type)
    return k.cmp("UGE", k.abs(x), k.c(sincos_reduction.LARGE))


def sin(x):
    """Sine.

    f32. The argument is reduced to r = x - j * pi/2, |r| <= pi/4 (+ a little), and the
    quadrant j mod 4 picks the polynomial and the sign:
      - |x| < 2**20 (`SMALL`): in f32 with fused multiply-adds (`_cody_waite_f32`): j from
        one fma, pi/2 in three f32 parts, the first step exact;
      - up to 2**28: in f64, j = round(x * 2/pi) (shifter), r = x - j*pi/2 with pi/2 in
        three parts of 24, 24 and 53 significant bits (Cody-Waite): while |j| < 2**29 (|x| <
        8.4e8) the products j*P1, j*P2 and the first two subtractions are exact, so r
        carries one f64 rounding;
      - from |x| >= 2**28 on, Payne-Hanek's reduction in 64-bit integers
        (sincos_reduction.py), as numpy's libm does.
    All three are computed and selected, so the loop stays vectorised (the CPU backend's
    vector variants compute only what their lanes need: same bits). r is rounded to f32;
    sin r = r + r z S(z) and cos r = 1 - z/2 + z^2 C(z) (z = r^2, degree 2 in z, fits
    2^-28 and 2^-33), chosen and negated by the quadrant j mod 4 (bit ops). Max error
    below 2**20: sin 1.67 ulp, cos 1.81 (every float checked against f64 numpy); 2 ulp
    above. +-inf and
    NaN give NaN; sin(-0) = -0. Targets without fused multiply-adds call libm's `fmaf`
    for the f32 reduction (the same bits everywhere, slowly).
    """
    return _sincos(x, cosine=False)


def cos(x):
    """Cosine: `sin`'s reduction with the quadrant advanced by one (same accuracy)."""
    return _sincos(x, cosine=True)
