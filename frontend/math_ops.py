"""The elementwise op functions: unary math (`em.exp`, ...), binary arithmetic and
comparisons with Python values taking the dtype of the tensor they meet (`group`),
`em.where`, `em.cast`, `em.identity`, `em.logical_xor`.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import creation as C
from ember.dialects.ember import dtypes
from ember.dialects.ember import elementwise as E
from ember.dialects.ember.base import Op, OpTypeError
from ember.frontend.dispatch import execute, execute_float, float_fits
from ember.frontend.tensor import Tensor, _representable, convert_to_tensor


def group(*values) -> list[Tensor]:
    """Converts values that must share a dtype: Python values and numpy arrays take the first
    tensor's dtype where they can hold it, as in TensorFlow (`x / np.sqrt(2.0)` stays
    float32); with no tensor, the first numpy value's dtype leads, else the first value's."""
    hint = None
    for v in values:
        if isinstance(v, Tensor) or hasattr(v, "_as_tensor"):
            hint = v.dtype
            break
    if hint is None:
        for v in values:
            if isinstance(v, (np.ndarray, np.generic)):
                hint = dtypes.as_dtype(v.dtype)
                break
    if hint is None and values:  # only Python values: the first one's dtype leads, as in TF
        hint = convert_to_tensor(values[0]).dtype
    return [_converted(v, hint) for v in values]


def _converted(value, hint) -> Tensor:
    """`convert_to_tensor(value, dtype_hint=hint)`, sooner for a Python float meeting a float
    tensor (`x * 0.5`: while tracing, ~20 us of each constant's ~40); a numpy value takes
    `hint` where a Python value of it would (no overflow, no float to int, no complex to
    real, bool only as bool), else keeps its dtype (and the op names the mismatch)."""
    if type(value) is float and type(hint) is dtypes.DType and float_fits(value, hint):
        # what convert_to_tensor makes: rounding a Python float is rounding its float64
        # array, and a fresh array already is what Tensor's checks ask for
        return Tensor._of_output(np.asarray(value, dtype=hint.np_dtype), hint)
    if isinstance(value, (np.ndarray, np.generic)) and hint is not None and \
            value.dtype.kind in "biufc" and value.dtype != hint.np_dtype and \
            not hint.is_string and _representable(np.asarray(value), hint):
        with np.errstate(over="ignore"):  # a float beyond float16's range: inf, as numpy
            return Tensor(np.asarray(value).astype(hint.np_dtype), hint)
    return convert_to_tensor(value, dtype_hint=hint)


def _unary(spec: type[Op], name: str):
    def fn(x, name=None):
        del name
        return execute(spec, [convert_to_tensor(x)])
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{spec.summary()}\n\nRuns the `{spec.name}` op (see its spec for details)."
    return fn


def _binary(spec: type[Op], name: str):
    def fn(x, y, name=None):
        out = execute_float(spec, x, y) if type(y) is float else None  # x * 0.5
        return execute(spec, group(x, y)) if out is None else out
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{spec.summary()}\n\nRuns the `{spec.name}` op (see its spec for details)."
    return fn


negative = _unary(E.NegOp, "negative")
abs = _unary(E.AbsOp, "abs")  # noqa: A001 - TensorFlow's name
sign = _unary(E.SignOp, "sign")
exp = _unary(E.ExpOp, "exp")
erf = _unary(E.ErfOp, "erf")
erfc = _unary(E.ErfcOp, "erfc")
expm1 = _unary(E.Expm1Op, "expm1")
log = _unary(E.LogOp, "log")
log1p = _unary(E.Log1pOp, "log1p")
sqrt = _unary(E.SqrtOp, "sqrt")
rsqrt = _unary(E.RsqrtOp, "rsqrt")
square = _unary(E.SquareOp, "square")
tanh = _unary(E.TanhOp, "tanh")
sigmoid = _unary(E.SigmoidOp, "sigmoid")
relu = _unary(E.ReluOp, "relu")
sin = _unary(E.SinOp, "sin")
cos = _unary(E.CosOp, "cos")
tan = _unary(E.TanOp, "tan")
asin = _unary(E.AsinOp, "asin")
acos = _unary(E.AcosOp, "acos")
atan = _unary(E.AtanOp, "atan")
sinh = _unary(E.SinhOp, "sinh")
cosh = _unary(E.CoshOp, "cosh")
asinh = _unary(E.AsinhOp, "asinh")
acosh = _unary(E.AcoshOp, "acosh")
atanh = _unary(E.AtanhOp, "atanh")
floor = _unary(E.FloorOp, "floor")
ceil = _unary(E.CeilOp, "ceil")
round = _unary(E.RoundOp, "round")  # noqa: A001
logical_not = _unary(E.LogicalNotOp, "logical_not")
is_nan = _unary(E.IsNanOp, "is_nan")
is_finite = _unary(E.IsFiniteOp, "is_finite")

add = _binary(E.AddOp, "add")
subtract = _binary(E.SubOp, "subtract")
multiply = _binary(E.MulOp, "multiply")
divide = _binary(E.DivOp, "divide")
truediv = divide
floordiv = _binary(E.FloorDivOp, "floordiv")
floormod = _binary(E.ModOp, "floormod")
mod = floormod
pow = _binary(E.PowOp, "pow")  # noqa: A001
atan2 = _binary(E.Atan2Op, "atan2")  # atan2(y, x), as tf.math.atan2
maximum = _binary(E.MaximumOp, "maximum")
minimum = _binary(E.MinimumOp, "minimum")
equal = _binary(E.EqualOp, "equal")
not_equal = _binary(E.NotEqualOp, "not_equal")
less = _binary(E.LessOp, "less")
less_equal = _binary(E.LessEqualOp, "less_equal")
greater = _binary(E.GreaterOp, "greater")
greater_equal = _binary(E.GreaterEqualOp, "greater_equal")
logical_and = _binary(E.LogicalAndOp, "logical_and")
logical_or = _binary(E.LogicalOrOp, "logical_or")
bitwise_and = _binary(E.BitwiseAndOp, "bitwise_and")
bitwise_or = _binary(E.BitwiseOrOp, "bitwise_or")
bitwise_xor = _binary(E.BitwiseXorOp, "bitwise_xor")
left_shift = _binary(E.LeftShiftOp, "left_shift")
right_shift = _binary(E.RightShiftOp, "right_shift")
invert = _unary(E.InvertOp, "invert")


def logical_xor(x, y, name=None):
    """`x != y` for bool tensors, elementwise with broadcasting (tf.math.logical_xor, which
    is written the same way: `(x | y) & ~(x & y)`).

    Example:
      >>> import ember as em
      >>> em.logical_xor(em.constant([True, False]), True)
      <ember.Tensor: shape=(2,), dtype=bool, numpy=array([False,  True])>
    """
    del name
    x, y = (convert_to_tensor(v, dtype_hint=dtypes.bool_) for v in (x, y))
    for t in (x, y):
        if t.dtype is not dtypes.bool_:
            raise OpTypeError("em.logical_xor", f"takes bool tensors; got {t.dtype.name}. "
                              "For integers' bits use em.bitwise.bitwise_xor (or x ^ y), "
                              "for `x != y` em.not_equal.")
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)))


def where(condition, x, y, name=None):
    """Elementwise `condition ? x : y` with broadcasting (x and y are required)."""
    del name
    c = convert_to_tensor(condition, dtype_hint=dtypes.bool_)
    return execute(E.SelectOp, [c, *group(x, y)])


def cast(x, dtype, name=None):
    """Converts `x` to `dtype` (floats to ints truncate toward zero)."""
    del name
    return execute(C.CastOp, [convert_to_tensor(x)], {"dtype": dtypes.as_dtype(dtype)})


def identity(x, name=None):
    """Returns `x` as a tensor."""
    del name
    return convert_to_tensor(x)
