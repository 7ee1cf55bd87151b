"""Helpers for the eager numerics tests: `expect` checks a result's dtype, shape and values;
`no_fallback` makes a test fail where em.function would run on the interpreter."""

import warnings

import numpy as np
import pytest

import ember as em

# Relative tolerance per dtype when comparing with an oracle computed in float64.
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-12}


def assert_tensor(result, expected, dtype=None, rtol=None, atol=0.0):
    """Asserts `result` is an em.Tensor of `dtype` with `expected`'s shape and values.

    `dtype` defaults to `expected`'s dtype. Floats compare NaN-aware with a per-dtype
    tolerance (the oracle may be computed in float64); everything else compares exactly.
    """
    assert isinstance(result, em.Tensor), type(result)
    expected = np.asarray(expected)
    want = em.as_dtype(dtype if dtype is not None else expected.dtype)
    assert result.dtype is want, f"dtype {result.dtype} != {want}"
    got = np.asarray(result)  # an array at every rank (numpy() of a 0-d tensor is a scalar)
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    assert result.shape == expected.shape
    if want.is_floating:
        tol = RTOL[want.name] if rtol is None else rtol
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=tol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.fixture
def expect():
    return assert_tensor


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def no_fallback():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        yield
    em.config.set_fallback(previous)
