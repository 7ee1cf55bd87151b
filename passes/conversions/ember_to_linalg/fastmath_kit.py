"""The scalar builder kit of fastmath.py: `Kit` emits arith ops on one float type (f32 or
f64) and its same-size integer (constants, selects, clamps, bit-level scaling by powers of
two, round-to-integer by the shifter, Estrin polynomials), under the current insertion
point; and the constants the kernels share.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

NAN = float("nan")
INF = float("inf")
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


class Kit:
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


# the bits of sqrt(1/2) in f64: log reduces its argument to [sqrt(1/2), sqrt(2))
SQRT_HALF_BITS64 = 0x3FE6A09E667F3BCD


def log_special(k: Kit, x, y):
    """y where 0 < x < inf; else log's special values: -inf at +-0, inf at inf, NaN."""
    ok = arith.AndIOp(k.cmp("OGT", x, k.c(0.0)), k.cmp("OLT", x, k.c(INF))).result
    special = k.select(k.cmp("OEQ", x, k.c(0.0)), k.c(-INF),
                       k.select(k.cmp("OEQ", x, k.c(INF)), x, k.c(NAN)))
    return k.select(ok, y, special)
