"""The background side of tiered compilation (runtime/tiers.py): a failed full-tier compile
keeps the fast tier and warns once, and functions called from several threads stay correct
while their code is swapped."""

import threading
import types
import warnings

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import compiler
from ember.backends.cpu.cache import MemoryCache
from ember.runtime import config, tiers


@pytest.fixture(autouse=True)
def auto_tier(monkeypatch, tmp_path):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "memory_cache", MemoryCache())
    em.config.set_tier("auto")
    yield
    assert tiers.wait(120)
    em.config.set_tier(None)
    em.config.set_tier_threshold(config.TIER_THRESHOLD)


def _key(*arrays):
    return tuple((a.shape, a.dtype.str) for a in arrays)


def test_failed_full_tier_keeps_the_fast_tier_and_warns_once(monkeypatch):
    compile_tier = compiler.CpuCompiler.compile

    def full_tier_breaks(self, *args, tier="full", cached_only=False, **kwargs):
        if tier == "full" and not cached_only:
            raise RuntimeError("LLVM ran out of registers")
        return compile_tier(self, *args, tier=tier, cached_only=cached_only, **kwargs)

    monkeypatch.setattr(compiler.CpuCompiler, "compile", full_tier_breaks)
    em.config.set_tier_threshold(2)

    @em.function(input_signature=[em.TensorSpec([None], em.float32)])
    def stays_fast(x):
        return x * x + 1.0

    a, b = np.arange(3, dtype=np.float32), np.arange(5, dtype=np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in (a, b):  # two specialisations, each recompile fails
            for _ in range(3):
                np.testing.assert_array_equal(stays_fast(x).numpy(), x * x + 1)
            assert tiers.wait(120)
    tier_warnings = [w for w in caught if issubclass(w.category, em.TierWarning)]
    assert len(tier_warnings) == 1, [str(w.message) for w in caught]
    message = str(tier_warnings[0].message)
    assert "em.function 'stays_fast'" in message
    assert "keeps running its fast-tier code" in message
    assert "RuntimeError: LLVM ran out of registers" in message
    concrete = stays_fast.get_concrete_function()
    assert concrete.compiled_tiers == {_key(a): "fast", _key(b): "fast"}
    for x in (a, b):  # and it goes on running, at the fast tier, asking no more
        np.testing.assert_array_equal(stays_fast(x).numpy(), x * x + 1)
    assert tiers.wait(120)
    assert concrete._executor.compiled(_key(a)).failure.startswith("RuntimeError")


def test_tier_warning_is_public():
    assert em.errors.TierWarning is em.TierWarning is tiers.TierWarning
    assert issubclass(em.TierWarning, em.errors.EmberWarning)


def test_threads_calling_across_the_swap_get_correct_results():
    em.config.set_tier_threshold(5)

    @em.function
    def f(x, y):
        return em.tanh(x) * y + em.reduce_sum(y)

    x = np.linspace(-3, 3, 257, dtype=np.float32)
    y = np.linspace(0, 1, 257, dtype=np.float32)
    want = np.tanh(x) * y + y.sum()
    f(x, y)
    errors, start = [], threading.Barrier(4)

    def worker():
        try:
            start.wait()
            for _ in range(60):
                np.testing.assert_allclose(f(x, y).numpy(), want, rtol=1e-5)
                np.testing.assert_allclose(f(em.constant(x), y).numpy(), want, rtol=1e-5)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert tiers.wait(120)
    assert f.get_concrete_function(x, y).compiled_tiers == {_key(x, y): "full"}
    np.testing.assert_allclose(f(x, y).numpy(), want, rtol=1e-5)


def test_mirrored_strategy_replicas_run_across_the_swap():
    em.config.set_tier_threshold(3)
    strategy = em.distribute.MirroredStrategy()

    @em.function
    def step(x):
        return em.reduce_sum(x * 2.0)

    x = em.constant(np.arange(12, dtype=np.float32))
    for _ in range(6):
        per_replica = strategy.run(step, args=(x,))
        total = strategy.reduce("SUM", per_replica, axis=None)
        np.testing.assert_allclose(np.asarray(total),
                                   132.0 * strategy.num_replicas_in_sync, rtol=1e-6)
    assert tiers.wait(120)


def test_wait_returns_when_nothing_is_queued():
    assert tiers.wait(0.0)


class _Code:
    """Stands for compiled code: FastTier only calls it and reads these two."""
    fast_path = None
    variables = ()

    def __call__(self, arrays):
        return arrays


def _timed(monkeypatch, seconds):
    """tiers' clock, made to read 0 at each timed call's start and `seconds[i]` at its end."""
    times = iter([t for s in seconds for t in (0.0, s)])
    monkeypatch.setattr(tiers, "time", types.SimpleNamespace(perf_counter=lambda: next(times)))


def test_a_fast_tier_call_slower_than_tier_0_asks_for_the_full_tier_at_once(monkeypatch):
    """Where the interpreter ran a function faster than fast-tier code does (numpy's `sin`
    against scalar loops), the first slower call queues the full tier, without waiting for
    the threshold's calls; a call about as fast as tier 0's does not."""
    for call_seconds, asks in ((0.020, True), (0.012, False)):
        asked = []
        fast = tiers.FastTier(_Code(), asked.append)
        fast.tier0_seconds = 0.010
        _timed(monkeypatch, [call_seconds])
        fast([])
        assert (asked == [fast]) is asks, call_seconds
