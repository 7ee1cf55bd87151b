"""Complex numbers: building them from parts (`ember.complex`), taking them apart
(`ember.real`, `ember.imag`, `ember.angle`) and conjugating (`ember.conj`).

TensorFlow's `tf.complex`, `tf.math.real/imag/angle/conj`. The ops here take complex
operands only (complex64 = `complex<f32>`, complex128 = `complex<f64>`); the Python functions
handle real inputs as TensorFlow does (`real(x)` of a float is `x`, ...). Upstream
equivalents: `complex.create`, `complex.re`, `complex.im`, `complex.angle`, `complex.conj`.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Op, OpTypeError, Total, broadcast_total, register,
                                       same_dtype)
from ember.dialects.ember.elementwise.binary import broadcast_result
from ember.dialects.ember.elementwise.common import ELEMENTWISE
from ember.dialects.ember.types import TensorType

COMPLEX_NAMES = "complex (complex64 or complex128)"


def require_complex(op: type[Op], t: TensorType) -> None:
    if not t.dtype.is_complex:
        raise OpTypeError(op.name, f"operand of type {t} must have {COMPLEX_NAMES} elements")


@register
class ComplexOp(Op):
    """Elementwise `real + imag * 1j` with broadcasting: f32 parts give complex64, f64 parts
    complex128 (tf.complex).

    Example:
      %z = "ember.complex"(%re, %im) : (tensor<4xf32>, tensor<f32>) -> tensor<4xcomplex<f32>>
    """

    name = "ember.complex"
    operands = ("real", "imag")
    traits = ELEMENTWISE
    family = "complex"

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        """Broadcasting fails at run time only where a `?` dim meets another dim not 1."""
        return broadcast_total(operand_types)

    @classmethod
    def infer(cls, re: TensorType, im: TensorType):
        part = same_dtype(cls, re, im)
        if part not in (dtypes.float32, dtypes.float64):
            raise OpTypeError(cls.name, f"operands of type {re} and {im} must have float32 or "
                              "float64 elements (the parts of complex64 and complex128)")
        return TensorType(dtypes.complex_of(part), broadcast_result(cls, re, im))

    @staticmethod
    def reference(re, im):
        out = np.empty(np.broadcast_shapes(re.shape, im.shape),
                       dtypes.complex_of(dtypes.as_dtype(re.dtype)).np_dtype)
        out.real, out.imag = re, im
        return out


class _ComplexUnaryOp(Op):
    operands = ("input",)
    traits = ELEMENTWISE
    family = "complex"
    total_when = Total.ALWAYS
    to_real = True  # the result holds the parts' dtype (f32 for complex64)

    @classmethod
    def infer(cls, x: TensorType):
        require_complex(cls, x)
        return x.with_dtype(x.dtype.real_dtype) if cls.to_real else x


@register
class RealOp(_ComplexUnaryOp):
    """Elementwise real part of a complex tensor (tf.math.real).

    Example:
      %y = "ember.real"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
    """

    name = "ember.real"
    reference = staticmethod(lambda x: np.real(x).copy())


@register
class ImagOp(_ComplexUnaryOp):
    """Elementwise imaginary part of a complex tensor (tf.math.imag).

    Example:
      %y = "ember.imag"(%x) : (tensor<4xcomplex<f64>>) -> tensor<4xf64>
    """

    name = "ember.imag"
    reference = staticmethod(lambda x: np.imag(x).copy())


@register
class AngleOp(_ComplexUnaryOp):
    """Elementwise argument atan2(imag, real) in [-pi, pi] (tf.math.angle).

    Example:
      %y = "ember.angle"(%x) : (tensor<?xcomplex<f32>>) -> tensor<?xf32>
    """

    name = "ember.angle"
    reference = staticmethod(lambda x: np.angle(x).astype(x.real.dtype))


@register
class ConjOp(_ComplexUnaryOp):
    """Elementwise complex conjugate, real - imag * 1j (tf.math.conj).

    Example:
      %y = "ember.conj"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
    """

    name = "ember.conj"
    reference = staticmethod(np.conj)
    to_real = False
