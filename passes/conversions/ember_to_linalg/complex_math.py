"""Lowering of complex64/complex128 elementwise work: `linalg.generic`s whose bodies are
`complex` dialect ops (`complex.add`, `complex.exp`, `complex.re`, ...).

The real-valued rules (elementwise.py, reduction.py) keep the ops whose operands are real;
for the specs listed in `_UNARY`/`_BINARY` (and cast, reductions) the rule registered here
runs when an operand or result is complex. The CPU backend's `convert-complex-to-standard`
then expands the complex ops into `arith`/`math` on the parts (Smith's division, the
branch cuts of log/sqrt as in C99), and `convert-complex-to-llvm` lays complex<f32> out as
`{f32, f32}`, the bytes of numpy's complex64.

Before:
    %z = "ember.mul"(%x, %y) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>)
           -> tensor<4xcomplex<f32>>
After:
    %z = linalg.generic ... ins(%x, %y) outs(%e) {
      ^bb0(%a: complex<f32>, %b: complex<f32>, %o: complex<f32>):
        %p = complex.mul %a, %b : complex<f32>
        linalg.yield %p : complex<f32>
    }
"""

from __future__ import annotations

import functools

from mlir import ir
from mlir.dialects import arith, math, tensor
from mlir.dialects import complex as cx

from ember.dialects.ember import complex as X
from ember.dialects.ember import creation as C
from ember.dialects.ember import elementwise as E
from ember.dialects.ember import reduction as R
from ember.dialects.ember.base import REGISTRY
from ember.dialects.ember.dtypes import DType
from ember.dialects.ember.types import TensorType
from ember.passes.conversions.ember_to_linalg import elementwise, reduction
from ember.passes.conversions.ember_to_linalg.common import (LOWERINGS, Lowering,
                                                             element_type, lowers)

def _abs(x):
    """|x| as C99's cabs (hypot): +inf when a part is infinite, even if the other is NaN
    (numpy's and TensorFlow's answer; complex.abs's expansion gives NaN there)."""
    from mlir.dialects import math
    inf = arith.ConstantOp(ir.ComplexType(x.type).element_type,
                           ir.FloatAttr.get(ir.ComplexType(x.type).element_type,
                                            float("inf"))).result
    infinite = [arith.CmpFOp(arith.CmpFPredicate.OEQ, math.AbsFOp(p).result, inf).result
                for p in (cx.ReOp(x).result, cx.ImOp(x).result)]
    return arith.SelectOp(arith.OrIOp(*infinite).result, inf, cx.AbsOp(x).result)


_UNARY = {E.NegOp: cx.NegOp, E.AbsOp: _abs, E.SignOp: cx.SignOp, E.ExpOp: cx.ExpOp,
          E.Expm1Op: cx.Expm1Op, E.LogOp: cx.LogOp, E.Log1pOp: cx.Log1pOp,
          E.SqrtOp: cx.SqrtOp, E.RsqrtOp: cx.RsqrtOp, E.TanhOp: cx.TanhOp, E.SinOp: cx.SinOp,
          E.CosOp: cx.CosOp, X.RealOp: cx.ReOp, X.ImagOp: cx.ImOp, X.AngleOp: cx.AngleOp,
          X.ConjOp: cx.ConjOp,
          E.SquareOp: lambda x: cx.MulOp(x, x)}
_BINARY = {E.AddOp: cx.AddOp, E.SubOp: cx.SubOp, E.MulOp: cx.MulOp, E.DivOp: cx.DivOp,
           E.PowOp: cx.PowOp, E.EqualOp: cx.EqualOp, E.NotEqualOp: cx.NotEqualOp}


def _is_complex(lw: Lowering) -> bool:
    return any(t.dtype.is_complex for t in lw.operand_types + lw.result_types)


def _complex_first(real_rule, complex_rule):
    """A rule running `complex_rule` for ops with a complex operand or result, else the
    real-valued `real_rule` (its attributes, e.g. `can_lower`, kept)."""
    @functools.wraps(real_rule)
    def rule(op, lw: Lowering):
        return (complex_rule if _is_complex(lw) else real_rule)(op, lw)
    return rule


def lower_unary(op, lw: Lowering):
    (t,), out = lw.operand_types, lw.result_types[0]
    ctor = _UNARY[REGISTRY[op.name]]
    return [lw.elementwise(lw.operands, [t], out, lambda x: ctor(x).result)]


def lower_binary(op, lw: Lowering):
    types, out = lw.operand_types, lw.result_types[0]
    ctor = _BINARY[REGISTRY[op.name]]
    return [lw.elementwise(lw.operands, types, out, lambda x, y: ctor(x, y).result)]


@lowers(X.ComplexOp)
def lower_complex(op, lw: Lowering):
    types, out = lw.operand_types, lw.result_types[0]
    et = element_type(out.dtype)
    return [lw.elementwise(lw.operands, types, out, lambda re, im: cx.CreateOp(et, re, im).result)]


def lower_cast(op, lw: Lowering):
    """TensorFlow's cast: complex -> real converts the real part; real -> complex has
    imaginary part 0; complex -> complex converts both parts."""
    (t,), out = lw.operand_types, lw.result_types[0]
    src, dst = t.dtype, out.dtype

    def body(x):
        if not src.is_complex:  # real -> complex
            part = elementwise.convert_scalar(lw, x, src, dst.real_dtype)
            return cx.CreateOp(element_type(dst), part, lw.scalar(0, dst.real_dtype)).result
        re = cx.ReOp(x).result
        if not dst.is_complex:
            return elementwise.convert_scalar(lw, re, src.real_dtype, dst)
        im = cx.ImOp(x).result
        parts = [elementwise.convert_scalar(lw, p, src.real_dtype, dst.real_dtype)
                 for p in (re, im)]
        return cx.CreateOp(element_type(dst), *parts).result
    return [lw.elementwise(lw.operands, [t], out, body)]


def lower_reduce(op, lw: Lowering):
    """Sum, product and mean of complex elements: one reduction generic (reduction.py's)
    with complex.add/mul; the mean divides both parts by the count (exactly numpy's
    complex / count, whose divisor has imaginary part 0)."""
    spec = REGISTRY[op.name]
    t, x = lw.operand_types[0], lw.operands[0]
    axes = R.reduce_axes(spec, len(t.shape), lw.attrs["axes"])
    combine = cx.MulOp if spec is R.ReduceProdOp else cx.AddOp
    init = lw.scalar(1 if spec is R.ReduceProdOp else 0, t.dtype)
    value = reduction._reduce(lw, x, t, axes, t.dtype, init,
                              lambda v, acc: combine(v, acc).result)
    if spec is R.ReduceMeanOp:
        value = _divide_parts(lw, value, x, t, axes)
    if not lw.attrs["keepdims"] or not axes:
        return [value]
    return [reduction._keepdims(lw, value, x, t, axes)]


def _divide_parts(lw: Lowering, total: ir.Value, x: ir.Value, t: TensorType, axes: tuple):
    count = lw.index(1)
    for a in axes:
        size = lw.index(t.shape[a]) if t.shape[a] is not None else \
            tensor.DimOp(x, lw.index(a)).result
        count = arith.MulIOp(count, size).result
    part: DType = t.dtype.real_dtype
    count = arith.IndexCastOp(ir.IntegerType.get_signless(64), count).result
    n = arith.UIToFPOp(element_type(part), count).result
    shape = tuple(t.shape[i] for i in range(len(t.shape)) if i not in axes)
    ct = TensorType(t.dtype, shape)
    et = element_type(t.dtype)

    def mean(s):
        re = arith.DivFOp(cx.ReOp(s).result, n).result
        im = arith.DivFOp(cx.ImOp(s).result, n).result
        return cx.CreateOp(et, re, im).result
    return lw.elementwise([total], [ct], ct, mean)


for _spec in _UNARY:
    if _spec in LOWERINGS:  # real-valued ops that also take complex operands
        LOWERINGS[_spec] = _complex_first(LOWERINGS[_spec], lower_unary)
    else:  # complex-only ops (ember.real, ...)
        LOWERINGS[_spec] = lower_unary
for _spec in _BINARY:
    LOWERINGS[_spec] = _complex_first(LOWERINGS[_spec], lower_binary)
LOWERINGS[C.CastOp] = _complex_first(LOWERINGS[C.CastOp], lower_cast)
for _spec in (R.ReduceSumOp, R.ReduceProdOp, R.ReduceMeanOp):
    LOWERINGS[_spec] = _complex_first(LOWERINGS[_spec], lower_reduce)
