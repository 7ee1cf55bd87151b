"""Shaping and em.linalg compositions: eager against numpy, and compiled against eager with
no fallback to the interpreter (static shapes: these need their sizes while tracing)."""

import numpy as np
import pytest

import ember as em

X = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
I = np.array([[1, 2], [3, 4]], np.int32)

# name -> (function of tensors, numpy oracle, operands)
CASES = {
    "eye": (lambda: em.eye(3, 2, dtype=em.int32), lambda: np.eye(3, 2, dtype=np.int32), []),
    "eye_batch": (lambda: em.eye(2, batch_shape=[3]), lambda: np.broadcast_to(np.eye(2), (
        3, 2, 2)).astype(np.float32), []),
    "linspace": (lambda: em.linspace(-1.0, 2.0, 7),
                 lambda: np.linspace(-1, 2, 7).astype(np.float32), []),
    "linspace_one": (lambda: em.linspace(3.0, 9.0, 1), lambda: np.array([3.0], np.float32),
                     []),
    "tile": (lambda x: em.tile(x, [2, 3]), lambda x: np.tile(x, [2, 3]), [I]),
    "repeat_axis": (lambda x: em.repeat(x, 3, axis=0), lambda x: np.repeat(x, 3, axis=0), [I]),
    "repeat_flat": (lambda x: em.repeat(x, 2), lambda x: np.repeat(x, 2), [I]),
    "unstack": (lambda x: em.stack(em.unstack(x, axis=1)[1:3]), lambda x: x.T[1:3], [X]),
    "split": (lambda x: em.split(x, [1, -1, 2], axis=1)[1], lambda x: x[:, 1:2], [X]),
    "split_equal": (lambda x: em.split(x, 2, axis=1)[1], lambda x: x[:, 2:], [X]),
    "reverse": (lambda x: em.reverse(x, [0, 1]), lambda x: x[::-1, ::-1], [X]),
    "roll": (lambda x: em.roll(x, [1, -1], [0, 1]), lambda x: np.roll(x, [1, -1], [0, 1]),
             [X]),
    "meshgrid_xy": (lambda a, b: em.meshgrid(a, b)[0], lambda a, b: np.meshgrid(a, b)[0],
                    [np.arange(3, dtype=np.float32), np.arange(2, dtype=np.float32)]),
    "meshgrid_ij": (lambda a, b: em.meshgrid(a, b, indexing="ij")[1],
                    lambda a, b: np.meshgrid(a, b, indexing="ij")[1],
                    [np.arange(3, dtype=np.float32), np.arange(2, dtype=np.float32)]),
    "matvec": (em.linalg.matvec, lambda a, v: a @ v, [X, np.arange(4, dtype=np.float32)]),
    "diag": (em.linalg.diag, np.diag, [np.array([1.0, -2.0, 3.0], np.float32)]),
    "diag_part": (em.linalg.diag_part, np.diagonal, [X]),
    "trace": (em.linalg.trace, np.trace, [X]),
    "band_part": (lambda x: em.linalg.band_part(x, 1, 0),
                  lambda x: np.tril(x) - np.tril(x, -2), [X]),
    "band_part_upper": (lambda x: em.linalg.band_part(x, 0, -1), np.triu, [X]),
    "norm": (em.norm, lambda x: np.float32(np.linalg.norm(x)), [X]),
    "norm_1": (lambda x: em.linalg.norm(x, ord=1, axis=1), lambda x: np.abs(x).sum(1), [X]),
    "norm_inf": (lambda x: em.linalg.norm(x, ord=np.inf, axis=0),
                 lambda x: np.abs(x).max(0), [X]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_matches_numpy(name):
    fn, oracle, arrays = CASES[name]
    got = fn(*[em.constant(a) for a in arrays])
    want = np.asarray(oracle(*arrays))
    assert got.numpy().dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_matches_eager(name):
    fn, _, arrays = CASES[name]
    tensors = [em.constant(a) for a in arrays]
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        compiled = em.function(fn)(*tensors)
    finally:
        em.config.set_fallback(previous)
    np.testing.assert_allclose(compiled.numpy(), fn(*tensors).numpy(), rtol=1e-6)


def test_sizes_unknown_while_tracing_are_errors_that_say_so():
    spec = [em.TensorSpec([None, 4], em.float32)]
    with pytest.raises(ValueError, match="needs dim 0 of .* known while tracing"):
        em.function(lambda x: em.unstack(x), input_signature=spec).get_concrete_function()
    with pytest.raises(ValueError, match="does not split into 3 equal parts"):
        em.split(em.constant(X), 3, axis=1)
