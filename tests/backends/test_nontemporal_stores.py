"""Streaming stores for large elementwise outputs (backends/cpu/nontemporal.py): the full
tier writes the vector loop itself, with `nontemporal` stores where every output is aligned
and the generic as it was elsewhere; either way the values are the fast tier's (no
vectorisation, no streaming) bit for bit. MIN_BYTES is lowered so small inputs take it."""

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import host_target, nontemporal
from ember.backends.cpu.backend import CpuBackend, CpuOptions, tier_options
from ember.backends.cpu.compiler import compile_function
from ember.backends.cpu.parallel import SplitExecutable
from ember.dialects.ember.types import TensorType

pytestmark = pytest.mark.skipif(
    not {"+avx", "+avx512f"} & set(host_target.host()[1].split(",")),
    reason="streaming stores are written for x86 with AVX only")


@pytest.fixture
def small(monkeypatch, cache_dir):
    """Streaming from 1 KiB of outputs on, compiled afresh (an empty cache)."""
    monkeypatch.setattr(nontemporal, "MIN_BYTES", 1024)
    return cache_dir


def _concrete(fn, *arrays):
    return em.function(fn).get_concrete_function(*[em.constant(a) for a in arrays])


def _compile(fn, *arrays, options: CpuOptions):
    concrete = _concrete(fn, *arrays)
    types = [TensorType(em.as_dtype(a.dtype), a.shape) for a in arrays]
    return compile_function(concrete._executor._text, concrete._executor._symbol, types,
                            CpuBackend(options))


def _full_and_fast(fn, *arrays, threads=1):
    full = _compile(fn, *arrays, options=CpuOptions(threads=threads))
    fast = _compile(fn, *arrays, options=tier_options("fast"))
    return full(list(arrays)), fast(list(arrays))


def _same_bits(got, want):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g.view(f"u{g.itemsize}"), w.view(f"u{w.itemsize}"))


def _case_c(x):
    return ((x * 2 + 1) * x - 3) / (x + 4) + em.sin(x)


def test_the_llvm_stage_streams_the_stores_and_fences_them(small):
    x = np.ones(4096, np.float32)
    text = str(_concrete(_case_c, x).mlir("llvm"))
    assert "nontemporal" in text and "llvm.x86.sse.sfence" in text
    assert "__ember_sin_f32_" in text  # sin's vector variant, as the vectoriser calls it


def test_below_the_threshold_the_loop_is_llvms(cache_dir):
    x = np.ones(4096, np.float32)
    assert "nontemporal" not in str(_concrete(_case_c, x).mlir("llvm"))


@pytest.mark.parametrize("n", [4096, 4099, 7])
def test_values_are_the_fast_tiers_with_and_without_a_masked_tail(small, n):
    x = np.random.default_rng(n).uniform(-5, 5, n).astype(np.float32)
    x[:3] = [np.nan, np.inf, 1e30]
    full, fast = _full_and_fast(_case_c, x)
    _same_bits(full, fast)


def test_a_matrix_is_streamed_as_one_row_with_tanh_exp_and_a_broadcast_scalar(small):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((33, 47)).astype(np.float32)  # 1551: a tail of 15 lanes or 7
    y = rng.standard_normal((33, 47)).astype(np.float32)
    s = np.float32(0.75)
    full, fast = _full_and_fast(lambda x, y, s: em.tanh(x) * em.exp(y) - s, x, y, s)
    _same_bits(full, fast)
    np.testing.assert_allclose(full[0], np.tanh(x) * np.exp(y) - s, rtol=1e-5, atol=1e-6)


def test_float64_and_two_outputs(small):
    x = np.random.default_rng(2).uniform(-3, 3, 1000).astype(np.float64)
    full, fast = _full_and_fast(lambda x: (em.exp(x) * 0.5, x * x - 1.0), x)
    _same_bits(full, fast)


def test_an_output_block_at_an_unaligned_address_takes_the_generic(small):
    # two threads, rows of 257 floats: the second block starts at row 513, 527,364 bytes in
    x = np.random.default_rng(3).uniform(-2, 2, (1025, 257)).astype(np.float32)
    exe = _compile(_case_c, x, options=CpuOptions(threads=2))
    assert isinstance(exe, SplitExecutable)
    _same_bits(exe([x]), _compile(_case_c, x, options=tier_options("fast"))([x]))


def test_integer_division_keeps_the_generic(small):
    x = np.arange(1, 4097, dtype=np.int32)
    text = str(_concrete(lambda x: x // 3 + x % 7, x).mlir("llvm"))
    assert "nontemporal" not in text


def test_the_program_of_bench_case_c_agrees_with_numpy(small):
    x = np.random.default_rng(4).uniform(-1, 1, 100_003).astype(np.float32)
    got = em.function(_case_c)(em.constant(x)).numpy()
    want = ((x * 2 + 1) * x - 3) / (x + 4) + np.sin(x)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
