"""Eager structural ops: matmul (and `@`), transpose, reshape, broadcast_to, expand_dims,
squeeze, and `tensor.concat` through em.concat / em.stack, against numpy and Python oracles.
"""

import numpy as np
import pytest

import ember as em


def np_dtype(name):
    return em.as_dtype(name).np_dtype


def wrap_array(values: np.ndarray, dtype: str) -> np.ndarray:
    info = np.iinfo(np_dtype(dtype))
    span = int(info.max) - int(info.min) + 1
    return np.vectorize(lambda v: (int(v) - int(info.min)) % span + int(info.min),
                        otypes=[object])(values).astype(np.int64)


# -- matmul -------------------------------------------------------------------------------

MATMUL_SHAPES = [  # a, b, transpose_a, transpose_b, result
    ((2, 3), (3, 4), False, False, (2, 4)),
    ((3, 2), (3, 4), True, False, (2, 4)),
    ((2, 3), (4, 3), False, True, (2, 4)),
    ((3, 2), (4, 3), True, True, (2, 4)),
    ((5, 2, 3), (3, 4), False, False, (5, 2, 4)),
    ((1, 2, 3), (6, 3, 4), False, False, (6, 2, 4)),
    ((2, 1, 2, 3), (5, 3, 1), False, False, (2, 5, 2, 1)),
    ((2, 0), (0, 3), False, False, (2, 3)),
    ((0, 3), (3, 2), False, False, (0, 2)),
    ((1, 1), (1, 1), False, False, (1, 1)),
]


def matmul_oracle(a, b, ta, tb):
    a = np.swapaxes(a, -1, -2) if ta else a
    b = np.swapaxes(b, -1, -2) if tb else b
    return np.matmul(a, b)  # on float64 or Python-int object arrays


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("sa,sb,ta,tb,out", MATMUL_SHAPES)
def test_matmul_float_matches_float64_oracle(sa, sb, ta, tb, out, dtype, rng, expect):
    a = rng.standard_normal(sa).astype(np_dtype(dtype))
    b = rng.standard_normal(sb).astype(np_dtype(dtype))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = matmul_oracle(a64, b64, ta, tb)
    assert want.shape == out
    # every float dtype accumulates in at least float32; allow that rounding per |a| @ |b|
    scale = matmul_oracle(np.abs(a64), np.abs(b64), ta, tb)
    atol = (1e-15 if dtype == "float64" else 1e-6) * scale
    expect(em.matmul(em.constant(a), em.constant(b), transpose_a=ta, transpose_b=tb),
           want.astype(np_dtype(dtype)), dtype, atol=atol.max(initial=0.0))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
@pytest.mark.parametrize("sa,sb,ta,tb,out", MATMUL_SHAPES[:7])
def test_matmul_integer_is_exact_and_wraps(sa, sb, ta, tb, out, dtype, rng, expect):
    info = np.iinfo(np_dtype(dtype))
    a = rng.integers(info.min, info.max, sa, endpoint=True)
    b = rng.integers(info.min, info.max, sb, endpoint=True)
    want = wrap_array(matmul_oracle(a.astype(object), b.astype(object), ta, tb), dtype)
    result = em.matmul(em.constant(a.astype(np_dtype(dtype))),
                       em.constant(b.astype(np_dtype(dtype))), transpose_a=ta, transpose_b=tb)
    expect(result, want, dtype)


def test_matmul_operator_and_python_lists(expect):
    a = em.constant([[1, 2], [3, 4]])
    expect(a @ a, np.array([[7, 10], [15, 22]]), "int32")
    expect([[1, 0], [0, 1]] @ a, np.array([[1, 2], [3, 4]]), "int32")
    expect(np.eye(2, dtype=np.int32) @ a, np.array([[1, 2], [3, 4]]), "int32")


def test_matmul_propagates_nan_and_inf(expect):
    a = em.constant([[np.nan, 1.0], [np.inf, 0.0]])
    b = em.constant([[1.0], [2.0]])
    expect(em.matmul(a, b), np.array([[np.nan], [np.inf]], np.float32))


@pytest.mark.parametrize("a,b,kwargs,error,match", [
    ((2, 3), (2, 3), {}, ValueError, "contraction dims differ: tensor<2x3xf32> has 3, "
                                     "tensor<2x3xf32> has 2"),
    ((3,), (3, 2), {}, ValueError, "must have rank >= 2"),
    ((2, 2, 3), (3, 3, 4), {}, ValueError, "batch dims of .* are not broadcast-compatible"),
    ((2, 3), (2, 4), {"transpose_a": True, "transpose_b": True}, ValueError,
     "contraction dims differ"),
])
def test_matmul_rejects_incompatible_shapes(a, b, kwargs, error, match):
    with pytest.raises(error, match=match):
        em.matmul(em.zeros(a), em.zeros(b), **kwargs)


def test_matmul_rejects_bool_and_mixed_dtypes():
    with pytest.raises(TypeError, match="must have numeric or complex elements"):
        em.matmul(em.constant([[True]]), em.constant([[True]]))
    with pytest.raises(TypeError, match="different element types"):
        em.matmul(em.constant([[1]]), em.constant([[1.0]]))


# -- transpose, reshape, broadcast_to, expand_dims, squeeze ---------------------------------

@pytest.mark.parametrize("shape,perm", [
    ((2, 3), None), ((2, 3, 4), None), ((2, 3, 4), [1, 0, 2]), ((2, 3, 4), [2, 0, 1]),
    ((0, 3), [1, 0]), ((), None), ((5,), [0]),
])
def test_transpose_matches_numpy(shape, perm, rng, expect):
    x = rng.integers(0, 100, shape).astype(np.int16)
    want = np.transpose(x, perm)
    expect(em.transpose(em.constant(x), perm), want)
    if perm is None:  # moved element (i, j, ...) lands at (..., j, i)
        for idx in np.ndindex(*shape):
            assert want[idx[::-1]] == x[idx]


@pytest.mark.parametrize("perm", [[0, 0, 1], [0, 1], [0, 1, 3]])
def test_transpose_rejects_non_permutation(perm):
    with pytest.raises(ValueError, match="is not a permutation of 0..2"):
        em.transpose(em.zeros([2, 3, 4]), perm)


@pytest.mark.parametrize("shape,new,out", [
    ((2, 3), [3, 2], (3, 2)),
    ((2, 3), [-1], (6,)),
    ((2, 3, 4), [4, -1], (4, 6)),
    ((2, 3), [1, 6, 1], (1, 6, 1)),
    ((0, 3), [-1, 3], (0, 3)),
    ((0, 3), [3, 0, 2], (3, 0, 2)),
    ((1,), [], ()),
    ((), [1, 1], (1, 1)),
])
def test_reshape_keeps_row_major_order(shape, new, out, rng, expect):
    x = rng.standard_normal(shape)
    expect(em.reshape(em.constant(x), new), x.reshape(out))
    expect(em.reshape(em.constant(x), em.constant(list(out) or [1])[:len(out)]), x.reshape(out))


@pytest.mark.parametrize("shape,new,error,match", [
    ((2, 3), [4, -1], ValueError, r"cannot reshape tensor<2x3xf32> \(6 elements\) to \[4, -1\]"),
    ((2, 3), [7], ValueError, r"\(6 elements\) to \[7\] \(7 elements\)"),
    ((2, 3), [-1, -1], ValueError, "may hold at most one -1"),
    ((2, 3), [-2, -3], ValueError, "no other negative dims"),
    ((0, 3), [0, -1], ValueError, "cannot reshape tensor<0x3xf32>"),
])
def test_reshape_rejects_wrong_element_count(shape, new, error, match):
    with pytest.raises(error, match=match):
        em.reshape(em.zeros(shape), new)


@pytest.mark.parametrize("shape,target", [
    ((3,), (2, 3)), ((1,), (4,)), ((2, 1), (2, 5)), ((), (2, 2)), ((1,), (0,)),
    ((1, 3), (2, 0, 1, 3)), ((2, 3), (2, 3)),
])
def test_broadcast_to_matches_numpy(shape, target, rng, expect):
    x = rng.standard_normal(shape).astype(np.float32)
    out = em.broadcast_to(em.constant(x), target)
    expect(out, np.broadcast_to(x, target))
    # the result owns its memory: it is a plain, contiguous tensor
    assert out.numpy().flags.c_contiguous


@pytest.mark.parametrize("shape,target,match", [
    ((3,), (2, 4), r"cannot broadcast tensor<3xf32> to \[2, 4\]"),
    ((2, 3), (3,), r"cannot broadcast tensor<2x3xf32> to lower rank \[3\]"),
    ((2,), (1,), r"cannot broadcast tensor<2xf32> to \[1\]"),
    ((0,), (2,), r"cannot broadcast tensor<0xf32> to \[2\]"),
])
def test_broadcast_to_rejects_incompatible_target(shape, target, match):
    with pytest.raises(ValueError, match=match):
        em.broadcast_to(em.zeros(shape), target)


@pytest.mark.parametrize("shape,axis,out", [
    ((2, 3), 0, (1, 2, 3)), ((2, 3), 1, (2, 1, 3)), ((2, 3), 2, (2, 3, 1)),
    ((2, 3), -1, (2, 3, 1)), ((2, 3), -3, (1, 2, 3)), ((), 0, (1,)), ((0,), 1, (0, 1)),
])
def test_expand_dims_inserts_size_one_dim(shape, axis, out, rng, expect):
    x = rng.integers(0, 9, shape).astype(np.uint8)
    expect(em.expand_dims(em.constant(x), axis), x.reshape(out))


@pytest.mark.parametrize("axis", [3, -4])
def test_expand_dims_rejects_out_of_range_axis(axis):
    with pytest.raises(ValueError, match=f"axis {axis} is out of range for rank 3"):
        em.expand_dims(em.zeros([2, 3]), axis)


@pytest.mark.parametrize("shape,axis,out", [
    ((1, 2, 1), None, (2,)),
    ((1, 2, 1), 0, (2, 1)),
    ((1, 2, 1), -1, (1, 2)),
    ((1, 2, 1), [0, 2], (2,)),
    ((1, 1), None, ()),
    ((1, 0, 1), None, (0,)),
    ((1, 2, 1), np.int64(2), (1, 2)),
])
def test_squeeze_removes_size_one_dims(shape, axis, out, rng, expect):
    x = rng.standard_normal(shape)
    expect(em.squeeze(em.constant(x), axis), x.reshape(out))


@pytest.mark.parametrize("axis,match", [
    (1, "cannot squeeze dim 1 of size 2 in tensor<1x2x1xf32>"),
    (3, "axis 3 is out of range for rank 3"),
])
def test_squeeze_rejects_non_unit_or_out_of_range_axis(axis, match):
    with pytest.raises(ValueError, match=match):
        em.squeeze(em.zeros([1, 2, 1]), axis)


# -- concat and stack (upstream tensor.concat) -----------------------------------------------

@pytest.mark.parametrize("shapes,axis", [
    ([(2, 3), (1, 3)], 0),
    ([(2, 3), (2, 1), (2, 0)], 1),
    ([(2, 3), (2, 2)], -1),
    ([(0, 3), (0, 3)], 0),
    ([(0, 3), (2, 3)], 0),
    ([(4,)], 0),
    ([(2, 1, 3), (2, 4, 3)], -2),
])
@pytest.mark.parametrize("dtype", ["float32", "int8", "bfloat16", "bool"])
def test_concat_matches_numpy(shapes, axis, dtype, rng, expect):
    parts = [(rng.standard_normal(s) * 3).astype(np_dtype(dtype)) for s in shapes]
    expect(em.concat([em.constant(p) for p in parts], axis), np.concatenate(parts, axis), dtype)


def test_concat_converts_python_values_to_the_tensor_dtype(expect):
    out = em.concat([[1, 2], em.constant([3], dtype=em.int8)], 0)
    expect(out, np.array([1, 2, 3], np.int8))
    expect(em.concat([em.constant(["a"]), ["b", "c"]], 0), np.array([b"a", b"b", b"c"], object),
           "string")


@pytest.mark.parametrize("values,axis,error,match", [
    ([(2, 3), (1, 2)], 0, ValueError, "'tensor.concat' op operands differ in dim 1"),
    ([(2,), (2, 1)], 0, ValueError, "operands must have the same rank"),
    ([(2,)], 1, ValueError, "concat axis 1 is out of range for rank 1"),
    ([], 0, ValueError, "concat needs at least one tensor"),
])
def test_concat_rejects_mismatched_shapes(values, axis, error, match):
    with pytest.raises(error, match=match):
        em.concat([em.zeros(s) for s in values], axis)


def test_concat_rejects_mixed_dtypes():
    with pytest.raises(TypeError, match="'tensor.concat' op operand types tensor<2xf32> and "
                                        "tensor<2xi32> have different element types"):
        em.concat([em.zeros([2]), em.ones([2], em.int32)], 0)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0, 2)])
@pytest.mark.parametrize("count", [1, 3])
def test_stack_matches_numpy_for_every_axis(shape, count, rng, expect):
    parts = [rng.integers(0, 50, shape).astype(np.int32) for _ in range(count)]
    for axis in range(-len(shape) - 1, len(shape) + 1):
        expect(em.stack([em.constant(p) for p in parts], axis=axis), np.stack(parts, axis))


def test_stack_of_python_values(expect):
    expect(em.stack([1, 2, 3]), np.array([1, 2, 3], np.int32))
    expect(em.stack([[1.0, 2.0], [3.0, 4.0]], axis=1), np.array([[1, 3], [2, 4]], np.float32))


@pytest.mark.parametrize("values,axis,match", [
    ([(2,), (3,)], 0, "stack needs tensors of one shape"),
    ([(2,), (2,)], 2, "stack axis 2 is out of range for rank 2"),
    ([(2,), (2,)], -3, "stack axis -3 is out of range for rank 2"),
    ([], 0, "stack needs at least one tensor"),
])
def test_stack_rejects_bad_values_or_axis(values, axis, match):
    with pytest.raises(ValueError, match=match):
        em.stack([em.zeros(s) for s in values], axis)


def test_one_hot_takes_its_dtype_from_on_and_off_values_as_tensorflow():
    """TensorFlow: `dtype`, else the dtype of the given on/off value (a Python int is
    int32), else float32; a given value of another dtype than `dtype` is a TypeError."""
    got = em.one_hot([2, 0], 3, on_value=5, off_value=-1, axis=0)
    assert got.dtype == em.int32 and got.numpy().tolist() == [[-1, 5], [-1, -1], [5, -1]]
    assert em.function(lambda i: em.one_hot(i, 3, on_value=5, off_value=-1))(
        em.constant([0, 2])).numpy().tolist() == [[5, -1, -1], [-1, -1, 5]]
    assert em.one_hot([1], 2, on_value=5, dtype=em.float32).numpy().tolist() == [[0.0, 5.0]]
    assert em.one_hot([1], 2, 1.0, 0.0, dtype=em.float64).dtype == em.float64
    assert em.one_hot([1], 2).dtype == em.float32
    assert em.one_hot([1], 2, off_value=2.5).numpy().tolist() == [[2.5, 1.0]]
    with pytest.raises(TypeError, match="on_value has dtype int32, but dtype is float32"):
        em.one_hot([1], 2, on_value=em.constant(1), dtype=em.float32)
    with pytest.raises(TypeError, match="on_value has dtype int32 and off_value float32"):
        em.one_hot([1], 2, on_value=1, off_value=0.5)


def test_stack_of_a_dynamic_and_a_static_shape_checks_when_the_code_runs():
    """[?] with [3] is compatible at trace time (as TensorFlow's stack); a run whose `?`
    is not 3 raises the shape error eager raises for it."""
    f = em.function(lambda x: em.stack([x, em.ones([3], em.float32)], axis=0),
                    input_signature=[em.TensorSpec([None], em.float32)])
    assert f(np.zeros(3, np.float32)).numpy().tolist() == [[0.0] * 3, [1.0] * 3]
    with pytest.raises(ValueError, match="differ in dim 1"):
        f(np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="stack needs tensors of one shape"):
        em.stack([em.ones([4]), em.ones([3])])
