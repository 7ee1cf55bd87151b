"""Loops whose body is one long dependency chain are interleaved (backends/cpu/interleave.py):
LLVM gets `llvm.loop.interleave.count` for them in the full tier, short bodies and the fast
tier are left alone, and results do not change."""

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import interleave
from ember.backends.cpu.backend import FAST_TIER, CpuBackend, CpuOptions
from ember.backends.cpu.compilable import check_compilable
from ember.backends.cpu.compiler import specialize
from ember.backends.cpu.jit import Executable, entry_wrapper, jit_compile
from ember.dialects.ember.types import TensorType

STEPS = 50


def _chain(x):
    for _ in range(STEPS):
        x = em.tanh(x) * 0.5 + 0.1
    return x


def _short(x):
    return x * 2.0 + 1.0


def _traced(fn, x):
    concrete = em.function(fn).get_concrete_function(em.constant(x))
    types = [TensorType(em.as_dtype(x.dtype), x.shape)]
    return concrete._executor._text(), concrete._executor._symbol, types


def _lowered(fn, x, stop, backend=None):
    text, symbol, types = _traced(fn, x)
    module = specialize(text, symbol, types)
    results = check_compilable(module, symbol)
    return (backend or CpuBackend()).lower(module, stop), symbol, types, results


X = np.random.default_rng(7).standard_normal(1000).astype(np.float32)  # 62.5 vectors


def test_a_long_chain_is_interleaved_and_a_short_one_is_not():
    long_ir = str(_lowered(_chain, X, "llvm")[0])
    assert f"loop_interleave<count = {interleave.INTERLEAVE}" in long_ir
    assert "loop_interleave" not in str(_lowered(_short, X, "llvm")[0])


def test_the_fast_tier_is_not_interleaved():
    fast = CpuBackend(CpuOptions(**FAST_TIER))
    assert "loop_interleave" not in str(_lowered(_chain, X, "llvm", fast)[0])


@pytest.mark.parametrize("size", [1000, 7, 64 * interleave.INTERLEAVE + 3])
def test_interleaving_changes_no_bit_of_the_result(monkeypatch, size):
    x = X[:size] if size <= len(X) else np.resize(X, size)

    def run():
        llvm_ir, symbol, types, results = _lowered(_chain, x, "llvmir")
        llvm_ir += entry_wrapper(symbol, types + results)
        exe = Executable(jit_compile(CpuBackend(), llvm_ir), symbol, types, results)
        return exe([x])[0], llvm_ir

    interleaved, text = run()
    assert "llvm.loop.interleave.count" in text
    monkeypatch.setattr(interleave, "MIN_CHAIN", 1 << 30)
    plain, text = run()
    assert "llvm.loop.interleave.count" not in text
    np.testing.assert_array_equal(interleaved, plain)
    want = x.copy()
    for _ in range(STEPS):
        want = np.tanh(want) * np.float32(0.5) + np.float32(0.1)
    np.testing.assert_allclose(interleaved, want, rtol=1e-5, atol=1e-6)
