"""Gradient rules of the complex-number ops (complex.py) and the Fourier transforms
(signal.py), in TensorFlow's convention: the gradient of a real loss L with respect to a
complex z is dL/d re(z) + i dL/d im(z)."""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import complex as Cx
from ember.dialects.ember import signal as Sg
from ember.frontend.autodiff.registry import vjp
from ember.frontend.autodiff.rule_helpers import ops, unbroadcast


def _cx():
    from ember.frontend import complex_ops
    return complex_ops


@vjp(Cx.ComplexOp)
def _complex(ct, re, im, *, out):
    c = _cx()
    return unbroadcast(c.real(ct), re, im), unbroadcast(c.imag(ct), im, re)


@vjp(Cx.RealOp)
def _real(ct, x, *, out):
    return _cx().complex(ct, ops().zeros_like(ct))


@vjp(Cx.ImagOp)
def _imag(ct, x, *, out):
    return _cx().complex(ops().zeros_like(ct), ct)


@vjp(Cx.AngleOp)
def _angle(ct, x, *, out):
    """d atan2(y, x) = (-y dx + x dy) / |z|^2, i.e. -ct / (im + i re)."""
    c = _cx()
    return -c.complex(ct, ops().zeros_like(ct)) / c.complex(c.imag(x), c.real(x))


@vjp(Cx.ConjOp)
def _conj(ct, x, *, out):
    return _cx().conj(ct)


def _length(x):
    """The innermost dim of x as a scalar of x's dtype (complex): a float when static."""
    n = x.shape.dims[-1] if x.shape.dims is not None else None
    if n is not None:
        return float(n)
    o = ops()
    size = o.cast(o.shape(x)[-1], x.dtype.real_dtype)
    return _cx().complex(size, o.zeros_like(size))


@vjp(Sg.FftOp)
def _fft(ct, x, *, out):
    from ember.frontend.dispatch import execute
    return execute(Sg.IfftOp, [ct]) * _length(ct)


@vjp(Sg.IfftOp)
def _ifft(ct, x, *, out):
    from ember.frontend.dispatch import execute
    return execute(Sg.FftOp, [ct]) / _length(ct)


def _static_inner(x, what: str) -> int:
    dims = x.shape.dims
    if dims is None or dims[-1] is None:
        raise ValueError(f"the gradient of {what} needs the innermost dim of {x} known while "
                         "tracing; give it in the input_signature")
    return dims[-1]


def _fit(x, length: int):
    """x cropped or zero-padded to `length` along its innermost dim."""
    o = ops()
    have = x.shape.dims[-1]
    if have > length:
        return x[..., :length]
    if have < length:
        return o.pad(x, [[0, 0]] * (x.ndim - 1) + [[0, length - have]])
    return x


@vjp(Sg.RfftOp)
def _rfft(ct, x, *, out, fft_length):
    """dx_t = re(sum_k ct_k exp(2 pi i k t / n)) over the n // 2 + 1 kept frequencies: n times
    the inverse transform of ct zero-padded to n, on the (cropped or padded) input."""
    from ember.frontend.dispatch import execute
    size = _static_inner(x, "rfft")
    n = size if fft_length == Sg.DEFAULT_LENGTH else fft_length
    if n == 0:
        return ops().zeros_like(x)
    full = execute(Sg.IfftOp, [_fit(ct, n)])
    return _fit(_cx().real(full) * float(n), size)


@vjp(Sg.IrfftOp)
def _irfft(ct, x, *, out, fft_length):
    """The forward transform of ct over the n // 2 + 1 frequencies read, scaled by 1/n and
    doubled for those that stand for a conjugate pair (not 0, nor n/2 for even n)."""
    from ember.frontend.dispatch import execute
    m = _static_inner(x, "irfft")
    n = 2 * (m - 1) if fft_length == Sg.DEFAULT_LENGTH else fft_length
    if n <= 0:
        return ops().zeros_like(x)
    kept = n // 2 + 1
    weights = np.full(kept, 2.0 / n)
    weights[0] = 1.0 / n
    if n % 2 == 0:
        weights[-1] = 1.0 / n
    spectrum = execute(Sg.RfftOp, [ct], {"fft_length": n})
    scale = _cx().complex(ops().cast(weights, ct.dtype), ops().cast(np.zeros(kept), ct.dtype))
    return _fit(spectrum * scale, m)
