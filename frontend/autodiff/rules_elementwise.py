"""Gradient rules of the elementwise ops (dialects/ember/elementwise/) and of cast/fill.

For complex inputs the rules give TensorFlow's convention: the cotangent times the
conjugate of the derivative (`conj` is the identity on real tensors).
"""

from __future__ import annotations

import math

from ember.dialects.ember import creation as C
from ember.dialects.ember.elementwise import binary as B
from ember.dialects.ember.elementwise import bitwise as W
from ember.dialects.ember.elementwise import compare as K
from ember.dialects.ember.elementwise import special as S
from ember.dialects.ember.elementwise import trig as T
from ember.dialects.ember.elementwise import unary as U
from ember.frontend.autodiff.registry import non_differentiable, vjp
from ember.frontend.autodiff.rule_helpers import conj, is_real_or_complex, ops, unbroadcast

non_differentiable("piecewise constant: its gradient is zero almost everywhere (TensorFlow "
                   "returns None for it too)", U.SignOp, U.FloorOp, U.CeilOp, U.RoundOp,
                   B.FloorDivOp)
non_differentiable("integers' bits: integer results, never differentiable", W.BitwiseAndOp,
                   W.BitwiseOrOp, W.BitwiseXorOp, W.LeftShiftOp, W.RightShiftOp, W.InvertOp)
non_differentiable("boolean result", U.LogicalNotOp, U.IsNanOp, U.IsFiniteOp, K.EqualOp,
                   K.NotEqualOp, K.LessOp, K.LessEqualOp, K.GreaterOp, K.GreaterEqualOp,
                   K.LogicalAndOp, K.LogicalOrOp)
non_differentiable("its result does not depend on the input's values (a constant, a shape, "
                   "a range or random numbers)", C.ConstantOp, C.RangeOp, C.ShapeOp,
                   C.RandomUniformOp, C.RandomNormalOp, C.DynamicRandomUniformOp,
                   C.DynamicRandomNormalOp)


@vjp(U.NegOp)
def _neg(ct, x, *, out):
    return ops().negative(ct)


@vjp(U.AbsOp)
def _abs(ct, x, *, out):
    o = ops()
    if x.dtype.is_complex:
        from ember.frontend.complex_ops import complex as make_complex
        safe = o.where(o.equal(out, 0), o.ones_like(out), out)
        scale = make_complex(o.where(o.equal(out, 0), o.zeros_like(ct), ct / safe),
                             o.zeros_like(ct))
        return scale * x
    return ct * o.sign(x)


@vjp(U.SquareOp)
def _square(ct, x, *, out):
    return ct * (conj(x) * 2)


@vjp(U.ReluOp)
def _relu(ct, x, *, out):
    o = ops()
    return o.where(o.greater(out, 0), ct, o.zeros_like(ct))


@vjp(U.ExpOp)
def _exp(ct, x, *, out):
    return ct * conj(out)


@vjp(U.Expm1Op)
def _expm1(ct, x, *, out):
    return ct * conj(out + 1)


@vjp(U.LogOp)
def _log(ct, x, *, out):
    return ct / conj(x)


@vjp(U.Log1pOp)
def _log1p(ct, x, *, out):
    return ct / conj(x + 1)


@vjp(U.SqrtOp)
def _sqrt(ct, x, *, out):
    return ct / (conj(out) * 2)


@vjp(U.RsqrtOp)
def _rsqrt(ct, x, *, out):
    c = conj(out)
    return ct * (c * c * c * -0.5)


@vjp(U.TanhOp)
def _tanh(ct, x, *, out):
    c = conj(out)
    return ct * (1 - c * c)


@vjp(T.TanOp)
def _tan(ct, x, *, out):
    o = ops()
    return ct / o.square(o.cos(x))


@vjp(T.AsinOp)
def _asin(ct, x, *, out):
    o = ops()
    return ct * o.rsqrt(1 - o.square(x))


@vjp(T.AcosOp)
def _acos(ct, x, *, out):
    o = ops()
    return -ct * o.rsqrt(1 - o.square(x))


@vjp(T.AtanOp)
def _atan(ct, x, *, out):
    return ct / (1 + ops().square(x))


@vjp(T.SinhOp)
def _sinh(ct, x, *, out):
    return ct * ops().cosh(x)


@vjp(T.CoshOp)
def _cosh(ct, x, *, out):
    return ct * ops().sinh(x)


@vjp(T.AsinhOp)
def _asinh(ct, x, *, out):
    return ct / ops().cosh(out)


@vjp(T.AcoshOp)
def _acosh(ct, x, *, out):
    return ct / ops().sinh(out)


@vjp(T.AtanhOp)
def _atanh(ct, x, *, out):
    return ct / (1 - ops().square(x))


@vjp(T.Atan2Op)
def _atan2(ct, y, x, *, out):
    o = ops()
    scale = ct / (o.square(x) + o.square(y))
    return unbroadcast(scale * x, y, x), unbroadcast(-scale * y, x, y)


@vjp(U.SigmoidOp)
def _sigmoid(ct, x, *, out):
    c = conj(out)
    return ct * (c * (1 - c))


@vjp(U.ErfOp)
def _erf(ct, x, *, out):
    o = ops()
    return ct * (o.exp(-o.square(conj(x))) * (2 / math.sqrt(math.pi)))


@vjp(U.ErfcOp)
def _erfc(ct, x, *, out):
    o = ops()
    return ct * (o.exp(-o.square(conj(x))) * (-2 / math.sqrt(math.pi)))


@vjp(U.SinOp)
def _sin(ct, x, *, out):
    return ct * conj(ops().cos(x))


@vjp(U.CosOp)
def _cos(ct, x, *, out):
    return -ct * conj(ops().sin(x))


@vjp(S.LgammaOp)
def _lgamma(ct, x, *, out):
    from ember.frontend.scan_ops import digamma
    return ct * digamma(x)


# -- binary -------------------------------------------------------------------------------

@vjp(B.AddOp)
def _add(ct, x, y, *, out):
    return unbroadcast(ct, x, y), unbroadcast(ct, y, x)


@vjp(B.SubOp)
def _sub(ct, x, y, *, out):
    return unbroadcast(ct, x, y), unbroadcast(-ct, y, x)


@vjp(B.MulOp)
def _mul(ct, x, y, *, out):
    return unbroadcast(ct * conj(y), x, y), unbroadcast(ct * conj(x), y, x)


@vjp(B.DivOp)
def _div(ct, x, y, *, out):
    if not is_real_or_complex(x):
        return None, None
    cy = conj(y)
    gx = ct / cy
    return unbroadcast(gx, x, y), unbroadcast(-gx * conj(out), y, x)


@vjp(B.ModOp)
def _mod(ct, x, y, *, out):
    if not is_real_or_complex(x):
        return None, None
    return unbroadcast(ct, x, y), unbroadcast(-ct * ops().floordiv(x, y), y, x)


@vjp(B.PowOp)
def _pow(ct, x, y, *, out):
    if not is_real_or_complex(x):
        return None, None
    o = ops()
    gx = ct * conj(y * o.pow(x, y - 1))
    if x.dtype.is_complex:
        log_x = o.where(o.equal(x, 0), o.zeros_like(x), o.log(x))
    else:
        positive = o.greater(x, 0)
        log_x = o.where(positive, o.log(o.where(positive, x, o.ones_like(x))),
                        o.zeros_like(x))
    gy = ct * conj(out * log_x)
    return unbroadcast(gx, x, y), unbroadcast(gy, y, x)


def _selected(ct, mask, x, y):
    o = ops()
    zero = o.zeros_like(ct)
    return (unbroadcast(o.where(mask, ct, zero), x, y),
            unbroadcast(o.where(mask, zero, ct), y, x))


@vjp(B.MaximumOp)
def _maximum(ct, x, y, *, out):
    if not is_real_or_complex(x):
        return None, None
    return _selected(ct, ops().greater_equal(x, y), x, y)


@vjp(B.MinimumOp)
def _minimum(ct, x, y, *, out):
    if not is_real_or_complex(x):
        return None, None
    return _selected(ct, ops().less_equal(x, y), x, y)


@vjp(K.SelectOp)
def _select(ct, condition, a, b, *, out):
    o = ops()
    zero = o.zeros_like(ct)
    return (None, unbroadcast(o.where(condition, ct, zero), a, b, condition),
            unbroadcast(o.where(condition, zero, ct), b, a, condition))


# -- creation -----------------------------------------------------------------------------

@vjp(C.CastOp)
def _cast(ct, x, *, out, dtype):
    if not is_real_or_complex(x):
        return None
    if ct.dtype.is_complex and not x.dtype.is_complex:
        from ember.frontend.complex_ops import real
        ct = real(ct)
    return ops().cast(ct, x.dtype)


@vjp(C.FillOp)
def _fill(ct, dims, value, *, out):
    return None, ops().reduce_sum(ct)
