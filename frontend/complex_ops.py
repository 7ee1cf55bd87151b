"""Complex numbers and Fourier transforms: `em.complex`, `em.math.real/imag/conj/angle`,
`em.signal.fft/ifft/rfft/irfft`, with TensorFlow's names, signatures and rules for real
inputs (`real(x)` of a float tensor is `x`, `imag` of it zeros, `conj` the tensor itself).
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import complex as X
from ember.dialects.ember import elementwise as E
from ember.dialects.ember import signal as S
from ember.frontend.dispatch import execute
from ember.frontend.indexing import is_tensor
from ember.frontend.math_ops import group
from ember.frontend.shape_args import trace_time_value
from ember.frontend.tensor import convert_to_tensor


def complex(real, imag, name=None):  # noqa: A001 - TensorFlow's name
    """`real + imag * 1j` elementwise with broadcasting (tf.complex).

    Args:
      real: a float32 or float64 tensor.
      imag: a tensor of the same dtype.
      name: ignored (TensorFlow compatibility).

    Returns:
      A complex64 tensor for float32 parts, complex128 for float64.

    Raises:
      OpTypeError: the parts have other or differing dtypes.

    Example:
      >>> import ember as em
      >>> em.complex(em.constant([1.0]), em.constant([2.0]))
      <ember.Tensor: shape=(1,), dtype=complex64, numpy=array([1.+2.j], dtype=complex64)>
    """
    del name
    return execute(X.ComplexOp, group(real, imag))


def real(input, name=None):  # noqa: A002 - TensorFlow's name
    """The real part of each element (tf.math.real); a real tensor is returned as is.

    Example:
      >>> import ember as em
      >>> em.math.real(em.constant([1 + 2j]))
      <ember.Tensor: shape=(1,), dtype=float64, numpy=array([1.])>
    """
    del name
    t = convert_to_tensor(input)
    return execute(X.RealOp, [t]) if t.dtype.is_complex else t


def imag(input, name=None):  # noqa: A002 - TensorFlow's name
    """The imaginary part of each element (tf.math.imag); of a real tensor, zeros.

    Example:
      >>> import ember as em
      >>> em.math.imag(em.constant([1 + 2j]))
      <ember.Tensor: shape=(1,), dtype=float64, numpy=array([2.])>
    """
    del name
    t = convert_to_tensor(input)
    if t.dtype.is_complex:
        return execute(X.ImagOp, [t])
    return execute(E.MulOp, [t, convert_to_tensor(np.zeros((), t.dtype.np_dtype))])


def conj(x, name=None):
    """The complex conjugate of each element (tf.math.conj); a real tensor is returned as
    is."""
    del name
    t = convert_to_tensor(x)
    return execute(X.ConjOp, [t]) if t.dtype.is_complex else t


def angle(input, name=None):  # noqa: A002 - TensorFlow's name
    """The argument atan2(imag, real) of each element (tf.math.angle); of a real tensor, pi
    where it is negative, else 0 (TensorFlow's rule, NaN gives 0).

    Example:
      >>> import ember as em
      >>> em.math.angle(em.constant([-1.0 + 0j]))
      <ember.Tensor: shape=(1,), dtype=float64, numpy=array([3.14159265])>
    """
    del name
    t = convert_to_tensor(input)
    if t.dtype.is_complex:
        return execute(X.AngleOp, [t])
    pi, zero = (convert_to_tensor(np.asarray(v, t.dtype.np_dtype)) for v in (np.pi, 0))
    negative = execute(E.LessOp, [t, zero])
    return execute(E.SelectOp, [negative, pi, execute(E.MulOp, [t, zero])])


def fft(input, name=None):  # noqa: A002 - TensorFlow's name
    """Discrete Fourier transform over the innermost axis of a complex tensor
    (tf.signal.fft). Compiled as a direct O(n^2) DFT (a linalg reduction), not a fast FFT.

    Example:
      >>> import ember as em
      >>> em.signal.fft(em.constant([1 + 0j, 0j]))
      <ember.Tensor: shape=(2,), dtype=complex128, numpy=array([1.+0.j, 1.+0.j])>
    """
    del name
    return execute(S.FftOp, [convert_to_tensor(input)])


def ifft(input, name=None):  # noqa: A002 - TensorFlow's name
    """Inverse discrete Fourier transform over the innermost axis (tf.signal.ifft), scaled
    by 1/n. Compiled as a direct O(n^2) DFT."""
    del name
    return execute(S.IfftOp, [convert_to_tensor(input)])


def _fft_length(fft_length, where: str) -> int:
    """The static length: None (the default), an int, or a 1-element list or tensor known
    at trace time (TensorFlow passes `[n]`)."""
    if fft_length is None:
        return S.DEFAULT_LENGTH
    value = fft_length
    if is_tensor(value):
        value = trace_time_value(value)
        if value is None:
            raise TypeError(f"{where}: fft_length must be known when tracing (a Python int "
                            "or a constant); Ember compiles a transform for one length")
    value = np.asarray(value)
    if value.size != 1 or value.dtype.kind not in "iu":
        raise TypeError(f"{where}: fft_length must be an int or a list of one int; got "
                        f"{fft_length!r}")
    n = int(value.reshape(-1)[0])
    if n < 0:
        raise ValueError(f"{where}: fft_length must be >= 0; got {n}")
    return n


def rfft(input_tensor, fft_length=None, name=None):
    """Fourier transform of a real signal over the innermost axis (tf.signal.rfft): the
    fft_length // 2 + 1 non-negative frequencies of the signal cropped or zero-padded to
    `fft_length` (default: its length). float32 gives complex64, float64 complex128.
    Compiled as a direct O(n^2) DFT."""
    del name
    n = _fft_length(fft_length, "em.signal.rfft")
    return execute(S.RfftOp, [convert_to_tensor(input_tensor)], {"fft_length": n})


def irfft(input_tensor, fft_length=None, name=None):
    """Inverse of `rfft` (tf.signal.irfft): `fft_length` real samples (default 2 * (m - 1)
    for m frequencies). Compiled as a direct O(n^2) DFT."""
    del name
    n = _fft_length(fft_length, "em.signal.irfft")
    return execute(S.IrfftOp, [convert_to_tensor(input_tensor)], {"fft_length": n})


__all__ = ["angle", "complex", "conj", "fft", "ifft", "imag", "irfft", "real", "rfft"]
