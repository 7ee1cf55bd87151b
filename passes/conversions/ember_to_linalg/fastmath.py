"""Vectorisable elementary functions: scalar builders made only of `arith` ops.

`math.exp`, `math.tanh`, ... lower to one libm call per element (`expf`, `tanhf`), and a
loop with a call in it does not vectorise. The builders here compute the same functions
with range reduction, polynomials and integer bit manipulation (`arith.bitcast`, `shli`),
so a fused elementwise loop becomes one SIMD loop. Each builder takes and returns a scalar
`ir.Value` and must be called under an insertion point (inside a `linalg.generic` body).

    y = fastmath.build("tanh", x)          # x: f32 (or f64 where `supports` says so)

Conventions shared by every builder:

* No fast-math flags and no fused multiply-add: every op rounds once, as IEEE says, so the
  result is the same on every target (with or without FMA) and LLVM may not reassociate.
* No branches and no calls: special cases are `arith.select`s on comparisons; both sides
  are computed. `cmpf olt/ogt` are false for NaN, so clamps written as
  `select(x < lo, lo, x)` pass NaN through.
* Exponents are scaled by building 2**k from its bits, `bitcast((k + bias) << mantissa)`;
  rounding to an integer uses the "shifter" `(t + 1.5 * 2**m) - 1.5 * 2**m`, whose low
  bits are the integer itself (no `fptosi`, which is poison on NaN).
* Special values follow numpy: NaN in, NaN out; exp(+-inf) = inf, 0; log(0) = -inf,
  log(x < 0) = NaN; tanh(+-inf) = +-1; sin(+-inf) = NaN; -0.0 keeps its sign where the
  function is odd (expm1, log1p, tanh, sin) and denormal inputs and results are computed,
  not flushed.
* Polynomial coefficients are minimax fits (Lawson's iteratively reweighted least squares,
  relative error, on the stated interval) rounded to the evaluation precision, except the
  float64 kernels, which are branchless versions of fdlibm's (Sun, 1993) with its
  published coefficients. Polynomials are evaluated by Estrin's scheme where they are long:
  fused chains of these functions are bound by latency, not throughput.
* Some f32 functions compute their last steps (or all) in f64, where a f32 formula would
  cancel or round twice (expm1, log1p, the sigmoid quotient, sin/cos reduction); the
  result is rounded once to f32. Vectorised, f64 lanes are half as many per register.

Errors, as the maximum distance in ulps to the correctly rounded result (float64 numpy
rounded to float32), measured over all 2**32 float32 inputs:
exp, expm1, log, log1p, tanh, sigmoid: 1 ulp; sin, cos: 2 ulp (checked exhaustively for
|x| < 2**28, every 50th float beyond). Float64 (against long double, on
dense sweeps): exp 0.87, expm1 0.86, log 0.80, log1p 0.84, tanh 2.1, sigmoid 2.2 ulp.
tests/passes/test_fastmath.py asserts the bounds of the brief (2 ulp, sin/cos 3).

Float32 is the main target (f16 and bf16 compute through it). Float64 sin and cos keep
libm (`supports`): a reduction that is accurate over the whole f64 range needs
Payne-Hanek, and a libm fallback for large |x| would be a call in the loop.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func

from ember.passes.conversions.ember_to_linalg import sincos_reduction
from ember.passes.ir_utils import as_operation

__all__ = ["FUNCTIONS", "supports", "build", "call", "exp", "expm1", "log", "log1p", "tanh",
           "sigmoid", "sin", "cos"]

_NAN = float("nan")
_INF = float("inf")
_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453


class _Kit:
    """Scalar arith builders for one float type (f32 or f64) and its same-size integer."""

    def __init__(self, ftype: ir.Type):
        self.ft = ftype
        self.wide = str(ftype) == "f64"
        if not self.wide and str(ftype) != "f32":
            raise TypeError(f"fastmath builds f32 or f64, not {ftype}")
        self.it = ir.IntegerType.get_signless(64 if self.wide else 32)
        self.mant = 52 if self.wide else 23
        self.bias = 1023 if self.wide else 127
        # The shifter: adding it rounds |t| < 2**(mant-1) to an integer held in the low bits.
        self.shifter = 1.5 * 2.0 ** self.mant

    # constants
    def c(self, v: float) -> ir.Value:
        return arith.ConstantOp(self.ft, ir.FloatAttr.get(self.ft, float(v))).result

    def i(self, v: int) -> ir.Value:
        width = 64 if self.wide else 32
        v = int(v) & ((1 << width) - 1)  # as a two's-complement bit pattern
        v = v - (1 << width) if v >> (width - 1) else v
        return arith.ConstantOp(self.it, ir.IntegerAttr.get(self.it, v)).result

    # float arithmetic (each rounds once)
    def add(self, a, b):
        return arith.AddFOp(a, b).result

    def sub(self, a, b):
        return arith.SubFOp(a, b).result

    def mul(self, a, b):
        return arith.MulFOp(a, b).result

    def div(self, a, b):
        return arith.DivFOp(a, b).result

    def neg(self, a):
        return arith.NegFOp(a).result

    def poly(self, x, coeffs):
        """Horner: coeffs[0] + x * (coeffs[1] + x * (...))."""
        acc = self.c(coeffs[-1])
        for coeff in reversed(coeffs[:-1]):
            acc = self.add(self.mul(acc, x), self.c(coeff))
        return acc

    def estrin(self, x, coeffs):
        """coeffs[0] + coeffs[1] x + ... by Estrin's scheme: pairs c0 + c1 x, combined with
        x^2, x^4, ...; about half Horner's dependency chain for the same op count, which
        matters in long fused chains (they are latency-bound)."""
        terms = []
        for i in range(0, len(coeffs), 2):
            term = self.c(coeffs[i])
            if i + 1 < len(coeffs):
                term = self.add(term, self.mul(self.c(coeffs[i + 1]), x))
            terms.append(term)
        power = x
        while len(terms) > 1:
            power = self.mul(power, power)
            terms = [self.add(terms[i], self.mul(terms[i + 1], power))
                     if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
        return terms[0]

    # comparisons and selection
    def cmp(self, pred: str, a, b):
        return arith.CmpFOp(getattr(arith.CmpFPredicate, pred), a, b).result

    def select(self, cond, a, b):
        return arith.SelectOp(cond, a, b).result

    def clamp(self, x, lo: float | None, hi: float | None):
        """x limited to [lo, hi]; NaN passes through (ordered comparisons are false)."""
        if lo is not None:
            x = self.select(self.cmp("OLT", x, self.c(lo)), self.c(lo), x)
        if hi is not None:
            x = self.select(self.cmp("OGT", x, self.c(hi)), self.c(hi), x)
        return x

    def abs(self, x):
        """|x| by clearing the sign bit (vectorises to one `and`)."""
        mask = (1 << (63 if self.wide else 31)) - 1
        return self.from_bits(arith.AndIOp(self.bits(x), self.i(mask)).result)

    def copysign(self, magnitude, sign):
        """|magnitude| with the sign bit of `sign`."""
        top = 1 << (63 if self.wide else 31)
        s = arith.AndIOp(self.bits(sign), self.i(top)).result
        m = arith.AndIOp(self.bits(magnitude), self.i(top - 1)).result
        return self.from_bits(arith.OrIOp(m, s).result)

    # bits
    def bits(self, x):
        return arith.BitcastOp(self.it, x).result

    def from_bits(self, n):
        return arith.BitcastOp(self.ft, n).result

    def round_int(self, t):
        """(n as float, n as integer) for n = t rounded to nearest even, |t| < 2**(mant-1)."""
        shifted = self.add(t, self.c(self.shifter))
        n = self.sub(shifted, self.c(self.shifter))
        ni = arith.SubIOp(self.bits(shifted), self.bits(self.c(self.shifter))).result
        return n, ni

    def pow2(self, ni):
        """2.0**ni for an integer ni in the normal exponent range."""
        biased = arith.AddIOp(ni, self.i(self.bias)).result
        return self.from_bits(arith.ShLIOp(biased, self.i(self.mant)).result)

    def ldexp(self, p, ni):
        """p * 2**ni in two exact steps, so ni may reach twice the exponent range: results
        overflow to inf and underflow into denormals with a single rounding."""
        half = arith.ShRSIOp(ni, self.i(1)).result
        rest = arith.SubIOp(ni, half).result
        return self.mul(self.mul(p, self.pow2(half)), self.pow2(rest))


# ---- exp ----------------------------------------------------------------------------------

# ln 2 = _EXP_C1 + _EXP_C2: C1 has 9 significant bits, so n * C1 is exact for |n| < 2**15.
_EXP_C1 = 0.693359375
_EXP_C2 = -2.12194440e-4
# exp(r) = 1 + r + r^2 P(r) on |r| <= ln2/2: fitted relative error 3.9e-9 (2^-28).
_EXP_P = [0.4999999403953552, 0.1666651964187622, 0.04166840761899948,
          0.008368914015591145, 0.0013814191333949566]


def _exp_f32(k: _Kit, x, lo: float | None = -104.0, hi: float | None = 89.0,
             wide_n: bool = True):
    """e**x in f32 (see `exp`); lo/hi clamp x (None where the caller bounds it), and
    wide_n=False scales in one step when n is known to stay in [-126, 127]."""
    xc = k.clamp(x, lo, hi)
    n, ni = k.round_int(k.mul(xc, k.c(_LOG2E)))
    r = k.sub(k.sub(xc, k.mul(n, k.c(_EXP_C1))), k.mul(n, k.c(_EXP_C2)))
    p = k.add(k.c(1.0), k.add(r, k.mul(k.mul(r, r), k.estrin(r, _EXP_P))))
    return k.ldexp(p, ni) if wide_n else k.mul(p, k.pow2(ni))


def exp(x):
    """e**x.

    f32: clamp x to [-104, 89] (beyond, the result is 0 or inf anyway); n = round(x/ln2)
    by the shifter; r = x - n*ln2 with ln2 in two parts (Cody-Waite; n*C1 exact), so
    |r| <= ln2/2 + 1ulp; e**r = 1 + r + r^2 P(r), P of degree 4 (fit error 2^-28);
    scale by 2**n in two exact steps, which overflows to inf above 88.72 and rounds into
    denormals once below -87.3. Max error 1 ulp (all f32 inputs).
    f64: see `_exp_f64`.
    """
    k = _Kit(x.type)
    if k.wide:
        return _exp_f64(k, x)
    return _exp_f32(k, x)


# ---- expm1 --------------------------------------------------------------------------------

# expm1(r) = r + r^2 Q(r) on |r| <= ln2/2, evaluated in f64: fitted relative error 2^-31.9.
_EXPM1_Q = [0.5000000044898004, 0.16666666365474658, 0.04166635751653769,
            0.008333389999672008, 0.001394091471784098, 0.00019845900576119686]


def expm1(x):
    """e**x - 1, accurate near 0.

    f32, computed in f64 (so the sum below never cancels badly): clamp x to [-20, 89]
    (expm1 is -1 in f32 below -17.33, inf above 88.72); n = round(x/ln2); r = x - n*ln2
    (f64, error 2^-53 relative); p = expm1(r) = r + r^2 Q(r), Q of degree 5 (2^-31.9);
    result 2**n * p + (2**n - 1), exact products and one rounding, then one rounding to
    f32. -0 is returned as is. Max error 1 ulp (all f32 inputs), and only at near-ties
    of the rounding to f32 (0.005% of inputs).
    f64: see `_expm1_f64`.
    """
    k32 = _Kit(x.type)
    if k32.wide:
        return _expm1_f64(k32, x)
    k = _Kit(ir.F64Type.get())
    xd = arith.ExtFOp(k.ft, k32.clamp(x, -20.0, 89.0)).result
    n, ni = k.round_int(k.mul(xd, k.c(_LOG2E)))
    r = k.sub(xd, k.mul(n, k.c(_LN2)))
    p = k.add(r, k.mul(k.mul(r, r), k.estrin(r, _EXPM1_Q)))
    scale = k.pow2(ni)
    y = k.add(k.mul(scale, p), k.sub(scale, k.c(1.0)))
    y32 = arith.TruncFOp(x.type, y).result
    return k32.select(k32.cmp("OEQ", x, k32.c(0.0)), x, y32)


# ---- log ----------------------------------------------------------------------------------

_SQRT_HALF_BITS32 = 0x3F3504F3
# log(1+f) = f - f^2/2 + f^3 P(f) on sqrt(1/2)-1 <= f < sqrt(2)-1: fitted error 2^-27.4.
_LOG_P = [0.3333333134651184, -0.2500081956386566, 0.20001226663589478,
          -0.16623356938362122, 0.14201757311820984, -0.13160182535648346,
          0.1276157796382904, -0.07634498178958893]


def _log_special(k: _Kit, x, y):
    """y where 0 < x < inf; else log's special values: -inf at +-0, inf at inf, NaN."""
    ok = arith.AndIOp(k.cmp("OGT", x, k.c(0.0)), k.cmp("OLT", x, k.c(_INF))).result
    special = k.select(k.cmp("OEQ", x, k.c(0.0)), k.c(-_INF),
                       k.select(k.cmp("OEQ", x, k.c(_INF)), x, k.c(_NAN)))
    return k.select(ok, y, special)


def log(x):
    """Natural logarithm.

    f32: denormals are scaled by 2**23 first; x = 2**e * m with m in [sqrt(1/2),
    sqrt(2)), found by subtracting the bits of sqrt(1/2) (musl's trick), f = m - 1 (exact);
    log(x) = e*C1 + (f - f^2/2 + f^3 P(f) + e*C2) with ln2 = C1 + C2 (Cody-Waite, e*C1
    exact) and P of degree 7 (fit 2^-27.4). Special values by selects. Max error 1 ulp
    (all f32 inputs).
    f64: see `_log_f64`.
    """
    k = _Kit(x.type)
    if k.wide:
        return _log_f64(k, x)
    tiny = k.cmp("OLT", x, k.c(2.0 ** -126))
    xs = k.select(tiny, k.mul(x, k.c(2.0 ** 23)), x)
    ix = arith.SubIOp(k.bits(xs), k.i(_SQRT_HALF_BITS32)).result
    e = arith.ShRSIOp(ix, k.i(23)).result
    e = arith.SubIOp(e, k.select(tiny, k.i(23), k.i(0))).result
    m = k.from_bits(arith.AddIOp(arith.AndIOp(ix, k.i(0x7FFFFF)).result,
                                 k.i(_SQRT_HALF_BITS32)).result)
    f = k.sub(m, k.c(1.0))
    ef = arith.SIToFPOp(k.ft, e).result
    z = k.mul(f, f)
    y = k.mul(k.mul(f, z), k.estrin(f, _LOG_P))
    y = k.add(y, k.mul(ef, k.c(_EXP_C2)))
    y = k.sub(y, k.mul(z, k.c(0.5)))
    y = k.add(k.add(f, y), k.mul(ef, k.c(_EXP_C1)))
    return _log_special(k, x, y)


# ---- log1p --------------------------------------------------------------------------------

_SQRT_HALF_BITS64 = 0x3FE6A09E667F3BCD
# log(1+f) = f - f^2/2 + f^3 P(f) on sqrt(1/2)-1 <= f < sqrt(2)-1, in f64: fit 2^-32.8.
_LOG1P_P = [0.33333332366150253, -0.2499996696433359, 0.2000009051671209,
            -0.16669405956687047, 0.14285117456948018, -0.12424392793604784,
            0.11036209832253983, -0.1081960785753342, 0.10632007493732658,
            -0.05976784602424472]


def log1p(x):
    """log(1 + x), accurate near 0.

    f32, computed in f64: u = 1 + x is exact in f64 for every f32 x with 2**-29 <= |x|
    < 2**53 (and harmlessly rounded above), so log1p(x) = log(u) exactly; u = 2**e * m,
    m in [sqrt(1/2), sqrt(2)), f = m - 1, log(u) = e*ln2 + f - f^2/2 + f^3 P(f), P of
    degree 9 (fit 2^-32.8), then one rounding to f32. |x| < 2**-29 returns x (log1p(x)
    rounds to x there; this keeps -0 and denormals). x = -1 gives -inf, x < -1 NaN.
    Max error 1 ulp (all f32 inputs), only at near-ties (0.002%).
    f64: see `_log1p_f64`.
    """
    k32 = _Kit(x.type)
    if k32.wide:
        return _log1p_f64(k32, x)
    k = _Kit(ir.F64Type.get())
    u = k.add(k.c(1.0), arith.ExtFOp(k.ft, x).result)
    ix = arith.SubIOp(k.bits(u), k.i(_SQRT_HALF_BITS64)).result
    e = arith.ShRSIOp(ix, k.i(52)).result
    m = k.from_bits(arith.AddIOp(arith.AndIOp(ix, k.i((1 << 52) - 1)).result,
                                 k.i(_SQRT_HALF_BITS64)).result)
    f = k.sub(m, k.c(1.0))
    z = k.mul(f, f)
    y = k.sub(k.add(f, k.mul(k.mul(f, z), k.estrin(f, _LOG1P_P))), k.mul(z, k.c(0.5)))
    y = k.add(y, k.mul(_small_int_to_float(k, e), k.c(_LN2)))
    y32 = arith.TruncFOp(x.type, y).result
    # u in (0, inf) <=> -1 < x < inf; u = 0 <=> x = -1.
    y32 = _log_special(k32, k32.add(x, k32.c(1.0)), y32)
    small = k32.cmp("OLT", k32.abs(x), k32.c(2.0 ** -29))
    return k32.select(small, x, y32)


# ---- tanh and sigmoid ---------------------------------------------------------------------

_TANH_SMALL = 0.625
# tanh(a) = a + a z P(z), z = a^2, 0 <= a <= 0.625: fitted relative error 4.4e-9 (2^-27.8).
_TANH_P = [-0.3333328068256378, 0.13331441581249237, -0.05373971536755562,
           0.02063908614218235, -0.005704986862838268]


def tanh(x):
    """Hyperbolic tangent.

    f32: a = |x|; for a < 0.625, a + a z P(z) with z = a^2, P of degree 4 (fit 2^-27.8);
    otherwise 1 - 2/(e**(2a) + 1) with the f32 exp kernel and a clamped to 9.5 (tanh
    rounds to 1 from 9.01; e**(2a) needs one-step scaling only); the sign of x is copied
    back (so -0 stays -0, NaN stays NaN). Max error 1 ulp (all f32 inputs).
    f64: see `_tanh_f64`.
    """
    k = _Kit(x.type)
    if k.wide:
        return _tanh_f64(k, x)
    a = k.abs(x)
    z = k.mul(a, a)
    small = k.add(a, k.mul(k.mul(a, z), k.estrin(z, _TANH_P)))
    big_a = k.clamp(a, None, 9.5)
    e = _exp_f32(k, k.add(big_a, big_a), None, None, wide_n=False)  # n in [0, 28]
    big = k.sub(k.c(1.0), k.div(k.c(2.0), k.add(e, k.c(1.0))))
    y = k.select(k.cmp("OLT", a, k.c(_TANH_SMALL)), small, big)
    return k.copysign(y, x)


def sigmoid(x):
    """The logistic function 1 / (1 + e**-x).

    With e = exp(-|x|) in (0, 1]: 1/(1 + e) for x >= 0 and e/(1 + e) for x < 0 (the
    interpreter's formula; never overflows). f32: e from the f32 exp kernel, then the sum
    and quotient in f64 with one rounding to f32 at the end (in f32 those two roundings
    took the error to 2 ulp); max error 1 ulp (all f32 inputs). f64: the f64 exp kernel
    and f64 arithmetic, max error about 2.2 ulp. Saturates to 1 and 0 (denormal results are
    kept); NaN stays NaN.
    """
    k = _Kit(x.type)
    if k.wide:
        e = _exp_f64(k, k.neg(k.abs(x)), hi=None)
        num = k.select(k.cmp("OGE", x, k.c(0.0)), k.c(1.0), e)
        return k.div(num, k.add(k.c(1.0), e))
    e = _exp_f32(k, k.neg(k.abs(x)), -104.0, None)
    num = k.select(k.cmp("OGE", x, k.c(0.0)), k.c(1.0), e)
    kd = _Kit(ir.F64Type.get())
    wide_e = arith.ExtFOp(kd.ft, e).result
    s = kd.div(arith.ExtFOp(kd.ft, num).result, kd.add(kd.c(1.0), wide_e))
    return arith.TruncFOp(k.ft, s).result


# ---- sin and cos --------------------------------------------------------------------------

# pi/2 = _PIO2[0] + _PIO2[1] + _PIO2[2]: 24 + 24 + 53 significant bits, so j * _PIO2[i] is
# exact in f64 for the first two parts while |j| < 2**29.
_PIO2 = [1.5707963705062866, -4.371138828673793e-08, -1.7151244994428829e-15]
_2_OVER_PI = 0.6366197723675814
# sin(r) = r + r z S(z), cos(r) = 1 - z/2 + z^2 C(z), z = r^2, |r| <= pi/4 (+1e-3):
# fitted relative errors 2^-28.0 and 2^-33.0.
_SIN_S = [-0.16666655242443085, 0.008332154713571072, -0.00019514454470481724]
_COS_C = [0.04166664555668831, -0.0013887308305129409, 2.4432209102087654e-05]


def _sincos(x, cosine: bool):
    k = _Kit(x.type)
    if k.wide:
        raise TypeError("sin and cos are built for f32 only")
    kd = _Kit(ir.F64Type.get())
    xd = arith.ExtFOp(kd.ft, x).result
    j, ji = kd.round_int(kd.mul(xd, kd.c(_2_OVER_PI)))
    r = xd
    for part in _PIO2:
        r = kd.sub(r, kd.mul(j, kd.c(part)))
    # Finite |x| >= 2**28 take Payne-Hanek's reduction of |x| (negated for x < 0); NaN and
    # +-inf keep Cody-Waite's, which gives NaN (inf - inf).
    ax = k.abs(x)
    large = arith.AndIOp(k.cmp("OGE", ax, k.c(sincos_reduction.LARGE)),
                         k.cmp("OLT", ax, k.c(_INF))).result
    r_big, n_big = sincos_reduction.reduce_large(x)
    negative = k.cmp("OLT", x, k.c(0.0))
    r_big = kd.select(negative, kd.neg(r_big), r_big)
    n_big = kd.select(negative, arith.SubIOp(kd.i(0), n_big).result, n_big)
    r, ji = kd.select(large, r_big, r), kd.select(large, n_big, ji)
    # |r| <= pi/4 + tiny; the clamp only guards the polynomials' range.
    rf = k.clamp(arith.TruncFOp(k.ft, r).result, -0.79, 0.79)
    q = arith.TruncIOp(k.it, ji).result
    if cosine:
        q = arith.AddIOp(q, k.i(1)).result
    z = k.mul(rf, rf)
    s = k.add(rf, k.mul(k.mul(rf, z), k.poly(z, _SIN_S)))
    c = k.add(k.sub(k.c(1.0), k.mul(z, k.c(0.5))), k.mul(k.mul(z, z), k.poly(z, _COS_C)))
    odd = arith.TruncIOp(ir.IntegerType.get_signless(1), q).result
    y = k.select(odd, c, s)
    flip = arith.ShLIOp(arith.AndIOp(q, k.i(2)).result, k.i(30)).result
    y = k.from_bits(arith.XOrIOp(k.bits(y), flip).result)
    if not cosine:  # sin(-0) = -0
        y = k.select(k.cmp("OEQ", x, k.c(0.0)), x, y)
    return y


def sin(x):
    """Sine.

    f32, argument reduction in f64: j = round(x * 2/pi) (shifter), r = x - j*pi/2 with
    pi/2 in three parts of 24, 24 and 53 significant bits (Cody-Waite). While |j| < 2**29
    (|x| < 8.4e8) the products j*P1, j*P2 and the first two subtractions are exact, so r
    carries one f64 rounding. From |x| >= 2**28 on, Payne-Hanek's reduction in 64-bit
    integers takes over (sincos_reduction.py), as numpy's libm does: both are computed
    and selected, so the loop stays vectorised. r is rounded to f32; sin r = r + r z S(z)
    and cos r = 1 - z/2 + z^2 C(z) (z = r^2, degree 2 in z, fits 2^-28 and 2^-33), chosen
    and negated by the quadrant j mod 4 (bit ops). Max error 2 ulp. +-inf and NaN give
    NaN; sin(-0) = -0.
    """
    return _sincos(x, cosine=False)


def cos(x):
    """Cosine: `sin`'s reduction with the quadrant advanced by one (same accuracy)."""
    return _sincos(x, cosine=True)


# ---- float64 ------------------------------------------------------------------------------
# Branchless versions of fdlibm's e_exp.c and e_log.c (Sun, 1993; errors < 1 ulp there), with
# their published coefficients.

_LN2_HI64 = 6.93147180369123816490e-01  # 32 significant bits: n * hi exact for |n| < 2**21
_LN2_LO64 = 1.90821492927058770002e-10
_EXP64_P = [1.66666666666666019037e-01, -2.77777777770155933842e-03,
            6.61375632143793436117e-05, -1.65339022054652515390e-06,
            4.13813679705723846039e-08]


def _exp_f64(k: _Kit, x, lo: float | None = -746.0, hi: float | None = 710.0):
    """fdlibm exp: r = hi - lo = x - n*ln2 (two parts); c = r - r^2 P(r^2) (P of degree 4
    in r^2, a Remez fit of r*(e^r+1)/(e^r-1)); e^r = 1 - ((lo - r*c/(2-c)) - hi); scaled by
    2**n in two steps (overflow to inf from 709.79, denormals below -708.4)."""
    xc = k.clamp(x, lo, hi)
    n, ni = k.round_int(k.mul(xc, k.c(_LOG2E)))
    high = k.sub(xc, k.mul(n, k.c(_LN2_HI64)))
    low = k.mul(n, k.c(_LN2_LO64))
    r = k.sub(high, low)
    z = k.mul(r, r)
    c = k.sub(r, k.mul(z, k.poly(z, _EXP64_P)))
    frac = k.div(k.mul(r, c), k.sub(k.c(2.0), c))
    y = k.sub(k.c(1.0), k.sub(k.sub(low, frac), high))
    return k.ldexp(y, ni)


# log(1+f) = 2s + s*R(s^2), s = f/(2+f): Remez coefficients Lg1..Lg7 of fdlibm.
_LG = [6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
       2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
       1.479819860511658591e-01]


def _log_f64(k: _Kit, x):
    """fdlibm log: x = 2**e * m, m in [sqrt(1/2), sqrt(2)) (by subtracting the bits of
    sqrt(1/2); denormals scaled by 2**54 first), f = m - 1, s = f/(2+f), R(s^2) of degree 7
    (error < 2^-58.45); log = e*ln2_hi - ((f^2/2 - (s*(f^2/2 + R) + e*ln2_lo)) - f)."""
    tiny = k.cmp("OLT", x, k.c(2.0 ** -1022))
    xs = k.select(tiny, k.mul(x, k.c(2.0 ** 54)), x)
    ix = arith.SubIOp(k.bits(xs), k.i(_SQRT_HALF_BITS64)).result
    e = arith.ShRSIOp(ix, k.i(52)).result
    e = arith.SubIOp(e, k.select(tiny, k.i(54), k.i(0))).result
    m = k.from_bits(arith.AddIOp(arith.AndIOp(ix, k.i((1 << 52) - 1)).result,
                                 k.i(_SQRT_HALF_BITS64)).result)
    f = k.sub(m, k.c(1.0))
    s = k.div(f, k.add(k.c(2.0), f))
    z = k.mul(s, s)
    w = k.mul(z, z)
    t1 = k.mul(w, k.poly(w, _LG[1::2]))
    t2 = k.mul(z, k.poly(w, _LG[0::2]))
    big_r = k.add(t2, t1)
    hfsq = k.mul(k.mul(f, f), k.c(0.5))
    dk = _small_int_to_float(k, e)
    inner = k.add(k.mul(s, k.add(hfsq, big_r)), k.mul(dk, k.c(_LN2_LO64)))
    y = k.sub(k.mul(dk, k.c(_LN2_HI64)), k.sub(k.sub(hfsq, inner), f))
    return _log_special(k, x, y)


def _small_int_to_float(k: _Kit, n):
    """A float from an integer known to fit i32 (i32 -> f64 converts in one SIMD op on
    AVX2; i64 -> f64 needs AVX-512)."""
    if k.wide:
        n = arith.TruncIOp(ir.IntegerType.get_signless(32), n).result
    return arith.SIToFPOp(k.ft, n).result


# fdlibm s_log1p.c: Lp1..Lp7 are Lg1..Lg7.
def _log1p_f64(k: _Kit, x):
    """fdlibm log1p: u = 1 + x rounded, c = (the rounding error of u) / u (exact
    formulas: 1 - (u - x) when u >= 2, else x - (u - 1)); u = 2**e * m, f = m - 1,
    s = f/(2+f); log1p = e*ln2_hi - ((f^2/2 - (s*(f^2/2 + R(s^2)) + (e*ln2_lo + c))) - f).
    |x| < 2**-54 returns x. Error < 1 ulp."""
    one = k.c(1.0)
    u = k.add(one, x)
    c = k.select(k.cmp("OGE", u, k.c(2.0)), k.sub(one, k.sub(u, x)), k.sub(x, k.sub(u, one)))
    c = k.div(c, u)
    ix = arith.SubIOp(k.bits(u), k.i(_SQRT_HALF_BITS64)).result
    e = arith.ShRSIOp(ix, k.i(52)).result
    m = k.from_bits(arith.AddIOp(arith.AndIOp(ix, k.i((1 << 52) - 1)).result,
                                 k.i(_SQRT_HALF_BITS64)).result)
    f = k.sub(m, one)
    s = k.div(f, k.add(k.c(2.0), f))
    z = k.mul(s, s)
    big_r = k.mul(z, k.poly(z, _LG))
    hfsq = k.mul(k.mul(f, f), k.c(0.5))
    dk = _small_int_to_float(k, e)
    inner = k.add(k.mul(s, k.add(hfsq, big_r)), k.add(k.mul(dk, k.c(_LN2_LO64)), c))
    y = k.sub(k.mul(dk, k.c(_LN2_HI64)), k.sub(k.sub(hfsq, inner), f))
    y = _log_special(k, u, y)  # u = 0 <=> x = -1; u < 0 <=> x < -1
    return k.select(k.cmp("OLT", k.abs(x), k.c(2.0 ** -54)), x, y)


_EXPM1_64Q = [-3.33333333333331316428e-02, 1.58730158725481460165e-03,
              -7.93650757867487942473e-05, 4.00821782732936239552e-06,
              -2.01099218183624371326e-07]


def _expm1_f64(k: _Kit, x):
    """fdlibm expm1: k = round(x/ln2), x = hi - lo + c with r = hi - lo, c the rounding
    error; expm1(r) through the rational form r - (r*E - r^2/2) with
    E = hxs*((r1 - t)/(6 - r*t)), r1 = 1 + hxs*Q(hxs), hxs = r^2/2, t = 3 - r1*r/2; then
    fdlibm's reconstruction for k = 0, -1, 1, <= -2 or > 56, 2..19, 20..56, all computed
    and selected. x is clamped to [-40, 710] (-1 and inf there); |x| < 2**-54 returns x.
    Error < 1 ulp."""
    one, half = k.c(1.0), k.c(0.5)
    xc = k.clamp(x, -40.0, 710.0)
    n, ni = k.round_int(k.mul(xc, k.c(_LOG2E)))
    high = k.sub(xc, k.mul(n, k.c(_LN2_HI64)))
    low = k.mul(n, k.c(_LN2_LO64))
    r = k.sub(high, low)
    c = k.sub(k.sub(high, r), low)
    hfx = k.mul(r, half)
    hxs = k.mul(r, hfx)
    r1 = k.add(one, k.mul(hxs, k.poly(hxs, _EXPM1_64Q)))
    t = k.sub(k.c(3.0), k.mul(r1, hfx))
    e = k.mul(hxs, k.div(k.sub(r1, t), k.sub(k.c(6.0), k.mul(r, t))))
    at_zero = k.sub(r, k.sub(k.mul(r, e), hxs))  # k == 0
    e = k.sub(k.sub(k.mul(r, k.sub(e, c)), c), hxs)
    at_m1 = k.sub(k.mul(half, k.sub(r, e)), half)  # k == -1
    at_p1 = k.select(k.cmp("OLT", r, k.c(-0.25)),  # k == 1
                     k.mul(k.c(-2.0), k.sub(e, k.add(r, half))),
                     k.add(one, k.mul(k.c(2.0), k.sub(r, e))))
    far = k.sub(k.ldexp(k.sub(one, k.sub(e, r)), ni), one)  # k <= -2 or k > 56
    kk = arith.MinSIOp(arith.MaxSIOp(ni, k.i(0)).result, k.i(60)).result
    two_mk = k.pow2(arith.SubIOp(k.i(0), kk).result)  # 2**-k for the two cases below
    mid = k.ldexp(k.sub(k.sub(one, two_mk), k.sub(e, r)), ni)  # 2 <= k < 20
    high_k = k.ldexp(k.add(k.sub(r, k.add(e, two_mk)), one), ni)  # 20 <= k <= 56

    def ieq(v):
        return arith.CmpIOp(arith.CmpIPredicate.eq, ni, k.i(v)).result

    def ilt(v):
        return arith.CmpIOp(arith.CmpIPredicate.slt, ni, k.i(v)).result
    y = k.select(ilt(57), high_k, far)
    y = k.select(ilt(20), mid, y)
    y = k.select(ilt(2), far, y)
    y = k.select(ieq(1), at_p1, y)
    y = k.select(ieq(-1), at_m1, y)
    y = k.select(ieq(0), at_zero, y)
    return k.select(k.cmp("OLT", k.abs(x), k.c(2.0 ** -54)), x, y)


def _tanh_f64(k: _Kit, x):
    """fdlibm tanh: a = |x|; a >= 1: 1 - 2/(expm1(2a) + 2); a < 1: -t/(t + 2) with
    t = expm1(-2a); 1 from a >= 22, x itself below 2**-55; sign of x copied back."""
    a = k.abs(x)
    large = k.cmp("OGE", a, k.c(1.0))
    t = _expm1_f64(k, k.select(large, k.add(k.clamp(a, None, 22.0), k.clamp(a, None, 22.0)),
                               k.mul(a, k.c(-2.0))))
    q = k.div(k.select(large, k.c(2.0), k.neg(t)), k.add(t, k.c(2.0)))
    z = k.select(large, k.sub(k.c(1.0), q), q)
    z = k.select(k.cmp("OGE", a, k.c(22.0)), k.c(1.0), z)
    z = k.select(k.cmp("OLT", a, k.c(2.0 ** -55)), a, z)
    return k.copysign(z, x)


# ---- dispatch -----------------------------------------------------------------------------

FUNCTIONS = {"exp": exp, "expm1": expm1, "log": log, "log1p": log1p, "tanh": tanh,
             "sigmoid": sigmoid, "sin": sin, "cos": cos}
_F64 = {"exp", "expm1", "log", "log1p", "tanh", "sigmoid"}


def supports(name: str, ftype) -> bool:
    """Whether `build(name, x)` exists for scalars of `ftype` (an `ir.Type` or its spelling,
    "f32"/"f64"): f32 for all of FUNCTIONS, f64 for all but sin and cos (libm)."""
    if name not in FUNCTIONS:
        return False
    spelling = str(ftype)
    return spelling == "f32" or (spelling == "f64" and name in _F64)


def build(name: str, x):
    """The arith ops computing function `name` of scalar `x`, at the insertion point."""
    return FUNCTIONS[name](x)


def call(name: str, x):
    """`build(name, x)` as a call of `@__ember_<name>_<type>`, a private function of the
    enclosing module built on first use and marked always-inline: LLVM inlines each call
    before vectorising, so the code is the same, but a chain of 50 tanh builds and lowers
    one body (~40 ops) instead of 50 (convert-ember-to-linalg for case B: 69 -> 15 ms)."""
    module = ir.InsertionPoint.current.block.owner
    while module.name != "builtin.module":
        module = module.parent
    module = as_operation(module)
    symbol = f"__ember_{name}_{x.type}"
    body = module.regions[0].blocks[0]
    if symbol not in ir.SymbolTable(module):
        with ir.InsertionPoint(body):
            fn = func.FuncOp(symbol, ([x.type], [x.type]), visibility="private")
            fn.attributes["llvm.linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")
            fn.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("alwaysinline")])
            entry = fn.add_entry_block()
            with ir.InsertionPoint(entry):
                func.ReturnOp([build(name, entry.arguments[0])])
    return func.CallOp([x.type], ir.FlatSymbolRefAttr.get(symbol), [x]).result
