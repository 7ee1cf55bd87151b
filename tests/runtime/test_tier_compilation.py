"""Tiered compilation (runtime/tiers.py): the fast tier first (tier 0 is off in the tests,
tests/conftest.py; its own tests: test_cold_tier0.py), the full tier swapped in after the
threshold, equal values and errors at both tiers, EMBER_TIER and em.config.set_tier,
both tiers in the disk cache."""

import os
import subprocess
import sys

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import compiler
from ember.backends.cpu.cache import MemoryCache
from ember.runtime import config, tiers


@pytest.fixture(autouse=True)
def tier_settings():
    """Each test starts under "auto" with the default threshold, and leaves it so."""
    em.config.set_tier("auto")
    em.config.set_tier_threshold(config.TIER_THRESHOLD)
    yield
    assert tiers.wait(120)
    em.config.set_tier(None)
    em.config.set_tier_threshold(config.TIER_THRESHOLD)


@pytest.fixture
def fresh_caches(monkeypatch, tmp_path):
    """An empty disk cache and memory cache: every compile here is a real one."""
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "memory_cache", MemoryCache())
    return tmp_path


def _key(*arrays):
    return tuple((a.shape, a.dtype.str) for a in arrays)


def _loop(x):
    for _ in range(20):
        x = em.tanh(x) * 0.5 + 0.1
    return x


def _while(x):
    _, x = em.while_loop(lambda i, x: i < 7, lambda i, x: (i + 1, x * 0.9 + em.sin(x)),
                         (em.constant(0), x))
    return x


def _rng(*shape):
    return np.random.default_rng(7).standard_normal(shape).astype(np.float32)


PROGRAMS = {
    "elementwise": (lambda x, y: (x * 2 + 1) / (y * y + 4) + em.exp(-x * x), (33,), (33,)),
    "matmul": (lambda x, w: em.nn.relu(em.matmul(x, w) + 1.0), (17, 40), (40, 24)),
    "reductions": (lambda x, y: (em.reduce_sum(x * y, axis=1), em.reduce_max(x),
                                 em.reduce_mean(em.abs(y), axis=0)), (9, 130), (9, 130)),
    "unrolled_loop": (lambda x, y: _loop(x) + y, (1000,), (1000,)),
    "while_loop": (lambda x, y: _while(x) - y, (64,), (64,)),
}


def test_first_call_runs_the_fast_tier(fresh_caches):
    @em.function
    def f(x):
        return x * 3.0 + 1.0

    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(f(x).numpy(), x * 3 + 1)
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "fast"}


def test_the_fast_tier_runs_its_short_pass_list_and_a_wrong_pass_name_says_so():
    from ember.backends.cpu.backend import CpuBackend
    from ember.backends.cpu.options import tier_options
    fast = tier_options("fast")
    assert fast.llvm_passes == ("sroa", "instruction_combine", "simplify_cfg")
    assert tier_options("full").llvm_passes is None  # LLVM's O3 pipeline
    ir = "define i32 @f(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n"
    optimised = str(CpuBackend(fast).optimize_llvm(ir))
    assert "add i32" not in optimised and "ret i32 %x" in optimised  # instcombine ran
    with pytest.raises(ValueError, match="llvmlite has no pass 'licm_typo'"):
        CpuBackend(fast.replace(llvm_passes=("licm_typo",))).optimize_llvm(ir)


def test_full_tier_is_swapped_in_after_the_threshold(fresh_caches):
    em.config.set_tier_threshold(3)

    @em.function
    def f(x):
        return em.tanh(x) * 0.5

    x = np.linspace(-2, 2, 50, dtype=np.float32)
    concrete = f.get_concrete_function(x)
    results = [f(x).numpy() for _ in range(2)]
    assert concrete.compiled_tiers == {_key(x): "fast"}  # 2 calls: below the threshold
    results.append(f(x).numpy())  # the third queues the full tier and returns at once
    assert tiers.wait(120)
    assert concrete.compiled_tiers == {_key(x): "full"}
    results.append(f(x).numpy())  # the fast path dropped the fast tier: it fetches the full
    (entry,) = f._fast.values()
    assert not isinstance(entry.exe, tiers.FastTier)
    for r in results:
        np.testing.assert_allclose(r, np.tanh(x) * 0.5, rtol=1e-6)


def test_a_new_threshold_applies_to_code_already_at_the_fast_tier(fresh_caches):
    f = em.function(lambda x: x * 3.0)
    x = np.ones(5, np.float32)
    f(x)  # compiled at the fast tier under the default threshold (10)
    em.config.set_tier_threshold(2)
    f(x)  # the second call reaches the new threshold
    assert tiers.wait(120)
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "full"}


def test_fast_tier_calls_that_take_long_enough_ask_for_the_full_tier(fresh_caches,
                                                                     monkeypatch):
    em.config.set_tier_threshold(1000)  # the count alone would never ask
    f = em.function(lambda x: em.exp(x) * 0.5)
    x = np.ones(8, np.float32)
    f(x)
    assert tiers.wait(120)
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "fast"}  # 0.2 s: not yet
    monkeypatch.setattr(tiers, "HOT_SECONDS", 0.0)  # any time spent is enough now
    f(x)
    assert tiers.wait(120)
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "full"}
    np.testing.assert_allclose(f(x).numpy(), np.exp(x) * 0.5, rtol=1e-6)


def test_a_specialisation_below_the_threshold_stays_fast(fresh_caches):
    em.config.set_tier_threshold(4)

    @em.function(input_signature=[em.TensorSpec([None], em.float32)])  # one trace, two shapes
    def f(x):
        return x - 1.0

    a, b = np.ones(3, np.float32), np.ones(4, np.float32)
    for _ in range(4):
        f(a)
    f(b)
    assert tiers.wait(120)
    assert f.get_concrete_function().compiled_tiers == {_key(a): "full", _key(b): "fast"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_both_tiers_give_the_same_values(name, fresh_caches):
    fn, *shapes = PROGRAMS[name]
    args = [_rng(*s) for s in shapes]
    eager = _flat(fn(*[em.constant(a) for a in args]))
    outs = {}
    for tier in ("fast", "full"):
        em.config.set_tier(tier)
        f = em.function(fn)
        outs[tier] = _flat(f(*args))
        assert set(f.get_concrete_function(*args).compiled_tiers.values()) == {tier}
    for fast, full in zip(outs["fast"], outs["full"]):
        np.testing.assert_allclose(fast, full, rtol=2e-6, atol=1e-6)
    for got, want in zip(outs["fast"], eager):  # and both agree with eager
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5)


def _flat(result) -> list:
    return [np.asarray(r) for r in (result if isinstance(result, tuple) else (result,))]


@pytest.mark.parametrize("tier", ["fast", "full"])
def test_both_tiers_raise_the_same_errors(tier, fresh_caches):
    em.config.set_tier(tier)

    @em.function
    def f(p, i):
        return em.gather(p, i)

    p = np.array([1.0, 2.0, 3.0], np.float32)
    with pytest.raises(em.InvalidArgumentError, match=r"gather index 9 is out of range \[0, 3\)"):
        f(p, np.array([0, 9], np.int32))
    assert set(f.get_concrete_function(p, np.array([0, 9], np.int32))
               .compiled_tiers.values()) == {tier}


def test_ember_tier_environment_variable_forces_a_tier(fresh_caches, monkeypatch):
    em.config.set_tier(None)  # follow the environment
    x = np.ones(6, np.float32)
    for tier in ("fast", "full"):
        monkeypatch.setenv("EMBER_TIER", tier)
        assert em.config.get_tier() == tier
        em.config.set_tier_threshold(1)

        @em.function
        def f(x):
            return x + 2.0

        for _ in range(3):
            np.testing.assert_array_equal(f(x).numpy(), x + 2)
        assert tiers.wait(120)
        assert f.get_concrete_function(x).compiled_tiers == {_key(x): tier}  # never swapped
    monkeypatch.setenv("EMBER_TIER", "quick")
    with pytest.raises(ValueError, match="EMBER_TIER='quick' is not a compilation tier: "
                                         "set it to one of auto, fast, full, interp"):
        em.config.get_tier()
    monkeypatch.delenv("EMBER_TIER")
    assert em.config.get_tier() == "auto"


def test_set_tier_and_threshold_check_their_arguments():
    with pytest.raises(ValueError, match="tier must be one of 'auto', 'fast', 'full', 'interp' "
                                         "or None, got 'O3'"):
        em.config.set_tier("O3")
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="calls must be an int >= 1"):
            em.config.set_tier_threshold(bad)
    em.config.set_tier("full")
    assert em.config.get_tier() == "full"


# Two processes on one cache directory: the first compiles both tiers of `scale` (threshold
# 1), then queues the full tier of `shift` and exits at once (the exit must neither hang nor
# crash: the queued compile is cancelled or joined); the second finds `scale`'s full tier.
SCRIPT = """
import logging, sys
import numpy as np
import ember as em
from ember.backends import compile_log
from ember.runtime import tiers
steps = []
compile_log.LOGGER.addHandler(logging.Handler())
compile_log.LOGGER.handlers[-1].emit = lambda r: steps.append(r.getMessage())
compile_log.LOGGER.setLevel(logging.INFO)
em.config.set_tier_threshold(1)

@em.function
def scale(x):
    return em.sqrt(x) * 2.0

@em.function
def shift(x):
    return x - 0.5

x = np.arange(8, dtype=np.float32)
np.testing.assert_allclose(scale(x).numpy(), np.sqrt(x) * 2, rtol=1e-6)
print("first", list(scale.get_concrete_function(x).compiled_tiers.values()))
print("compiled", any("llvm-optimize" in s for s in steps))
if sys.argv[1] == "first":
    assert tiers.wait(120)
    print("after", list(scale.get_concrete_function(x).compiled_tiers.values()))
    shift(x)  # queues a full-tier compile; the process exits while it runs
"""


def test_both_tiers_are_cached_on_disk_and_the_full_one_is_used_at_once(tmp_path):
    script = tmp_path / "tiers_on_disk.py"
    script.write_text(SCRIPT)
    cache = tmp_path / "cache"
    env = dict(os.environ, EMBER_CACHE_DIR=str(cache))
    env.pop("EMBER_TIER", None)

    def run(which):
        done = subprocess.run([sys.executable, str(script), which], env=env, timeout=300,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr and "Fatal" not in done.stderr, done.stderr
        return done.stdout.split("\n")

    assert run("first")[:3] == ["first ['fast']", "compiled True", "after ['full']"]
    entries = sorted(p.name for p in cache.rglob("*.obj"))
    assert len(entries) >= 3  # scale's two tiers, shift's fast tier (and its full, if done)
    assert run("second")[:2] == ["first ['full']", "compiled False"]  # loaded at once


def test_fast_tier_products_call_openblas_and_build_no_gemm_library(fresh_caches,
                                                                     monkeypatch):
    from ember.backends.cpu import blas_library, kernels
    monkeypatch.setattr(kernels, "_engines", {})  # as in a new process
    monkeypatch.setenv("EMBER_BLAS", "auto")
    em.config.set_tier("fast")
    x, w = _rng(64, 96), _rng(96, 80)
    got = em.function(lambda x, w: em.nn.relu(em.matmul(x, w)))(x, w).numpy()
    np.testing.assert_allclose(got, np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)
    # numpy's OpenBLAS needs no compiling; without one, the GEMM library's fast tier
    assert {key[3] for key in kernels._engines} == \
        (set() if blas_library.available() else {True})


@pytest.mark.slow  # builds the GEMM library at both tiers: ~6 s of CPU
def test_fast_tier_products_use_the_fast_gemm_library_until_the_full_one_is_at_hand(
        fresh_caches, monkeypatch):
    from ember.backends.cpu import kernels
    monkeypatch.setattr(kernels, "_engines", {})  # as in a new process
    monkeypatch.setenv("EMBER_BLAS", "off")  # Ember's own kernels at both tiers

    def mlp(x, w):
        return em.nn.relu(em.matmul(x, w))

    x, w = _rng(64, 96), _rng(96, 80)
    want = np.maximum(x @ w, 0)
    em.config.set_tier("fast")
    np.testing.assert_allclose(em.function(mlp)(x, w).numpy(), want, rtol=1e-4, atol=1e-4)
    assert {key[3] for key in kernels._engines} == {True}  # the library's fast tier only
    em.config.set_tier("auto")
    em.config.set_tier_threshold(1)
    f = em.function(mlp)
    np.testing.assert_allclose(f(x, w).numpy(), want, rtol=1e-4, atol=1e-4)
    assert tiers.wait(300)  # the full tier of the function needs the library's full tier
    assert {key[3] for key in kernels._engines} == {True, False}
    assert f.get_concrete_function(x, w).compiled_tiers == {_key(x, w): "full"}
    np.testing.assert_allclose(f(x, w).numpy(), want, rtol=1e-4, atol=1e-4)
    em.config.set_tier("fast")  # now that the full library is at hand, fast code takes it
    np.testing.assert_allclose(em.function(mlp)(x, w).numpy(), want, rtol=1e-4, atol=1e-4)
