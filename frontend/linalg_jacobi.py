"""Jacobi rotations for em.linalg's spectral factorisations: the symmetric eigenproblem
(`eigh`, two-sided Jacobi) and the SVD (one-sided Jacobi, Hestenes' method). Upstream:
tf.linalg.eigh and tf.linalg.svd, whose CPU kernels are Eigen's SelfAdjointEigenSolver and
LAPACK-style divide and conquer; Jacobi is the method of choice for accuracy (Demmel and
Veselic 1992), and unlike those it is a fixed loop of whole-matrix ops.

Each loop iteration rotates n/2 disjoint index pairs (p, q) at once, the pairs of one round
of a round-robin tournament (Brent and Luk's parallel ordering): a sweep of n-1 rounds (n
rounded up to even; the odd one out is paired with a dummy index) meets every pair once.
The rotations of a round form one matrix J, so a round is a few matmuls:
  eigh: A <- J^T A J, V <- V J   (zeroes A[p, q] for each pair)
  svd:  U <- U J,     V <- V J   (makes columns p and q of U orthogonal)
The round's pairs are one-hot rows picked from a constant table by the loop counter, so the
loop body has no dynamic indexing; batch dims may be dynamic, the matrix dims must be known
while tracing. A pair whose off-diagonal entry (column product) is negligible is not
rotated; the loop stops after a sweep that rotated nothing, or at a cap on sweeps that
covers float64 on graded ill-conditioned spectra (`max_sweeps`).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.linalg_solvers import _batch_zeros, _swap_last
from ember.frontend.tensor import constant
from ember.frontend.while_loop import while_loop


def max_sweeps(n: int, dtype) -> int:
    """The cap on sweeps for n x n. Convergence is quadratic once the eigenvalues (squared
    singular values) are resolved, which takes 5-8 sweeps up to 64 x 64 on random
    matrices; graded ill-conditioned spectra (1 .. 1e-12) converge about a digit per
    sweep until then (measured: 11 sweeps for float64 at 32 x 32). The loop stops earlier,
    after a sweep that rotated nothing."""
    grow = builtins.max(0, math.ceil(math.log2(builtins.max(n, 2))) - 4)
    return (16 if dtype == dtypes.float32 else 24) + 2 * grow


def _epsilon(dtype) -> float:
    return float(np.finfo(np.float32 if dtype == dtypes.float32 else np.float64).eps)


def _tournament(n: int):
    """The rounds of a round-robin over n players (n even): (rounds, n/2) int tables of
    the first and second index of each pair, first < second."""
    players = list(builtins.range(n))
    firsts, seconds = [], []
    for _ in builtins.range(n - 1):
        pairs = [(players[i], players[n - 1 - i]) for i in builtins.range(n // 2)]
        firsts.append([builtins.min(p) for p in pairs])
        seconds.append([builtins.max(p) for p in pairs])
        players = [players[0], players[-1]] + players[1:-1]
    return np.array(firsts, np.int32), np.array(seconds, np.int32)


def _round_selectors(n: int, dtype, round_index):
    """One-hot (n/2, n) matrices of the pairs' first and second indices in round
    `round_index` (a scalar int32 tensor); the dummy index of odd n has a zero row."""
    players = n + n % 2
    firsts, seconds = _tournament(players)
    pick = ops.expand_dims(ops.one_hot(round_index, players - 1, dtype=dtypes.int32), -1)
    p = ops.reduce_sum(constant(firsts) * pick, axis=0)
    q = ops.reduce_sum(constant(seconds) * pick, axis=0)
    return ops.one_hot(p, n, dtype=dtype), ops.one_hot(q, n, dtype=dtype)


def _rotations(alpha, beta, gamma, ep, eq):
    """J for the symmetric 2x2 problems [[alpha, gamma], [gamma, beta]] (..., n/2) of the
    pairs ep/eq: each block [[c, s], [-s, c]] diagonalises its problem (Golub and Van
    Loan's symSchur2), the identity where gamma is zero."""
    dtype = alpha.dtype
    one = ops.cast(1, dtype)
    zero_gamma = ops.equal(gamma, 0)
    theta = (beta - alpha) / (2 * ops.where(zero_gamma, one, gamma))
    # theta^2 may overflow to inf: t is then 0, the rotation the identity, as it should be
    t = ops.where(theta >= 0, one, -one) / (ops.abs(theta) + ops.sqrt(1 + theta * theta))
    t = ops.where(zero_gamma, ops.cast(0, dtype), t)
    c = 1 / ops.sqrt(1 + t * t)
    s = t * c
    c, s = ops.expand_dims(c, -1), ops.expand_dims(s, -1)
    return ops.matmul(ep, c * ep + s * eq, transpose_a=True) + \
        ops.matmul(eq, c * eq - s * ep, transpose_a=True)


def _pick(vector, e):
    """vector[..., idx] for the one-hot rows e (k, n): (..., k)."""
    return ops.reduce_sum(ops.expand_dims(vector, -2) * e, axis=-1)


def _eye(n: int, dtype):
    return ops.cast(ops.equal(ops.expand_dims(ops.range(n), 1), ops.range(n)), dtype)


def _scaled(a):
    """a / max|a| per matrix (1 for a zero matrix) and that scale: the rotations then never
    overflow or underflow on the way."""
    big = ops.reduce_max(ops.abs(a), axis=[-2, -1], keepdims=True)
    scale = ops.where(ops.equal(big, 0), ops.ones_like(big), big)
    return a / scale, scale


def _rounds(n: int, dtype, body, start: tuple) -> tuple:
    """Runs `body(ep, eq, *state)` -> (state, rotated) round after round until a whole
    sweep rotated nothing (`rotated` is a scalar bool over the batch) or `max_sweeps`."""
    players = n + n % 2
    if n < 2:
        return start
    per_sweep = players - 1
    zero = constant(0, dtypes.int32)

    def cond(k, r, quiet, *_):
        return ops.logical_and(k < max_sweeps(n, dtype) * per_sweep, quiet < per_sweep)

    def step(k, r, quiet, *state):
        ep, eq = _round_selectors(n, dtype, r)
        following = ops.where(ops.equal(r, per_sweep - 1), zero, r + 1)
        *state, rotated = body(ep, eq, *state)
        return (k + 1, following, ops.where(rotated, zero, quiet + 1)) + tuple(state)
    return while_loop(cond, step, (zero, zero, zero) + tuple(start))[3:]


def _ascending_permutation(values, descending=False):
    """The permutation matrix P (..., n, n) with values @ P sorted (stable): P[i, r] = 1
    when element i goes to place r. Built from comparisons, so it needs no sort op."""
    n = values.shape[-1]
    vi, vj = ops.expand_dims(values, -1), ops.expand_dims(values, -2)
    before = ops.greater(vi, vj) if descending else ops.less(vi, vj)
    index = ops.range(n)
    tie = ops.logical_and(ops.equal(vi, vj), ops.less(ops.expand_dims(index, 1), index))
    # place of i = how many j go before it: those strictly before, and ties with j < i
    place = ops.reduce_sum(ops.cast(ops.logical_or(_swap_last(before), _swap_last(tie)),
                                    dtypes.int32), axis=-1)
    return ops.one_hot(place, n, dtype=values.dtype)


def _row_times(v, m):
    return ops.squeeze(ops.matmul(ops.expand_dims(v, -2), m), [-2])


def _negligible(gamma, alpha, beta, floor, relative: float):
    """Pairs not worth a rotation: gamma below `relative` of sqrt(|alpha beta|) (Demmel and
    Veselic's criterion), or below `floor` (values at rounding level of the whole matrix,
    which would otherwise keep rotating pairs whose diagonal is ~0)."""
    small = ops.less_equal(ops.abs(gamma), relative * ops.sqrt(ops.abs(alpha * beta)))
    return ops.logical_or(small, ops.less_equal(ops.abs(gamma), floor))


def _frobenius(a):
    """||a||_F per matrix, shaped (..., 1) to broadcast over a round's pairs."""
    return ops.sqrt(ops.reduce_sum(a * a, axis=[-2, -1], keepdims=True))[..., 0]


def symmetric_eigen(a, vectors: bool):
    """(eigenvalues ascending, eigenvectors as columns or None) of the symmetric matrices
    `a` (..., n, n), both triangles read."""
    n, dtype = a.shape[-1], a.dtype
    a, scale = _scaled(a)
    eye = _eye(n, dtype) + _batch_zeros(a)
    eps = _epsilon(dtype)
    floor = eps * _frobenius(a)

    def body(ep, eq, m, v):
        d = ops.reduce_sum(m * _eye(n, dtype), axis=-1)
        alpha, beta = _pick(d, ep), _pick(d, eq)
        gamma = ops.reduce_sum(ops.matmul(ep + _batch_zeros(m), m) * eq, axis=-1)
        skip = _negligible(gamma, alpha, beta, floor, eps)
        j = _rotations(alpha, beta, ops.where(skip, ops.zeros_like(gamma), gamma), ep, eq)
        m = ops.matmul(j, ops.matmul(m, j), transpose_a=True)
        rotated = ops.reduce_any(ops.logical_not(skip))
        return m, (ops.matmul(v, j) if vectors else v), rotated

    m, v = _rounds(n, dtype, body, (a, eye))
    values = ops.reduce_sum(m * _eye(n, dtype), axis=-1)
    order = _ascending_permutation(values)
    values = _row_times(values, order) * ops.squeeze(scale, [-1])
    return values, (ops.matmul(v, order) if vectors else None)


def one_sided_svd(a, vectors: bool):
    """(s descending, U (..., m, n) with zero columns where s is 0, V (..., n, n)) of
    `a` (..., m, n) with m >= n, by one-sided Jacobi; U and V are None unless `vectors`."""
    rows, n, dtype = a.shape[-2], a.shape[-1], a.dtype
    a, scale = _scaled(a)
    eye = _eye(n, dtype) + ops.reduce_sum(_batch_zeros(a), -1, keepdims=True)
    eps = _epsilon(dtype)
    floor = (eps * _frobenius(a)) ** 2

    def body(ep, eq, u, v):
        norms = ops.reduce_sum(u * u, axis=-2)
        alpha, beta = _pick(norms, ep), _pick(norms, eq)
        gamma = ops.reduce_sum(ops.matmul(u, ep, transpose_b=True) *
                               ops.matmul(u, eq, transpose_b=True), axis=-2)
        skip = _negligible(gamma, alpha, beta, floor, eps * math.sqrt(rows))
        j = _rotations(alpha, beta, ops.where(skip, ops.zeros_like(gamma), gamma), ep, eq)
        rotated = ops.reduce_any(ops.logical_not(skip))
        return ops.matmul(u, j), (ops.matmul(v, j) if vectors else v), rotated

    u, v = _rounds(n, dtype, body, (a, eye))
    s = ops.sqrt(ops.reduce_sum(u * u, axis=-2))
    order = _ascending_permutation(s, descending=True)
    s_sorted = _row_times(s, order)
    if not vectors:
        return s_sorted * ops.squeeze(scale, [-1]), None, None
    safe = ops.where(ops.equal(s, 0), ops.ones_like(s), s)
    u = ops.where(ops.equal(ops.expand_dims(s, -2), 0), ops.zeros_like(u),
                  u / ops.expand_dims(safe, -2))
    return s_sorted * ops.squeeze(scale, [-1]), ops.matmul(u, order), ops.matmul(v, order)
