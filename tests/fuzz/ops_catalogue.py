"""The ops of issue 13 (composites and dialect ops users reach for), as recipes for the
random-program generator of ops_gen.py.

A recipe names the public function it exercises and writes one call of it on a value of the
program: `Recipe(name, write, kinds, min_rank, dynamic)`. `write(pick, x)` returns the call's
source given the chosen operand `x` (a `Val`) and `pick`, the generator's helpers for more
operands and random attributes. `kinds` is the numpy dtype kinds the operand may have ("f"
float, "i" int, "b" bool); `dynamic` says the call also traces with `?` dims (functions that
need sizes while tracing, such as `em.tile`, do not). The generator evaluates every call
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


def _axis(pick, x) -> int:
    return pick.rng.randrange(-len(x.shape), len(x.shape))


def _perm_axes(pick, x) -> list[int]:
    return sorted(pick.rng.sample(range(len(x.shape)), pick.rng.randint(1, len(x.shape))))


def _same(pick, x) -> str:
    """Another value of x's dtype and shape (or x itself)."""
    return pick.like(x).name


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
           lambda p, x: f"em.tile({x.name}, {[p.rng.randint(1, 2) for _ in x.shape]})", FI, 1,
           dynamic=False),
    Recipe("em.repeat",
           lambda p, x: f"em.repeat({x.name}, {p.rng.randint(1, 3)}, axis={_axis(p, x)})",
           FI, 1, dynamic=False),
    Recipe("em.reverse", lambda p, x: f"em.reverse({x.name}, {_perm_axes(p, x)})", FI, 1),
    Recipe("em.roll",
           lambda p, x: f"em.roll({x.name}, {p.rng.randint(-3, 3)}, {_axis(p, x)})", FI, 1,
           dynamic=False),
    Recipe("em.split",
           lambda p, x: f"em.split({x.name}, 1, axis={_axis(p, x)})[0]", FI, 1, dynamic=False),
    Recipe("em.unstack",
           lambda p, x: f"em.stack(em.unstack({x.name}, axis={_axis(p, x)}), "
                        f"axis={p.rng.randint(0, len(x.shape) - 1)})", FI, 1, dynamic=False),
    Recipe("em.linalg.diag_part",
           lambda p, x: f"em.linalg.diag_part({x.name})", FI, 2, dynamic=False),
    Recipe("em.linalg.trace", lambda p, x: f"em.linalg.trace({x.name})", FI, 2,
           dynamic=False),
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
    Recipe("em.linalg.diag", lambda p, x: f"em.linalg.diag({x.name})", FI, 1, dynamic=False),
    Recipe("em.eye",
           lambda p, x: f"em.eye({p.rng.randint(0, 3)}, {p.rng.choice([None, 2, 4])}, "
                        f"batch_shape={p.rng.choice([None, [2]])}, dtype=em.{x.dtype})", FI),
    Recipe("em.linspace",
           lambda p, x: f"em.linspace(em.reduce_min({x.name}), em.reduce_max({x.name}), "
                        f"{p.rng.randint(1, 5)})", F, 1),
    Recipe("em.meshgrid",
           lambda p, x: f"em.meshgrid({x.name}, {p.like(x).name}, "
                        f"indexing={p.rng.choice(['xy', 'ij'])!r})[{p.rng.randint(0, 1)}]",
           FI, 1, dynamic=False),
    Recipe("em.nn.sparse_softmax_cross_entropy_with_logits",
           lambda p, x: f"em.nn.sparse_softmax_cross_entropy_with_logits("
                        f"labels=em.argmax({p.like(x).name}, axis=-1), logits={x.name})", F, 1),
    Recipe("em.nn.batch_normalization",
           lambda p, x: f"em.nn.batch_normalization({x.name}, *em.nn.moments({x.name}, "
                        f"axes=[0]), offset=0.5, scale=2.0, variance_epsilon=1e-3)", F, 1),
    # -- em.debugging: raise (eagerly, and compiled when the code runs) on NaN or inf -------
    Recipe("em.debugging.assert_all_finite",
           lambda p, x: f"em.debugging.assert_all_finite({x.name}, 'fuzz')"),
    Recipe("em.debugging.check_numerics",
           lambda p, x: f"em.debugging.check_numerics({x.name}, 'fuzz')"),
]


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
