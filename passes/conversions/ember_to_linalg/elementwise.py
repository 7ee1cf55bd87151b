"""Lowering of elementwise ops (unary, binary, comparisons, logic, select, cast) to one
`linalg.generic` each, whose body is `arith`/`math` on scalars; broadcasting is encoded in
the indexing maps. `linalg-fuse-elementwise-ops` later fuses chains into one loop.

Integer division and modulus by zero, and integer powers with a negative exponent, raise
the kernels' InvalidArgumentError: a check over the divisor (exponent) runs first
(checks.py). INT_MIN // -1 would trap in native code: it wraps, as in numpy.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, math

from ember.dialects.ember import creation as C
from ember.dialects.ember import dtypes
from ember.dialects.ember import elementwise as E
from ember.dialects.ember.dtypes import DType
from ember.passes.conversions.ember_to_linalg import fastmath
from ember.passes.conversions.ember_to_linalg.checks import check
from ember.passes.conversions.ember_to_linalg.creation import narrow_f64
from ember.passes.conversions.ember_to_linalg.common import Lowering, element_type, lowers

F32 = dtypes.float32


def _half(dtype: DType) -> bool:
    return dtype in (dtypes.float16, dtypes.bfloat16)


def _via_f32(fn, dtype: DType):
    """Applies a math op in f32 for 16-bit floats (LLVM has no half-precision libm)."""
    def body(*xs):
        if not _half(dtype):
            return fn(*xs)
        wide = [arith.ExtFOp(ir.F32Type.get(), x).result for x in xs]
        return arith.TruncFOp(element_type(dtype), fn(*wide)).result
    return body


_FLOAT_MATH = {
    E.ExpOp: math.ExpOp, E.Expm1Op: math.ExpM1Op, E.LogOp: math.LogOp,
    E.Log1pOp: math.Log1pOp, E.SqrtOp: math.SqrtOp, E.RsqrtOp: math.RsqrtOp,
    E.TanhOp: math.TanhOp, E.SinOp: math.SinOp, E.CosOp: math.CosOp,
    E.FloorOp: math.FloorOp, E.CeilOp: math.CeilOp, E.RoundOp: math.RoundEvenOp,
    E.ErfOp: math.ErfOp, E.ErfcOp: math.ErfcOp,  # libm's erff/erf, erfcf/erfc
    # libm's, as are these (tanf/tan, ...)
    E.TanOp: math.TanOp, E.AsinOp: math.AsinOp, E.AcosOp: math.AcosOp, E.AtanOp: math.AtanOp,
    E.SinhOp: math.SinhOp, E.CoshOp: math.CoshOp, E.AsinhOp: math.AsinhOp,
    E.AcoshOp: math.AcoshOp, E.AtanhOp: math.AtanhOp,
}
# Transcendentals built from arith by fastmath.py (vectorisable; libm calls are not) for
# the element types it supports; the others keep the math op (libm).
_FAST_MATH = {E.ExpOp: "exp", E.Expm1Op: "expm1", E.LogOp: "log", E.Log1pOp: "log1p",
              E.TanhOp: "tanh", E.SinOp: "sin", E.CosOp: "cos", E.SigmoidOp: "sigmoid"}


def _fast_or(name: str, fallback, dtype: DType):
    """Scalar body for `name`: fastmath's arith version where it supports the compute type
    (f32, also for f16/bf16; f64 for some), else `fallback` (a math op)."""
    def body(x):
        if fastmath.supports(name, x.type):
            return fastmath.call(name, x)
        return fallback(x)
    return _via_f32(body, dtype)


@lowers(*_FLOAT_MATH)
def lower_float_math(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    spec = _spec(op)
    ctor = _FLOAT_MATH[spec]
    if spec in _FAST_MATH:
        body = _fast_or(_FAST_MATH[spec], lambda x: ctor(x).result, t.dtype)
    else:
        body = _via_f32(lambda x: ctor(x).result, t.dtype)
    return [lw.elementwise(lw.operands, [t], out, body)]


@lowers(E.Atan2Op)
def lower_atan2(op, lw: Lowering):
    (t, _), out = lw.operand_types, lw.result_types[0]
    return [lw.elementwise(lw.operands, list(lw.operand_types), out,
                           _via_f32(lambda y, x: math.Atan2Op(y, x).result, t.dtype))]


@lowers(E.SigmoidOp)
def lower_sigmoid(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]

    def libm_sigmoid(x):  # 1 / (1 + exp(-x)): saturates to 0 and 1, NaN stays NaN
        one = arith.ConstantOp(x.type, ir.FloatAttr.get(x.type, 1.0)).result
        e = math.ExpOp(arith.NegFOp(x).result).result
        return arith.DivFOp(one, arith.AddFOp(one, e).result).result
    return [lw.elementwise(lw.operands, [t], out, _fast_or("sigmoid", libm_sigmoid, t.dtype))]


@lowers(E.NegOp, E.AbsOp, E.SignOp, E.SquareOp, E.ReluOp)
def lower_numeric_unary(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    spec, d = _spec(op), t.dtype

    def body(x):
        zero = lw.scalar(0, d)
        if spec is E.SquareOp:
            return (arith.MulFOp if d.is_floating else arith.MulIOp)(x, x).result
        if spec is E.NegOp:
            return arith.NegFOp(x).result if d.is_floating else arith.SubIOp(zero, x).result
        if spec is E.AbsOp:
            if d.kind == "uint":
                return x
            return math.AbsFOp(x).result if d.is_floating else math.AbsIOp(x).result
        if spec is E.ReluOp:
            if d.is_floating:
                return arith.MaximumFOp(x, zero).result
            return x if d.kind == "uint" else arith.MaxSIOp(x, zero).result
        return _sign(lw, x, d)
    return [lw.elementwise(lw.operands, [t], out, body)]


def _sign(lw: Lowering, x, d: DType):
    zero, one, minus = lw.scalar(0, d), lw.scalar(1, d), lw.scalar(-1, d)
    if d.is_floating:  # sign(NaN) is x itself and sign(+-0) is +0 (x + 0), like numpy
        pos = arith.CmpFOp(arith.CmpFPredicate.OGT, x, zero).result
        neg = arith.CmpFOp(arith.CmpFPredicate.OLT, x, zero).result
        x = arith.AddFOp(x, zero).result
    else:
        pred = arith.CmpIPredicate.ugt if d.kind == "uint" else arith.CmpIPredicate.sgt
        pos = arith.CmpIOp(pred, x, zero).result
        neg = arith.CmpIOp(arith.CmpIPredicate.slt, x, zero).result if d.kind != "uint" \
            else arith.ConstantOp(ir.IntegerType.get_signless(1), 0).result
        x = zero
    return arith.SelectOp(pos, one, arith.SelectOp(neg, minus, x).result).result


@lowers(E.LogicalNotOp, E.IsNanOp, E.IsFiniteOp)
def lower_predicates(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    spec = _spec(op)

    def body(x):
        if spec is E.LogicalNotOp:
            return arith.XOrIOp(x, arith.ConstantOp(x.type, 1).result).result
        if spec is E.IsNanOp:
            return arith.CmpFOp(arith.CmpFPredicate.UNO, x, x).result
        inf = lw.scalar(np.inf, t.dtype)
        return arith.CmpFOp(arith.CmpFPredicate.OLT, math.AbsFOp(x).result, inf).result
    return [lw.elementwise(lw.operands, [t], out, body)]


_FLOAT_BINARY = {E.AddOp: arith.AddFOp, E.SubOp: arith.SubFOp, E.MulOp: arith.MulFOp,
                 E.MaximumOp: arith.MaximumFOp, E.MinimumOp: arith.MinimumFOp}
_INT_BINARY = {E.AddOp: arith.AddIOp, E.SubOp: arith.SubIOp, E.MulOp: arith.MulIOp}


@lowers(E.AddOp, E.SubOp, E.MulOp, E.MaximumOp, E.MinimumOp, E.PowOp)
def lower_arithmetic(op, lw: Lowering):
    types, out = lw.operand_types, lw.result_types[0]
    spec, d = _spec(op), types[0].dtype
    if spec is E.PowOp and d.kind == "int":  # message: dialects/ember/elementwise/common.py power
        check(lw, lw.operands[1], types[1],
              lambda y: arith.CmpIOp(arith.CmpIPredicate.slt, y, lw.scalar(0, d)).result,
              lambda y: y < 0, "integers to negative integer powers are not allowed")

    def body(x, y):
        if d.is_floating:
            if spec is E.PowOp:
                return _via_f32(lambda a, b: math.PowFOp(a, b).result, d)(x, y)
            return _FLOAT_BINARY[spec](x, y).result
        if spec is E.PowOp and d.kind == "uint":
            # math.ipowi reads its exponent as signed: widen both to twice the width
            # (zero-extended, so 255 stays 255), raise, and keep the low bits, which modular
            # multiplication leaves as they are at the narrow width.
            narrow = x.type
            wide = ir.IntegerType.get_signless(2 * ir.IntegerType(narrow).width)
            x, y = arith.ExtUIOp(wide, x).result, arith.ExtUIOp(wide, y).result
            return arith.TruncIOp(narrow, math.IPowIOp(x, y).result).result
        if spec is E.PowOp:
            return math.IPowIOp(x, y).result
        if spec in _INT_BINARY:
            return _INT_BINARY[spec](x, y).result
        unsigned = d.kind == "uint" or d.is_bool
        if spec is E.MaximumOp:
            return (arith.MaxUIOp if unsigned else arith.MaxSIOp)(x, y).result
        return (arith.MinUIOp if unsigned else arith.MinSIOp)(x, y).result
    return [lw.elementwise(lw.operands, types, out, body)]


@lowers(E.DivOp)
def lower_div(op, lw: Lowering):
    types, out = lw.operand_types, lw.result_types[0]
    d = types[0].dtype

    def body(x, y):
        if d.is_integer:
            ft = element_type(out.dtype)
            conv = arith.UIToFPOp if d.kind == "uint" else arith.SIToFPOp
            x, y = conv(ft, x).result, conv(ft, y).result
        return arith.DivFOp(x, y).result
    return [lw.elementwise(lw.operands, types, out, body)]


@lowers(E.FloorDivOp, E.ModOp)
def lower_floor_division(op, lw: Lowering):
    types, out = lw.operand_types, lw.result_types[0]
    spec, d = _spec(op), types[0].dtype
    if d.is_integer:  # message: dialects/ember/elementwise/common.py no_int_zero_division
        check(lw, lw.operands[1], types[1],
              lambda y: arith.CmpIOp(arith.CmpIPredicate.eq, y, lw.scalar(0, d)).result,
              lambda y: y == 0, "integer division by zero")

    def body(x, y):
        if d.is_floating:
            return _float_floor_div(x, y, spec is E.ModOp, d)
        return _int_floor_div(lw, x, y, spec is E.ModOp, d)
    return [lw.elementwise(lw.operands, types, out, body)]


def _float_floor_div(x, y, modulus: bool, d: DType):
    """numpy's npy_divmod (CPython's float divmod), step for step, so results agree bit for
    bit: mod = fmod(a, b); div = (a - mod) / b; if mod != 0 and its sign differs from b's,
    mod += b and div -= 1, else a zero mod takes b's sign; the quotient is floor(div),
    plus 1 if div - floor(div) > 0.5 (div is within rounding of an integer), or a zero
    with the sign of a / b. b == 0 gives a / b and fmod(a, 0) (NaN). `if (mod)` in C is
    true for NaN: UNE below. Not floor(a / b): 0.5 // 1e-8 would round up to 5e7."""
    def compute(a, b):
        ft = a.type

        def const(v):
            return arith.ConstantOp(ft, ir.FloatAttr.get(ft, v)).result

        def cmp(pred, u, v):
            return arith.CmpFOp(getattr(arith.CmpFPredicate, pred), u, v).result
        zero, one = const(0.0), const(1.0)
        fmod = arith.RemFOp(a, b).result  # sign of a
        by_zero = cmp("OEQ", b, zero)
        mod_nonzero = cmp("UNE", fmod, zero)
        flip = arith.AndIOp(mod_nonzero, arith.XOrIOp(cmp("OLT", b, zero),
                                                      cmp("OLT", fmod, zero)).result).result
        if modulus:
            signed_zero = math.CopySignOp(zero, b).result
            mod = arith.SelectOp(mod_nonzero, fmod, signed_zero).result
            mod = arith.SelectOp(flip, arith.AddFOp(fmod, b).result, mod).result
            return arith.SelectOp(by_zero, fmod, mod).result
        quotient = arith.DivFOp(a, b).result
        div = arith.DivFOp(arith.SubFOp(a, fmod).result, b).result
        div = arith.SelectOp(flip, arith.SubFOp(div, one).result, div).result
        floor = math.FloorOp(div).result
        above_half = cmp("OGT", arith.SubFOp(div, floor).result, const(0.5))
        floor = arith.SelectOp(above_half, arith.AddFOp(floor, one).result, floor).result
        floor = arith.SelectOp(cmp("UNE", div, zero), floor,
                               math.CopySignOp(zero, quotient).result).result
        return arith.SelectOp(by_zero, quotient, floor).result
    return _via_f32(compute, d)(x, y)


def _int_floor_div(lw: Lowering, x, y, modulus: bool, d: DType):
    zero, one, minus = lw.scalar(0, d), lw.scalar(1, d), lw.scalar(-1, d)
    by_zero = arith.CmpIOp(arith.CmpIPredicate.eq, y, zero).result
    if d.kind == "uint":
        safe = arith.SelectOp(by_zero, one, y).result
        value = (arith.RemUIOp if modulus else arith.DivUIOp)(x, safe).result
        return arith.SelectOp(by_zero, zero, value).result
    by_minus = arith.CmpIOp(arith.CmpIPredicate.eq, y, minus).result
    risky = arith.OrIOp(by_zero, by_minus).result
    safe = arith.SelectOp(risky, one, y).result
    if modulus:
        r = arith.RemSIOp(x, safe).result
        wrong_sign = arith.XOrIOp(arith.CmpIOp(arith.CmpIPredicate.slt, r, zero).result,
                                  arith.CmpIOp(arith.CmpIPredicate.slt, safe, zero).result)
        fix = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.ne, r, zero).result,
                           wrong_sign.result).result
        value = arith.SelectOp(fix, arith.AddIOp(r, safe).result, r).result
        return arith.SelectOp(risky, zero, value).result  # x % -1 == 0 too
    value = arith.FloorDivSIOp(x, safe).result
    negated = arith.SubIOp(zero, x).result  # x // -1 == -x (wrapping, as numpy)
    return arith.SelectOp(by_zero, zero, arith.SelectOp(by_minus, negated, value).result).result


_CMP_F = {E.EqualOp: "OEQ", E.NotEqualOp: "UNE", E.LessOp: "OLT", E.LessEqualOp: "OLE",
          E.GreaterOp: "OGT", E.GreaterEqualOp: "OGE"}
_CMP_I = {E.EqualOp: "eq", E.NotEqualOp: "ne", E.LessOp: "slt", E.LessEqualOp: "sle",
          E.GreaterOp: "sgt", E.GreaterEqualOp: "sge"}


@lowers(*_CMP_F, E.LogicalAndOp, E.LogicalOrOp)
def lower_compare(op, lw: Lowering):
    types, out = lw.operand_types, lw.result_types[0]
    spec, d = _spec(op), types[0].dtype

    def body(x, y):
        if spec is E.LogicalAndOp:
            return arith.AndIOp(x, y).result
        if spec is E.LogicalOrOp:
            return arith.OrIOp(x, y).result
        if d.is_floating:
            return arith.CmpFOp(getattr(arith.CmpFPredicate, _CMP_F[spec]), x, y).result
        pred = _CMP_I[spec]
        if d.kind == "uint" or d.is_bool:
            pred = pred.replace("s", "u", 1) if pred[0] == "s" else pred
        return arith.CmpIOp(getattr(arith.CmpIPredicate, pred), x, y).result
    return [lw.elementwise(lw.operands, types, out, body)]


@lowers(E.SelectOp)
def lower_select(op, lw: Lowering):
    types, out = lw.operand_types, lw.result_types[0]
    return [lw.elementwise(lw.operands, types, out,
                           lambda c, a, b: arith.SelectOp(c, a, b).result)]


@lowers(C.CastOp)
def lower_cast(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    return [lw.elementwise(lw.operands, [t], out,
                           lambda x: convert_scalar(lw, x, t.dtype, out.dtype))]


def convert_scalar(lw: Lowering, x, src: DType, dst: DType):
    """Scalar conversion with TensorFlow's rules (float -> int truncates and saturates,
    NaN -> 0; anything -> bool is `!= 0`)."""
    if src is dst:
        return x
    et = element_type(dst)
    if dst.is_bool:
        zero = lw.scalar(0, src)
        if src.is_floating:
            return arith.CmpFOp(arith.CmpFPredicate.UNE, x, zero).result
        return arith.CmpIOp(arith.CmpIPredicate.ne, x, zero).result
    if src.is_floating and dst.is_floating:
        if src.bits == dst.bits:  # f16 <-> bf16
            return arith.TruncFOp(et, arith.ExtFOp(ir.F32Type.get(), x).result).result
        if src.bits == 64 and dst.bits == 16:  # no f64->half libcall in the JIT: via f32,
            return narrow_f64(x, et)  # rounding once as numpy does
        return (arith.ExtFOp if dst.bits > src.bits else arith.TruncFOp)(et, x).result
    if src.is_floating:
        if _half(src):  # clamp bounds like 2**31 do not exist in half precision
            x, src = arith.ExtFOp(ir.F32Type.get(), x).result, F32
        lo, hi = lw.scalar(_inside(dst.min, src), src), lw.scalar(_inside(dst.max, src), src)
        clamped = arith.MinimumFOp(arith.MaximumFOp(x, lo).result, hi).result
        conv = arith.FPToUIOp if dst.kind == "uint" else arith.FPToSIOp
        value = conv(et, clamped).result
        # beyond the largest float inside the range (f32: 2**31 - 128 for int32) the
        # result saturates to the integer bound itself
        above = arith.CmpFOp(arith.CmpFPredicate.OGT, x, hi).result
        value = arith.SelectOp(above, lw.scalar(dst.max, dst), value).result
        below = arith.CmpFOp(arith.CmpFPredicate.OLT, x, lo).result
        value = arith.SelectOp(below, lw.scalar(dst.min, dst), value).result
        nan = arith.CmpFOp(arith.CmpFPredicate.UNO, x, x).result
        return arith.SelectOp(nan, lw.scalar(0, dst), value).result
    unsigned = src.kind == "uint" or src.is_bool
    if dst.is_floating:
        return (arith.UIToFPOp if unsigned else arith.SIToFPOp)(et, x).result
    if dst.bits > src.bits:
        return (arith.ExtUIOp if unsigned else arith.ExtSIOp)(et, x).result
    if dst.bits < src.bits:
        return arith.TruncIOp(et, x).result
    return arith.BitcastOp(et, x).result if str(x.type) != str(et) else x


def _inside(bound: int, src: DType) -> float:
    """The `src` float nearest to integer `bound` that does not pass it (f32 rounds
    2**31 - 1 up to 2**31, which would overflow fptosi)."""
    compute = np.float32 if src.bits <= 32 else np.float64
    value = compute(bound)
    toward = compute(0)
    while (bound > 0 and float(value) > bound) or (bound < 0 and float(value) < bound):
        value = np.nextafter(value, toward)
    return float(value)


def _spec(op):
    from ember.dialects.ember.base import REGISTRY
    return REGISTRY[op.name]
