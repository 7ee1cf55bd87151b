"""tanh through the CPU backend's vector variant (backends/cpu/vector_variants.py): a vector
whose lanes are all |x| < 0.625 computes only fastmath's small-|x| polynomial
(`tanh_moderate`), any other vector the whole branchless kernel; every lane must come out
the same bits whichever path its vector took, in the full tier, the fast tier (the scalar
kernel) and a scalar remainder, and within fastmath's bound of numpy."""

import numpy as np
import pytest
from float_steps import run_with_planted_lanes, ulps

from ember.backends.cpu.backend import CpuBackend, tier_options
from ember.backends.cpu.compiler import compile_function
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.types import parse_type

F32 = np.float32
# lanes that make a vector take the whole kernel: |x| >= 0.625 (its first value among them),
# saturating, huge, inf and NaN
LARGE = np.array([0.625, -0.625, 0.7, -3.0, 9.5, 20.0, 3.4028235e38, np.inf, -np.inf,
                  np.nan], F32)


def _compiled(n: int, tier: str = "full", steps: int = 1):
    """`x = tanh(x) * 0.5 + 0.1`, `steps` times (bench case B's body), on n float32."""
    t = f"tensor<{n}xf32>"
    lines = [f"func.func @main(%x: {t}) -> {t} {{",
             f'  %h = "ember.constant"() {{value = dense<0.5> : {t}}} : () -> {t}',
             f'  %c = "ember.constant"() {{value = dense<0.1> : {t}}} : () -> {t}']
    v = "%x"
    for i in range(steps):
        lines += [f'  %t{i} = "ember.tanh"({v}) : ({t}) -> {t}',
                  f'  %m{i} = "ember.mul"(%t{i}, %h) : ({t}, {t}) -> {t}',
                  f'  %a{i} = "ember.add"(%m{i}, %c) : ({t}, {t}) -> {t}']
        v = f"%a{i}"
    lines += [f"  return {v} : {t}", "}"]
    with default_context():
        arg = parse_type(t)
    return compile_function("\n".join(lines) + "\n", "main", [arg], CpuBackend(tier_options(tier)))


def _small(n: int) -> np.ndarray:
    """|x| < 0.625 everywhere, denormals and signed zeros included."""
    x = np.random.default_rng(19).uniform(-0.6249, 0.6249, n).astype(F32)
    x[:6] = [0.0, -0.0, 1e-40, -1e-40, 0.62499994, -0.62499994]
    return x


def test_a_large_lane_leaves_the_other_lanes_bits_unchanged(cache_dir):
    n = 4099  # not a multiple of 8 or 16: a masked tail (AVX-512) or a scalar remainder
    x = _small(n)
    # a large lane every 41 and in the last, partial vector
    y, fx, fy = run_with_planted_lanes(_compiled(n), x, LARGE, 9, 41, F32(5.0))
    fast = _compiled(n, "fast")
    for v, got in ((x, fx), (y, fy)):
        assert np.array_equal(got.view(np.int32), fast([v])[0].view(np.int32))


@pytest.mark.parametrize("values", ["small", "mixed", "large"])
def test_tanh_is_within_fastmath_bound_on_each_path(values, cache_dir):
    n = 1003
    rng = np.random.default_rng(7)
    x = {"small": _small(n), "mixed": rng.uniform(-3, 3, n).astype(F32),
         "large": rng.uniform(0.625, 12, n).astype(F32) * rng.choice([-1, 1], n).astype(F32)}
    x = x[values]
    t = f"tensor<{n}xf32>"
    text = (f'func.func @main(%x: {t}) -> {t} {{\n'
            f'  %0 = "ember.tanh"(%x) : ({t}) -> {t}\n'
            f'  return %0 : {t}\n}}\n')
    with default_context():
        arg = parse_type(t)
    full = compile_function(text, "main", [arg], CpuBackend(tier_options("full")))([x])[0]
    fast = compile_function(text, "main", [arg], CpuBackend(tier_options("fast")))([x])[0]
    assert np.array_equal(full.view(np.int32), fast.view(np.int32))
    d = ulps(full, np.tanh(x.astype(np.float64)).astype(F32))
    assert d.max() <= 2, f"tanh({x[d.argmax()]!r}): {d.max()} ulp"


def test_bench_b_chain_agrees_with_the_fast_tier_bit_for_bit(cache_dir):
    """50 steps: after the first, every lane of case B is small (|x| <= 0.6)."""
    n = 1000
    x = np.random.default_rng(3).standard_normal(n).astype(F32) * 4
    x[::97] = np.resize(LARGE, x[::97].size)
    full = _compiled(n, "full", steps=50)([x])[0]
    fast = _compiled(n, "fast", steps=50)([x])[0]
    assert np.array_equal(full.view(np.int32), fast.view(np.int32))
