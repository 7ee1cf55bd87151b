"""Slices that read nothing compile: MLIR's verifier rejects any offset into a dim of size 0,
so the lowering makes the empty result without reading (found by the issue-13 ops fuzz:
`em.linalg.diag_part` of a 0x3 matrix slices `[..., :0, :0]`)."""

import numpy as np
import pytest

import ember as em

CASES = [
    ((0, 3), lambda a: a[..., :0, :0]),
    ((0, 3), lambda a: a[:, 1:]),
    ((2, 3), lambda a: a[1:1, :]),
    ((2, 3), lambda a: a[:, 3:, None]),
    ((2, 3), lambda a: a[::-1, 2:2]),
    ((3, 0, 2), lambda a: a[1, :, ::-1]),
    ((0, 3), em.linalg.diag_part),
]


@pytest.mark.parametrize("shape, fn", CASES)
def test_empty_slice_compiles_and_agrees_with_eager(shape, fn):
    x = em.constant(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        compiled = em.function(fn)(x).numpy()
    finally:
        em.config.set_fallback(previous)
    eager = fn(x).numpy()
    assert compiled.shape == eager.shape and compiled.dtype == eager.dtype
    assert compiled.size == 0


@pytest.mark.parametrize("shape, axis", [((0, 3), -1), ((3, 0, 2), 0), ((3, 0, 2), -1)])
def test_stacking_empty_slices_compiles(shape, axis):
    x = em.constant(np.zeros(shape, np.int32))

    def fn(a):
        return em.stack(em.unstack(a, axis=axis), axis=1 if len(shape) > 1 else 0)
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        compiled = em.function(fn)(x).numpy()
    finally:
        em.config.set_fallback(previous)
    assert compiled.shape == fn(x).numpy().shape
