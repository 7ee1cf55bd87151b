"""The table of gradient checks: one Case per op setting, each a function of its
differentiable inputs (float64, or complex128 for the complex ops) with the rest fixed.

Inputs are drawn from a generator seeded by the case's name, away from kinks (ties,
zeros of abs/sqrt, poles) so central differences are accurate.
"""

from __future__ import annotations

import dataclasses
import zlib
from typing import Callable

import numpy as np

import ember as em


@dataclasses.dataclass
class Case:
    name: str
    fn: Callable
    inputs: list  # numpy arrays, the differentiable inputs
    signature: list | None = None  # a None-dim input_signature to check compiled too


CASES: list[Case] = []


def _rng(name: str):
    return np.random.default_rng(zlib.crc32(name.encode()))


def case(name, fn, *makers, signature=None):
    rng = _rng(name)
    CASES.append(Case(name, fn, [m(rng) for m in makers], signature))


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def uniform(lo, hi, *shape):
    return lambda rng: rng.uniform(lo, hi, shape)


def away(*shape):
    """Normal values at least 0.2 from zero (abs, sign-sensitive ops)."""
    return lambda rng: (lambda v: v + np.sign(v) * 0.2)(rng.standard_normal(shape))


def cplx(*shape):
    return lambda rng: rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def distinct(*shape):
    """A permutation of well-separated values (sort, max, pooling: no ties)."""
    return lambda rng: rng.permutation(np.arange(int(np.prod(shape)))).reshape(shape) * 0.37


def spec(shape):
    return em.TensorSpec(shape, em.float64)


# -- elementwise --------------------------------------------------------------------------

for _name, _fn, _maker in [
        ("neg", em.negative, normal(3, 4)), ("abs", em.abs, away(3, 4)),
        ("square", em.square, normal(3, 4)), ("relu", em.nn.relu, away(3, 4)),
        ("exp", em.exp, normal(3, 4)), ("expm1", em.math.expm1, normal(3, 4)),
        ("log", em.math.log, uniform(0.5, 3, 3, 4)), ("log1p", em.math.log1p, uniform(-.5, 3, 4)),
        ("sqrt", em.sqrt, uniform(0.5, 3, 3, 4)), ("rsqrt", em.math.rsqrt, uniform(.5, 3, 4)),
        ("tanh", em.tanh, normal(3, 4)), ("sigmoid", em.sigmoid, normal(3, 4)),
        ("erf", em.math.erf, normal(3, 4)), ("erfc", em.math.erfc, normal(3, 4)),
        ("sin", em.sin, normal(3, 4)), ("cos", em.cos, normal(3, 4)),
        ("tan", em.tan, uniform(-1.2, 1.2, 3, 4)), ("asin", em.asin, uniform(-.9, .9, 3, 4)),
        ("acos", em.acos, uniform(-.9, .9, 3, 4)), ("atan", em.atan, normal(3, 4)),
        ("sinh", em.sinh, normal(3, 4)), ("cosh", em.cosh, normal(3, 4)),
        ("asinh", em.asinh, normal(3, 4)), ("acosh", em.acosh, uniform(1.2, 4, 3, 4)),
        ("atanh", em.atanh, uniform(-.9, .9, 3, 4)),
        ("lgamma", em.math.lgamma, uniform(0.3, 6, 3, 4)),
        ("lgamma_negative", em.math.lgamma, uniform(-2.8, -2.2, 5)),
        ("digamma", em.math.digamma, uniform(0.2, 12, 3, 4)),
        ("digamma_negative", em.math.digamma, uniform(-3.8, -3.2, 5)),
        ("abs_complex", em.abs, cplx(3, 2)), ("exp_complex", em.exp, cplx(3, 2)),
        ("square_complex", em.square, cplx(4)), ("log_complex", em.math.log, cplx(4)),
        ("sin_complex", em.sin, cplx(4)), ("tanh_complex", em.tanh, cplx(4)),
        ("cast_to_complex", lambda x: em.cast(x, em.complex128), normal(2, 3)),
        ("cast_from_complex", lambda x: em.cast(x, em.float64) * 1.0, cplx(2, 3))]:
    case(_name, _fn, _maker)

case("fill", lambda v: em.fill([2, 3], v), normal())
case("add_broadcast", em.add, normal(3, 1, 4), normal(5, 1), signature=[spec([None, 1, 4]),
                                                                        spec([5, 1])])
case("sub_broadcast", em.subtract, normal(4), normal(3, 4))
case("mul_broadcast", em.multiply, normal(2, 3, 4), normal(3, 1))
case("div_broadcast", em.divide, normal(2, 3), away(3))
case("mod", em.math.floormod, uniform(1.5, 2.1, 2, 3), uniform(1.1, 1.4, 3))
case("pow", em.pow, uniform(0.5, 2, 2, 3), normal(3))
case("atan2", em.atan2, normal(3, 4), away(4))  # every quadrant; x broadcast
case("maximum", em.maximum, normal(3, 4), normal(4))
case("minimum", em.minimum, normal(3, 4), normal(3, 1))
case("mul_complex", em.multiply, cplx(2, 3), cplx(3))
case("div_complex", em.divide, cplx(2, 3), cplx(3))
case("pow_complex", em.pow, cplx(3), cplx(3))
case("select", lambda a, b: em.where(np.array([[True, False, True]]), a, b), normal(2, 3),
     normal(2, 1))

# -- structure ----------------------------------------------------------------------------

for _ta in (False, True):
    for _tb in (False, True):
        case(f"matmul_{_ta:d}{_tb:d}", lambda a, b, ta=_ta, tb=_tb: em.matmul(
            a, b, transpose_a=ta, transpose_b=tb), normal(*((4, 3) if _ta else (3, 4))),
            normal(*((2, 4) if _tb else (4, 2))))
case("matmul_batch_broadcast", em.matmul, normal(2, 3, 4), normal(4, 5),
     signature=[spec([None, 3, 4]), spec([4, 5])])
case("matmul_complex", lambda a, b: em.matmul(a, b, adjoint_b=True), cplx(2, 3), cplx(4, 3))
case("transpose", lambda x: em.transpose(x, [2, 0, 1]), normal(2, 3, 4))
case("reshape", lambda x: em.reshape(x, [3, 8]), normal(2, 3, 4))
case("reshape_dynamic", lambda x: em.reshape(x, em.shape(x)[::-1]), normal(2, 3),
     signature=[spec([None, 3])])
case("expand_squeeze", lambda x: em.squeeze(em.expand_dims(x, 1), [0]), normal(1, 3))
case("broadcast_to", lambda x: em.broadcast_to(x, [2, 3, 4]), normal(3, 1))
case("broadcast_to_dynamic", lambda x, y: em.broadcast_to(x, em.shape(y)) * y, normal(1, 4),
     normal(3, 4), signature=[spec([1, 4]), spec([None, 4])])
case("concat", lambda a, b, c: em.concat([a, b, c], axis=1), normal(2, 1), normal(2, 3),
     normal(2, 2))

# -- reductions, scans --------------------------------------------------------------------

for _op, _maker in [(em.reduce_sum, normal), (em.reduce_mean, normal),
                    (em.reduce_max, distinct), (em.reduce_min, distinct),
                    (em.reduce_prod, uniform)]:
    for _axis, _keep in [(None, False), (1, True), ([0, 2], False), (-1, False)]:
        _in = _maker(0.5, 1.5, 2, 3, 4) if _maker is uniform else _maker(2, 3, 4)
        case(f"{_op.__name__}_{_axis}_{_keep}", lambda x, op=_op, a=_axis, k=_keep: op(
            x, axis=a, keepdims=k), _in)
case("reduce_sum_dynamic", lambda x: em.reduce_sum(x, axis=1), normal(2, 3),
     signature=[spec([None, None])])
case("reduce_prod_zero", lambda x: em.reduce_prod(x * np.array([1., 0., 1.]), axis=1),
     normal(2, 3))
case("reduce_prod_complex", lambda x: em.reduce_prod(x, axis=0), cplx(3, 2))
for _op in (em.cumsum, em.cumprod):
    for _ex in (False, True):
        for _rev in (False, True):
            case(f"{_op.__name__}_{_ex:d}{_rev:d}", lambda x, op=_op, e=_ex, r=_rev: op(
                x, axis=1, exclusive=e, reverse=r), uniform(0.5, 1.5, 2, 4))
case("cumsum_dynamic", lambda x: em.cumsum(x, axis=0, reverse=True), normal(4, 2),
     signature=[spec([None, 2])])

# -- nn -----------------------------------------------------------------------------------

for _axis in (-1, 0):
    case(f"softmax_{_axis}", lambda x, a=_axis: em.nn.softmax(x, axis=a), normal(3, 4))
    case(f"log_softmax_{_axis}", lambda x, a=_axis: em.nn.log_softmax(x, axis=a), normal(3, 4))
case("softmax_dynamic", em.nn.softmax, normal(2, 5), signature=[spec([None, 5])])
for _s, _d, _p in [((1, 1), (1, 1), "VALID"), ((1, 1), (1, 1), "SAME"), ((2, 2), (1, 1), "SAME"),
                   ((2, 3), (1, 1), "VALID"), ((1, 1), (2, 1), "SAME"),
                   ((1, 1), (1, 2), [[0, 0], [1, 2], [0, 1], [0, 0]])]:
    _tag = f"{_s}{_d}{_p if isinstance(_p, str) else 'EXPLICIT'}"
    case(f"conv2d_{_tag}", lambda x, f, s=_s, d=_d, p=_p: em.nn.conv2d(
        x, f, s, p, dilations=d), normal(2, 6, 5, 3), normal(3, 2, 3, 2))
    if not isinstance(_p, str):
        continue
    case(f"depthwise_{_tag}", lambda x, f, s=_s, d=_d, p=_p: em.nn.depthwise_conv2d(
        x, f, [1, *s, 1], p, dilations=d), normal(2, 6, 5, 2), normal(2, 3, 2, 2))
case("conv2d_dynamic_batch", lambda x, f: em.nn.conv2d(x, f, 2, "SAME"), normal(2, 5, 5, 2),
     normal(3, 3, 2, 3), signature=[spec([None, 5, 5, 2]), spec([3, 3, 2, 3])])
for _k, _s, _p in [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"), ((3, 2), (1, 1), "SAME"),
                   ((3, 3), (1, 2), "VALID")]:
    case(f"max_pool_{_k}{_s}{_p}", lambda x, k=_k, s=_s, p=_p: em.nn.max_pool2d(x, k, s, p),
         distinct(2, 6, 5, 2))
    case(f"avg_pool_{_k}{_s}{_p}", lambda x, k=_k, s=_s, p=_p: em.nn.avg_pool2d(x, k, s, p),
         normal(2, 6, 5, 2))
case("depthwise_dynamic_batch", lambda x, f: em.nn.depthwise_conv2d(x, f, [1, 2, 1, 1], "SAME"),
     normal(2, 5, 4, 2), normal(2, 2, 2, 3),
     signature=[spec([None, 5, 4, 2]), spec([2, 2, 2, 3])])
case("avg_pool_dynamic_batch", lambda x: em.nn.avg_pool2d(x, 2, 1, "SAME"), normal(2, 3, 4, 2),
     signature=[spec([None, 3, 4, 2])])
case("max_pool_dynamic_batch", lambda x: em.nn.max_pool2d(x, 3, 2, "SAME"), distinct(2, 5, 4, 2),
     signature=[spec([None, 5, 4, 2])])

# -- indexing -----------------------------------------------------------------------------

case("strided_slice", lambda x: x[1:, ::-2, 1:3], normal(3, 5, 4))
case("strided_slice_dynamic", lambda x: x[1:em.shape(x)[0] - 1, ::2], normal(5, 4),
     signature=[spec([None, 4])])
case("strided_slice_shrink_newaxis", lambda x: x[..., 1, None, -1:0:-2], normal(2, 3, 4))
case("strided_slice_negative", lambda x: x[-1:-4:-1, 2:], normal(5, 3))
case("slice", lambda x: em.slice(x, [1, 0], [2, -1]), normal(4, 3))
case("gather_axis0_matrix_indices", lambda x: em.gather(x, [[0, 2], [2, 2]]), normal(3, 2))
case("gather_batch_dims", lambda x: em.gather(x, [[1, 1, 0], [2, 0, 0]], axis=1,
                                              batch_dims=1), normal(2, 3, 2))
case("gather_duplicates", lambda x: em.gather(x, [2, 0, 2, 2], axis=1), normal(3, 4),
     signature=[spec([None, 4])])
case("one_hot_values", lambda on, off: em.one_hot([0, 2, 1], 3, on_value=on, off_value=off),
     normal(), normal())
for _mode in ("CONSTANT", "REFLECT", "SYMMETRIC"):
    case(f"pad_{_mode}", lambda x, m=_mode: em.pad(x, [[1, 2], [2, 1]], mode=m), normal(3, 4))
case("pad_constant_value", lambda x, v: em.pad(x, [[1, 0], [0, 2]], constant_values=v),
     normal(2, 3), normal())

# -- scatter, sort ------------------------------------------------------------------------

_IDX = np.array([[1], [3], [1]])
for _mode in ("update", "add", "sub", "max", "min"):  # mul: through the segment_prod cases
    _op = getattr(em, f"tensor_scatter_nd_{_mode}")
    _idx = _IDX if _mode != "update" else np.array([[1], [3]])
    case(f"tensor_scatter_{_mode}", lambda t, u, op=_op, i=_idx: op(t, i, u),
         distinct(5, 2), distinct(len(_idx), 2))
case("tensor_scatter_update_duplicates", lambda t, u: em.tensor_scatter_nd_update(
    t, [[1, 0], [0, 2], [1, 0]], u), normal(2, 3, 2), normal(3, 2),
    signature=[spec([None, 3, 2]), spec([None, 2])])
case("tensor_scatter_add_dynamic", lambda t, u: em.tensor_scatter_nd_add(t, [[0], [2]], u),
     normal(4, 3), normal(2, 3), signature=[spec([None, 3]), spec([2, 3])])
case("sort_ascending", lambda x: em.sort(x), distinct(3, 5))
case("sort_descending_axis0", lambda x: em.sort(x, axis=0, direction="DESCENDING"),
     distinct(4, 3), signature=[spec([None, 3])])

# -- complex, fft -------------------------------------------------------------------------

case("complex", em.complex, normal(2, 3), normal(3))
case("real", em.math.real, cplx(2, 3))
case("imag", em.math.imag, cplx(2, 3))
case("angle", em.math.angle, cplx(2, 3))
case("conj", em.math.conj, cplx(2, 3))
case("fft", em.signal.fft, cplx(2, 5),
     signature=[em.TensorSpec([None, None], em.complex128)])
case("ifft", em.signal.ifft, cplx(2, 6))
for _n in (None, 6, 5, 9):
    case(f"rfft_{_n}", lambda x, n=_n: em.signal.rfft(x, None if n is None else [n]),
         normal(2, 7))
for _n in (None, 6, 5, 9):
    case(f"irfft_{_n}", lambda x, n=_n: em.signal.irfft(x, None if n is None else [n]),
         cplx(2, 4))

# -- composites: linalg (closed-form custom gradients), top_k, losses, segments, einsum, norm

def _spd(x):
    """A symmetric positive-definite matrix made from x (cholesky reads one triangle)."""
    return em.matmul(x, x, transpose_b=True) + 3 * em.eye(x.shape[-1], dtype=em.float64)


def _near_eye(*shape):
    return lambda rng: np.eye(shape[-1]) * 2 + rng.standard_normal(shape) * 0.3


case("linalg_inv", em.linalg.inv, _near_eye(2, 3, 3), signature=[spec([None, 3, 3])])
case("linalg_inv_adjoint", lambda a: em.linalg.inv(a, adjoint=True), _near_eye(3, 3))
case("linalg_solve", em.linalg.solve, _near_eye(3, 3), normal(2, 3, 2))
case("linalg_solve_adjoint", lambda a, b: em.linalg.solve(a, b, adjoint=True),
     _near_eye(2, 3, 3), normal(2, 3, 1))
case("linalg_det", em.linalg.det, _near_eye(2, 3, 3))
case("linalg_slogdet", lambda a: em.linalg.slogdet(a).log_abs_determinant,
     lambda rng: np.diag([-2., 1.5, 1.]) + rng.standard_normal((3, 3)) * 0.3)
case("linalg_cholesky", lambda x: em.linalg.cholesky(_spd(x)), normal(2, 3, 3),
     signature=[spec([None, 3, 3])])
for _lower in (True, False):
    for _adj in (False, True):
        case(f"linalg_triangular_solve_{_lower:d}{_adj:d}", lambda a, b, lo=_lower, ad=_adj:
             em.linalg.triangular_solve(a, b, lower=lo, adjoint=ad), _near_eye(3, 3),
             normal(2, 3, 2))
case("linalg_qr", lambda a: em.concat(list(em.linalg.qr(a)), axis=0), normal(4, 3))


def _sym(x):
    """A symmetric matrix with distinct eigenvalues made from x (eigh reads one triangle)."""
    return x + em.linalg.matrix_transpose(x) + em.constant(np.diag([-3.0, 0.0, 3.0]))


case("linalg_eigvalsh", lambda x: em.linalg.eigvalsh(_sym(x)), normal(2, 3, 3),
     signature=[spec([None, 3, 3])])
# eigenvectors' signs are arbitrary: v v^T per column is what is well defined
case("linalg_eigh", lambda x: (lambda e, v: em.concat([e[..., None, :], v * v], axis=-2))(
    *em.linalg.eigh(_sym(x))), normal(2, 3, 3))
case("linalg_svd_values", lambda x: em.linalg.svd(x, compute_uv=False), normal(2, 4, 3))
for _shape in ((4, 3), (3, 4), (3, 3)):
    case(f"linalg_svd_{_shape[0]}{_shape[1]}", lambda x: (lambda s, u, v: em.concat(
        [em.reshape(s, [1, -1]), em.reshape(u * u, [1, -1]), em.reshape(v * v, [1, -1])],
        axis=-1))(*em.linalg.svd(x)), normal(*_shape))
case("linalg_svd_full", lambda x: (lambda s, u, v: em.reduce_sum(u[:, :3] * u[:, :3], 0) +
                                   s)(*em.linalg.svd(x, full_matrices=True)), normal(4, 3))
case("linalg_pinv", em.linalg.pinv, normal(2, 4, 3))
case("linalg_lstsq", lambda a, b: em.linalg.lstsq(a, b, l2_regularizer=0.5), normal(4, 3),
     normal(4, 2))
case("top_k", lambda x: em.math.top_k(x, 3).values, distinct(2, 6))
case("top_k_wide", lambda x: em.math.top_k(x, 2).values, distinct(1, 1024))
case("sparse_softmax_cross_entropy", lambda x: em.nn.sparse_softmax_cross_entropy_with_logits(
    labels=[1, 0, 3], logits=x), normal(3, 4))
case("softmax_cross_entropy", lambda x, y: em.nn.softmax_cross_entropy_with_logits(
    labels=em.nn.softmax(y), logits=x), normal(3, 4), normal(3, 4))
for _kind in ("sum", "mean", "max", "min", "prod"):
    case(f"segment_{_kind}", lambda x, k=_kind: getattr(em.math, f"segment_{k}")(
        x, [0, 0, 1, 3, 3]), distinct(5, 2))
    case(f"unsorted_segment_{_kind}", lambda x, k=_kind: getattr(
        em.math, f"unsorted_segment_{k}")(x, [2, 0, 2, 1, 0], 3 if k in ("max", "min") else 4),
        distinct(5, 2))  # an empty max/min segment holds the lowest/highest value: no FD
case("unsorted_segment_prod_two_zeros", lambda x: em.math.unsorted_segment_prod(
    x * np.array([[0., 1.], [1., 1.], [0., 1.]]), [1, 1, 1], 2), normal(3, 2))
case("gather_nd", lambda x: em.gather_nd(x, [[1, 0], [2, 3], [1, 0]]), normal(3, 4, 2))
case("gather_nd_batch", lambda x: em.gather_nd(x, [[[1], [0]], [[2], [2]]], batch_dims=1),
     normal(2, 3, 2))
case("einsum_contract", lambda a, b: em.einsum("bij,jk->bik", a, b), normal(2, 3, 4),
     normal(4, 2))
case("einsum_trace_outer", lambda a, b: em.einsum("ii,j->j", a, b), normal(3, 3), normal(2))
for _ord, _axis in [("euclidean", None), (1, -1), (np.inf, 0), ("fro", [0, 1]), (3, None)]:
    case(f"norm_{_ord}_{_axis}", lambda x, o=_ord, a=_axis: em.norm(x, ord=o, axis=a),
         away(3, 4))
