"""Float sums over many elements add in blocks (passes/conversions/ember_to_linalg/
blocked_sum.py): compiled float32 sums stay within a few units of the last place of the
exact sum however many elements they add (loop order lost 9% over 10**7), over any block of
adjacent dims, static and `?`, or over axes apart (one run of adjacent dims at a time), and
match numpy."""

import numpy as np
import pytest

import lowering_harness

import ember as em

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def compiled_first_calls(monkeypatch):
    monkeypatch.setenv("EMBER_TIER0", "off")  # the first call compiles (never numpy's sum)


def test_a_long_float32_sum_keeps_its_precision():
    x = np.full([3 * 10**6 + 77], 0.1, np.float32)
    exact = x.astype(np.float64).sum()
    for fn in (em.reduce_sum, lambda v: em.reduce_mean(v) * float(x.size),
               lambda v: em.reduce_sum(em.reshape(v, [-1, 1]), axis=0)[0],
               lambda v: em.reduce_sum(em.reshape(v, [1, -1, 1]), axis=1)[0, 0]):
        got = float(np.asarray(em.function(fn)(em.constant(x))))
        assert abs(got - exact) / exact < 1e-5, got


def test_a_sum_over_axes_apart_keeps_its_precision():
    """Over (0, 2), each output adds 10**6 elements: loop order gave 100958 (1% off)."""
    x = np.full([1000, 2, 1000], 0.1, np.float32)
    exact = x.astype(np.float64).sum(axis=(0, 2))
    for spec in (None, [em.TensorSpec([None] * 3, em.float32)]):
        got = em.function(lambda v: em.reduce_sum(v, axis=(0, 2)), input_signature=spec)(
            em.constant(x)).numpy()
        assert np.all(np.abs(got - exact) / exact < 1e-5), got


CASES = [((1000,), None), ((3, 300), 1), ((2, 3, 100), (1, 2)), ((5000, 3), 0),
         ((300, 2, 5), (0, 1)), ((129,), None), ((4, 20000), -1), ((7, 130), 0),
         ((3, 5000, 2), 1), ((2, 300, 4, 3), (1, 2)), ((2, 3, 4), (0, 2)),
         ((40, 3, 50), (0, 2)), ((7, 30, 3, 20, 2), (0, 2, 4)), ((130, 2, 3), (0, 2)),
         ((5, 200, 2, 3), (1, 3))]


@pytest.mark.parametrize("shape,axis", CASES)
def test_blocked_sums_and_means_match_numpy(shape, axis):
    for dtype, tol in ((np.float32, 1e-5), (np.float16, 2e-2), (np.float64, 1e-12)):
        x = (RNG.standard_normal(shape) + 0.5).astype(dtype)
        spec = [em.TensorSpec([None] * len(shape), em.as_dtype(dtype))]
        for name, ref in (("reduce_sum", np.sum), ("reduce_mean", np.mean)):
            def fn(v):
                return getattr(em, name)(v, axis=axis, keepdims=True)
            want = ref(x.astype(np.float64), axis=axis, keepdims=True)
            scale = np.abs(x.astype(np.float64)).sum(axis=axis, keepdims=True) + 1
            for run in (em.function(fn), em.function(fn, input_signature=spec)):
                got = run(em.constant(x)).numpy()
                assert got.shape == want.shape and got.dtype == dtype
                err = np.abs(got.astype(np.float64) - want) / (scale if name == "reduce_sum"
                                                               else scale / x.size * want.size)
                assert err.max() < tol, (name, dtype, err.max())


def test_an_innermost_sum_adds_in_lanes_within_a_few_units_of_the_last_place():
    # rows of 128 summed in turn were off by 3e-6 here (numpy's pairwise sum: 6e-8)
    x = np.full([4 * 10**6 + 77], 0.1, np.float32)
    got = float(np.asarray(em.function(em.reduce_sum)(em.constant(x))))
    exact = x.astype(np.float64).sum()
    assert abs(got - exact) / exact < 1e-6, got
    y = RNG.standard_normal((64, 20000)).astype(np.float32)
    rows = em.function(lambda v: em.reduce_sum(v, axis=1))(em.constant(y)).numpy()
    exact = y.astype(np.float64).sum(axis=1)
    assert np.max(np.abs(rows - exact)) < 2e-6 * np.abs(y).sum(axis=1).max()


def test_the_lowering_sums_rows_of_128_in_lanes_of_16():
    t = "tensor<1000000xf32>"
    module = lowering_harness.lower(
        f'func.func @main(%x: {t}) -> tensor<f32> {{\n'
        f'  %0 = "ember.reduce_sum"(%x) {{axes = array<i64: 0>, keepdims = false}} : ({t}) '
        f'-> tensor<f32>\n  return %0 : tensor<f32>\n}}\n')
    text = str(module)
    # each row of 128 as 8 groups of 16 summed lane by lane (vectors, no reassociation),
    # then its 16 lanes: the innermost dim stays parallel where the elements are
    assert "tensor<7812x8x16xf32>" in text and "tensor<7812x16xf32>" in text
    assert "tensor<61x8x16xf32>" in text and "tensor<61x16xf32>" in text
    assert '"parallel", "reduction", "parallel"' in text
