"""Gradients of a representative set of ops and composites compared with TensorFlow's.

Ember's API follows TensorFlow's, so each case is one function of the module (`em` or
`tf`) and the inputs; both get the same float64 (complex128) inputs and the same output
weights, and their tape gradients must agree. TensorFlow's CPU kernels do not differentiate
dilated conv2d (Conv2DBackpropInput refuses dilation rates > 1), nor rfft/irfft whose
fft_length crops or pads: those are checked against finite differences in test_gradcheck.py.

Skipped where TensorFlow is not importable. To run it with a bench venv's TensorFlow (whose
editable `ember` may map to another worktree), put first on PYTHONPATH a directory whose
`ember/` holds symlinks to this worktree's ember/* and its dialects, frontend, passes,
backends, runtime and tools, and one holding pytest, and run from outside the worktree:
    cd /tmp && PYTHONPATH=/tmp/ember_path:/tmp/pytest_path VENV/bin/python -m pytest \
        WORKTREE/tests/autodiff/test_against_tensorflow.py
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import ember as em

tf = pytest.importorskip("tensorflow")


def _normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def _distinct(*shape):
    return lambda rng: rng.permutation(np.arange(int(np.prod(shape)))).reshape(shape) * 0.37


def _cplx(*shape):
    return lambda rng: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _near_eye(n):
    return lambda rng: np.eye(n) * 2 + rng.standard_normal((n, n)) * 0.3


def _spd(m, x):
    return m.matmul(x, x, transpose_b=True) + 3 * m.eye(3, dtype=m.float64)


CASES = {
    "matmul_transposed": (lambda m, a, b: m.matmul(a, b, transpose_a=True),
                          _normal(4, 3), _normal(4, 2)),
    "conv2d_same_stride2": (lambda m, x, f: m.nn.conv2d(x, f, 2, "SAME"),
                            _normal(2, 7, 6, 3), _normal(3, 3, 3, 4)),
    "conv2d_valid_strided": (lambda m, x, f: m.nn.conv2d(x, f, [2, 3], "VALID"),
                             _normal(1, 7, 7, 2), _normal(2, 3, 2, 3)),
    "conv2d_explicit": (lambda m, x, f: m.nn.conv2d(x, f, 1, [[0, 0], [1, 2], [2, 0], [0, 0]]),
                        _normal(1, 5, 5, 2), _normal(3, 3, 2, 2)),
    "depthwise_same_stride2": (lambda m, x, f: m.nn.depthwise_conv2d(x, f, [1, 2, 2, 1],
                                                                     "SAME"),
                               _normal(2, 6, 5, 3), _normal(3, 2, 3, 2)),
    "max_pool_same_overlapping": (lambda m, x: m.nn.max_pool2d(x, 3, 2, "SAME"),
                                  _distinct(2, 7, 6, 2)),
    "max_pool_ties": (lambda m, x: m.nn.max_pool2d(x, 3, 2, "SAME"),
                      lambda rng: np.round(rng.standard_normal((2, 7, 6, 2)) * 0.7)),
    "max_pool_ties_valid": (lambda m, x: m.nn.max_pool2d(x, [2, 3], [1, 2], "VALID"),
                            lambda rng: np.round(rng.standard_normal((1, 5, 7, 2)) * 0.5)),
    "reduce_max_ties": (lambda m, x: m.reduce_max(x, axis=1),
                        lambda rng: np.round(rng.standard_normal((3, 5)) * 0.5)),
    "avg_pool_same": (lambda m, x: m.nn.avg_pool2d(x, 3, 2, "SAME"), _normal(2, 7, 6, 2)),
    "reduce_prod_with_zero": (lambda m, x: m.reduce_prod(x * np.array([1., 0., 1.]), axis=1),
                              _normal(2, 3)),
    "cumprod_exclusive_reverse": (lambda m, x: m.math.cumprod(x, 1, exclusive=True,
                                                              reverse=True), _normal(2, 4)),
    "cumsum_reverse": (lambda m, x: m.math.cumsum(x, 0, reverse=True), _normal(3, 2)),
    "digamma": (lambda m, x: m.math.digamma(x), lambda rng: rng.uniform(-3.8, 9, (6,))),
    "lgamma": (lambda m, x: m.math.lgamma(x), lambda rng: rng.uniform(0.2, 9, (6,))),
    "tensor_scatter_update": (lambda m, t, u: m.tensor_scatter_nd_update(t, [[1], [3]], u),
                              _normal(5, 2), _normal(2, 2)),
    "tensor_scatter_max": (lambda m, t, u: m.tensor_scatter_nd_max(t, [[1], [3], [1]], u),
                           _distinct(5, 2), _distinct(3, 2)),
    "sort_descending": (lambda m, x: m.sort(x, direction="DESCENDING"), _distinct(3, 5)),
    "top_k": (lambda m, x: m.math.top_k(x, 2).values, _distinct(3, 6)),
    "unsorted_segment_prod_zero": (lambda m, x: m.math.unsorted_segment_prod(
        x * np.array([[1., 0.], [1., 1.], [0., 1.]]), [1, 1, 0], 2), _normal(3, 2)),
    "unsorted_segment_max": (lambda m, x: m.math.unsorted_segment_max(x, [1, 0, 1, 0], 2),
                             _distinct(4, 3)),
    "segment_mean": (lambda m, x: m.math.segment_mean(x, [0, 0, 2]), _normal(3, 2)),
    "softmax_cross_entropy": (lambda m, x, y: m.nn.softmax_cross_entropy_with_logits(
        m.nn.softmax(y), x), _normal(3, 4), _normal(3, 4)),
    "sparse_softmax_cross_entropy": (lambda m, x: m.nn.sparse_softmax_cross_entropy_with_logits(
        [1, 0, 3], x), _normal(3, 4)),
    "gather_duplicates": (lambda m, x: m.gather(x, [2, 0, 2], axis=1), _normal(2, 3)),
    "gather_nd": (lambda m, x: m.gather_nd(x, [[1, 0], [1, 0]]), _normal(2, 3, 2)),
    "pad_reflect": (lambda m, x: m.pad(x, [[1, 2], [2, 1]], mode="REFLECT"), _normal(3, 4)),
    "strided_slice": (lambda m, x: x[1:, ::-2], _normal(3, 5)),
    "einsum": (lambda m, a, b: m.einsum("bij,jk->bik", a, b), _normal(2, 3, 4), _normal(4, 2)),
    "norm": (lambda m, x: m.norm(x, axis=-1), _normal(3, 4)),
    "log_softmax": (lambda m, x: m.nn.log_softmax(x, axis=0), _normal(3, 4)),
    "maximum_broadcast": (lambda m, a, b: m.maximum(a, b), _normal(3, 4), _normal(4)),
    "pow": (lambda m, a, b: m.pow(a, b), lambda rng: rng.uniform(.5, 2, (3,)), _normal(3)),
    "inv": (lambda m, a: m.linalg.inv(a), _near_eye(3)),
    "solve_adjoint": (lambda m, a, b: m.linalg.solve(a, b, adjoint=True), _near_eye(3),
                      _normal(3, 2)),
    "det": (lambda m, a: m.linalg.det(a), _near_eye(3)),
    "slogdet": (lambda m, a: m.linalg.slogdet(a)[1], _near_eye(3)),
    "cholesky": (lambda m, x: m.linalg.cholesky(_spd(m, x)), _normal(3, 3)),
    "triangular_solve_upper": (lambda m, a, b: m.linalg.triangular_solve(a, b, lower=False),
                               _near_eye(3), _normal(3, 2)),
    "complex_abs": (lambda m, z: m.abs(z), _cplx(2, 3)),
    "complex_angle": (lambda m, z: m.math.angle(z), _cplx(2, 3)),
    "complex_mul_conj": (lambda m, a, b: a * m.math.conj(b), _cplx(3), _cplx(3)),
    "complex_from_parts": (lambda m, re, im: m.complex(re, im) * m.complex(im, re),
                           _normal(3), _normal(3)),
    "fft": (lambda m, z: m.signal.fft(z), _cplx(2, 5)),
    "ifft": (lambda m, z: m.signal.ifft(z), _cplx(2, 4)),
    # TensorFlow's rfft/irfft gradients fail when fft_length crops or pads the input (their
    # shapes mismatch), so these use the lengths that fit
    "rfft_even": (lambda m, x: m.signal.rfft(x, [6]), _normal(2, 6)),
    "rfft_odd": (lambda m, x: m.signal.rfft(x), _normal(2, 5)),
    "irfft_even": (lambda m, z: m.signal.irfft(z), _cplx(2, 4)),
    "irfft_odd": (lambda m, z: m.signal.irfft(z, [7]), _cplx(2, 4)),
}


def _gradients(m, fn, xs, w):
    xs = [m.constant(x) for x in xs]
    with m.GradientTape() as tape:
        tape.watch(xs)
        out = fn(m, *xs)
        total = m.reduce_sum(out * m.constant(w, dtype=out.dtype))
        target = m.math.real(total) if out.dtype.is_complex else total
    return [g.numpy() for g in tape.gradient(target, xs)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_tensorflow(name):
    fn, *makers = CASES[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    xs = [make(rng) for make in makers]
    out = fn(tf, *[tf.constant(x) for x in xs]).numpy()
    w = rng.standard_normal(out.shape)
    if np.iscomplexobj(out):
        w = w + 1j * rng.standard_normal(out.shape)
    np.testing.assert_allclose(fn(em, *[em.constant(x) for x in xs]).numpy(), out,
                               rtol=1e-8, atol=1e-8, err_msg=f"{name}: forward")
    expected = _gradients(tf, fn, xs, w)
    for i, (g, e) in enumerate(zip(_gradients(em, fn, xs, w), expected)):
        np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-7, err_msg=f"{name}: input {i}")
