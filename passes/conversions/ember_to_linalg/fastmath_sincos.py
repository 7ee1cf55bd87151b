"""fastmath's sin and cos (f32): Cody-Waite's reduction in f64, Payne-Hanek's for huge
arguments (sincos_reduction.py), two short polynomials. See `sin` for the method and its
accuracy, and fastmath.py for the conventions all its builders share.

The builders take a scalar f32 or a vector of f32 (fastmath_vector.py): `sin`/`cos` are
exact for every float and branchless; `sincos_moderate` skips Payne-Hanek's reduction,
which is meant only for vectors where `large_arguments` is false in every lane (the CPU
backend's vector variants branch on that, backends/cpu/vector_variants.py).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math

from ember.passes.conversions.ember_to_linalg import sincos_reduction
from ember.passes.conversions.ember_to_linalg.fastmath_kit import INF, Kit
from ember.passes.conversions.ember_to_linalg.fastmath_vector import kit

__all__ = ["sin", "cos", "sincos_moderate", "large_arguments"]

# ---- sin and cos --------------------------------------------------------------------------

# pi/2 = _PIO2[0] + _PIO2[1] + _PIO2[2]: 24 + 24 + 53 significant bits, so j * _PIO2[i] is
# exact in f64 for the first two parts while |j| < 2**29.
_PIO2 = [1.5707963705062866, -4.371138828673793e-08, -1.7151244994428829e-15]
_2_OVER_PI = 0.6366197723675814
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


def _large(x, k: Kit):
    """The lanes Cody-Waite cannot reduce exactly: finite |x| >= 2**28."""
    ax = k.abs(x)
    return arith.AndIOp(k.cmp("OGE", ax, k.c(sincos_reduction.LARGE)),
                        k.cmp("OLT", ax, k.c(INF))).result


def _sincos_of(x, r, ji, cosine: bool, k: Kit):
    """sin or cos of x from its reduction: r (f64) and the quadrant j (i64)."""
    # |r| <= pi/4 + 2**-24 from both reductions (j is x * 2/pi correctly rounded in f64,
    # |x| < 2**28 for Cody-Waite), inside the polynomials' fitted range: no clamp needed.
    rf = arith.TruncFOp(k.ft, r).result
    q = arith.TruncIOp(k.it, ji).result
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
    return _sincos_of(x, r, ji, cosine, k)


def sincos_moderate(x, cosine: bool, fma: bool = False):
    """`sin` or `cos` (by `cosine`) without Payne-Hanek's reduction: the same values where
    no lane of `x` is `large_arguments` (vector variants branch to `_sincos` otherwise).
    `fma` (targets with fused multiply-add): two of Cody-Waite's steps fused, exact there
    (`_cody_waite`)."""
    k = kit(x.type)
    r, ji = _cody_waite(x, k, kit(x.type, "f64"), fma)
    return _sincos_of(x, r, ji, cosine, k)


def large_arguments(x):
    """The i1 (per lane) saying where `sincos_moderate` is not meant to be used: |x| >= 2**28
    (not exact there), +-inf and NaN (one unordered comparison; `sin` gives them NaN too)."""
    k = kit(x.type)
    return k.cmp("UGE", k.abs(x), k.c(sincos_reduction.LARGE))


def sin(x):
    """Sine.

    f32, argument reduction in f64: j = round(x * 2/pi) (shifter), r = x - j*pi/2 with
    pi/2 in three parts of 24, 24 and 53 significant bits (Cody-Waite). While |j| < 2**29
    (|x| < 8.4e8) the products j*P1, j*P2 and the first two subtractions are exact, so r
    carries one f64 rounding. From |x| >= 2**28 on, Payne-Hanek's reduction in 64-bit
    integers takes over (sincos_reduction.py), as numpy's libm does: both are computed
    and selected, so the loop stays vectorised (the CPU backend's vector variants skip
    Payne-Hanek's for vectors without such a lane: same bits). r is rounded to f32;
    sin r = r + r z S(z) and cos r = 1 - z/2 + z^2 C(z) (z = r^2, degree 2 in z, fits
    2^-28 and 2^-33), chosen and negated by the quadrant j mod 4 (bit ops). Max error
    2 ulp. +-inf and NaN give NaN; sin(-0) = -0.
    """
    return _sincos(x, cosine=False)


def cos(x):
    """Cosine: `sin`'s reduction with the quadrant advanced by one (same accuracy)."""
    return _sincos(x, cosine=True)
