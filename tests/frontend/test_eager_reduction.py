"""Eager reductions (`em.reduce_*`, `em.argmax/argmin`) against float64 / Python-int oracles,
including empty inputs (identities), NaN propagation, keepdims, axis forms and int overflow.
"""

import itertools

import numpy as np
import pytest

import ember as em

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]
AXES = [None, 0, 1, -1, [0, 2], [2, 0], [], (1,), [0, 1, 2]]


def np_dtype(name):
    return em.as_dtype(name).np_dtype


def wrap(value: int, dtype: str) -> int:
    info = np.iinfo(np_dtype(dtype))
    span = int(info.max) - int(info.min) + 1
    return (value - int(info.min)) % span + int(info.min)


def norm_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = [axis] if isinstance(axis, int) else list(axis)
    return tuple(sorted(a % ndim for a in axis))


def reduce_py(values: np.ndarray, axes, keepdims, fn, dtype):
    """Applies `fn` (a function of a Python list) over `axes`, element by element."""
    keep = [i for i in range(values.ndim) if i not in axes]
    out_shape = [values.shape[i] for i in keep]
    out = np.empty(out_shape, dtype=object)
    for idx in itertools.product(*(range(d) for d in out_shape)):
        index = [slice(None)] * values.ndim
        for k, i in zip(keep, idx):
            index[k] = i
        out[idx] = fn(values[tuple(index)].reshape(-1).tolist())
    if keepdims:
        out = out.reshape([1 if i in axes else d for i, d in enumerate(values.shape)])
    return np.array(out.tolist(), dtype=dtype) if out.ndim else np.array(out.item(), dtype)


def truncating_mean(xs):
    if not xs:
        return 0
    total = sum(xs)
    q = abs(total) // len(xs)
    return q if total >= 0 else -q


FLOAT_REDUCTIONS = [
    (em.reduce_sum, lambda xs: float(np.sum(np.array(xs, np.float64)))),
    (em.reduce_prod, lambda xs: float(np.prod(np.array(xs, np.float64)))),
    (em.reduce_mean, lambda xs: float(np.mean(np.array(xs, np.float64))) if xs else np.nan),
    (em.reduce_max, lambda xs: max(xs, default=-np.inf)),
    (em.reduce_min, lambda xs: min(xs, default=np.inf)),
]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn,ref", FLOAT_REDUCTIONS, ids=[f.__name__ for f, _ in FLOAT_REDUCTIONS])
def test_float_reduction_matches_float64_oracle(fn, ref, dtype, axis, keepdims, rng, expect):
    x = (rng.standard_normal((3, 4, 5)) * (0.5 if fn is em.reduce_prod else 2)).astype(
        np_dtype(dtype))
    axes = norm_axes(axis, 3)
    want = reduce_py(x.astype(np.float64), axes, keepdims, ref, np.float64)
    # sums may cancel: allow the accumulator's rounding relative to sum(|x|)
    accumulator_eps = 1e-15 if dtype == "float64" else 1e-6
    atol = accumulator_eps * np.abs(x.astype(np.float64)).sum()
    rtol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
    expect(fn(em.constant(x), axis=axis, keepdims=keepdims), want.astype(np_dtype(dtype)),
           dtype, rtol=rtol, atol=atol)


INT_REDUCTIONS = [
    (em.reduce_sum, sum),
    (em.reduce_prod, lambda xs: int(np.prod(xs, dtype=object)) if xs else 1),
    (em.reduce_mean, truncating_mean),
    (em.reduce_max, max),
    (em.reduce_min, min),
]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 1, -1, [0, 2]], ids=str)
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("fn,ref", INT_REDUCTIONS, ids=[f.__name__ for f, _ in INT_REDUCTIONS])
def test_integer_reduction_matches_python_ints_wrapped(fn, ref, dtype, axis, keepdims, rng,
                                                       expect):
    info = np.iinfo(np_dtype(dtype))
    x = rng.integers(max(int(info.min), -40), min(int(info.max), 40), (3, 4, 5), endpoint=True)
    axes = norm_axes(axis, 3)
    want = reduce_py(x.astype(object), axes, keepdims, lambda xs: wrap(ref(xs), dtype), object)
    out = fn(em.constant(x.astype(np_dtype(dtype))), axis=axis, keepdims=keepdims)
    expect(out, want.astype(np.int64), dtype)


@pytest.mark.parametrize("fn,values,dtype,expected", [
    (em.reduce_sum, [100, 100], "int8", -56),
    (em.reduce_sum, [200, 100], "uint8", 44),
    (em.reduce_sum, [2**31 - 1, 1], "int32", -2**31),
    (em.reduce_prod, [2**16, 2**16], "int32", 0),
    (em.reduce_prod, [16, 17], "uint8", 16),
])
def test_integer_reduction_overflow_wraps(fn, values, dtype, expected, expect):
    expect(fn(em.constant(np.array(values, np_dtype(dtype)))), np.array(expected), dtype)


@pytest.mark.parametrize("values,expected", [
    ([1, 2], 1), ([-1, -2], -1), ([7, 0, 0], 2), ([-7, 0, 0], -2), ([5], 5),
])
def test_integer_mean_truncates_toward_zero(values, expected, expect):
    expect(em.reduce_mean(em.constant(values)), np.array(expected), "int32")


EMPTY_IDENTITIES = [  # fn, dtype, identity
    (em.reduce_sum, "float32", 0.0),
    (em.reduce_prod, "float32", 1.0),
    (em.reduce_max, "float32", -np.inf),
    (em.reduce_min, "float32", np.inf),
    (em.reduce_mean, "float32", np.nan),
    (em.reduce_max, "float16", -np.inf),
    (em.reduce_max, "bfloat16", -np.inf),
    (em.reduce_min, "bfloat16", np.inf),
    (em.reduce_sum, "int32", 0),
    (em.reduce_prod, "int8", 1),
    (em.reduce_max, "int32", -2**31),
    (em.reduce_min, "int32", 2**31 - 1),
    (em.reduce_max, "uint8", 0),
    (em.reduce_min, "uint8", 255),
    (em.reduce_min, "int64", 2**63 - 1),
    (em.reduce_any, "bool", False),
    (em.reduce_all, "bool", True),
]


@pytest.mark.parametrize("fn,dtype,identity", EMPTY_IDENTITIES,
                         ids=[f"{f.__name__}-{d}" for f, d, _ in EMPTY_IDENTITIES])
def test_empty_reduction_gives_identity(fn, dtype, identity, expect):
    expect(fn(em.constant(np.zeros((0,), np_dtype(dtype)))), np.array(identity), dtype)
    x = em.constant(np.zeros((2, 0), np_dtype(dtype)))
    expect(fn(x, axis=1), np.full((2,), identity), dtype)
    expect(fn(x, axis=0), np.zeros((0,)), dtype)
    expect(fn(x, axis=1, keepdims=True), np.full((2, 1), identity), dtype)


@pytest.mark.parametrize("fn", [em.reduce_sum, em.reduce_prod, em.reduce_mean, em.reduce_max,
                                em.reduce_min], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_propagates_through_reductions(fn, dtype, expect):
    x = em.constant(np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]], np_dtype(dtype)))
    out = fn(x, axis=1)
    assert out.dtype is em.as_dtype(dtype)
    got = out.numpy().astype(np.float64)
    assert np.isnan(got[0]) and not np.isnan(got[1])


@pytest.mark.parametrize("fn,x,expected", [
    (em.reduce_max, [-np.inf, -np.inf], -np.inf),
    (em.reduce_min, [np.inf, 1.0], 1.0),
    (em.reduce_sum, [np.inf, -np.inf], np.nan),
    (em.reduce_sum, [np.inf, 1.0], np.inf),
    (em.reduce_prod, [np.inf, 0.0], np.nan),
    (em.reduce_mean, [np.inf, 1.0], np.inf),
])
def test_reduction_of_infinities_follows_ieee(fn, x, expected, expect):
    expect(fn(em.constant(x)), np.array(expected, np.float32))


def test_half_precision_sum_accumulates_in_float32(expect):
    x = np.full(4096, 1.0, np.float16)  # a float16 accumulator would stop at 2048
    expect(em.reduce_sum(em.constant(x)), np.array(4096.0), "float16")
    expect(em.reduce_sum(em.constant(x.astype(em.bfloat16.np_dtype))), np.array(4096.0),
           "bfloat16")
    expect(em.reduce_mean(em.constant(x)), np.array(1.0), "float16")


@pytest.mark.parametrize("fn,ref", [(em.reduce_any, any), (em.reduce_all, all)],
                         ids=["reduce_any", "reduce_all"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 1]], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_logical_reduction_matches_python(fn, ref, axis, keepdims, rng, expect):
    x = rng.random((4, 3)) < 0.5
    x[0] = True
    x[1] = False
    want = reduce_py(x, norm_axes(axis, 2), keepdims, ref, bool)
    expect(fn(em.constant(x), axis=axis, keepdims=keepdims), want, "bool")


def test_reduction_axis_may_be_a_tensor(expect):
    x = em.constant([[1, 2], [3, 4]])
    expect(em.reduce_sum(x, axis=em.constant(0)), np.array([4, 6], np.int32))
    expect(em.reduce_sum(x, axis=em.constant([0, 1])), np.array(10, np.int32))


@pytest.mark.parametrize("fn,x,kwargs,error,match", [
    (em.reduce_sum, [[1, 2]], {"axis": 2}, ValueError,
     "'ember.reduce_sum' op axis 2 is out of range for rank 2"),
    (em.reduce_max, [[1, 2]], {"axis": -3}, ValueError, "axis -3 is out of range for rank 2"),
    (em.reduce_sum, [[1, 2]], {"axis": [1, -1]}, ValueError, r"axes \[1, -1\] contain a duplicate"),
    (em.reduce_sum, [True], {}, TypeError, "must have numeric or complex elements"),
    (em.reduce_mean, ["a"], {}, TypeError, "must have numeric or complex elements"),
    (em.reduce_any, [1], {}, TypeError, r"must have bool \(i1\) elements"),
])
def test_reduction_rejects_bad_axis_or_dtype(fn, x, kwargs, error, match):
    with pytest.raises(error, match=match):
        fn(em.constant(x), **kwargs)


# -- argmax / argmin --------------------------------------------------------------------------

def arg_py(values: np.ndarray, axis: int, pick):
    moved = np.moveaxis(values, axis, -1)
    out = np.empty(moved.shape[:-1], np.int64)
    for idx in itertools.product(*(range(d) for d in moved.shape[:-1])):
        row = moved[idx].tolist()
        out[idx] = row.index(pick(row))  # the first one on ties
    return out


@pytest.mark.parametrize("fn,pick", [(em.argmax, max), (em.argmin, min)],
                         ids=["argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float16", "bfloat16", "float64"])
def test_arg_reduction_returns_first_extreme_index(fn, pick, axis, dtype, rng, expect):
    x = rng.integers(0, 4, (3, 4, 5)).astype(np_dtype(dtype))  # many ties
    expect(fn(em.constant(x), axis=axis), arg_py(x.astype(np.float64), axis, pick), "int64")


@pytest.mark.parametrize("fn", [em.argmax, em.argmin], ids=lambda f: f.__name__)
def test_arg_reduction_output_type_and_default_axis(fn, expect):
    x = em.constant([[1.0, 5.0], [7.0, -1.0], [7.0, 2.0]])
    want = [1, 0] if fn is em.argmax else [0, 1]
    expect(fn(x), np.array(want), "int64")
    expect(fn(x, axis=None), np.array(want), "int64")  # None means 0, as tf.argmax
    expect(fn(x, output_type=em.int32), np.array(want), "int32")
    expect(fn(em.constant([-np.inf, np.inf])), np.array(1 if fn is em.argmax else 0), "int64")


@pytest.mark.parametrize("x,kwargs,error,match", [
    (np.zeros((2, 0)), {"axis": 1}, ValueError,
     "'ember.argmax' op cannot reduce empty dimension 1 of tensor<2x0xf64>"),
    (np.zeros(()), {}, ValueError, "must have rank >= 1"),
    (np.zeros((2,)), {"axis": 1}, ValueError, "axis 1 is out of range for rank 1"),
    (np.zeros((2,)), {"output_type": em.float32}, ValueError, "dtype must be i32 or i64"),
    (np.array([True]), {}, TypeError, "must have numeric elements"),
])
def test_argmax_rejects_bad_input(x, kwargs, error, match):
    with pytest.raises(error, match=match):
        em.argmax(em.constant(x), **kwargs)
