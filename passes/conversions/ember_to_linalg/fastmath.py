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
  cancel or round twice (expm1, log1p, the sigmoid quotient, sin/cos reduction
  for |x| >= 2**20: below, f32 with fused multiply-adds is exact enough); the
  result is rounded once to f32. Vectorised, f64 lanes are half as many per register.

Errors, as the maximum distance in ulps to the correctly rounded result (float64 numpy
rounded to float32), measured over all 2**32 float32 inputs:
exp, expm1, log, log1p, tanh, sigmoid: 1 ulp; sin, cos: 2 ulp (checked exhaustively for
|x| < 2**28, every 50th float beyond; below 2**20, where the reduction is f32's, every
float: at most 1.67 (sin) and 1.81 ulp (cos) from the exact value). Float64 (against long
double, on dense sweeps): exp 0.87, expm1 0.86, log 0.80, log1p 0.84, tanh 2.1, sigmoid 2.2 ulp.
tests/passes/test_fastmath.py asserts the bounds of the brief (2 ulp, sin/cos 3).

Float32 is the main target (f16 and bf16 compute through it). Float64 sin and cos keep
libm (`supports`): a reduction that is accurate over the whole f64 range needs
Payne-Hanek, and a libm fallback for large |x| would be a call in the loop.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func

from ember.passes.conversions.ember_to_linalg.fastmath_f64 import (exp_f64, expm1_f64, log1p_f64,
                                                                   log_f64, small_int_to_float,
                                                                   tanh_f64)
from ember.passes.conversions.ember_to_linalg.fastmath_kit import (INF, LN2, LOG2E,
                                                                   SQRT_HALF_BITS64, Kit,
                                                                   log_special)
from ember.passes.conversions.ember_to_linalg.fastmath_sincos import cos, sin
from ember.passes.conversions.ember_to_linalg.fastmath_vector import kit
from ember.passes.ir_utils import as_operation

__all__ = ["FUNCTIONS", "supports", "build", "call", "exp", "expm1", "log", "log1p", "tanh",
           "sigmoid", "sin", "cos", "tanh_moderate", "tanh_large_arguments"]

# ---- exp ----------------------------------------------------------------------------------

# ln 2 = _EXP_C1 + _EXP_C2: C1 has 9 significant bits, so n * C1 is exact for |n| < 2**15.
_EXP_C1 = 0.693359375
_EXP_C2 = -2.12194440e-4
# exp(r) = 1 + r + r^2 P(r) on |r| <= ln2/2: fitted relative error 3.9e-9 (2^-28).
_EXP_P = [0.4999999403953552, 0.1666651964187622, 0.04166840761899948,
          0.008368914015591145, 0.0013814191333949566]


def _exp_f32(k: Kit, x, lo: float | None = -104.0, hi: float | None = 89.0,
             wide_n: bool = True):
    """e**x in f32 (see `exp`); lo/hi clamp x (None where the caller bounds it), and
    wide_n=False scales in one step when n is known to stay in [-126, 127]."""
    xc = k.clamp(x, lo, hi)
    n, ni = k.round_int(k.mul(xc, k.c(LOG2E)))
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
    f64: see `exp_f64`.
    """
    k = Kit(x.type)
    if k.wide:
        return exp_f64(k, x)
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
    f64: see `expm1_f64`.
    """
    k32 = Kit(x.type)
    if k32.wide:
        return expm1_f64(k32, x)
    k = Kit(ir.F64Type.get())
    xd = arith.ExtFOp(k.ft, k32.clamp(x, -20.0, 89.0)).result
    n, ni = k.round_int(k.mul(xd, k.c(LOG2E)))
    r = k.sub(xd, k.mul(n, k.c(LN2)))
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


def log(x):
    """Natural logarithm.

    f32: denormals are scaled by 2**23 first; x = 2**e * m with m in [sqrt(1/2),
    sqrt(2)), found by subtracting the bits of sqrt(1/2) (musl's trick), f = m - 1 (exact);
    log(x) = e*C1 + (f - f^2/2 + f^3 P(f) + e*C2) with ln2 = C1 + C2 (Cody-Waite, e*C1
    exact) and P of degree 7 (fit 2^-27.4). Special values by selects. Max error 1 ulp
    (all f32 inputs).
    f64: see `log_f64`.
    """
    k = Kit(x.type)
    if k.wide:
        return log_f64(k, x)
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
    return log_special(k, x, y)


# ---- log1p --------------------------------------------------------------------------------

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
    f64: see `log1p_f64`.
    """
    k32 = Kit(x.type)
    if k32.wide:
        return log1p_f64(k32, x)
    k = Kit(ir.F64Type.get())
    u = k.add(k.c(1.0), arith.ExtFOp(k.ft, x).result)
    ix = arith.SubIOp(k.bits(u), k.i(SQRT_HALF_BITS64)).result
    e = arith.ShRSIOp(ix, k.i(52)).result
    m = k.from_bits(arith.AddIOp(arith.AndIOp(ix, k.i((1 << 52) - 1)).result,
                                 k.i(SQRT_HALF_BITS64)).result)
    f = k.sub(m, k.c(1.0))
    z = k.mul(f, f)
    y = k.sub(k.add(f, k.mul(k.mul(f, z), k.estrin(f, _LOG1P_P))), k.mul(z, k.c(0.5)))
    y = k.add(y, k.mul(small_int_to_float(k, e), k.c(LN2)))
    y32 = arith.TruncFOp(x.type, y).result
    # u in (0, inf) <=> -1 < x < inf; u = 0 <=> x = -1.
    y32 = log_special(k32, k32.add(x, k32.c(1.0)), y32)
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
    f64: see `tanh_f64`.
    """
    k = kit(x.type)
    if k.wide:
        return tanh_f64(k, x)
    a = k.abs(x)
    small = _tanh_small(k, a)
    big_a = k.clamp(a, None, 9.5)
    e = _exp_f32(k, k.add(big_a, big_a), None, None, wide_n=False)  # n in [0, 28]
    big = k.sub(k.c(1.0), k.div(k.c(2.0), k.add(e, k.c(1.0))))
    y = k.select(k.cmp("OLT", a, k.c(_TANH_SMALL)), small, big)
    return k.copysign(y, x)


def _tanh_small(k: Kit, a):
    """f32 tanh(a) for 0 <= a < 0.625: a + a z P(z), z = a^2."""
    z = k.mul(a, a)
    return k.add(a, k.mul(k.mul(a, z), k.estrin(z, _TANH_P)))


def tanh_moderate(x):
    """f32 `tanh` without its e**(2a) side: the same values where no lane of `x` is
    `tanh_large_arguments` (the CPU backend's vector variants branch to `tanh` otherwise)."""
    k = kit(x.type)
    return k.copysign(_tanh_small(k, k.abs(x)), x)


def tanh_large_arguments(x):
    """The i1 (per lane) saying where f32 `tanh_moderate` would differ from `tanh`:
    |x| >= 0.625 or NaN."""
    k = kit(x.type)
    return k.cmp("UGE", k.abs(x), k.c(_TANH_SMALL))


def sigmoid(x):
    """The logistic function 1 / (1 + e**-x).

    With e = exp(-|x|) in (0, 1]: 1/(1 + e) for x >= 0 and e/(1 + e) for x < 0 (the
    interpreter's formula; never overflows). f32: e from the f32 exp kernel, then the sum
    and quotient in f64 with one rounding to f32 at the end (in f32 those two roundings
    took the error to 2 ulp); max error 1 ulp (all f32 inputs). f64: the f64 exp kernel
    and f64 arithmetic, max error about 2.2 ulp. Saturates to 1 and 0 (denormal results are
    kept); NaN stays NaN.
    """
    k = Kit(x.type)
    if k.wide:
        e = exp_f64(k, k.neg(k.abs(x)), hi=None)
        num = k.select(k.cmp("OGE", x, k.c(0.0)), k.c(1.0), e)
        return k.div(num, k.add(k.c(1.0), e))
    e = _exp_f32(k, k.neg(k.abs(x)), -104.0, None)
    num = k.select(k.cmp("OGE", x, k.c(0.0)), k.c(1.0), e)
    kd = Kit(ir.F64Type.get())
    wide_e = arith.ExtFOp(kd.ft, e).result
    s = kd.div(arith.ExtFOp(kd.ft, num).result, kd.add(kd.c(1.0), wide_e))
    return arith.TruncFOp(k.ft, s).result


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
    one body (~40 ops) instead of 50 (bench case B lowers several times faster)."""
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
