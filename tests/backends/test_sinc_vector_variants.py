"""sin and cos through the CPU backend's vector variants (backends/cpu/vector_variants.py):
a vector of 8/16 lanes takes the f64 reduction only when one of its lanes has |x| >= 2**20
(MEDIUM) and Payne-Hanek's only when one is huge (HUGE), and every lane must come out the
same bits whichever path its vector took, in the full tier (vector variants), the fast tier
(the scalar branchless function) and a scalar remainder."""

import numpy as np
import pytest
from float_steps import run_with_planted_lanes, ulps

from ember.backends.cpu.backend import CpuBackend, tier_options
from ember.backends.cpu.compiler import compile_function
from ember.backends.cpu.vector_variants import lanes_for
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.types import parse_type

F32 = np.float32
HUGE = np.array([1e30, -3.4028235e38, 2.0 ** 28, -2.0 ** 28 - 64, 8.4e8, 1e10, np.inf,
                 -np.inf, np.nan], F32)
# beyond the f32 reduction (fastmath_sincos.SMALL), within f64 Cody-Waite's
MEDIUM = np.array([2.0 ** 20, -2.0 ** 20 - 0.125, 3.1e6, 8.3e7, -2.6e8, 2.0 ** 28 - 16], F32)


def _compiled(name: str, n: int, tier: str = "full"):
    t = f"tensor<{n}xf32>"
    text = (f'func.func @main(%x: {t}) -> {t} {{\n'
            f'  %0 = "ember.{name}"(%x) : ({t}) -> {t}\n'
            f'  return %0 : {t}\n}}\n')
    with default_context():
        arg = parse_type(t)
    return compile_function(text, "main", [arg], CpuBackend(tier_options(tier)))


def _ordinary(n: int) -> np.ndarray:
    rng = np.random.default_rng(19)
    return np.concatenate([rng.uniform(-10, 10, n // 2),
                           rng.uniform(-1e6, 1e6, n - n // 2)]).astype(F32)


@pytest.mark.parametrize("planted", ["huge", "medium"])
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_a_huge_lane_leaves_the_other_lanes_bits_unchanged(name, planted, cache_dir):
    n = 4099  # not a multiple of 8 or 16: a masked tail (AVX-512) or a scalar remainder
    # a huge (medium) lane every 37 and in the last, partial vector
    lanes, last = (HUGE, F32(3e30)) if planted == "huge" else (MEDIUM, F32(-5e6))
    y, _, fy = run_with_planted_lanes(_compiled(name, n), _ordinary(n), lanes, 5, 37, last)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(y.astype(np.float64)).astype(F32)
    d = ulps(fy, want)
    assert d.max() <= 2, f"{name}({y[d.argmax()]!r}): {d.max()} ulp"


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_full_tier_agrees_with_the_fast_tier_bit_for_bit(name, cache_dir):
    n = 1003
    x = _ordinary(n)
    x[::50] = np.resize(HUGE, x[::50].size)
    x[7::50] = np.resize(MEDIUM, x[7::50].size)
    full = _compiled(name, n)([x])[0]
    fast = _compiled(name, n, "fast")([x])[0]
    assert np.array_equal(full.view(np.int32), fast.view(np.int32))


def test_lanes_follow_the_target_vector_width():
    assert lanes_for("+avx512f,+avx2,+avx") == [16]
    assert lanes_for("+avx2,+avx,+fma") == [8]
    assert lanes_for("+sse4.2") == [4]
    assert lanes_for(None) == [4]
