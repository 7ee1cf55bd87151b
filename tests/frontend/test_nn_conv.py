"""em.nn convolutions and pools: conv1d, conv2d (dilations, explicit padding, NCHW),
conv2d_transpose, depthwise_conv2d, max_pool/avg_pool (1-, 2-, 3-D), max_pool1d/avg_pool1d.

Eager results against explicit numpy loops written here (TensorFlow's SAME arithmetic: the
odd padding element goes after; conv2d_transpose in its scatter form, the definition of the
gradient), then compiled (static, dynamic batch, empty batch) against eager with no fallback
to the interpreter."""

import numpy as np
import pytest

import ember as em

TOL = {np.float16: 3e-3, np.float32: 2e-5, np.float64: 1e-12}


def same_pads(size, k, s, d):
    """TensorFlow's SAME: ceil(size / s) outputs, the total shortfall split with the extra
    element after."""
    eff = (k - 1) * d + 1
    out = -(-size // s)
    total = max((out - 1) * s + eff - size, 0)
    return total // 2, total - total // 2


def pads_for(padding, sizes, ks, ss, ds):
    if padding == "SAME":
        return [same_pads(n, k, s, d) for n, k, s, d in zip(sizes, ks, ss, ds)]
    if padding == "VALID":
        return [(0, 0)] * len(sizes)
    return padding  # explicit [(before, after)] per spatial dim


def conv_loops(x, f, strides, dilations, padding):
    """N-D cross-correlation, channels last, filter [*window, in, out], float64 loops."""
    x, f = x.astype(np.float64), f.astype(np.float64)
    sizes, ks = x.shape[1:-1], f.shape[:-2]
    pads = pads_for(padding, sizes, ks, strides, dilations)
    outs = [max((n + a + b - ((k - 1) * d + 1)) // s + 1, 0)
            for n, k, s, d, (a, b) in zip(sizes, ks, strides, dilations, pads)]
    y = np.zeros((x.shape[0], *outs, f.shape[-1]))
    for o in np.ndindex(*outs):
        for w in np.ndindex(*ks):
            pos = [oi * s + wi * d - a for oi, wi, s, d, (a, _) in
                   zip(o, w, strides, dilations, pads)]
            if all(0 <= p < n for p, n in zip(pos, sizes)):
                y[(slice(None), *o)] += x[(slice(None), *pos)] @ f[w]
    return y


def depthwise_loops(x, f, strides, dilations, padding):
    """Output channel c * M + m: channel c of x with filter [:, :, c, m]."""
    c, m = f.shape[2], f.shape[3]
    cols = [conv_loops(x[..., i:i + 1], f[:, :, i:i + 1, j:j + 1], strides, dilations, padding)
            for i in range(c) for j in range(m)]
    return np.concatenate(cols, axis=-1)


def transpose_loops(x, f, out_shape, strides, dilations, padding):
    """The scatter form: input element (i, j) adds f[a, b] @ x[i, j] at output
    (i * s - pad_before + a * d, ...), where pad_before is the forward conv's on out_shape."""
    x, f = x.astype(np.float64), f.astype(np.float64)
    pads = pads_for(padding, out_shape[1:3], f.shape[:2], strides, dilations)
    y = np.zeros(out_shape)
    for n, i, j in np.ndindex(*x.shape[:3]):
        for a, b in np.ndindex(*f.shape[:2]):
            r = i * strides[0] - pads[0][0] + a * dilations[0]
            c = j * strides[1] - pads[1][0] + b * dilations[1]
            if 0 <= r < out_shape[1] and 0 <= c < out_shape[2]:
                y[n, r, c] += f[a, b] @ x[n, i, j]
    return y


def pool_loops(x, ksize, strides, padding, reduce):
    """N-D pool over real (unpadded) elements, channels last."""
    sizes = x.shape[1:-1]
    pads = pads_for(padding, sizes, ksize, strides, [1] * len(sizes))
    outs = [max((n + a + b - k) // s + 1, 0)
            for n, k, s, (a, b) in zip(sizes, ksize, strides, pads)]
    y = np.zeros((x.shape[0], *outs, x.shape[-1]))
    for o in np.ndindex(*outs):
        window = tuple(slice(max(oi * s - a, 0), min(oi * s - a + k, n))
                       for oi, s, (a, _), k, n in zip(o, strides, pads, ksize, sizes))
        block = x[(slice(None), *window)].astype(np.float64)
        y[(slice(None), *o)] = reduce(block.reshape(x.shape[0], -1, x.shape[-1]), axis=1)
    return y


def check(got, want, dtype):
    assert got.dtype == em.as_dtype(dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=TOL[dtype],
                               atol=TOL[dtype])


@pytest.fixture
def no_fallback():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    yield
    em.config.set_fallback(previous)


def rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


DTYPES = [np.float32, np.float64, np.float16]

# -- conv1d -------------------------------------------------------------------------------

CONV1D = [  # x shape, filter shape, stride, dilation, padding
    ((2, 9, 3), (3, 3, 4), 1, 1, "SAME"),
    ((2, 9, 3), (3, 3, 4), 2, 1, "SAME"),
    ((1, 10, 2), (4, 2, 3), 3, 1, "SAME"),   # even window: the extra pad goes after
    ((2, 9, 3), (3, 3, 2), 1, 2, "VALID"),
    ((1, 7, 1), (2, 1, 1), 2, 1, "VALID"),
    ((1, 6, 2), (3, 2, 2), 1, 1, [[0, 0], [2, 0], [0, 0]]),  # causal-style explicit padding
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,fs,stride,dilation,padding", CONV1D)
def test_conv1d_matches_loops(xs, fs, stride, dilation, padding, dtype, rng):
    x, f = rand(rng, xs, dtype), rand(rng, fs, dtype)
    got = em.nn.conv1d(em.constant(x), em.constant(f), stride, padding, dilations=dilation)
    pads = padding if isinstance(padding, str) else [padding[1]]
    check(got, conv_loops(x, f, [stride], [dilation], pads), dtype)


def test_conv1d_ncw_is_transposed_nwc(rng):
    x, f = rand(rng, (2, 3, 8), np.float32), rand(rng, (3, 3, 5), np.float32)
    got = em.nn.conv1d(x, f, 2, "SAME", data_format="NCW")
    want = conv_loops(x.transpose(0, 2, 1), f, [2], [1], "SAME").transpose(0, 2, 1)
    check(got, want, np.float32)


# -- conv2d: dilations, explicit padding, NCHW --------------------------------------------

CONV2D = [  # x, f, strides, dilations, padding
    ((2, 7, 6, 3), (3, 2, 3, 4), [2, 1], [1, 2], "SAME"),
    ((1, 8, 8, 2), (3, 3, 2, 3), 1, 3, "SAME"),
    ((1, 6, 7, 2), (2, 3, 2, 2), [1, 1, 2, 1], None, "VALID"),
    ((1, 5, 5, 2), (3, 3, 2, 2), 1, 1, [[0, 0], [1, 2], [0, 3], [0, 0]]),
    ((2, 4, 5, 1), (2, 2, 1, 3), 2, [1, 1, 2, 1], [[0, 0], [0, 1], [2, 2], [0, 0]]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,fs,strides,dilations,padding", CONV2D)
def test_conv2d_dilations_and_explicit_padding(xs, fs, strides, dilations, padding, dtype,
                                               rng):
    x, f = rand(rng, xs, dtype), rand(rng, fs, dtype)
    got = em.nn.conv2d(x, f, strides, padding, dilations=dilations)
    s = [strides] * 2 if isinstance(strides, int) else [strides[1], strides[2]] \
        if len(strides) == 4 else strides
    d = [1, 1] if dilations is None else [dilations] * 2 if isinstance(dilations, int) else \
        dilations[1:3] if len(dilations) == 4 else dilations
    pads = padding if isinstance(padding, str) else padding[1:3]
    check(got, conv_loops(x, f, s, d, pads), dtype)


def test_conv2d_nchw(rng):
    x, f = rand(rng, (2, 3, 6, 5), np.float32), rand(rng, (3, 3, 3, 4), np.float32)
    got = em.nn.conv2d(x, f, [1, 1, 2, 2], [[0, 0], [0, 0], [1, 0], [0, 1]],
                       data_format="NCHW")
    want = conv_loops(x.transpose(0, 2, 3, 1), f, [2, 2], [1, 1], [(1, 0), (0, 1)])
    check(got, want.transpose(0, 3, 1, 2), np.float32)


# -- conv2d_transpose ---------------------------------------------------------------------

TRANSPOSE = [  # x, f [h, w, out, in], output_shape, strides, dilations, padding
    ((2, 3, 4, 5), (3, 3, 6, 5), (2, 6, 8, 6), [2, 2], [1, 1], "SAME"),
    ((1, 4, 4, 2), (3, 3, 3, 2), (1, 7, 8, 3), [2, 2], [1, 1], "SAME"),   # odd output size
    ((1, 3, 3, 2), (3, 2, 1, 2), (1, 7, 6, 1), [2, 2], [1, 1], "VALID"),
    ((1, 3, 3, 2), (2, 2, 2, 2), (1, 8, 7, 2), [3, 2], [1, 1], "VALID"),  # stride > window
    ((1, 5, 5, 1), (3, 3, 2, 1), (1, 5, 5, 2), [1, 1], [2, 2], "SAME"),
    ((1, 4, 3, 2), (3, 3, 2, 2), (1, 4, 3, 2), [1, 1], [1, 1], "VALID_EXPLICIT"),
    ((1, 4, 4, 1), (2, 2, 1, 1), (1, 3, 2, 1), [1, 1], [1, 1], "EXPLICIT_BIG"),
]


def _transpose_padding(name):
    if name == "VALID_EXPLICIT":
        return [[0, 0], [1, 1], [2, 0], [0, 0]]
    if name == "EXPLICIT_BIG":  # pads wider than the window: some inputs are cut off
        return [[0, 0], [0, 2], [3, 0], [0, 0]]
    return name


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,fs,out,strides,dilations,padding", TRANSPOSE)
def test_conv2d_transpose_matches_scatter_form(xs, fs, out, strides, dilations, padding,
                                               dtype, rng):
    x, f = rand(rng, xs, dtype), rand(rng, fs, dtype)
    padding = _transpose_padding(padding)
    got = em.nn.conv2d_transpose(x, f, list(out), strides, padding, dilations=dilations)
    pads = padding if isinstance(padding, str) else padding[1:3]
    check(got, transpose_loops(x, f, out, strides, dilations, pads), dtype)


def test_conv2d_transpose_is_the_adjoint_of_conv2d(rng):
    """<conv2d(y), x> == <y, conv2d_transpose(x)> for the same strides and padding."""
    y, f = rand(rng, (2, 7, 6, 3), np.float64), rand(rng, (3, 2, 3, 4), np.float64)
    fwd = em.nn.conv2d(y, f, [2, 3], "SAME").numpy()
    x = rand(rng, fwd.shape, np.float64)
    back = em.nn.conv2d_transpose(x, f, y.shape, [2, 3], "SAME").numpy()
    assert np.isclose((fwd * x).sum(), (y * back).sum(), rtol=1e-12)


def test_conv2d_transpose_nchw_and_tensor_output_shape(rng):
    x, f = rand(rng, (1, 2, 3, 3), np.float32), rand(rng, (2, 2, 4, 2), np.float32)
    got = em.nn.conv2d_transpose(x, f, em.constant([1, 4, 6, 6]), [1, 1, 2, 2], "SAME",
                                 data_format="NCHW")
    want = transpose_loops(x.transpose(0, 2, 3, 1), f, (1, 6, 6, 4), [2, 2], [1, 1], "SAME")
    check(got, want.transpose(0, 3, 1, 2), np.float32)


@pytest.mark.parametrize("args,match", [
    (((1, 3, 3, 2), (2, 2, 1, 2), [1, 8, 5, 1], 2, "SAME"), "gives size 4, not 3, in spatial "
                                                             "dim 0"),
    (((1, 3, 3, 2), (2, 2, 1, 3), [1, 6, 6, 1], 2, "SAME"), "must have 3 channels"),
    (((1, 3, 3, 2), (2, 2, 1, 2), [1, 6, 6, 2], 2, "SAME"), "1 channels"),
    (((1, 3, 3, 2), (2, 2, 1, 2), [6, 6, 1], 2, "SAME"), "output_shape must have 4 entries"),
    (((2, 3, 3, 2), (2, 2, 1, 2), [1, 6, 6, 1], 2, "SAME"), "the input's batch size"),
    (((1, 3, 3, 2), (2, 2, 1, 2), [1, 6, 6, 1], 2, "FULL"), "padding must be 'SAME', 'VALID'"),
    (((1, 3, 3, 2), (2, 2, 1, 2), [1, 6, 6, 1], [2, 0], "SAME"), r"strides must be positive, "
                                                                 r"got \[2, 0\]"),
])
def test_conv2d_transpose_rejects_bad_shapes(args, match):
    xs, fs, out, strides, padding = args
    with pytest.raises(ValueError, match=match):
        em.nn.conv2d_transpose(em.zeros(xs), em.zeros(fs), out, strides, padding)


def test_conv2d_transpose_output_shape_mismatch_names_the_sizes():
    with pytest.raises(ValueError, match=r"conv2d of that shape gives size 4, not 3"):
        em.nn.conv2d_transpose(em.zeros([1, 3, 3, 2]), em.zeros([2, 2, 1, 2]), [1, 7, 6, 1],
                               2, "SAME")


# -- depthwise_conv2d ---------------------------------------------------------------------

DEPTHWISE = [  # x, f [h, w, in, multiplier], strides, dilations, padding
    ((2, 6, 5, 3), (3, 3, 3, 1), [1, 1, 1, 1], None, "SAME"),
    ((1, 7, 7, 2), (3, 2, 2, 3), [1, 2, 2, 1], None, "SAME"),
    ((1, 8, 6, 2), (2, 2, 2, 2), [1, 1, 1, 1], [2, 2], "VALID"),
    ((2, 5, 5, 3), (3, 3, 3, 2), [1, 2, 1, 1], [1, 2], "SAME"),
    ((1, 4, 4, 2), (2, 3, 2, 1), 1, None, [[0, 0], [1, 0], [1, 2], [0, 0]]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,fs,strides,dilations,padding", DEPTHWISE)
def test_depthwise_conv2d_matches_loops(xs, fs, strides, dilations, padding, dtype, rng):
    x, f = rand(rng, xs, dtype), rand(rng, fs, dtype)
    got = em.nn.depthwise_conv2d(x, f, strides, padding, dilations=dilations)
    s = [1, 1] if isinstance(strides, int) else strides[1:3]
    d = [1, 1] if dilations is None else dilations
    pads = padding if isinstance(padding, str) else padding[1:3]
    check(got, depthwise_loops(x, f, s, d, pads), dtype)


def test_depthwise_conv2d_nchw(rng):
    x, f = rand(rng, (1, 2, 5, 5), np.float32), rand(rng, (3, 3, 2, 2), np.float32)
    got = em.nn.depthwise_conv2d(x, f, [1, 1, 2, 2], "SAME", data_format="NCHW")
    want = depthwise_loops(x.transpose(0, 2, 3, 1), f, [2, 2], [1, 1], "SAME")
    check(got, want.transpose(0, 3, 1, 2), np.float32)


def test_depthwise_conv2d_rejects_channel_mismatch():
    with pytest.raises(ValueError, match=r"input channels of tensor<1x4x4x2xf32> \(2\) differ"):
        em.nn.depthwise_conv2d(em.zeros([1, 4, 4, 2]), em.zeros([2, 2, 3, 1]), 1, "SAME")


# -- pools --------------------------------------------------------------------------------

POOLS = [  # x shape, ksize, strides, padding
    ((2, 9, 3), 3, 2, "SAME"),
    ((1, 8, 2), [2], [3], "VALID"),
    ((2, 7, 6, 3), [3, 2], [2, 2], "SAME"),
    ((1, 6, 6, 1), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
    ((2, 5, 6, 7, 2), 2, 2, "SAME"),
    ((1, 5, 4, 6, 3), [3, 2, 3], [2, 1, 3], "SAME"),
    ((1, 6, 5, 4, 1), [2, 3, 2], [1, 2, 2], "VALID"),
]


def _spatial(v, n):
    v = [v] if isinstance(v, int) else list(v)
    return v * n if len(v) == 1 else v[1:-1] if len(v) == n + 2 else v


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("xs,ksize,strides,padding", POOLS)
def test_pool_matches_loops(xs, ksize, strides, padding, kind, dtype, rng):
    x = rand(rng, xs, dtype)
    fn = em.nn.max_pool if kind == "max" else em.nn.avg_pool
    n = len(xs) - 2
    want = pool_loops(x, _spatial(ksize, n), _spatial(strides, n), padding,
                      np.max if kind == "max" else np.mean)
    check(fn(x, ksize, strides, padding), want, dtype)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool1d_and_pool2d_names(kind, rng):
    x = rand(rng, (2, 3, 9), np.float32)
    reduce = np.max if kind == "max" else np.mean
    one = em.nn.max_pool1d if kind == "max" else em.nn.avg_pool1d
    got = one(x, 2, 2, "SAME", data_format="NCW")
    check(got, pool_loops(x.transpose(0, 2, 1), [2], [2], "SAME", reduce).transpose(0, 2, 1),
          np.float32)
    two = em.nn.max_pool2d if kind == "max" else em.nn.avg_pool2d
    x4 = rand(rng, (1, 2, 5, 6), np.float32)
    got = two(x4, 3, [1, 1, 2, 2], "SAME", data_format="NCHW")
    want = pool_loops(x4.transpose(0, 2, 3, 1), [3, 3], [2, 2], "SAME", reduce)
    check(got, want.transpose(0, 3, 1, 2), np.float32)


def test_avg_pool3d_of_integers_truncates_once():
    x = np.arange(2 * 3 * 3 * 1, dtype=np.int32).reshape(1, 2, 3, 3, 1) * 7 % 10
    got = em.nn.avg_pool(x, 2, 1, "SAME")
    want = np.trunc(pool_loops(x, [2, 2, 2], [1, 1, 1], "SAME", np.mean)).astype(np.int32)
    assert got.dtype == em.int32
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("call,error,match", [
    (lambda: em.nn.max_pool(em.zeros([4, 4]), 2, 2, "SAME"), ValueError, "rank 3, 4 or 5"),
    (lambda: em.nn.max_pool1d(em.zeros([1, 4, 4, 1]), 2, 2, "SAME"), ValueError,
     "rank-3 input"),
    (lambda: em.nn.avg_pool(em.zeros([1, 4, 1]), 2, 2, "SAME", data_format="NHWC"),
     ValueError, "data_format must be 'NWC' or 'NCW'"),
    (lambda: em.nn.conv2d(em.zeros([1, 4, 4, 1]), em.zeros([2, 2, 1, 1]), 1, "SAME",
                          data_format="NWHC"), ValueError, "data_format must be 'NHWC'"),
    (lambda: em.nn.max_pool(em.zeros([1, 4, 4, 1]), [2, 2, 2], 1, "SAME"), ValueError,
     "ksize must be an int or a list of 1, 2 or 4 ints"),
    (lambda: em.nn.max_pool2d(em.zeros([1, 4, 4, 1]), [2, 2, 2, 2], 1, "SAME"), ValueError,
     "batch and channel entries must be 1"),
    (lambda: em.nn.conv2d(em.zeros([1, 4, 4, 1]), em.zeros([2, 2, 1, 1]), 1,
                          [[1, 0], [0, 0], [0, 0], [0, 0]]), ValueError,
     "explicit padding must be non-negative and \\[0, 0\\] for the batch and channel"),
    (lambda: em.nn.conv2d(em.zeros([1, 4, 4, 1]), em.zeros([2, 2, 1, 1]), 1, [[0, 0], [1]]),
     ValueError, "explicit padding must be 4 \\[before, after\\] pairs"),
    (lambda: em.nn.max_pool2d(em.zeros([1, 4, 4, 1]), 2, 1, [[0, 0]] * 4), ValueError,
     "padding must be 'SAME' or 'VALID'"),
    (lambda: em.nn.conv1d(em.zeros([1, 4, 1]), em.zeros([2, 1, 1, 1]), 1, "SAME"), ValueError,
     "filters must be rank 3"),
    (lambda: em.nn.conv1d(em.zeros([1, 4, 1]), em.zeros([2, 1, 1]), 0, "SAME"), ValueError,
     r"conv1d: stride must be positive, got \[0\]"),
    (lambda: em.nn.max_pool1d(em.zeros([1, 4, 1]), 0, 1, "SAME"), ValueError,
     r"max_pool1d: ksize must be positive, got \[0\]"),
    (lambda: em.nn.avg_pool(em.zeros([1, 4, 4, 4, 1]), 2, [1, -1, 1], "SAME"), ValueError,
     r"avg_pool: strides must be positive, got \[1, -1, 1\]"),
])
def test_bad_arguments_raise_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- compiled against eager ---------------------------------------------------------------

PROGRAMS = {  # name -> (function, input shape, filter shape or None)
    "conv1d": (lambda x, f: em.nn.conv1d(x, f, 2, "SAME", dilations=1), (3, 9, 2), (3, 2, 4)),
    "conv1d_ncw": (lambda x, f: em.nn.conv1d(x, f, 1, "VALID", "NCW", 2), (3, 2, 9), (2, 2, 3)),
    "conv2d_explicit": (lambda x, f: em.nn.conv2d(x, f, [1, 2], [[0, 0], [1, 2], [0, 1],
                                                                 [0, 0]], dilations=[2, 1]),
                        (3, 7, 6, 2), (2, 3, 2, 3)),
    "conv2d_nchw": (lambda x, f: em.nn.conv2d(x, f, 1, "SAME", "NCHW"), (3, 2, 5, 4),
                    (3, 3, 2, 3)),
    # big enough (>= 8192 multiply-adds) for the GEMM call: patches, strided and dilated,
    # and the 1x1 window (stride 1: x copied as rows)
    "conv2d_gemm_same": (lambda x, f: em.nn.conv2d(x, f, 2, "SAME"), (3, 9, 8, 8),
                         (3, 3, 8, 16)),
    "conv2d_gemm_dilated": (lambda x, f: em.nn.conv2d(x, f, 1, "VALID", dilations=[2, 1]),
                            (3, 9, 8, 8), (2, 3, 8, 16)),
    "conv2d_gemm_explicit": (lambda x, f: em.nn.conv2d(x, f, [1, 2], [[0, 0], [1, 2], [0, 1],
                                                                      [0, 0]]),
                             (3, 7, 6, 8), (2, 3, 8, 16)),
    "conv2d_1x1": (lambda x, f: em.nn.conv2d(x, f, 1, "SAME"), (3, 8, 8, 8), (1, 1, 8, 32)),
    "conv2d_1x1_strided": (lambda x, f: em.nn.conv2d(x, f, 2, "VALID"), (3, 8, 8, 8),
                           (1, 1, 8, 32)),
    "conv2d_transpose": (lambda x, f: em.nn.conv2d_transpose(
        x, f, [em.shape(x)[0], 7, 8, 3], 2, "SAME"), (3, 4, 4, 2), (3, 3, 3, 2)),
    "conv2d_transpose_valid": (lambda x, f: em.nn.conv2d_transpose(
        x, f, [em.shape(x)[0], 7, 6, 1], [2, 2], "VALID", dilations=1), (3, 3, 3, 2), (3, 2, 1, 2)),
    "depthwise": (lambda x, f: em.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME"),
                  (3, 7, 6, 3), (3, 3, 3, 2)),
    "depthwise_dilated": (lambda x, f: em.nn.depthwise_conv2d(
        x, f, 1, "VALID", dilations=[2, 1]), (3, 7, 6, 2), (2, 2, 2, 1)),
    "max_pool1d": (lambda x: em.nn.max_pool1d(x, 3, 2, "SAME"), (3, 9, 2), None),
    "avg_pool1d": (lambda x: em.nn.avg_pool1d(x, 2, 1, "VALID"), (3, 9, 2), None),
    "max_pool3d": (lambda x: em.nn.max_pool(x, 2, 2, "SAME"), (3, 5, 4, 3, 2), None),
    "avg_pool3d": (lambda x: em.nn.avg_pool(x, [3, 2, 2], [2, 1, 2], "SAME"), (3, 5, 4, 3, 2),
                   None),
    "avg_pool2d_nchw": (lambda x: em.nn.avg_pool2d(x, 2, 2, "SAME", "NCHW"), (3, 2, 5, 5),
                        None),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", ["static", "dynamic", "empty", "dynamic_empty"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_matches_eager(name, batch, dtype, rng, no_fallback):
    fn, xs, fs = PROGRAMS[name]
    if batch.endswith("empty"):
        xs = (0,) + xs[1:]
    args = [em.constant(rand(rng, xs, dtype))]
    if fs is not None:
        args.append(em.constant(rand(rng, fs, dtype)))
    signature = None
    if batch.startswith("dynamic"):
        signature = [em.TensorSpec([None] + list(xs[1:]), args[0].dtype)] + [
            em.TensorSpec(a.shape, a.dtype) for a in args[1:]]
    want = fn(*args)
    got = em.function(fn, input_signature=signature)(*args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=TOL[dtype], atol=TOL[dtype])


EMPTY_SPATIAL = {  # a spatial dim of size 0 (the reshapes must not solve for -1 with a 0)
    "max_pool": lambda x: em.nn.max_pool(x, 2, 1, "SAME"),
    "avg_pool": lambda x: em.nn.avg_pool(x, 1, 1, "VALID"),  # (2: negative, as in TF)
    "depthwise": lambda x: em.nn.depthwise_conv2d(x, np.ones((2, 2, 1, 2), np.float32), 1,
                                                  "SAME"),
    "conv1d": lambda x: em.nn.conv1d(em.reshape(x, [1, 0, 3]), np.ones((2, 3, 2), np.float32),
                                     1, "SAME"),
    "conv2d_transpose": lambda x: em.nn.conv2d_transpose(
        x, np.ones((2, 2, 2, 1), np.float32), [1, 0, 6, 2], 2, "SAME"),
    "pool3d": lambda x: em.nn.max_pool(em.reshape(x, [1, 0, 3, 1, 1]), 2, 1, "SAME"),
}


@pytest.mark.parametrize("name", sorted(EMPTY_SPATIAL))
def test_empty_spatial_dims(name, no_fallback):
    fn = EMPTY_SPATIAL[name]
    x = em.zeros([1, 0, 3, 1])
    want, got = fn(x), em.function(fn)(x)
    assert want.shape == got.shape and want.shape.num_elements() == 0


def test_unknown_rank_errors_are_clear():
    def run(fn):
        with pytest.raises(ValueError) as info:
            em.function(fn, input_signature=[em.TensorSpec(None)])(em.zeros([1, 1, 4, 4]))
        return str(info.value)
    assert "needs an input of known rank" in run(
        lambda x: em.nn.conv2d(x, em.zeros([2, 2, 1, 1]), 1, "SAME", "NCHW"))
    assert "rank 3, 4 or 5" in run(lambda x: em.nn.max_pool(x, 2, 2, "SAME"))


def test_compiled_half_precision_depthwise_and_transpose(rng, no_fallback):
    x, f = rand(rng, (2, 5, 5, 2), np.float16), rand(rng, (3, 3, 2, 2), np.float16)
    got = em.function(lambda a, b: em.nn.depthwise_conv2d(a, b, 1, "SAME"))(x, f)
    check(got, depthwise_loops(x, f, [1, 1], [1, 1], "SAME"), np.float16)
    got = em.function(lambda a, b: em.nn.conv2d_transpose(a, b, [2, 10, 10, 2], 2))(x, f)
    check(got, transpose_loops(x, f, (2, 10, 10, 2), [2, 2], [1, 1], "SAME"), np.float16)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("fs,strides", [((3, 3, 8, 16), 2), ((1, 1, 8, 16), 1)])
def test_compiled_half_precision_conv2d(fs, strides, dtype, rng, no_fallback):
    # f32 products (a GEMM call), rounded once: as eager's f32 accumulation
    x, f = rand(rng, (2, 8, 8, 8), np.float32), rand(rng, fs, np.float32)
    x, f = em.cast(x, dtype), em.cast(f, dtype)
    want = em.nn.conv2d(x, f, strides, "SAME")
    got = em.function(lambda a, b: em.nn.conv2d(a, b, strides, "SAME"))(x, f)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(em.cast(got, "float32").numpy(),
                               em.cast(want, "float32").numpy(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("batch", [1, 3, 0])
@pytest.mark.parametrize("strides,dilations,padding", [
    (1, 1, "SAME"), (2, 1, "SAME"), ([1, 2], [2, 1], "VALID"),
    ([2, 1], 1, [[0, 0], [1, 2], [0, 1], [0, 0]]), (1, 1, "VALID")])
def test_compiled_conv2d_gradients_match_eager(strides, dilations, padding, batch, rng,
                                               no_fallback):
    # both gradients are convolutions; at these sizes each is a GEMM call compiled
    x = em.constant(rand(rng, (batch, 9, 8, 8), np.float64))
    f = em.constant(rand(rng, (3, 3, 8, 16), np.float64))

    def grads(x, f):
        with em.GradientTape() as tape:
            tape.watch([x, f])
            y = em.reduce_sum(em.sin(em.nn.conv2d(x, f, strides, padding,
                                                  dilations=dilations)))
        return tape.gradient(y, [x, f])
    for want, got in zip(grads(x, f), em.function(grads)(x, f)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_geometry_helper_agrees_with_the_loop_oracle():
    """The SAME split of the oracle is TensorFlow's: total // 2 before, the rest after."""
    assert same_pads(10, 4, 3, 1) == (1, 2)
    assert same_pads(5, 2, 1, 1) == (0, 1)
    assert same_pads(7, 3, 2, 2) == (2, 2)
