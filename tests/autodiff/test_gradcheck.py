"""Gradient checks of every differentiable op against central finite differences (float64;
complex128 for the complex ops, the gradient being dL/d re + i dL/d im as in TensorFlow).

Each case of gradcheck_cases.CASES is checked eagerly against finite differences, and the
same tape code compiled in `em.function` (cases grouped several to a function, to keep the
compile cost down) against the eager gradients; cases with a signature are also compiled
with their None-dim input_signature. The coverage test fails for a differentiable op that
no case records.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from gradcheck_cases import CASES

import ember as em
from ember.dialects.ember.base import REGISTRY
from ember.frontend.autodiff import registry

BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "case names must be unique"
GROUP = 12  # cases per compiled function
# Variants compiled through the same ops as a compiled case (another attribute setting);
# they are checked eagerly only, to keep the compile time of this file down.
EAGER_ONLY = {
    "conv2d_(1, 1)(1, 1)SAME", "conv2d_(2, 3)(1, 1)VALID", "depthwise_(1, 1)(1, 1)VALID",
    "depthwise_(2, 2)(1, 1)SAME", "max_pool_(2, 2)(2, 2)VALID", "avg_pool_(2, 2)(2, 2)VALID",
    "max_pool_(3, 3)(1, 2)VALID", "linalg_inv_adjoint", "linalg_solve",
    "linalg_triangular_solve_00", "linalg_triangular_solve_01", "linalg_triangular_solve_11",
    "segment_min", "unsorted_segment_min", "norm_1_-1", "norm_inf_0", "reduce_sum_-1_False",
    "reduce_mean_-1_False", "reduce_max_-1_False", "reduce_min_-1_False", "cumsum_01",
    "cumsum_10", "cumprod_01", "cumprod_10", "rfft_6", "irfft_6", "matmul_01", "matmul_10",
    "conv2d_(1, 1)(1, 1)VALID", "conv2d_(1, 1)(2, 1)SAME", "depthwise_(1, 1)(1, 1)SAME",
    "segment_mean", "segment_max", "unsorted_segment_sum", "unsorted_segment_prod",
    "max_pool_(3, 2)(1, 1)SAME", "avg_pool_(3, 2)(1, 1)SAME", "norm_fro_[0, 1]",
    "reduce_prod_1_True", "reduce_max_1_True", "reduce_min_1_True"}
COMPILED = [c for c in CASES if c.name not in EAGER_ONLY]
FD_POINTS = 120  # elements per input checked by finite differences (all if fewer)


class SpecTape(em.GradientTape):
    """A tape that also notes the spec of every op it records."""

    def __init__(self, specs: set):
        super().__init__()
        self._specs = specs

    def _record_op(self, spec, operands, attrs, outputs):
        if any(id(t) in self._live for t in operands):
            self._specs.add(spec)
        super()._record_op(spec, operands, attrs, outputs)


def weights(case):
    """Fixed random weights shaped like the case's result (complex for complex results)."""
    out = case.fn(*[em.constant(x) for x in case.inputs])
    rng = np.random.default_rng(len(case.name))
    w = rng.standard_normal(out.shape.as_list())
    if out.dtype.is_complex:
        w = w + 1j * rng.standard_normal(out.shape.as_list())
    return w


def loss(out, w):
    total = em.reduce_sum(out * em.constant(w, out.dtype))
    return em.math.real(total) if out.dtype.is_complex else total


def gradients(case, w, xs, specs):
    """The tape's gradients of loss(case.fn(*xs)) with respect to xs (eager or traced)."""
    with SpecTape(specs) as tape:
        tape.watch(xs)
        target = loss(case.fn(*xs), w)
    return tape.gradient(target, list(xs))


@functools.lru_cache(maxsize=None)
def eager(name):
    """(weights, eager gradients as numpy, specs recorded) of a case."""
    case = BY_NAME[name]
    w = weights(case)
    specs: set = set()
    grads = gradients(case, w, [em.constant(x) for x in case.inputs], specs)
    return w, [None if g is None else g.numpy() for g in grads], specs


def fd_points(x, grad, name):
    """The indices of x to check: all, or for a big input its nonzero gradient entries (at
    most 40) and a random sample."""
    every = list(np.ndindex(x.shape))
    if len(every) <= FD_POINTS:
        return every
    rng = np.random.default_rng(len(name))
    nonzero = [tuple(i) for i in np.argwhere(grad != 0)[:40]]
    sample = [every[i] for i in rng.choice(len(every), FD_POINTS - len(nonzero), False)]
    return list(dict.fromkeys(nonzero + sample))  # each once


def finite_differences(case, w, points, eps=1e-6):
    """The central differences of the loss at `points` (one list of indices per input)."""
    def f(xs):
        out = case.fn(*[em.constant(x) for x in xs]).numpy()
        return float(np.sum(np.real(out * w)))
    grads = []
    for i, x in enumerate(case.inputs):
        g = np.zeros_like(x)
        for idx in points[i]:
            for step in ((1,) if not np.iscomplexobj(x) else (1, 1j)):
                up = [v.copy() for v in case.inputs]
                down = [v.copy() for v in case.inputs]
                up[i][idx] += eps * step
                down[i][idx] -= eps * step
                g[idx] += step * (f(up) - f(down)) / (2 * eps)
        grads.append(g)
    return grads


def assert_close(actual, expected, what, tol):
    scale = 1 + np.max(np.abs(expected), initial=0)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale, err_msg=what)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_eager_matches_finite_differences(name):
    case = BY_NAME[name]
    w, grads, _ = eager(name)
    assert all(g is not None for g in grads), f"{name}: an input got no gradient"
    points = [fd_points(x, g, name) for x, g in zip(case.inputs, grads)]
    for i, (g, e) in enumerate(zip(grads, finite_differences(case, w, points))):
        assert g.shape == e.shape and g.dtype == e.dtype, (name, i, g.shape, g.dtype)
        at = tuple(np.array(points[i]).T)
        assert_close(g[at], e[at], f"{name}: input {i}", 1e-5)


def _compiled(cases, signature=None):
    """One em.function computing the gradients of every case in `cases`."""
    ws = [eager(c.name)[0] for c in cases]
    specs: set = set()

    def all_gradients(flat):
        out, at = [], 0
        for c, w in zip(cases, ws):
            xs = list(flat[at:at + len(c.inputs)])
            at += len(c.inputs)
            out.extend(gradients(c, w, xs, specs))
        return out
    fn = em.function(all_gradients, input_signature=None if signature is None else [signature])
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        grads = fn([em.constant(x) for c in cases for x in c.inputs])
    return [g.numpy() for g in grads], specs


@pytest.mark.parametrize("start", range(0, len(COMPILED), GROUP))
def test_compiled_matches_eager(start):
    cases = COMPILED[start:start + GROUP]
    got, _ = _compiled(cases)
    expected = [g for c in cases for g in eager(c.name)[1]]
    names = [f"{c.name}: input {i}" for c in cases for i in range(len(c.inputs))]
    for g, e, what in zip(got, expected, names):
        assert g.shape == e.shape, what
        assert_close(g, e, what, 1e-6)


SIGNED = [c for c in CASES if c.signature is not None]


@functools.lru_cache(maxsize=None)
def dynamic(name):
    case = BY_NAME[name]
    return _compiled([case], case.signature)


@pytest.mark.parametrize("name", [c.name for c in SIGNED])
def test_compiled_with_none_dims_matches_eager(name):
    got, _ = dynamic(name)
    for i, (g, e) in enumerate(zip(got, eager(name)[1])):
        assert_close(g, e, f"{name}: input {i}", 1e-6)


def test_every_differentiable_op_has_a_gradient_check():
    rules, _ = registry.coverage()
    checked = set()
    for c in CASES:
        checked |= eager(c.name)[2]
    for c in SIGNED:
        checked |= dynamic(c.name)[1]
    missing = sorted(s.name for s in REGISTRY.values() if s in rules and s not in checked)
    assert not missing, f"no gradient check reaches {missing}: add cases to gradcheck_cases.py"


LOW_PRECISION = ["conv2d_(2, 2)(1, 1)SAME", "depthwise_(1, 1)(2, 1)SAME",
                 "max_pool_(3, 3)(2, 2)SAME", "avg_pool_(3, 3)(2, 2)SAME", "digamma",
                 "reduce_prod_[0, 2]_False", "cumprod_11", "sort_ascending",
                 "tensor_scatter_max", "segment_prod", "top_k"]


@pytest.mark.parametrize("dtype", [em.float32, em.float16, em.bfloat16], ids=str)
@pytest.mark.parametrize("name", LOW_PRECISION)
def test_low_precision_gradients_match_float64(name, dtype):
    """The rules that make constants, pads or casts of their own (-inf padding, window
    counts, series coefficients) in the narrower float dtypes, eagerly."""
    case = BY_NAME[name]
    w, expected, _ = eager(name)
    xs = [em.cast(em.constant(x), dtype) for x in case.inputs]
    with em.GradientTape() as tape:
        tape.watch(xs)
        out = case.fn(*xs)
        target = em.reduce_sum(out * em.cast(em.constant(w), out.dtype))
    tol = {em.float32: 1e-4, em.float16: 2e-2, em.bfloat16: 8e-2}[dtype]
    for i, (g, e) in enumerate(zip(tape.gradient(target, xs), expected)):
        assert g.dtype == dtype
        assert_close(g.numpy().astype(np.float64), e, f"{name}: input {i}", tol)
