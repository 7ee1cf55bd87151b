"""Tier 0 of tiered compilation (runtime/tier0.py): the first calls run on the interpreter,
agree with compiled code and eager on values and errors, the compiled tier is swapped in,
and what tier 0 may not run goes straight to the compiled tiers."""

import os
import subprocess
import sys

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import compiler
from ember.backends.cpu.cache import MemoryCache
from ember.passes.pipeline import PassFailure
from ember.runtime import config, tier0, tiers


@pytest.fixture(autouse=True)
def tier_settings(monkeypatch, tmp_path):
    """An empty disk cache and memory cache, tier 0 on, "auto", the default threshold."""
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EMBER_TIER0", "on")  # off for the other tests (tests/conftest.py)
    monkeypatch.setattr(compiler, "memory_cache", MemoryCache())
    em.config.set_tier("auto")
    em.config.set_tier_threshold(config.TIER_THRESHOLD)
    yield
    assert tiers.wait(120)
    em.config.set_tier(None)
    em.config.set_tier_threshold(config.TIER_THRESHOLD)


def _key(*arrays):
    return tuple((a.shape, a.dtype.str) for a in arrays)


def _rng(*shape, dtype=np.float32):
    return np.random.default_rng(11).standard_normal(shape).astype(dtype)


def _mlp(x, w1, w2):
    h = em.nn.relu(em.matmul(x, w1) + 0.5)
    return em.nn.softmax(em.matmul(h, w2)), em.reduce_sum(h, axis=0)


def _chain(x):
    for _ in range(30):
        x = em.tanh(x) * 0.5 + 0.1
    return x


PROGRAMS = {  # all for tier 0
    "chain": (_chain, [(1000,)]),
    "mlp": (_mlp, [(8, 20), (20, 16), (16, 4)]),
    "reductions": (lambda x, y: (em.reduce_max(x * y), em.reduce_mean(em.abs(y), axis=0),
                                 em.transpose(x) - 1.0, em.reshape(y, [-1])),
                   [(6, 5), (6, 5)]),
    "compare": (lambda x, y: em.where(x > y, x, y * 2.0), [(40,), (40,)]),
    "float64": (lambda x: em.exp(-x * x) / (x * x + 1.0), [(33,)]),
    "nested": (lambda x: em.function(lambda a: a * a)(x) + x, [(7,)]),
}


def _flat(result) -> list:
    return [np.asarray(r) for r in (result if isinstance(result, tuple) else (result,))]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_tier_0_agrees_with_compiled_code_and_eager(name):
    fn, shapes = PROGRAMS[name]
    dtype = np.float64 if name == "float64" else np.float32
    args = [_rng(*s, dtype=dtype) for s in shapes]
    eager = _flat(fn(*[em.constant(a) for a in args]))
    outs = {}
    for tier in ("interp", "full"):
        em.config.set_tier(tier)
        f = em.function(fn)
        outs[tier] = _flat(f(*args))
        assert set(f.get_concrete_function(*args).compiled_tiers.values()) == {tier}
    for got, compiled, want in zip(outs["interp"], outs["full"], eager):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)  # the same numpy kernels as eager
        np.testing.assert_allclose(got, compiled, rtol=2e-5, atol=1e-5)


def test_auto_runs_tier_0_first_and_swaps_the_fast_tier_in():
    em.config.set_tier_threshold(1000)  # no full tier here
    f = em.function(lambda x: em.sin(x) * 2.0)
    x = _rng(50)
    before = len(tiers.swaps())
    first = f(x).numpy()
    assert tiers.wait(120)  # called once: nothing queued
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "interp"}
    assert len(tiers.swaps()) == before
    np.testing.assert_array_equal(f(x).numpy(), first)  # the second call queues the compile
    assert tiers.wait(120)
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "fast"}
    assert [s[:3] for s in tiers.swaps()[before:]] == [(f.get_concrete_function(x).name,
                                                        "interp", "fast")]
    second = f(x).numpy()  # on compiled code now, through the fast path
    (entry,) = f._fast.values()
    assert isinstance(entry.exe, tiers.FastTier)
    np.testing.assert_array_equal(first, np.sin(x) * np.float32(2))
    np.testing.assert_allclose(second, first, rtol=2e-6, atol=1e-6)


def test_long_tier_0_calls_compile_the_full_tier_in_place_of_the_fast_one(monkeypatch):
    em.config.set_tier_threshold(1000)
    monkeypatch.setattr(tiers, "HOT_SECONDS", 0.0)  # every tier-0 call counts as long
    f = em.function(lambda x: em.tanh(x) * em.exp(-x))
    x = _rng(64)
    before = len(tiers.swaps())
    first, _ = f(x).numpy(), f(x)  # the second call queues the compile
    assert tiers.wait(120)
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "full"}
    assert [s[1:3] for s in tiers.swaps()[before:]] == [("interp", "full")]
    np.testing.assert_allclose(f(x).numpy(), first, rtol=2e-6, atol=1e-6)


def test_tier_0_calls_count_towards_the_full_tier():
    em.config.set_tier_threshold(3)
    f = em.function(lambda x: x * 3.0 - 1.0)
    x = _rng(16)
    for _ in range(3):  # all on tier 0 or some on the fast tier: three calls either way
        np.testing.assert_allclose(f(x).numpy(), x * 3 - 1, rtol=1e-6)
    assert tiers.wait(120)
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "full"}


@pytest.mark.parametrize("tier", ["interp", "fast"])
def test_an_error_on_tier_0_is_the_compiled_codes(tier):
    em.config.set_tier(tier)

    @em.function(input_signature=[em.TensorSpec([None], em.float32)] * 2)
    def f(x, y):
        return x + y * 2.0

    x, y = np.ones(3, np.float32), np.ones(4, np.float32)
    with pytest.raises(em.OpShapeError) as caught:
        f(x, y)
    # the call was run again on compiled code: its error, and its code from now on
    assert set(f.get_concrete_function().compiled_tiers.values()) == {"fast"}
    assert "ember.mul" in str(caught.value) or "ember.add" in str(caught.value)
    np.testing.assert_array_equal(f(x, x).numpy(), x * 3)


def test_both_paths_raise_the_same_error_message():
    messages = {}
    for tier in ("interp", "fast"):
        em.config.set_tier(tier)
        f = em.function(lambda x, y: x - y, input_signature=[em.TensorSpec([None],
                                                                            em.float32)] * 2)
        with pytest.raises(em.OpShapeError) as caught:
            f(np.ones(2, np.float32), np.ones(5, np.float32))
        messages[tier] = str(caught.value)
    assert messages["interp"] == messages["fast"]


def test_results_never_share_memory_with_inputs_or_each_other():
    em.config.set_tier("interp")
    f = em.function(lambda x: (x, em.reshape(x, [2, 3]), em.transpose(em.reshape(x, [2, 3])),
                               em.constant(np.ones(6, np.float32))))
    x = np.arange(6, dtype=np.float32)
    outs = [t.numpy() for t in f(x)]
    assert set(f.get_concrete_function(x).compiled_tiers.values()) == {"interp"}
    for i, a in enumerate(outs):
        assert not np.shares_memory(a, x) and a.flags.c_contiguous
        assert all(not np.shares_memory(a, b) for b in outs[i + 1:])
    again = [t.numpy() for t in f(x)]
    assert not np.shares_memory(again[3], outs[3])  # a constant: a new buffer each call
    np.testing.assert_array_equal(outs[2], x.reshape(2, 3).T)


def _while(x):
    _, x = em.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 0.5), (em.constant(0), x))
    return x


def test_what_tier_0_may_not_run_compiles_as_before():
    v = em.Variable(np.ones(4, np.float32))
    cases = {
        "integers": (lambda x: x * 2 + 1, np.arange(4, dtype=np.int32), "tensor<4xi32>"),
        "loop": (_while, np.ones(4, np.float32), "'scf.while'"),
        "variable": (lambda x: v.assign_add(x), np.ones(4, np.float32), "ember."),
        "random": (lambda x: x + em.random.uniform([4], seed=3), np.ones(4, np.float32),
                   "ember."),
        "callback": (lambda x: em.py_function(lambda a: a * 2, [x], em.float32),
                     np.ones(4, np.float32), "calls back into Python"),
    }
    for name, (fn, x, why) in cases.items():
        f = em.function(fn)
        f(x)
        graph = f.get_concrete_function(x)._graph
        reason = tier0.ineligible(graph.module, graph.callbacks)
        assert reason is not None and why in reason, (name, reason)
        assert "interp" not in f.get_concrete_function(x).compiled_tiers.values(), name
    np.testing.assert_array_equal(v.numpy(), np.full(4, 2, np.float32))


def test_a_pipeline_the_user_chose_compiles_at_the_first_call_and_fails_there():
    """Found by a pass-researcher trial: with a failing pipeline of upstream passes, tier 0
    ran the unoptimised trace and the failure became a background compile's TierWarning,
    even under set_fallback("error")."""
    x = np.array([1.0, 2.0], np.float32)
    for pipeline in (None, "builtin.module(ember-optimize)"):  # the default, or none: tier 0
        f = em.function(lambda x: em.tanh(x + x), pipeline=pipeline)
        f(x)
        assert f.get_concrete_function(x).compiled_tiers == {_key(x): "interp"}, pipeline
    chosen = em.function(lambda x: em.tanh(x + x), pipeline="builtin.module(ember-cse)")
    chosen(x)
    assert chosen.get_concrete_function(x).compiled_tiers == {_key(x): "fast"}
    failing = em.function(lambda x: em.tanh(x + x),
                          pipeline="builtin.module(one-shot-bufferize)")
    with pytest.raises(PassFailure, match="op was not bufferized"):
        failing(x)


def test_ember_tier_interp_never_compiles_what_tier_0_runs(monkeypatch):
    em.config.set_tier(None)
    monkeypatch.setenv("EMBER_TIER", "interp")
    em.config.set_tier_threshold(1)
    f = em.function(lambda x: em.exp(x) + 1.0)
    x = _rng(9)
    for _ in range(3):
        np.testing.assert_array_equal(f(x).numpy(), np.exp(x) + np.float32(1))
    assert tiers.wait(120)
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "interp"}


def test_ember_tier_interp_interprets_even_what_the_disk_cache_holds(tmp_path):
    """EMBER_TIER=interp forces tier 0, as fast and full force theirs: a process finding
    the full tier in the disk cache (left by another) still interprets."""
    program = ("import numpy as np\nimport ember as em\n"
               "f = em.function(lambda x: em.tanh(x) * 0.5)\nx = np.ones(7, np.float32)\n"
               "y = f(x).numpy()\n"
               "print(list(f.get_concrete_function(x).compiled_tiers.values()), y[0])")
    outs = []
    for tier in ("full", "interp"):
        env = {**os.environ, "EMBER_CACHE_DIR": str(tmp_path), "EMBER_TIER": tier,
               "EMBER_TIER0": "on"}
        outs.append(subprocess.run([sys.executable, "-c", program], env=env, check=True,
                                   capture_output=True, text=True, timeout=120).stdout.split())
    assert outs[0][0] == "['full']" and outs[1][0] == "['interp']"
    assert abs(float(outs[0][1]) - float(outs[1][1])) < 1e-6


def test_a_failed_background_compile_keeps_tier_0_and_warns(monkeypatch):
    em.config.set_tier_threshold(1000)
    from ember.runtime import executor

    def broken(self, types, tier, cached_only):
        if cached_only:
            return None
        raise RuntimeError("no compiler today")
    monkeypatch.setattr(executor.Executor, "_compile_tier", broken)
    f = em.function(lambda x: x * 0.25)
    x = _rng(5)
    with pytest.warns(tiers.TierWarning, match="keeps running on the interpreter.*"
                                               "no compiler today"):
        f(x)
        f(x)
        assert tiers.wait(120)
        np.testing.assert_array_equal(f(x).numpy(), x * np.float32(0.25))
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "interp"}


def test_aot_compiles_ahead_of_time_under_tier_0(tmp_path):
    em.config.set_tier("interp")

    @em.function(input_signature=[em.TensorSpec([None], em.float32)])
    def scaled(x):
        return x * 4.0

    em.aot.compile(scaled, out_dir=str(tmp_path / "lib"))
    lib = em.aot.load(str(tmp_path / "lib"))
    np.testing.assert_array_equal(np.asarray(lib(np.ones(3, np.float32))), np.full(3, 4.0))


def test_ember_tier0_off_compiles_first_calls_and_is_checked(monkeypatch):
    monkeypatch.setenv("EMBER_TIER0", "off")
    f = em.function(lambda x: x + 0.5)
    x = _rng(4)
    f(x)
    assert f.get_concrete_function(x).compiled_tiers == {_key(x): "fast"}
    monkeypatch.setenv("EMBER_TIER0", "maybe")
    with pytest.raises(ValueError, match="EMBER_TIER0='maybe': set it to on or off"):
        config.tier0_enabled()


def test_a_trace_dropped_before_its_compile_starts_is_not_compiled():
    import gc
    import threading
    import weakref
    gate = threading.Event()
    assert tiers._background.submit(gate.wait)  # holds the compile thread meanwhile
    f = em.function(lambda x: x * 5.0)
    x = _rng(3)
    f(x)
    f(x)  # queues its compile behind the gate
    trace = weakref.ref(f.get_concrete_function(x))
    del f
    gc.collect()
    gate.set()
    assert tiers.wait(120)
    assert trace() is None
