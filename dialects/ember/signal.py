"""Discrete Fourier transforms over the innermost axis (tf.signal.fft, ifft, rfft, irfft).

Semantics are TensorFlow's (numpy.fft's for the values): `fft`/`ifft` map complex to complex
of the same length, `ifft` scaled by 1/n; `rfft` maps real to the n//2 + 1 non-negative
frequencies of length `fft_length` (the input cropped or zero-padded to it); `irfft` maps
those back to `fft_length` real samples (default 2 * (m - 1) for m frequencies), reading
the first fft_length//2 + 1 frequencies (zero-padded) and ignoring the imaginary parts of
the zero and Nyquist frequencies, as numpy does. Where numpy refuses a length of 0, these
give empty (or zero) results. f32 gives complex64, f64 complex128.

Compiled, they lower to a direct DFT (a `linalg.generic` reduction with twiddles computed
in f64 from (j * k) mod n), O(n^2) per transform: exact enough and fine for the short
transforms of signal processing layers, but not a fast FFT for long signals.
Upstream equivalent: none in MLIR; `stablehlo.fft`.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpShapeError, OpTypeError,
                                       Total, Trait, register)
from ember.dialects.ember.types import TensorType

_PURE = frozenset({Trait.PURE})
DEFAULT_LENGTH = -1  # fft_length: the input's length (rfft) or 2 * (m - 1) (irfft)


def _innermost(op: type[Op], x: TensorType):
    if x.rank == 0:
        raise OpShapeError(op.name, f"operand of type {x} must have rank >= 1 (the transform "
                           "runs over its innermost dim)")


def _length(op: type[Op], fft_length: int) -> int:
    if fft_length < DEFAULT_LENGTH:
        raise OpAttributeError(op.name, f"fft_length {fft_length} must be >= 0 (or -1 for "
                               "the default)")
    return fft_length


def _require(op: type[Op], x: TensorType, allowed: tuple, what: str):
    if x.dtype not in allowed:
        raise OpTypeError(op.name, f"operand of type {x} must have {what} elements")


def _np_fft(fn, x, n: int, out_dtype):
    """numpy's transform, with TensorFlow's answers for the lengths numpy refuses."""
    shape = x.shape[:-1]
    if n == 0 or x.shape[-1] == 0:  # nothing to transform: zeros
        size = {np.fft.rfft: n // 2 + 1, np.fft.irfft: n}.get(fn, x.shape[-1])
        return np.zeros(shape + (size,), out_dtype)
    return fn(x, n=n, axis=-1).astype(out_dtype)


class _FftOp(Op):
    operands = ("input",)
    traits = _PURE
    family = "signal"
    total_when = Total.ALWAYS


@register
class FftOp(_FftOp):
    """Discrete Fourier transform of the innermost dim, sum_j x[j] exp(-2 pi i jk / n).

    Example:
      %y = "ember.fft"(%x) : (tensor<3x8xcomplex<f32>>) -> tensor<3x8xcomplex<f32>>
    """

    name = "ember.fft"
    inverse = False

    @classmethod
    def infer(cls, x: TensorType):
        _require(cls, x, dtypes.COMPLEX, "complex (complex64 or complex128)")
        _innermost(cls, x)
        return x

    @classmethod
    def reference(cls, x):
        return _np_fft(np.fft.ifft if cls.inverse else np.fft.fft, x, x.shape[-1], x.dtype)


@register
class IfftOp(FftOp):
    """Inverse discrete Fourier transform of the innermost dim,
    (1/n) sum_k x[k] exp(2 pi i jk / n).

    Example:
      %y = "ember.ifft"(%x) : (tensor<?xcomplex<f64>>) -> tensor<?xcomplex<f64>>
    """

    name = "ember.ifft"
    inverse = True


@register
class RfftOp(_FftOp):
    """Fourier transform of a real signal cropped or zero-padded to `fft_length` (-1: its
    length): the fft_length // 2 + 1 non-negative frequencies.

    Example:
      %y = "ember.rfft"(%x) {fft_length = 8 : i64} : (tensor<2x6xf32>) -> tensor<2x5xcomplex<f32>>
    """

    name = "ember.rfft"
    attrs = {"fft_length": Attr("i64", DEFAULT_LENGTH, doc="transform length; -1: input's")}

    @classmethod
    def infer(cls, x: TensorType, *, fft_length):
        _require(cls, x, (dtypes.float32, dtypes.float64), "float32 or float64")
        _innermost(cls, x)
        n = _length(cls, fft_length)
        out = dtypes.complex_of(x.dtype)
        if x.shape is None:
            return TensorType(out, None)
        n = x.shape[-1] if n == DEFAULT_LENGTH else n
        return TensorType(out, x.shape[:-1] + (None if n is None else n // 2 + 1,))

    @staticmethod
    def reference(x, *, fft_length):
        n = x.shape[-1] if fft_length == DEFAULT_LENGTH else fft_length
        return _np_fft(np.fft.rfft, x, n, dtypes.complex_of(dtypes.as_dtype(x.dtype)).np_dtype)


@register
class IrfftOp(_FftOp):
    """Inverse of `rfft`: `fft_length` real samples (-1: 2 * (m - 1) for m frequencies)
    from the first fft_length // 2 + 1 frequencies (zero-padded).

    Example:
      %y = "ember.irfft"(%x) {fft_length = -1 : i64} : (tensor<5xcomplex<f32>>) -> tensor<8xf32>
    """

    name = "ember.irfft"
    attrs = {"fft_length": Attr("i64", DEFAULT_LENGTH, doc="output length; -1: 2 * (m - 1)")}

    @classmethod
    def infer(cls, x: TensorType, *, fft_length):
        _require(cls, x, dtypes.COMPLEX, "complex (complex64 or complex128)")
        _innermost(cls, x)
        n = _length(cls, fft_length)
        out = x.dtype.real_dtype
        if x.shape is None:
            return TensorType(out, None)
        if n == DEFAULT_LENGTH:
            m = x.shape[-1]
            n = None if m is None else default_irfft_length(m)
        return TensorType(out, x.shape[:-1] + (n,))

    @staticmethod
    def reference(x, *, fft_length):
        n = default_irfft_length(x.shape[-1]) if fft_length == DEFAULT_LENGTH else fft_length
        return _np_fft(np.fft.irfft, x, n, x.real.dtype)


def default_irfft_length(m: int) -> int:
    """2 * (m - 1), and 0 for no frequencies at all."""
    return 2 * max(m - 1, 0)
