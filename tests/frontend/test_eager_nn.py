"""Eager NN ops: conv2d and the pools against naive loop references written from TensorFlow's
window rules (SAME: ceil(size / stride) outputs, the smaller half of the padding before),
softmax and log_softmax against float64 formulas.
"""

import math

import numpy as np
import pytest

import ember as em


def np_dtype(name):
    return em.as_dtype(name).np_dtype


def geometry(size, k, stride, dilation, padding):
    """(output size, padding before) for one spatial dim, as TensorFlow defines them."""
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        return max(math.ceil((size - eff + 1) / stride), 0), 0
    out = math.ceil(size / stride)
    return out, max((out - 1) * stride + eff - size, 0) // 2


def conv2d_loops(x, f, strides, dilations, padding):
    n, h, w, _ = x.shape
    kh, kw, _, co = f.shape
    oh, ph = geometry(h, kh, strides[0], dilations[0], padding)
    ow, pw = geometry(w, kw, strides[1], dilations[1], padding)
    out = np.zeros((n, oh, ow, co))
    for i in range(oh):
        for j in range(ow):
            for di in range(kh):
                for dj in range(kw):
                    r = i * strides[0] + di * dilations[0] - ph
                    c = j * strides[1] + dj * dilations[1] - pw
                    if 0 <= r < h and 0 <= c < w:  # padding contributes zeros
                        out[:, i, j, :] += x[:, r, c, :] @ f[di, dj]
    return out


def pool_loops(x, ksize, strides, padding, reduce):
    n, h, w, ch = x.shape
    oh, ph = geometry(h, ksize[0], strides[0], 1, padding)
    ow, pw = geometry(w, ksize[1], strides[1], 1, padding)
    out = np.zeros((n, oh, ow, ch))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * strides[0] - ph, j * strides[1] - pw
            window = x[:, max(r0, 0):r0 + ksize[0], max(c0, 0):c0 + ksize[1], :]  # real cells
            out[:, i, j, :] = reduce(window.reshape(n, -1, ch), axis=1)
    return out


CONV_CASES = [  # input NHWC, filter HWIO, strides, dilations, padding
    ((1, 5, 5, 1), (3, 3, 1, 1), (1, 1), (1, 1), "VALID"),
    ((1, 5, 5, 1), (3, 3, 1, 1), (1, 1), (1, 1), "SAME"),
    ((2, 7, 6, 3), (3, 2, 3, 4), (1, 1), (1, 1), "SAME"),
    ((2, 7, 6, 3), (3, 2, 3, 4), (2, 2), (1, 1), "SAME"),
    ((2, 7, 6, 3), (3, 2, 3, 4), (2, 3), (1, 1), "VALID"),
    ((1, 8, 8, 2), (2, 2, 2, 2), (2, 2), (1, 1), "SAME"),
    ((1, 8, 7, 2), (3, 3, 2, 3), (1, 1), (2, 2), "SAME"),
    ((1, 8, 7, 2), (3, 3, 2, 3), (1, 1), (2, 1), "VALID"),
    ((1, 4, 4, 3), (1, 1, 3, 5), (1, 1), (1, 1), "VALID"),
    ((1, 4, 4, 1), (4, 4, 1, 1), (1, 1), (1, 1), "SAME"),
    ((1, 2, 2, 1), (3, 3, 1, 2), (1, 1), (1, 1), "VALID"),   # filter larger than input
    ((1, 3, 3, 1), (2, 2, 1, 1), (5, 5), (1, 1), "SAME"),    # stride larger than input
    ((0, 4, 4, 1), (2, 2, 1, 1), (1, 1), (1, 1), "SAME"),    # empty batch
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("xs,fs,strides,dilations,padding", CONV_CASES)
def test_conv2d_matches_naive_loops(xs, fs, strides, dilations, padding, dtype, rng, expect):
    x = rng.standard_normal(xs).astype(np_dtype(dtype))
    f = rng.standard_normal(fs).astype(np_dtype(dtype))
    want = conv2d_loops(x.astype(np.float64), f.astype(np.float64), strides, dilations, padding)
    scale = conv2d_loops(np.abs(x.astype(np.float64)), np.abs(f.astype(np.float64)), strides,
                         dilations, padding)
    out = em.conv2d(em.constant(x), em.constant(f), strides=strides, padding=padding,
                    dilations=dilations)
    atol = (1e-14 if dtype == "float64" else 1e-6) * scale.max(initial=0.0)
    expect(out, want.astype(np_dtype(dtype)), dtype, atol=atol)


def test_conv2d_accepts_tensorflow_stride_forms(rng, expect):
    x = rng.standard_normal((1, 6, 6, 2)).astype(np.float32)
    f = rng.standard_normal((3, 3, 2, 1)).astype(np.float32)
    want = conv2d_loops(x.astype(np.float64), f.astype(np.float64), (2, 2), (1, 1), "SAME")
    for strides in (2, [2], [2, 2], [1, 2, 2, 1]):
        expect(em.conv2d(x, f, strides=strides, padding="same"), want.astype(np.float32))


@pytest.mark.parametrize("xs,fs,kwargs,error,match", [
    ((1, 4, 4, 2), (3, 3, 3, 1), {}, ValueError,
     r"input channels of tensor<1x4x4x2xf32> \(2\) differ from filter input channels"),
    ((4, 4, 2), (3, 3, 2, 1), {}, ValueError, r"input tensor<4x4x2xf32> must be rank 4 \(NHWC\)"),
    ((1, 4, 4, 2), (3, 3, 2), {}, ValueError, r"filter tensor<3x3x2xf32> must be rank 4 \(HWIO\)"),
    ((1, 4, 4, 2), (3, 3, 2, 1), {"padding": "FULL"}, ValueError,
     'padding must be "SAME" or "VALID", got \'FULL\''),
    ((1, 4, 4, 2), (3, 3, 2, 1), {"strides": [0, 1]}, ValueError,
     r"strides must be two positive ints \(height, width\) below 2\*\*31, got \[0, 1\]"),
    ((1, 4, 4, 2), (3, 3, 2, 1), {"dilations": [1, 2, 3]}, ValueError,
     "dilations must be an int or a list of 1, 2 or 4 ints"),
])
def test_conv2d_rejects_bad_shapes_or_attributes(xs, fs, kwargs, error, match):
    with pytest.raises(error, match=match):
        em.conv2d(em.zeros(xs), em.zeros(fs), **kwargs)


def test_conv2d_rejects_integer_and_mixed_dtypes():
    with pytest.raises(TypeError, match="must have floating-point elements"):
        em.conv2d(em.zeros([1, 2, 2, 1], em.int32), em.zeros([1, 1, 1, 1], em.int32))
    with pytest.raises(TypeError, match="different element types"):
        em.conv2d(em.zeros([1, 2, 2, 1]), em.zeros([1, 1, 1, 1], em.float64))


POOL_CASES = [  # input, ksize, strides, padding
    ((1, 4, 4, 1), (2, 2), (2, 2), "VALID"),
    ((1, 4, 4, 1), (3, 3), (1, 1), "SAME"),
    ((2, 5, 7, 3), (3, 2), (2, 3), "SAME"),
    ((2, 5, 7, 3), (3, 2), (2, 3), "VALID"),
    ((1, 5, 5, 2), (2, 2), (1, 1), "SAME"),
    ((1, 3, 3, 1), (5, 5), (1, 1), "SAME"),   # window larger than input
    ((1, 3, 3, 1), (4, 4), (1, 1), "VALID"),  # no full window: empty output
    ((1, 1, 1, 1), (1, 1), (1, 1), "VALID"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("xs,ksize,strides,padding", POOL_CASES)
def test_max_pool2d_matches_naive_loops(xs, ksize, strides, padding, dtype, rng, expect):
    x = rng.standard_normal(xs).astype(np_dtype(dtype))
    want = pool_loops(x.astype(np.float64), ksize, strides, padding, np.max)
    expect(em.max_pool2d(em.constant(x), ksize, strides, padding), want.astype(x.dtype), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("xs,ksize,strides,padding", POOL_CASES)
def test_avg_pool2d_divides_by_real_element_count(xs, ksize, strides, padding, dtype, rng,
                                                  expect):
    x = rng.standard_normal(xs).astype(np_dtype(dtype))
    want = pool_loops(x.astype(np.float64), ksize, strides, padding, np.mean)
    expect(em.avg_pool2d(em.constant(x), ksize, strides, padding), want.astype(x.dtype), dtype,
           atol=1e-6 if dtype != "float64" else 0.0)


def test_avg_pool2d_same_corner_is_mean_of_unpadded_cells(expect):
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    out = em.avg_pool2d(em.constant(x), 3, 1, "SAME")
    # top-left window covers rows 0-1, cols 0-1 of the real input: (0 + 1 + 4 + 5) / 4
    assert out.numpy()[0, 0, 0, 0] == 2.5
    assert out.numpy()[0, 1, 1, 0] == x[0, :3, :3, 0].mean()


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32"])
def test_max_pool2d_on_integers_ignores_padding(dtype, rng, expect):
    info = np.iinfo(np_dtype(dtype))
    x = rng.integers(info.min, info.max, (1, 5, 5, 2), endpoint=True).astype(np_dtype(dtype))
    want = pool_loops(x.astype(np.int64), (2, 2), (2, 2), "SAME", np.max)
    expect(em.max_pool2d(em.constant(x), 2, 2, "SAME"), want.astype(np.int64), dtype)


def test_max_pool2d_propagates_nan_and_keeps_infinities(expect):
    x = np.array([np.nan, 1.0, -np.inf, -np.inf], np.float32).reshape(1, 2, 2, 1)
    out = em.max_pool2d(em.constant(x), [1, 2], [1, 2], "VALID")
    expect(out, np.array([np.nan, -np.inf], np.float32).reshape(1, 2, 1, 1))


@pytest.mark.parametrize("fn", [em.max_pool2d, em.avg_pool2d], ids=lambda f: f.__name__)
@pytest.mark.parametrize("xs,args,error,match", [
    ((4, 4, 1), (2, 2, "VALID"), ValueError, "must be rank 4 \\(NHWC\\)"),
    ((1, 4, 4, 1), ([0, 2], 1, "VALID"), ValueError, "ksize must be two positive ints"),
    ((1, 4, 4, 1), (2, [1, 0], "VALID"), ValueError, "strides must be two positive ints"),
    ((1, 4, 4, 1), (2, 2, "CAUSAL"), ValueError, 'padding must be "SAME" or "VALID"'),
])
def test_pool_rejects_bad_shapes_or_attributes(fn, xs, args, error, match):
    with pytest.raises(error, match=match):
        fn(em.zeros(xs), *args)


def test_pool_rejects_bool():
    with pytest.raises(TypeError, match="must have numeric elements"):
        em.max_pool2d(em.zeros([1, 2, 2, 1], em.bool), 1, 1)


# -- softmax ----------------------------------------------------------------------------------

def softmax64(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax64(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("fn,ref", [(em.softmax, softmax64), (em.log_softmax, log_softmax64)],
                         ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_softmax_matches_float64_formula(fn, ref, axis, dtype, rng, expect):
    x = (rng.standard_normal((3, 5)) * 3).astype(np_dtype(dtype))
    want = ref(x.astype(np.float64), axis)
    expect(fn(em.constant(x), axis=axis), want.astype(x.dtype), dtype,
           atol=1e-6 if dtype != "float64" else 0.0)


@pytest.mark.parametrize("fn", [em.softmax, em.log_softmax], ids=lambda f: f.__name__)
def test_softmax_axis_none_means_last(fn, rng):
    x = em.constant(rng.standard_normal((2, 3)).astype(np.float32))
    np.testing.assert_array_equal(fn(x, axis=None).numpy(), fn(x, axis=-1).numpy())
    np.testing.assert_array_equal(fn(x).numpy(), fn(x, axis=1).numpy())


def test_softmax_rows_sum_to_one_and_are_stable_for_large_logits(expect):
    x = em.constant([[1000.0, 1000.0], [-1000.0, 0.0], [1e30, -1e30]])
    expect(em.softmax(x), np.array([[0.5, 0.5], [0.0, 1.0], [1.0, 0.0]], np.float32))
    expect(em.log_softmax(x), np.array([[-np.log(2), -np.log(2)], [-1000.0, 0.0],
                                        [0.0, -2e30]], np.float32))


def test_softmax_with_negative_infinities_and_nan(expect):
    x = em.constant([[-np.inf, 0.0, 0.0], [-np.inf, -np.inf, -np.inf], [np.nan, 0.0, 1.0]])
    expect(em.softmax(x), np.array([[0.0, 0.5, 0.5], [np.nan] * 3, [np.nan] * 3], np.float32))
    expect(em.log_softmax(x)[0], np.array([-np.inf, -np.log(2), -np.log(2)], np.float32))


def test_softmax_of_empty_is_empty(expect):
    expect(em.softmax(em.zeros([2, 0])), np.zeros((2, 0), np.float32))
    expect(em.log_softmax(em.zeros([0, 3]), axis=0), np.zeros((0, 3), np.float32))


@pytest.mark.parametrize("fn", [em.softmax, em.log_softmax], ids=lambda f: f.__name__)
@pytest.mark.parametrize("x,kwargs,error,match", [
    ([1, 2], {}, TypeError, "must have floating-point elements"),
    (1.0, {}, ValueError, "operand tensor<f32> must have rank >= 1"),
    ([1.0], {"axis": 1}, ValueError, "axis 1 is out of range for rank 1"),
])
def test_softmax_rejects_bad_input(fn, x, kwargs, error, match):
    with pytest.raises(error, match=match):
        fn(em.constant(x), **kwargs)
