"""A function with many loop nests is compiled as one function per nest (the LLVM stage's
ember-outline-loop-nests): LLVM's loop passes cost more than linearly in the size of the
function holding the loops. The split changes no value and no error, at either tier."""

import numpy as np
import pytest

import ember as em
from ember.backends.cpu.backend import FAST_TIER, CpuBackend, CpuOptions
from ember.backends.cpu.compilable import check_compilable
from ember.backends.cpu.compiler import specialize
from ember.dialects.ember.types import TensorType
from ember.passes.transforms.outline_loop_nests import MIN_NESTS

STEPS = 30  # each step's scan and reduction are loop nests of their own: 60 + a few


def _many_nests(x):
    for _ in range(STEPS):
        x = em.cumsum(x, axis=0) * 0.5
        x = x - em.reduce_max(x, axis=0, keepdims=True)
    return x


def _few_nests(x):
    x = em.cumsum(x, axis=0)
    return x - em.reduce_max(x, axis=0, keepdims=True)


X = np.random.default_rng(3).standard_normal((8, 5)).astype(np.float32)


def _llvm_stage(fn, options=None) -> str:
    concrete = em.function(fn).get_concrete_function(em.constant(X))
    text, symbol = concrete._executor._text(), concrete._executor._symbol
    module = specialize(text, symbol, [TensorType(em.float32, X.shape)])
    check_compilable(module, symbol)
    return str(CpuBackend(options).lower(module, "llvm"))


def test_many_nests_become_internal_noinline_functions_and_few_do_not():
    many = _llvm_stage(_many_nests)
    outlined = many.count("llvm.func internal @_many_nests")
    assert outlined >= MIN_NESTS > STEPS, outlined
    assert many.count('passthrough = ["noinline"]') >= outlined
    few = _llvm_stage(_few_nests)
    assert ".nest" not in few


@pytest.mark.parametrize("tier", ["fast", "full"])
def test_outlined_nests_compute_what_eager_computes(tier, monkeypatch):
    monkeypatch.setenv("EMBER_TIER", tier)
    fn = em.function(_many_nests)
    got = fn(em.constant(X)).numpy()
    np.testing.assert_allclose(got, _many_nests(em.constant(X)).numpy(), rtol=1e-5, atol=1e-6)


def test_an_error_inside_an_outlined_nest_is_eagers():
    def gathers(x, i):
        for _ in range(STEPS):
            x = em.cumsum(x, axis=0) * 0.5
            x = x - em.reduce_max(x, axis=0, keepdims=True)
        return em.gather(x, i)

    index = em.constant(np.array([1, 9], np.int32))  # 9 is out of range for 8 rows
    with pytest.raises(em.InvalidArgumentError) as eager:
        gathers(em.constant(X), index)
    with pytest.raises(em.InvalidArgumentError) as compiled:
        em.function(gathers)(em.constant(X), index)
    assert str(compiled.value).startswith(str(eager.value)), (compiled.value, eager.value)


def test_the_fast_tier_splits_too():
    assert "llvm.func internal @_many_nests" in _llvm_stage(_many_nests,
                                                            CpuOptions(**FAST_TIER))
