"""Eager creation ops: constant (the op), fill/zeros/ones(_like), range, shape/size/rank and
the stateless random ops, against Python/numpy oracles.
"""

import numpy as np
import pytest

import ember as em
from ember.dialects.ember import REGISTRY
from ember.frontend.dispatch import execute

ALL_NUMERIC = ["int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32",
               "float64"]


def np_dtype(name):
    return em.as_dtype(name).np_dtype


@pytest.mark.parametrize("value", [
    np.array([1.0, 2.0], np.float32),
    np.arange(6, dtype=np.int8).reshape(2, 3),
    np.zeros((2, 0), np.float64),
    np.array(True),
    np.array([b"a", b"bc"], dtype=object),
], ids=["f32", "i8-2d", "empty", "bool-scalar", "string"])
def test_constant_op_returns_its_value_attribute(value, expect):
    out = execute(REGISTRY["ember.constant"], [], {"value": value})
    expect(out, value, em.as_dtype(value.dtype))


# -- fill, zeros, ones --------------------------------------------------------------------

@pytest.mark.parametrize("dims,value,dtype", [
    ([2, 3], 5, "int32"),
    ([2, 0], 1.5, "float32"),
    ([], 7, "int32"),
    ([0], True, "bool"),
    ([3, 1], "x", "string"),
    ([2], b"y", "string"),
])
def test_fill_broadcasts_scalar_to_dims(dims, value, dtype, expect):
    want = np.empty(dims, object if dtype == "string" else np_dtype(dtype))
    want[...] = value.encode() if isinstance(value, str) else value  # strings hold bytes
    expect(em.fill(dims, value), want, dtype)


def test_fill_accepts_a_shape_tensor(expect):
    expect(em.fill(em.constant([2, 2]), em.constant(0.5, dtype=em.float64)),
           np.full((2, 2), 0.5))
    expect(em.fill(em.shape(em.zeros([3, 1])), 9), np.full((3, 1), 9, np.int32))


@pytest.mark.parametrize("dims,value,error,match", [
    (em.constant([-1, 2]), 1, ValueError, r"shape operand has a negative dimension -1"),
    ([2], [1, 2], ValueError, r"value of type tensor<2xi32> must be a scalar \(rank 0\)"),
    (em.constant([2.0]), 1, TypeError, r"em.fill: a shape must be a list of ints and scalar "
                                       r"integer tensors, or a 1-D integer tensor; got a "
                                       r"tensor of shape \(1,\) and dtype float32"),
    (em.constant([[2]]), 1, TypeError, r"got a tensor of shape \(1, 1\) and dtype int32"),
    ([None, 2], 1, ValueError, "must be fully defined"),
])
def test_fill_rejects_bad_dims_or_value(dims, value, error, match):
    with pytest.raises(error, match=match):
        em.fill(dims, value)


@pytest.mark.parametrize("dtype", ALL_NUMERIC + ["bool"])
@pytest.mark.parametrize("shape", [(2, 3), (0,), (2, 0), ()])
def test_zeros_and_ones_for_every_dtype(dtype, shape, expect):
    expect(em.zeros(shape, dtype), np.zeros(shape, np_dtype(dtype)), dtype)
    expect(em.ones(shape, dtype), np.ones(shape, np_dtype(dtype)), dtype)


def test_zeros_default_to_float32_and_string_zeros_are_empty(expect):
    expect(em.zeros([2]), np.zeros(2, np.float32))
    expect(em.ones([1, 2]), np.ones((1, 2), np.float32))
    expect(em.zeros([2], em.string), np.array([b"", b""], dtype=object), "string")


def test_zeros_like_and_ones_like_keep_shape_and_dtype(expect):
    x = em.constant(np.arange(6, dtype=np.int8).reshape(3, 2))
    expect(em.zeros_like(x), np.zeros((3, 2), np.int8))
    expect(em.ones_like(x), np.ones((3, 2), np.int8))
    expect(em.ones_like(x, dtype=em.float64), np.ones((3, 2)))
    expect(em.zeros_like([True, False]), np.zeros(2, bool))
    expect(em.zeros_like(em.zeros([0, 4])), np.zeros((0, 4), np.float32))


# -- range --------------------------------------------------------------------------------

@pytest.mark.parametrize("args,kwargs,expected,dtype", [
    ((5,), {}, list(range(5)), "int32"),
    ((2, 10, 3), {}, list(range(2, 10, 3)), "int32"),
    ((10, 2, -3), {}, list(range(10, 2, -3)), "int32"),
    ((5, 1), {}, [], "int32"),
    ((-3,), {}, [], "int32"),
    ((0, 0), {}, [], "int32"),
    ((3,), {"dtype": em.int64}, [0, 1, 2], "int64"),
    ((3,), {"dtype": em.float64}, [0.0, 1.0, 2.0], "float64"),
    ((0.0, 1.0, 0.25), {}, [0.0, 0.25, 0.5, 0.75], "float32"),
    ((0, 1.5), {}, [0.0, 1.0], "float32"),
    ((1.0, -1.0, -0.5), {}, [1.0, 0.5, 0.0, -0.5], "float32"),
    ((0, 10, 2.5), {}, [0.0, 2.5, 5.0, 7.5], "float32"),
    ((2**40, 2**40 + 3), {}, [2**40, 2**40 + 1, 2**40 + 2], "int64"),
])
def test_range_matches_python_range(args, kwargs, expected, dtype, expect):
    expect(em.range(*args, **kwargs), np.array(expected, np_dtype(dtype)), dtype)


def test_range_float_steps_count_like_tensorflow(expect):
    out = em.range(0.0, 1.0, 0.1)
    assert out.shape == (10,)
    expect(out, np.arange(10) * 0.1, "float32")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "float16", "bfloat16"])
def test_range_keeps_small_dtypes(dtype, expect):
    start, limit, delta = (em.constant(np.array(v, np_dtype(dtype))) for v in (1, 7, 2))
    expect(em.range(start, limit, delta), np.array([1, 3, 5]), dtype)


def test_range_with_zero_delta_raises():
    with pytest.raises(ValueError, match="'ember.range' op delta must not be zero"):
        em.range(1, 5, 0)


def test_range_rejects_non_scalar_and_non_numeric_operands():
    with pytest.raises(ValueError, match="operands must be scalars"):
        em.range(em.constant([1, 2]), 5)
    with pytest.raises(TypeError, match="must have numeric elements"):
        em.range(em.constant(True), em.constant(True), em.constant(True))


# -- shape, size, rank --------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (4, 1)])
@pytest.mark.parametrize("out_type", ["int32", "int64"])
def test_shape_size_rank_describe_the_tensor(shape, out_type, expect):
    x = em.zeros(shape)
    expect(em.shape(x, out_type=out_type), np.array(shape, np.int64), out_type)
    expect(em.size(x, out_type=out_type), np.array(int(np.prod(shape))), out_type)
    expect(em.rank(x), np.array(len(shape)), "int32")


def test_shape_rejects_float_out_type():
    with pytest.raises(ValueError, match="'ember.shape' op dtype must be i32 or i64, got f32"):
        em.shape([1], out_type=em.float32)


# -- stateless random -----------------------------------------------------------------------

RANDOM = [em.stateless_random_uniform, em.stateless_random_normal]


@pytest.mark.parametrize("fn", RANDOM, ids=lambda f: f.__name__)
def test_random_is_deterministic_for_a_seed(fn):
    a = fn([3, 4], seed=[1, 2]).numpy()
    b = fn([3, 4], seed=[1, 2]).numpy()
    np.testing.assert_array_equal(a, b)
    # the seed's integer dtype does not matter, only its value
    for seed in (em.constant([1, 2], dtype=em.int32), em.constant([1, 2], dtype=em.int8),
                 np.array([1, 2], np.uint8)):
        np.testing.assert_array_equal(fn([3, 4], seed=seed).numpy(), a)


@pytest.mark.parametrize("fn", RANDOM, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", [[2, 1], [1, 3], [0, 2], [-1, 2]])
def test_random_differs_for_different_seeds(fn, other):
    a = fn([64], seed=[1, 2]).numpy()
    b = fn([64], seed=other).numpy()
    assert np.mean(a == b) < 0.05


@pytest.mark.parametrize("fn", RANDOM, ids=lambda f: f.__name__)
def test_random_element_depends_only_on_seed_and_position(fn):
    flat = fn([6], seed=[7, 8]).numpy()
    np.testing.assert_array_equal(fn([2, 3], seed=[7, 8]).numpy(), flat.reshape(2, 3))
    np.testing.assert_array_equal(fn([4], seed=[7, 8]).numpy(), flat[:4])


@pytest.mark.parametrize("fn", RANDOM, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(2, 3), (0,), (), (3, 0)])
def test_random_has_requested_shape_and_dtype(fn, dtype, shape):
    out = fn(shape, seed=[3, 4], dtype=dtype)
    assert out.dtype is em.as_dtype(dtype)
    assert out.shape == shape
    assert np.all(np.isfinite(out.numpy().astype(np.float64)))


@pytest.mark.parametrize("minval,maxval", [(0.0, 1.0), (-2.0, 3.0), (5.0, 5.5)])
def test_random_uniform_is_in_range_with_uniform_moments(minval, maxval):
    n = 20000
    x = em.stateless_random_uniform([n], seed=[11, 12], minval=minval, maxval=maxval,
                                    dtype=em.float64).numpy()
    assert x.min() >= minval and x.max() < maxval
    width = maxval - minval
    assert abs(x.mean() - (minval + width / 2)) < 0.02 * width
    assert abs(x.std() - width / np.sqrt(12)) < 0.02 * width
    # roughly flat: each tenth of the interval holds about a tenth of the samples
    counts = np.histogram(x, bins=10, range=(minval, maxval))[0]
    assert counts.min() > 0.08 * n and counts.max() < 0.12 * n


@pytest.mark.parametrize("mean,stddev", [(0.0, 1.0), (5.0, 0.1), (-3.0, 4.0)])
def test_random_normal_has_requested_mean_and_stddev(mean, stddev):
    x = em.stateless_random_normal([20000], seed=[5, 6], mean=mean, stddev=stddev,
                                   dtype=em.float64).numpy()
    assert abs(x.mean() - mean) < 0.03 * stddev
    assert abs(x.std() - stddev) < 0.03 * stddev
    z = (x - mean) / stddev
    assert 0.66 < np.mean(np.abs(z) < 1) < 0.70  # 68.3% within one sigma
    assert np.abs(z).max() < 6


@pytest.mark.parametrize("fn,kwargs,error,match", [
    (em.stateless_random_uniform, {"seed": [1, 2, 3]}, ValueError,
     r"seed of type tensor<3xi64> must have shape \[2\]"),
    (em.stateless_random_normal, {"seed": [[1, 2]]}, ValueError, r"must have shape \[2\]"),
    (em.stateless_random_uniform, {"seed": [1, 2], "dtype": em.int32}, ValueError,
     "dtype must be floating-point, got i32"),
    (em.stateless_random_normal, {"seed": [1, 2], "dtype": em.bool}, ValueError,
     "dtype must be floating-point, got i1"),
])
def test_random_rejects_bad_seed_or_dtype(fn, kwargs, error, match):
    with pytest.raises(error, match=match):
        fn([3], **kwargs)
