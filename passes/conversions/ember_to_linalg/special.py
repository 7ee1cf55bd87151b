"""Lowering of the special functions lgamma and digamma (dialects/ember/elementwise/special.py)
to one `linalg.generic` each.

lgamma calls libm: upstream's `math` dialect has no lgamma op (so convert-math-to-libm has
nothing to map), so the body calls a private declaration `@lgammaf` (f32, and f16/bf16
widened to f32) or `@lgamma` (f64), which the JIT resolves in the process's libm and AOT
objects link against libm, as they do for erff.

digamma is computed in f64 for every dtype (widened, rounded once at the end) with the
reference kernel's steps (`digamma64`): the masked shift loop unrolled PSI_SHIFT times,
the series in Horner form, and the reflection for x <= 0 inside an `scf.if`, so positive
inputs never pay for its libm `tan`.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, func, scf
from mlir.dialects import math as mmath

from ember.dialects.ember import dtypes
from ember.dialects.ember.elementwise.special import (PSI_SERIES, PSI_SHIFT, DigammaOp,
                                                      LgammaOp)
from ember.passes.conversions.ember_to_linalg import fastmath
from ember.passes.conversions.ember_to_linalg.creation import narrow_f64
from ember.passes.conversions.ember_to_linalg.common import (Lowering, LoweringError,
                                                             element_type, lowers)
from ember.passes.ir_utils import as_operation


def _libm(symbol: str, x: ir.Value) -> ir.Value:
    """A call of libm's `symbol` (declared privately in the enclosing module on first use)."""
    module = ir.InsertionPoint.current.block.owner
    while module.name != "builtin.module":
        module = module.parent
    module = as_operation(module)
    table = ir.SymbolTable(module)
    if symbol not in table:
        with ir.InsertionPoint(module.regions[0].blocks[0]):
            func.FuncOp(symbol, ([x.type], [x.type]), visibility="private")
    elif len(table[symbol].regions[0].blocks) or \
            str(table[symbol].attributes["function_type"]) != f"({x.type}) -> {x.type}":
        raise LoweringError(f"the module defines its own @{symbol}, which hides libm's: "
                            "rename that function")
    return func.CallOp([x.type], ir.FlatSymbolRefAttr.get(symbol), [x]).result


def _widened(dtype, wide: ir.Type, fn):
    """Scalar body: `fn` applied to x extended to `wide`, the result truncated back. Half
    floats go through f32 both ways: LLVM turns f64 <-> f16 conversions into calls of
    compiler-rt's __extendhfdf2/__truncdfhf2, which the JIT does not have (an f64 result is
    rounded as numpy rounds it once: `narrow_f64`)."""
    et, f32 = element_type(dtype), ir.F32Type.get()

    def body(x):
        if x.type == wide:
            return fn(x)
        narrow = x.type
        if narrow != f32 and wide != f32:
            x = arith.ExtFOp(f32, x).result
        y = fn(arith.ExtFOp(wide, x).result)
        return narrow_f64(y, et) if y.type == ir.F64Type.get() else arith.TruncFOp(et, y).result
    return body


@lowers(LgammaOp)
def lower_lgamma(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    if t.dtype is dtypes.float64:
        body = _widened(t.dtype, ir.F64Type.get(), lambda x: _libm("lgamma", x))
    else:
        body = _widened(t.dtype, ir.F32Type.get(), lambda x: _libm("lgammaf", x))
    return [lw.elementwise(lw.operands, [t], out, body)]


def _f(value: float) -> ir.Value:
    f64 = ir.F64Type.get()
    return arith.ConstantOp(f64, ir.FloatAttr.get(f64, value)).result


def _cmp(pred, a, b) -> ir.Value:
    return arith.CmpFOp(pred, a, b).result


def _log(x: ir.Value) -> ir.Value:
    return fastmath.call("log", x) if fastmath.supports("log", x.type) else \
        mmath.LogOp(x).result


def _reflection(x: ir.Value, negative: ir.Value) -> ir.Value:
    """pi / tan(pi r) for x <= 0, r = x - (the nearest integer) in (-1/2, 1/2], 0 at r = 1/2;
    0 for x > 0 (not computed)."""
    f64 = ir.F64Type.get()
    branch = scf.IfOp(negative, [f64], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        r = arith.SubFOp(x, mmath.FloorOp(x).result).result
        r = arith.SelectOp(_cmp(arith.CmpFPredicate.OGT, r, _f(0.5)),
                           arith.SubFOp(r, _f(1.0)).result, r).result
        tan = mmath.TanOp(arith.MulFOp(_f(math.pi), r).result).result
        value = arith.DivFOp(_f(math.pi), tan).result
        half = _cmp(arith.CmpFPredicate.OEQ, r, _f(0.5))
        scf.YieldOp([arith.SelectOp(half, _f(0.0), value).result])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([_f(0.0)])
    return branch.results[0]


def digamma_f64(x: ir.Value) -> ir.Value:
    """digamma64's steps (dialects/ember/elementwise/special.py) on an f64 scalar."""
    ole, olt = arith.CmpFPredicate.OLE, arith.CmpFPredicate.OLT
    negative = _cmp(ole, x, _f(0.0))
    pole = arith.AndIOp(negative, _cmp(arith.CmpFPredicate.OEQ, mmath.FloorOp(x).result,
                                       x)).result
    reflection = _reflection(x, negative)
    s = arith.SelectOp(negative, arith.SubFOp(_f(1.0), x).result, x).result
    w = _f(0.0)
    for _ in range(PSI_SHIFT):
        small = _cmp(olt, s, _f(float(PSI_SHIFT)))
        w = arith.AddFOp(w, arith.SelectOp(small, arith.DivFOp(_f(1.0), s).result,
                                           _f(0.0)).result).result
        s = arith.AddFOp(s, arith.SelectOp(small, _f(1.0), _f(0.0)).result).result
    z = arith.DivFOp(_f(1.0), arith.MulFOp(s, s).result).result
    poly = _f(0.0)
    for c in PSI_SERIES:
        poly = arith.AddFOp(arith.MulFOp(poly, z).result, _f(c)).result
    y = arith.SubFOp(_log(s), arith.DivFOp(_f(0.5), s).result).result
    y = arith.SubFOp(arith.SubFOp(y, arith.MulFOp(z, poly).result).result, w).result
    y = arith.SelectOp(negative, arith.SubFOp(y, reflection).result, y).result
    return arith.SelectOp(pole, _f(math.nan), y).result


@lowers(DigammaOp)
def lower_digamma(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    body = _widened(t.dtype, ir.F64Type.get(), digamma_f64)
    return [lw.elementwise(lw.operands, [t], out, body)]
