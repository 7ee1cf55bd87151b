"""em.sequence_mask (tf.sequence_mask): eager, compiled with static shapes and compiled with
`?` dims, each against numpy's `arange(maxlen) < lengths[..., None]`; maxlen given (a Python
int or a tensor) or the largest length, lengths of any rank, the result's dtype, and
TensorFlow's checks, raised alike eagerly and compiled."""


import numpy as np
import pytest

import ember as em


def oracle(lengths, maxlen=None, dtype=np.bool_):
    lengths = np.asarray(lengths)
    if maxlen is None:
        maxlen = max(int(lengths.max()), 0) if lengths.size else 0
    return (np.arange(int(maxlen)) < lengths[..., None]).astype(dtype)


def runs(fn, lengths):
    """fn(lengths) eagerly, compiled for lengths' shape and compiled for `?` dims."""
    spec = [em.TensorSpec([None] * lengths.ndim, em.as_dtype(lengths.dtype))]
    return {"eager": fn(em.constant(lengths)), "static": em.function(fn)(lengths),
            "dynamic": em.function(fn, input_signature=spec)(lengths)}


LENGTHS = {
    "vector": np.array([1, 3, 2, 0], np.int32),
    "matrix": np.array([[1, 4], [0, 2], [3, 3]], np.int32),
    "rank 3": np.array([[[2], [0]], [[1], [5]]], np.int64),
    "scalar": np.array(3, np.int32),
    "empty": np.zeros([0], np.int32),
    "negative": np.array([-2, 1], np.int32),
}


@pytest.mark.parametrize("kind", sorted(LENGTHS))
@pytest.mark.parametrize("maxlen", [None, 0, 2, 6])
def test_sequence_mask_matches_numpy(kind, maxlen, no_fallback):
    lengths = LENGTHS[kind]
    want = oracle(lengths, maxlen)
    for how, got in runs(lambda t: em.sequence_mask(t, maxlen), lengths).items():
        assert got.dtype == em.bool, how
        assert got.shape == want.shape, how
        np.testing.assert_array_equal(got.numpy(), want, err_msg=how)


@pytest.mark.parametrize("dtype", [em.float32, em.int32, em.int64, em.bool, None])
def test_sequence_mask_casts_to_dtype(dtype, no_fallback):
    lengths = np.array([[2, 0], [1, 3]], np.int32)
    want_dtype = em.bool if dtype is None else dtype
    want = oracle(lengths, 4, want_dtype.np_dtype)
    for how, got in runs(lambda t: em.sequence_mask(t, 4, dtype=dtype), lengths).items():
        assert got.dtype == want_dtype, how
        np.testing.assert_array_equal(got.numpy(), want, err_msg=how)


@pytest.mark.parametrize("maxlen_dtype", [np.int32, np.int64])
def test_sequence_mask_takes_a_tensor_maxlen(maxlen_dtype, no_fallback):
    lengths = np.array([4, 1, 2], np.int64)

    def fn(t, m):
        return em.sequence_mask(t, m)
    for m in (0, 3, 5):
        maxlen = np.array(m, maxlen_dtype)
        want = oracle(lengths, m)
        for how, run in {"eager": fn, "compiled": em.function(fn)}.items():
            got = run(em.constant(lengths), em.constant(maxlen))
            np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{how} maxlen={m}")


def test_sequence_mask_default_maxlen_is_a_dynamic_dim_when_traced():
    f = em.function(lambda t: em.sequence_mask(t))
    concrete = f.get_concrete_function(em.TensorSpec([3], em.int32))
    assert concrete.structured_outputs.shape.as_list() == [3, None]
    fixed = em.function(lambda t: em.sequence_mask(t, 5))
    assert fixed.get_concrete_function(em.TensorSpec([3], em.int32)).structured_outputs.shape \
        .as_list() == [3, 5]
    np.testing.assert_array_equal(f(np.array([1, 2, 1], np.int32)).numpy(),
                                  oracle([1, 2, 1]))


def test_sequence_mask_of_python_lengths():
    got = em.sequence_mask([1, 3, 2], 5)
    np.testing.assert_array_equal(got.numpy(), oracle([1, 3, 2], 5))
    np.testing.assert_array_equal(em.sequence_mask([[1], [2]]).numpy(), oracle([[1], [2]]))


@pytest.mark.parametrize("call,error,match", [
    (lambda t: em.sequence_mask(t, em.constant([3, 4])), ValueError,
     r"em.sequence_mask: maxlen must be a scalar, got shape \(2,\)"),
    (lambda t: em.sequence_mask(t > 1, 3), TypeError,
     "em.sequence_mask: lengths must be integers, got dtype bool"),
])
def test_sequence_mask_errors_are_the_same_eager_and_compiled(call, error, match):
    lengths = np.array([1, 2], np.int32)
    with pytest.raises(error, match=match):
        call(em.constant(lengths))
    with pytest.raises(error, match=match):
        em.function(call)(lengths)


def test_sequence_mask_gives_a_mask_that_zeroes_padding():
    values = em.constant(np.arange(12, dtype=np.float32).reshape(3, 4))
    lengths = em.constant([4, 1, 2])

    @em.function
    def masked_mean(v, n):
        mask = em.sequence_mask(n, em.shape(v)[1], dtype=v.dtype)
        return em.reduce_sum(v * mask, axis=1) / em.cast(n, v.dtype)
    want = np.array([(0 + 1 + 2 + 3) / 4, 4 / 1, (8 + 9) / 2], np.float32)
    np.testing.assert_allclose(masked_mean(values, lengths).numpy(), want)
