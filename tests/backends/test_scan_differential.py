"""Compiled code vs eager (the reference kernels) on seeded random programs built from the
scans, searchsorted, lgamma and digamma mixed with elementwise ops: each program is a chain
of steps over a pool of values, compiled once with static and once with dynamic (`None`)
dims, never falling back to the interpreter. Sorted sequences for searchsorted come from
cumsum of |x| (non-decreasing by construction). Integers must agree exactly; floats within
1e-5 relative, with NaN and inf in the same places.
"""

import random

import numpy as np
import pytest

import ember as em

SEEDS = range(20)
SHAPE = (3, 5)


def _float_step(rng: random.Random, pool: list):
    x = rng.choice(pool)
    axis = rng.choice([0, 1, -1, -2])
    flags = {"exclusive": rng.random() < 0.5, "reverse": rng.random() < 0.5}
    kind = rng.randrange(7)
    if kind == 0:
        return em.cumsum(x, axis, **flags)
    if kind == 1:  # tanh keeps the products bounded
        return em.cumprod(em.tanh(x) + 1.0, axis, **flags)
    if kind == 2:
        return em.math.lgamma(x)
    if kind == 3:
        return em.math.digamma(x)
    if kind == 4:
        seq = em.cumsum(em.abs(rng.choice(pool)), -1, exclusive=flags["exclusive"])
        side = rng.choice(["left", "right"])
        found = em.searchsorted(seq, x, side=side, out_type=rng.choice([em.int32, em.int64]))
        return em.cast(found, em.float32)
    y = rng.choice(pool)
    return x + y if kind == 5 else x * em.sigmoid(y)


def _int_step(rng: random.Random, pool: list):
    x = rng.choice(pool)
    axis = rng.choice([0, 1, -1, -2])
    flags = {"exclusive": rng.random() < 0.5, "reverse": rng.random() < 0.5}
    kind = rng.randrange(4)
    if kind == 0:
        return em.cumsum(x, axis, **flags)
    if kind == 1:  # wraps, as in TensorFlow
        return em.cumprod(x, axis, **flags)
    if kind == 2:
        seq = em.cumsum(em.abs(rng.choice(pool)), -1)
        return em.searchsorted(seq, x, side=rng.choice(["left", "right"]))
    return x - rng.choice(pool)


def _program(seed: int, dtype):
    step = _int_step if dtype is em.int32 else _float_step

    def program(a, b):
        rng = random.Random(seed)
        pool = [a, b]
        for _ in range(rng.randint(3, 7)):
            pool.append(step(rng, pool))
        return pool[2:]
    return program


def _inputs(seed: int, dtype):
    rng = np.random.default_rng(seed)
    if dtype is em.int32:
        return [rng.integers(-4, 5, SHAPE).astype(np.int32) for _ in range(2)]
    return [(rng.standard_normal(SHAPE) * 3).astype(np.float32) for _ in range(2)]


def _agree(got: np.ndarray, want: np.ndarray, seed: int):
    assert got.dtype == want.dtype and got.shape == want.shape, seed
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=f"seed {seed}")
        return
    assert np.array_equal(np.isnan(got), np.isnan(want)), (seed, got, want)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)],
                                  want[~finite & ~np.isnan(want)], err_msg=f"seed {seed}")
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-5,
                               err_msg=f"seed {seed}")


@pytest.mark.parametrize("dtype", [em.int32, em.float32], ids=["int32", "float32"])
@pytest.mark.parametrize("seed", SEEDS)
def test_compiled_scan_program_matches_eager(seed, dtype):
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        program = _program(seed, dtype)
        a, b = _inputs(seed, dtype)
        want = program(em.constant(a), em.constant(b))
        static = em.function(program)(a, b)
        spec = em.TensorSpec([None, None], dtype)
        dynamic = em.function(program, input_signature=[spec, spec])(a, b)
    finally:
        em.config.set_fallback(previous)
    assert len(static) == len(dynamic) == len(want)
    for s, d, w in zip(static, dynamic, want):
        _agree(s.numpy(), w.numpy(), seed)
        _agree(d.numpy(), w.numpy(), seed)
