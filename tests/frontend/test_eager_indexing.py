"""Eager indexing ops: `x[...]` / em.strided_slice against numpy basic indexing, em.gather,
em.one_hot and em.pad (CONSTANT / REFLECT / SYMMETRIC), with Python-loop oracles.
"""

import itertools

import numpy as np
import pytest

import ember as em

X3 = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
X2 = np.arange(4 * 6, dtype=np.float32).reshape(4, 6) - 7.5

KEYS = [
    np.s_[1:3, ::2],
    np.s_[..., None],
    np.s_[-1],
    np.s_[::-1],
    np.s_[:, 1],
    np.s_[0],
    np.s_[1, 2],
    np.s_[-1, -1],
    np.s_[1:],
    np.s_[:-1],
    np.s_[::2],
    np.s_[1::2, ::-2],
    np.s_[3:0:-1],
    np.s_[-2:],
    np.s_[-100:100],
    np.s_[100:],
    np.s_[5:2],
    np.s_[2:5:-1],
    np.s_[:, -1:],
    np.s_[None],
    np.s_[None, :, None],
    np.s_[..., 0],
    np.s_[0, ...],
    np.s_[...],
    np.s_[()],
    np.s_[None, ..., 0],
    np.s_[1, ..., ::-2],
    np.s_[:, ::-3],
    np.s_[::-1, ::-1],
    np.s_[:, 1:2],
    np.s_[np.int64(1), np.int32(-2)],
]


@pytest.mark.parametrize("key", KEYS, ids=str)
@pytest.mark.parametrize("x", [X2, X3], ids=["2d", "3d"])
def test_getitem_matches_numpy_basic_indexing(x, key, expect):
    expect(em.constant(x)[key], x[key])


@pytest.mark.parametrize("key", [np.s_[:], np.s_[1:], np.s_[::-1], np.s_[0], np.s_[..., None],
                                 np.s_[:, 0:0], np.s_[None, 1]], ids=str)
def test_getitem_on_empty_and_zero_width_tensors(key, expect):
    x = np.zeros((2, 0), np.float64)
    expect(em.constant(x)[key], x[key])


@pytest.mark.parametrize("dtype,values", [
    ("string", np.array([b"a", b"b", b"c"], object)),
    ("bool", np.array([True, False, True])),
    ("bfloat16", np.array([1.5, -2.0, 3.0], em.bfloat16.np_dtype)),
    ("uint8", np.array([0, 255, 7], np.uint8)),
])
def test_getitem_keeps_dtype(dtype, values, expect):
    t = em.constant(values)
    expect(t[::-1], values[::-1], dtype)
    expect(t[1], values[1], dtype)


def test_getitem_accepts_integer_tensors_as_indices(expect):
    x = em.constant(X2)
    expect(x[em.constant(2)], X2[2])
    expect(x[em.constant(1, dtype=em.int64):em.constant(3)], X2[1:3])


def test_getitem_of_scalar_returns_scalar(expect):
    expect(em.constant(5)[...], np.array(5, np.int32))
    expect(em.constant(5)[None], np.array([5], np.int32))


@pytest.mark.parametrize("key,error,match", [
    (np.s_[4], ValueError, "index 4 is out of bounds for dim 0 of size 4 in tensor<4x6xf32>"),
    (np.s_[-5], ValueError, "index -5 is out of bounds for dim 0 of size 4"),
    (np.s_[:, 6], ValueError, "index 6 is out of bounds for dim 1 of size 6"),
    (np.s_[0, 0, 0], ValueError, r"too many indices \(3\) for tensor<4x6xf32>"),
    (np.s_[..., ...], IndexError, "an index can only have a single ellipsis"),
    (np.s_[1.5], TypeError, "only integers, slices .* are valid indices; got float 1.5"),
    (np.s_[::0], ValueError, "slice step cannot be zero"),
    (np.s_[True], TypeError, "got the bool True"),
    (np.s_[[0, 1]], TypeError, "got list"),
    (np.s_["a"], TypeError, "got str 'a'"),
])
def test_getitem_rejects_bad_keys(key, error, match):
    with pytest.raises(error, match=match):
        em.constant(X2)[key]


def test_getitem_with_float_tensor_index_raises():
    with pytest.raises(TypeError, match="valid indices"):
        em.constant(X2)[em.constant(1.0)]


@pytest.mark.parametrize("spec,key", [
    (dict(begin=[1, 0], end=[3, 0], strides=[1, 2], end_mask=2), np.s_[1:3, ::2]),
    (dict(begin=[0, 0], end=[0, 0], strides=[1, 1], begin_mask=1, end_mask=1, ellipsis_mask=0,
          shrink_axis_mask=2, new_axis_mask=0), np.s_[:, 0]),
    (dict(begin=[0, 0], end=[0, 0], strides=[1, 1], ellipsis_mask=1, new_axis_mask=2),
     np.s_[..., None]),
    (dict(begin=[-1], end=[0], strides=[-1], end_mask=1), np.s_[-1::-1]),
    (dict(begin=[2], end=[3], strides=[1], shrink_axis_mask=1), np.s_[2]),
])
def test_strided_slice_masks_match_numpy(spec, key, expect):
    expect(em.strided_slice(em.constant(X2), **spec), X2[key])


@pytest.mark.parametrize("spec,match", [
    (dict(begin=[0, 0], end=[1], strides=[1, 1]), "begin, end and strides must have the same "
                                                  "length"),
    (dict(begin=[0], end=[1], strides=[0]), "strides must be non-zero"),
    (dict(begin=[0, 0], end=[0, 0], strides=[1, 1], ellipsis_mask=3),
     "at most one ellipsis is allowed"),
])
def test_strided_slice_rejects_bad_specs(spec, match):
    with pytest.raises(ValueError, match=match):
        em.strided_slice(em.constant(X2), **spec)


# -- gather ---------------------------------------------------------------------------------

def gather_oracle(params: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    axis %= params.ndim
    out_shape = params.shape[:axis] + indices.shape + params.shape[axis + 1:]
    out = np.empty(out_shape, params.dtype)
    for pos in itertools.product(*(range(d) for d in out_shape)):
        outer = pos[:axis]
        idx = pos[axis:axis + indices.ndim]
        inner = pos[axis + indices.ndim:]
        out[pos] = params[outer + (int(indices[idx]),) + inner]
    return out


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("index_shape", [(), (2,), (2, 3), (0,)])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64", "uint8", "int8", "bool"])
def test_gather_matches_loop_oracle(axis, index_shape, index_dtype, dtype, rng, expect):
    params = (rng.standard_normal((3, 4, 5)) * 50).astype(em.as_dtype(dtype).np_dtype)
    size = params.shape[axis]
    indices = rng.integers(0, size, index_shape).astype(em.as_dtype(index_dtype).np_dtype)
    out = em.gather(em.constant(params), em.constant(indices), axis=axis)
    expect(out, gather_oracle(params, indices, axis), dtype)


def test_gather_repeats_and_accepts_python_lists(expect):
    expect(em.gather(em.constant(["a", "b", "c"]), [2, 2, 0]),
           np.array([b"c", b"c", b"a"], object), "string")
    expect(em.gather(em.constant([[1, 2], [3, 4]]), [[1], [0]]),
           np.array([[[3, 4]], [[1, 2]]], np.int32))
    expect(em.gather(em.zeros([3, 2]), []), np.zeros((0, 2), np.float32))


@pytest.mark.parametrize("indices,match", [
    ([0, 3], r"'ember.gather' op gather index 3 is out of range \[0, 3\)"),
    ([-1], r"gather index -1 is out of range \[0, 3\)"),
    ([[0], [7]], r"gather index 7 is out of range"),
])
def test_gather_out_of_range_index_raises_invalid_argument(indices, match):
    with pytest.raises(em.InvalidArgumentError, match=match):
        em.gather(em.zeros([3, 2]), indices)


def test_gather_rejects_bad_indices_or_axis():
    with pytest.raises(TypeError, match="indices of type tensor<1xf32> must have i32 or i64"):
        em.gather(em.zeros([3]), [0.5])
    with pytest.raises(ValueError, match="axis 2 is out of range for rank 2"):
        em.gather(em.zeros([3, 2]), [0], axis=2)
    with pytest.raises(ValueError, match=r"params of type tensor<f32> must have rank >= 1"):
        em.gather(em.zeros([]), [0])


# -- one_hot ----------------------------------------------------------------------------------

def one_hot_oracle(indices: np.ndarray, depth, on, off, axis, dtype):
    axis %= indices.ndim + 1
    out_shape = indices.shape[:axis] + (depth,) + indices.shape[axis:]
    out = np.empty(out_shape, dtype)
    for pos in itertools.product(*(range(d) for d in out_shape)):
        idx = pos[:axis] + pos[axis + 1:]
        out[pos] = on if int(indices[idx]) == pos[axis] else off
    return out


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("index_dtype", ["int8", "uint8", "int32", "int64"])
def test_one_hot_matches_loop_oracle(axis, index_dtype, expect):
    indices = np.array([[0, 2, 1], [3, 1, 0]], em.as_dtype(index_dtype).np_dtype)
    expect(em.one_hot(em.constant(indices), 3, axis=axis),
           one_hot_oracle(indices, 3, 1.0, 0.0, axis, np.float32))


def test_one_hot_out_of_range_rows_are_all_off(expect):
    out = em.one_hot([0, -1, 3, 2, 100], 3, on_value=5, off_value=-1, dtype=em.int32)
    expect(out, np.array([[5, -1, -1], [-1, -1, -1], [-1, -1, -1], [-1, -1, 5],
                          [-1, -1, -1]]), "int32")


@pytest.mark.parametrize("kwargs,dtype", [
    ({}, "float32"),
    ({"dtype": em.int8}, "int8"),
    ({"dtype": em.bool, "on_value": True, "off_value": False}, "bool"),
    ({"on_value": em.constant(2.0, dtype=em.float64)}, "float64"),
    ({"dtype": em.bfloat16, "on_value": 0.5}, "bfloat16"),
])
def test_one_hot_value_dtype(kwargs, dtype, expect):
    on = kwargs.get("on_value", 1)
    on = on.numpy().item() if isinstance(on, em.Tensor) else on
    off = kwargs.get("off_value", 0)
    expect(em.one_hot([1, 0], 2, **kwargs), np.array([[off, on], [on, off]]), dtype)


def test_one_hot_scalar_empty_and_zero_depth(expect):
    expect(em.one_hot(1, 3), np.array([0.0, 1.0, 0.0], np.float32))
    expect(em.one_hot(em.constant(np.zeros((0,), np.int32)), 4), np.zeros((0, 4), np.float32))
    expect(em.one_hot([0, 1], 0), np.zeros((2, 0), np.float32))


@pytest.mark.parametrize("args,kwargs,error,match", [
    (([0.0], 2), {}, TypeError, "indices of type tensor<1xf32> must have i8, ui8, i32 or i64 "
                                "elements"),
    ((em.constant([0], dtype=em.int16), 2), {}, TypeError,
     "indices of type tensor<1xi16> must have i8, ui8, i32 or i64 elements"),
    (([0], -1), {}, ValueError, "depth must be >= 0, got -1"),
    (([0], 2), {"axis": 2}, ValueError, "axis 2 is out of range for rank 2"),
    (([0], 2), {"on_value": em.constant(1.0), "off_value": em.constant(0, dtype=em.int32)},
     TypeError, "on_value has dtype float32 and off_value int32: give both"),
])
def test_one_hot_rejects_bad_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        em.one_hot(*args, **kwargs)


# -- pad --------------------------------------------------------------------------------------

def pad_oracle(x: np.ndarray, paddings, mode, value=0):
    """Builds the padded array index by index: each output index maps to a source index."""
    def source(i, n, lo):
        j = i - lo
        if 0 <= j < n:
            return j
        if mode == "CONSTANT":
            return None
        if mode == "REFLECT":  # edge not repeated: -1 -> 1, n -> n - 2
            return -j if j < 0 else 2 * (n - 1) - j
        return -j - 1 if j < 0 else 2 * n - 1 - j  # SYMMETRIC: edge repeated

    out_shape = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, paddings))
    out = np.empty(out_shape, x.dtype)
    for pos in itertools.product(*(range(d) for d in out_shape)):
        src = [source(i, n, lo) for i, n, (lo, _) in zip(pos, x.shape, paddings)]
        out[pos] = value if None in src else x[tuple(src)]
    return out


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("paddings", [
    [[0, 0], [0, 0]], [[1, 0], [0, 2]], [[2, 2], [3, 3]], [[0, 1], [3, 0]],
])
def test_pad_matches_index_oracle(mode, paddings, expect):
    x = np.arange(3 * 4, dtype=np.int32).reshape(3, 4)
    expect(em.pad(em.constant(x), paddings, mode), pad_oracle(x, paddings, mode))


def test_pad_symmetric_allows_the_full_dim(expect):
    x = np.arange(3 * 4, dtype=np.int32).reshape(3, 4)
    expect(em.pad(em.constant(x), [[3, 3], [4, 4]], "SYMMETRIC"),
           pad_oracle(x, [[3, 3], [4, 4]], "SYMMETRIC"))


@pytest.mark.parametrize("dtype,value", [("float32", -1.5), ("int8", 7), ("bfloat16", 2.0),
                                         ("bool", True), ("float64", np.nan)])
def test_pad_constant_value_takes_tensor_dtype(dtype, value, expect):
    x = np.ones((2, 2), em.as_dtype(dtype).np_dtype)
    out = em.pad(em.constant(x), [[1, 0], [0, 1]], constant_values=value)
    expect(out, pad_oracle(x.astype(np.float64), [[1, 0], [0, 1]], "CONSTANT", value), dtype)


def test_pad_strings_empty_and_scalar(expect):
    expect(em.pad(em.constant(["a"]), [[1, 1]], constant_values=""),
           np.array([b"", b"a", b""], object), "string")
    expect(em.pad(em.zeros([0]), [[1, 2]], constant_values=3), np.full(3, 3.0, np.float32))
    expect(em.pad(em.zeros([2, 0]), [[0, 0], [1, 0]]), np.zeros((2, 1), np.float32))
    expect(em.pad(em.constant(5), []), np.array(5, np.int32))
    expect(em.pad(em.constant([1, 2]), [[1, 1]], mode="reflect"), np.array([2, 1, 2, 1], np.int32))


@pytest.mark.parametrize("paddings,mode,kwargs,error,match", [
    ([[3, 0], [0, 0]], "REFLECT", {}, ValueError,
     "'ember.pad' op REFLECT padding 3,0 of dim 0 exceeds 2 for tensor<3x4xi32>"),
    ([[0, 0], [0, 5]], "SYMMETRIC", {}, ValueError, "SYMMETRIC padding 0,5 of dim 1 exceeds 4"),
    ([[1, 0]], "CONSTANT", {}, ValueError, r"paddings must be 4 non-negative ints \(before, "
                                           r"after per dim\) for tensor<3x4xi32>, got \[1, 0\]"),
    ([[-1, 0], [0, 0]], "CONSTANT", {}, ValueError, "paddings must be 4 non-negative ints"),
    ([[1, 0], [0, 0]], "WRAP", {}, ValueError,
     r"mode must be one of \['CONSTANT', 'REFLECT', 'SYMMETRIC'\], got 'WRAP'"),
    ([[1, 0], [0, 0]], "CONSTANT", {"constant_values": 1.5}, TypeError,
     "different element types"),
    ([[1, 0], [0, 0]], "CONSTANT", {"constant_values": [1, 2]}, ValueError,
     "constant_value tensor<2xi32> must be a scalar"),
])
def test_pad_rejects_bad_paddings_mode_or_value(paddings, mode, kwargs, error, match):
    with pytest.raises(error, match=match):
        em.pad(em.constant(np.zeros((3, 4), np.int32)), paddings, mode, **kwargs)
