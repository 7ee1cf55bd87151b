"""Compiled code vs eager (the reference kernels) on seeded random complex programs (60
seeds, two dtypes).

Each program is a chain of eight steps over a pool of complex 4x4 (or ?x4) tensors, drawn
from the complex ops: arithmetic with broadcasting, the complex-valued math (exp, log,
sqrt, tanh, sin, cos, fed values squeezed into a disk: no overflow, and no branch cut
where the sign of a rounding-noise zero picks the side), parts and conj, casts between the
complex dtypes, reductions, matmul, select on a real comparison, and the Fourier
transforms. The compiled function must
run without the interpreter and agree with eager within a few ulps of the magnitudes.
"""

import random
import warnings

import numpy as np
import pytest

import ember as em

SEEDS = range(60)


def _unit(x):
    """x squeezed into the unit disk, continuously (sign(x) would jump on rounding noise
    around 0, and amplify a last-bit difference into a different result)."""
    return x / (em.cast(em.abs(x), x.dtype) + 1.0)


def _right(x):
    """Into the disk of radius 1 around 2: away from 0 and the branch cut of log, sqrt
    and angle (the negative real axis, where the sign of a zero decides the side)."""
    return _unit(x) + 2.0


STEPS = [
    lambda r, x, y: x + y, lambda r, x, y: x - y, lambda r, x, y: x * _unit(y),
    lambda r, x, y: x / _right(y), lambda r, x, y: -x, lambda r, x, y: em.math.conj(x),
    lambda r, x, y: em.exp(_unit(x)), lambda r, x, y: em.log(_right(x)),
    lambda r, x, y: em.sqrt(_right(x)), lambda r, x, y: em.tanh(_unit(x) * 0.5),
    lambda r, x, y: em.sin(_unit(x)), lambda r, x, y: em.cos(_unit(x)),
    lambda r, x, y: em.square(_unit(x)),
    lambda r, x, y: em.complex(em.math.imag(x), em.math.real(y)),
    lambda r, x, y: em.cast(em.abs(x) + em.math.angle(_right(y)), x.dtype),
    lambda r, x, y: em.reduce_mean(x, axis=r.choice([0, 1]), keepdims=True) + y,
    lambda r, x, y: em.reduce_sum(x, axis=1, keepdims=True) * 0.25 - y,
    lambda r, x, y: em.matmul(x, em.transpose(y) * 0.25),
    # a margin: parts equal by construction (complex(imag(x), ...)) would tie, and a tie
    # flips on the last bit
    lambda r, x, y: em.where(em.math.real(x) > em.math.imag(y) + 0.25, x, y),
    lambda r, x, y: em.signal.fft(x) * 0.25, lambda r, x, y: em.signal.ifft(y),
    lambda r, x, y: em.cast(em.cast(x, em.complex128 if x.dtype == em.complex64
                                    else em.complex64), x.dtype),
    lambda r, x, y: em.cast(em.signal.irfft(x[:, :3]), x.dtype) + y,
]


def _program(seed: int):
    """A function of two complex tensors built from eight steps chosen by `seed`."""
    plan = random.Random(seed)
    choices = [(plan.randrange(len(STEPS)), plan.randrange(1 << 30), plan.random() < 0.5)
               for _ in range(8)]

    def program(a, b):
        pool = [a, b]
        for step, salt, swap in choices:
            x, y = pool[-1], pool[-2]
            if swap:
                x, y = y, x
            pool.append(STEPS[step](random.Random(salt), x, y))
        return pool[-1] + pool[-3]
    return program


@pytest.mark.parametrize("dtype", [em.complex64, em.complex128], ids=lambda d: d.name)
@pytest.mark.parametrize("seed", SEEDS)
def test_compiled_complex_program_matches_eager(seed, dtype):
    rng = np.random.default_rng(seed)
    a, b = ((rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4)))
            .astype(dtype.np_dtype) for _ in range(2))
    program = _program(seed)
    want = program(em.constant(a), em.constant(b)).numpy()
    signature = None if seed % 2 else [em.TensorSpec([None, 4], dtype)] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        got = em.function(program, input_signature=signature)(em.constant(a),
                                                              em.constant(b)).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.isfinite(want).all(), "the steps are meant to keep values finite"
    scale = max(1.0, float(np.abs(want).max()))
    tol = 1e-4 if dtype is em.complex64 else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=f"seed {seed}")
