"""The ops of issue 13 (composites and dialect ops users reach for), as recipes for the
random-program generator of ops_gen.py.

A recipe names the public function it exercises and writes one call of it on a value of the
program: `Recipe(name, write, kinds, min_rank, dynamic)`. `write(pick, x)` returns the call's
source given the chosen operand `x` (a `Val`) and `pick`, the generator's helpers for more
operands and random attributes. `kinds` is the numpy dtype kinds the operand may have ("f"
float, "i" int, "b" bool); `dynamic` says the call also traces with `?` dims (functions that
need sizes while tracing, such as `em.unstack`, do not); `sized_by_data` that the result has a
size only known when the op runs (`em.boolean_mask`). The generator evaluates every call
eagerly before keeping it, so a recipe may write calls that are invalid for some operands:
those are dropped, not compared.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

F, I, FI = "f", "i", "fi"


@dataclasses.dataclass(frozen=True)
class Recipe:
    name: str
    write: Callable
    kinds: str = F
    min_rank: int = 0
    dynamic: bool = True
    sized_by_data: bool = False  # the result's size depends on the operands' values


def _axis(pick, x) -> int:
    return pick.rng.randrange(-len(x.shape), len(x.shape))


def _perm_axes(pick, x) -> list[int]:
    return sorted(pick.rng.sample(range(len(x.shape)), pick.rng.randint(1, len(x.shape))))


def _same(pick, x) -> str:
    """Another value of x's dtype and shape (or x itself)."""
    return pick.like(x).name


# equations over two operands of one shape, by rank (1, 2, 3 and more: the last three dims)
_EINSUMS = {1: ["i,i->", "i,j->ij", "i,i->i"],
            2: ["ij,kj->ik", "ij,ij->j", "ij,ik->jk", "ii,ij->j"],
            3: ["...ij,...kj->...ik", "...ij,...ij->...", "...ij,...ik->...jk",
                "...ii,...ij->...j"]}


def _repeat_each(pick, x) -> str:
    """em.repeat with one count per element along an axis (from the traced value's size)."""
    axis = _axis(pick, x)
    counts = [pick.rng.randint(0, 2) for _ in range(x.shape[axis])]
    return f"em.repeat({x.name}, {counts}, axis={axis})"


def _spd(x) -> str:
    """Source of x @ x^T + I for x of rank >= 2: batched SPD matrices."""
    return (f"(em.matmul({x.name}, {x.name}, transpose_b=True) + "
            f"em.eye({x.shape[-2]}, dtype=em.{x.dtype}))")


RECIPES = [
    # -- em.math ---------------------------------------------------------------------------
    Recipe("em.math.erf", lambda p, x: f"em.math.erf({x.name})"),
    Recipe("em.math.erfc", lambda p, x: f"em.math.erfc({x.name})"),
    Recipe("em.math.softplus", lambda p, x: f"em.math.softplus({x.name})"),
    Recipe("em.math.is_inf", lambda p, x: f"em.math.is_inf({x.name})"),
    Recipe("em.math.squared_difference",
           lambda p, x: f"em.math.squared_difference({x.name}, {_same(p, x)})", FI),
    Recipe("em.math.xlogy", lambda p, x: f"em.math.xlogy({x.name}, em.abs({_same(p, x)}))"),
    Recipe("em.math.truncatediv",
           lambda p, x: f"em.math.truncatediv({x.name}, em.maximum(em.abs({_same(p, x)}), 1))",
           I),
    # -- em.bitwise (shift amounts of any sign and size: clamped) ----------------------------
    Recipe("em.bitwise.bitwise_and", lambda p, x: f"({x.name} & {_same(p, x)})", I),
    Recipe("em.bitwise.bitwise_or", lambda p, x: f"em.bitwise.bitwise_or({x.name}, {_same(p, x)})",
           I),
    Recipe("em.bitwise.bitwise_xor", lambda p, x: f"({x.name} ^ {_same(p, x)})", I),
    Recipe("em.bitwise.invert", lambda p, x: f"(~{x.name})", I),
    Recipe("em.bitwise.left_shift", lambda p, x: f"({x.name} << {_same(p, x)})", I),
    Recipe("em.bitwise.right_shift",
           lambda p, x: f"em.bitwise.right_shift({x.name}, {_same(p, x)} % 40 - 3)", I),
    Recipe("em.math.count_nonzero",
           lambda p, x: f"em.math.count_nonzero({x.name}, axis={_axis(p, x)})", FI, 1),
    Recipe("em.math.reduce_logsumexp",
           lambda p, x: f"em.math.reduce_logsumexp({x.name}, axis={_axis(p, x)}, "
                        f"keepdims={p.flag()})", F, 1),
    Recipe("em.math.reduce_std",
           lambda p, x: f"em.math.reduce_std({x.name}, axis={_axis(p, x)})", F, 1),
    Recipe("em.math.reduce_variance",
           lambda p, x: f"em.math.reduce_variance({x.name}, axis={_perm_axes(p, x)}, "
                        f"keepdims={p.flag()})", F, 1),
    Recipe("em.clip_by_value",
           lambda p, x: f"em.clip_by_value({x.name}, -1, 2)", FI),
    Recipe("em.clip_by_norm",
           lambda p, x: f"em.clip_by_norm({x.name}, 1.5, axes={_perm_axes(p, x)})", F, 1),
    # -- em.nn -----------------------------------------------------------------------------
    Recipe("em.nn.relu6", lambda p, x: f"em.nn.relu6({x.name})", FI),
    Recipe("em.nn.leaky_relu", lambda p, x: f"em.nn.leaky_relu({x.name}, alpha=0.1)"),
    Recipe("em.nn.elu", lambda p, x: f"em.nn.elu({x.name})"),
    Recipe("em.nn.selu", lambda p, x: f"em.nn.selu({x.name})"),
    Recipe("em.nn.gelu",
           lambda p, x: f"em.nn.gelu({x.name}, approximate={p.flag()})"),
    Recipe("em.nn.silu", lambda p, x: f"em.nn.silu({x.name})"),
    Recipe("em.nn.softsign", lambda p, x: f"em.nn.softsign({x.name})"),
    Recipe("em.nn.l2_normalize",
           lambda p, x: f"em.nn.l2_normalize({x.name}, axis={_axis(p, x)})", F, 1),
    Recipe("em.nn.moments",
           lambda p, x: f"em.nn.moments({x.name}, axes={_perm_axes(p, x)})[{p.rng.randint(0, 1)}]",
           F, 1),
    Recipe("em.nn.bias_add",
           lambda p, x: f"em.nn.bias_add({x.name}, em.ones([{x.shape[-1]}], em.{x.dtype}))",
           F, 2, dynamic=False),
    Recipe("em.nn.sigmoid_cross_entropy_with_logits",
           lambda p, x: f"em.nn.sigmoid_cross_entropy_with_logits("
                        f"labels=em.sigmoid({_same(p, x)}), logits={x.name})"),
    Recipe("em.nn.softmax_cross_entropy_with_logits",
           lambda p, x: f"em.nn.softmax_cross_entropy_with_logits("
                        f"labels=em.softmax({_same(p, x)}), logits={x.name})", F, 1),
    # -- shaping ---------------------------------------------------------------------------
    Recipe("em.tile",
           lambda p, x: f"em.tile({x.name}, {[p.rng.randint(1, 2) for _ in x.shape]})", FI, 1),
    Recipe("em.repeat",
           lambda p, x: f"em.repeat({x.name}, {p.rng.randint(1, 3)}, axis={_axis(p, x)})",
           FI, 1),
    Recipe("em.repeat", lambda p, x: _repeat_each(p, x), FI, 1),
    Recipe("em.reverse", lambda p, x: f"em.reverse({x.name}, {_perm_axes(p, x)})", FI, 1),
    Recipe("em.roll",
           lambda p, x: f"em.roll({x.name}, {p.rng.randint(-3, 3)}, {_axis(p, x)})", FI, 1),
    Recipe("em.split",
           lambda p, x: f"em.split({x.name}, 1, axis={_axis(p, x)})[0]", FI, 1),
    Recipe("em.split",
           lambda p, x: f"em.split({x.name}, [1, -1], axis={_axis(p, x)})[1]", FI, 1),
    Recipe("em.unstack",
           lambda p, x: f"em.stack(em.unstack({x.name}, axis={_axis(p, x)}), "
                        f"axis={p.rng.randint(0, len(x.shape) - 1)})", FI, 1, dynamic=False),
    Recipe("em.linalg.diag_part",
           lambda p, x: f"em.linalg.diag_part({x.name})", FI, 2),
    Recipe("em.linalg.trace", lambda p, x: f"em.linalg.trace({x.name})", FI, 2),
    Recipe("em.linalg.band_part",
           lambda p, x: f"em.linalg.band_part({x.name}, {p.rng.randint(-1, 2)}, "
                        f"{p.rng.randint(-1, 2)})", FI, 2),
    Recipe("em.norm",
           lambda p, x: f"em.norm({x.name}, ord={p.rng.choice(['euclidean', 1, np.inf])!r}, "
                        f"axis={_axis(p, x)})".replace("inf", "np.inf"), F, 1),
    Recipe("em.linalg.norm",
           lambda p, x: f"em.linalg.norm({x.name}, axis={_axis(p, x)}, keepdims={p.flag()})",
           F, 1),
    Recipe("em.linalg.matvec",
           lambda p, x: f"em.linalg.matvec({x.name}, em.reduce_sum({x.name}, axis=-2))", F, 2),
    Recipe("em.linalg.diag", lambda p, x: f"em.linalg.diag({x.name})", FI, 1),
    Recipe("em.eye",
           lambda p, x: f"em.eye({p.rng.randint(0, 3)}, {p.rng.choice([None, 2, 4])}, "
                        f"batch_shape={p.rng.choice([None, [2]])}, dtype=em.{x.dtype})", FI),
    Recipe("em.linspace",
           lambda p, x: f"em.linspace(em.reduce_min({x.name}), em.reduce_max({x.name}), "
                        f"{p.rng.randint(1, 5)})", F, 1),
    Recipe("em.linspace",
           lambda p, x: f"em.linspace({x.name}, {x.name} * 2 + 1, {p.rng.randint(0, 4)}, "
                        f"axis={p.rng.randint(-len(x.shape) - 1, len(x.shape))})", F),
    Recipe("em.roll",
           lambda p, x: f"em.roll({x.name}, em.size({x.name}) % 5 - 2, {_axis(p, x)})", FI, 1),
    Recipe("em.gather",
           lambda p, x: f"em.gather({x.name}, em.argmax({x.name}, axis=-1, "
                        f"output_type=em.int32)[..., None], batch_dims=-1)", FI, 2),
    Recipe("em.meshgrid",
           lambda p, x: f"em.meshgrid({x.name}, {p.like(x).name}, "
                        f"indexing={p.rng.choice(['xy', 'ij'])!r})[{p.rng.randint(0, 1)}]",
           FI, 1),
    Recipe("em.nn.sparse_softmax_cross_entropy_with_logits",
           lambda p, x: f"em.nn.sparse_softmax_cross_entropy_with_logits("
                        f"labels=em.argmax({p.like(x).name}, axis=-1), logits={x.name})", F, 1),
    Recipe("em.nn.batch_normalization",
           lambda p, x: f"em.nn.batch_normalization({x.name}, *em.nn.moments({x.name}, "
                        f"axes=[0]), offset=0.5, scale=2.0, variance_epsilon=1e-3)", F, 1),
    # -- contractions and solvers (frontend/einsum.py, frontend/linalg_solvers.py); the
    # solvers get x @ x^T + I, symmetric positive definite with eigenvalues >= 1 ----------
    Recipe("em.einsum",
           lambda p, x: f"em.einsum({p.rng.choice(_EINSUMS[min(len(x.shape), 3)])!r}, "
                        f"{x.name}, {_same(p, x)})", FI, 1),
    Recipe("em.tensordot",
           lambda p, x: f"em.tensordot({x.name}, {_same(p, x)}, "
                        f"{p.rng.randint(0, min(len(x.shape), 2))})", FI),
    Recipe("em.linalg.inv", lambda p, x: f"em.linalg.inv({_spd(x)})", F, 2, dynamic=False),
    Recipe("em.linalg.solve",
           lambda p, x: f"em.linalg.solve({_spd(x)}, {x.name}, adjoint={p.flag()})", F, 2,
           dynamic=False),
    Recipe("em.linalg.cholesky", lambda p, x: f"em.linalg.cholesky({_spd(x)})", F, 2,
           dynamic=False),
    Recipe("em.linalg.triangular_solve",
           lambda p, x: f"em.linalg.triangular_solve(em.linalg.cholesky({_spd(x)}), {x.name}, "
                        f"lower={p.flag()}, adjoint={p.flag()})", F, 2, dynamic=False),
    Recipe("em.linalg.qr",
           lambda p, x: f"em.linalg.qr({x.name}, full_matrices={p.flag()})"
                        f"[{p.rng.randint(0, 1)}]", F, 2, dynamic=False),
    # -- em.debugging: raise (eagerly, and compiled when the code runs) on NaN or inf -------
    Recipe("em.debugging.assert_all_finite",
           lambda p, x: f"em.debugging.assert_all_finite({x.name}, 'fuzz')"),
    Recipe("em.debugging.check_numerics",
           lambda p, x: f"em.debugging.check_numerics({x.name}, 'fuzz')"),
    # -- gather and scatter ----------------------------------------------------------------
    Recipe("em.gather_nd",
           lambda p, x: f"em.gather_nd({x.name}, {_indices(p, x)})", FI, 1),
    Recipe("em.scatter_nd",
           lambda p, x: _scatter_nd(p, x), FI, 1, dynamic=False),
    *[Recipe(f"em.tensor_scatter_nd_{mode}",
             lambda p, x, mode=mode: _scatter(p, x, f"em.tensor_scatter_nd_{mode}"), FI, 1)
      for mode in ("update", "add", "sub", "max", "min")],
    *[Recipe(f"em.math.segment_{kind}",
             lambda p, x, kind=kind: f"em.math.segment_{kind}({x.name}, "
                                     f"{_segment_ids(p, x, sort=True)})", FI, 1,
             sized_by_data=True)
      for kind in ("sum", "mean", "max", "min", "prod")],
    *[Recipe(f"em.math.unsorted_segment_{kind}",
             lambda p, x, kind=kind: f"em.math.unsorted_segment_{kind}({x.name}, "
                                     f"{_segment_ids(p, x, sort=False)}, 4)", FI, 1)
      for kind in ("sum", "mean", "max", "min", "prod")],
    Recipe("em.math.bincount",
           lambda p, x: f"em.math.bincount(em.minimum(em.abs({x.name}), 30), "
                        f"minlength={p.rng.randint(0, 3)}, maxlength={p.rng.choice([None, 4])})",
           I, sized_by_data=True),  # values capped: bincount allocates max(arr) + 1 bins
    Recipe("em.where", lambda p, x: f"em.where({x.name} > 0)", FI, sized_by_data=True),
    Recipe("em.boolean_mask",
           lambda p, x: f"em.boolean_mask({x.name}, {p.like(x).name} > 0)", FI, 1,
           sized_by_data=True),
    # -- em.random: the stateless family (the stateful one is not deterministic per call) ---
    Recipe("em.random.stateless_uniform",
           lambda p, x: f"em.random.stateless_uniform(em.shape({x.name}), seed=[{p.rng.randint(0, 9)}, "
                        f"{p.rng.randint(0, 9)}], dtype=em.{x.dtype}"
                        + (", maxval=7)" if x.kind == "i" else ")"), FI),
    Recipe("em.random.stateless_normal",
           lambda p, x: f"{x.name} + em.random.stateless_normal(em.shape({x.name}), "
                        f"seed=[3, {p.rng.randint(0, 9)}], dtype=em.{x.dtype})"),
    Recipe("em.random.stateless_truncated_normal",
           lambda p, x: f"em.random.stateless_truncated_normal(em.shape({x.name}), "
                        f"seed=[{p.rng.randint(0, 9)}, 5], stddev=2.0, dtype=em.{x.dtype})"),
    # -- scans, searching, special functions --------------------------------------------
    *[Recipe(name, lambda p, x, name=name: f"{name}({x.name}, axis={_axis(p, x)}, "
                                           f"exclusive={p.flag()}, reverse={p.flag()})", FI, 1)
      for name in ("em.cumsum", "em.cumprod", "em.math.cumsum", "em.math.cumprod")],
    Recipe("em.searchsorted",
           lambda p, x: f"em.searchsorted(em.cumsum(em.abs({x.name}), axis=-1), "
                        f"{p.like(x).name}, side={p.rng.choice(['left', 'right'])!r})", FI, 1),
    Recipe("em.math.lgamma", lambda p, x: f"em.math.lgamma({x.name})"),
    Recipe("em.math.digamma", lambda p, x: f"em.math.digamma({x.name})"),
    # -- convolution and pooling (NHWC / NWC) ---------------------------------------------
    Recipe("em.nn.conv1d",
           lambda p, x: f"em.nn.conv1d({x.name}, {_filter(p, x, 1)}, "
                        f"stride={p.rng.randint(1, 2)}, padding={_padding(p)})", F, 3),
    Recipe("em.nn.depthwise_conv2d",
           lambda p, x: f"em.nn.depthwise_conv2d({x.name}, {_filter(p, x, 2, depthwise=True)}, "
                        f"strides=[1, {p.rng.randint(1, 2)}, {p.rng.randint(1, 2)}, 1], "
                        f"padding={_padding(p)})", F, 4),
    Recipe("em.nn.conv2d_transpose",
           lambda p, x: _conv_transpose(p, x), F, 4, dynamic=False),
    *[Recipe(f"em.nn.{kind}_pool{suffix}",
             lambda p, x, kind=kind, suffix=suffix: f"em.nn.{kind}_pool{suffix}({x.name}, "
             f"{p.rng.randint(1, 2)}, {p.rng.randint(1, 2)}, {_padding(p)})", F, rank)
      for kind in ("avg", "max") for suffix, rank in (("", 3), ("1d", 3), ("2d", 4))],
    # -- sorting: ties, NaN and -0.0 in the operands keep their order (stable) -------------
    Recipe("em.sort",
           lambda p, x: f"em.sort({x.name}, axis={_axis(p, x)}, "
                        f"direction={p.rng.choice(['ASCENDING', 'DESCENDING'])!r})", FI, 1),
    Recipe("em.argsort",
           lambda p, x: f"em.argsort({x.name}, axis={_axis(p, x)}, "
                        f"direction={p.rng.choice(['ASCENDING', 'DESCENDING'])!r})", FI, 1),
    Recipe("em.math.top_k",
           lambda p, x: f"em.math.top_k({x.name}, {p.rng.randint(0, 3)})."
                        f"{p.rng.choice(['values', 'indices'])}", FI, 1),
    # the program keeps gather(y, idx): y's size is data-dependent (`sized_by_data`
    # recipes show those too)
    Recipe("em.unique",
           lambda p, x: f"em.gather(*em.unique(em.reshape({x.name}, [-1])))", FI),
    # -- misc composites (frontend/norms.py, frontend/misc_composites.py) -------------------
    Recipe("em.linalg.norm",  # matrix norms over a pair of axes, vector norms for any p > 0
           lambda p, x: f"em.linalg.norm({x.name}, ord={p.rng.choice(['fro', 1, np.inf])!r}, "
                        f"axis={sorted(p.rng.sample(range(-len(x.shape), 0), 2))}, "
                        f"keepdims={p.flag()})".replace("inf", "np.inf"), F, 2),
    Recipe("em.norm",
           lambda p, x: f"em.norm({x.name}, ord={p.rng.choice([0.5, 1.5, 3])}, "
                        f"axis={p.rng.choice([None, _axis(p, x)])})", F, 1),
    Recipe("em.math.reduce_euclidean_norm",
           lambda p, x: f"em.math.reduce_euclidean_norm({x.name}, axis={_perm_axes(p, x)}, "
                        f"keepdims={p.flag()})", FI, 1),
    Recipe("em.add_n", lambda p, x: f"em.add_n([{x.name}, {_same(p, x)}, {x.name}])", FI),
    Recipe("em.math.add_n", lambda p, x: f"em.math.add_n([{x.name}, {_same(p, x)}])", FI),
    Recipe("em.clip_by_global_norm",
           lambda p, x: f"em.clip_by_global_norm([{x.name}, {_same(p, x)}], "
                        f"{p.rng.choice([0.5, 4.0])})"
                        f"{p.rng.choice(['[0][0]', '[0][1]', '[1]'])}", F),
    Recipe("em.unique_with_counts",
           lambda p, x: f"em.unique_with_counts(em.reshape({x.name}, [-1]))"
                        f".{p.rng.choice(['y', 'idx', 'count'])}", FI, sized_by_data=True),
    Recipe("em.linalg.matrix_transpose",
           lambda p, x: f"em.linalg.matrix_transpose({x.name}, conjugate={p.flag()})", FI, 2),
    Recipe("em.linalg.adjoint", lambda p, x: f"em.linalg.adjoint({x.name})", FI, 2),
    Recipe("em.math.cumulative_logsumexp",
           lambda p, x: f"em.math.cumulative_logsumexp({x.name}, axis={_axis(p, x)}, "
                        f"exclusive={p.flag()}, reverse={p.flag()})", F, 1),
]


def _padding(pick) -> str:
    return repr(pick.rng.choice(["SAME", "VALID"]))


def _filter(pick, x, spatial: int, depthwise=False) -> str:
    """A constant filter [k..., C_in, C_out (or multiplier)] for x's channels."""
    shape = [pick.rng.randint(1, 2) for _ in range(spatial)] + [x.shape[-1],
                                                                  pick.rng.randint(1, 2)]
    values = np.round(np.linspace(-1, 1, int(np.prod(shape))), 2).reshape(shape)
    return f"em.constant(np.array({values.tolist()}, np.{x.dtype}))"


def _conv_transpose(pick, x) -> str:
    stride = pick.rng.randint(1, 2)
    n, h, w, c = x.shape
    out = [n, h * stride, w * stride, pick.rng.randint(1, 2)]
    filters = np.round(np.linspace(-1, 1, 2 * 2 * out[3] * c), 2).reshape(2, 2, out[3], c)
    return (f"em.nn.conv2d_transpose({x.name}, em.constant(np.array({filters.tolist()}, "
            f"np.{x.dtype})), {out}, {stride}, 'SAME')")


def _rows(pick) -> int:
    return pick.rng.randint(0, 3)


def _indices(pick, x, depth=None) -> str:
    """A constant [rows, depth] int32 index list into x's leading dims (in range)."""
    depth = pick.rng.randint(1, len(x.shape)) if depth is None else depth
    if any(d == 0 for d in x.shape[:depth]):
        return f"np.zeros([0, {depth}], np.int32)"
    rows = [[pick.rng.randrange(d) for d in x.shape[:depth]] for _ in range(_rows(pick) + 1)]
    return f"np.array({rows}, np.int32)"


def _scatter_nd(pick, x) -> str:
    index = _indices(pick, x, depth=len(x.shape))
    return (f"em.scatter_nd({index}, em.gather_nd({pick.like(x).name}, {index}) + 1, "
            f"{list(x.shape)})")


def _scatter(pick, x, fn: str) -> str:
    index = _indices(pick, x)
    return f"{fn}({x.name}, {index}, em.gather_nd({pick.like(x).name}, {index}) * 2)"


def _segment_ids(pick, x, sort: bool) -> str:
    ids = [pick.rng.randint(0 if sort else -1, 3) for _ in range(x.shape[0])]
    return f"np.array({sorted(ids) if sort else ids}, np.int32)"


def _complex(pick, x) -> str:
    """A complex value made of x and another value like it (complex64 from f32)."""
    return f"em.complex({x.name}, {_same(pick, x)})"


def _finite(name: str) -> str:
    """`name` with NaN and inf replaced by 0: a transform spreads one NaN over every
    output, in an order (numpy's FFT, the compiled DFT) that decides NaN from inf."""
    return f"em.where(em.math.is_finite({name}), {name}, em.zeros_like({name}))"


# -- complex numbers and Fourier transforms (real results, so programs stay real) -------------
RECIPES += [
    Recipe("em.math.real", lambda p, x: f"em.math.real({_complex(p, x)}) * 2"),
    Recipe("em.math.imag", lambda p, x: f"em.math.imag({_complex(p, x)} * {_complex(p, x)})"),
    Recipe("em.math.conj", lambda p, x: f"em.math.imag(em.math.conj({_complex(p, x)}))"),
    Recipe("em.math.angle", lambda p, x: f"em.math.angle({_complex(p, x)})"),
    Recipe("em.signal.fft",
           lambda p, x: f"em.abs(em.signal.fft(em.complex({_finite(x.name)}, "
                        f"{_finite(_same(p, x))})))", F, 1),
    Recipe("em.signal.ifft",
           lambda p, x: f"em.math.real(em.signal.ifft(em.complex({_finite(x.name)}, "
                        f"{_finite(_same(p, x))})))", F, 1),
    Recipe("em.signal.rfft",
           lambda p, x: f"em.math.imag(em.signal.rfft({_finite(x.name)}, "
                        f"fft_length=[{p.rng.randint(1, 6)}]))", F, 1),
]
