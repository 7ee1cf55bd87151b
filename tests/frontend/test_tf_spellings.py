"""TensorFlow APIs a new-user trial reached for and did not find: Tensor.get_shape,
TensorShape.merge_with, em.nn.embedding_lookup (eager and compiled)."""

import numpy as np
import pytest

import ember as em


def test_get_shape_is_shape_eagerly_and_traced():
    assert em.constant([[1.0, 2.0]]).get_shape() == [1, 2]
    f = em.function(lambda x: em.zeros(x.get_shape()),
                    input_signature=[em.TensorSpec([2], em.float32)])
    assert f(np.ones(2, np.float32)).numpy().tolist() == [0.0, 0.0]


@pytest.mark.parametrize("a,b,merged", [
    ([None, 3], [2, None], [2, 3]), (None, [1, None], [1, None]), ([4], None, [4]),
    ([None], [None], [None])])
def test_merge_with_knows_what_either_knows(a, b, merged):
    assert em.TensorShape(a).merge_with(b) == merged
    assert em.TensorShape(b).merge_with(a) == merged


def test_merge_with_incompatible_shapes_is_a_value_error():
    with pytest.raises(ValueError, match="not compatible"):
        em.TensorShape([2, None]).merge_with([3, 1])


@pytest.mark.parametrize("max_norm", [None, 2.0])
def test_embedding_lookup_matches_numpy_eager_sharded_and_compiled(max_norm):
    table = np.arange(14, dtype=np.float32).reshape(7, 2) / 3
    ids = np.array([[6, 0], [2, 2], [3, 5]], np.int32)
    want = table[ids]
    if max_norm is not None:
        norms = np.linalg.norm(want, axis=-1, keepdims=True)
        want = want * max_norm / np.maximum(norms, max_norm)
    for params in (table, [table[:4], table[4:]]):
        got = em.nn.embedding_lookup(params, ids, max_norm=max_norm).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6)
    compiled = em.function(lambda t, i: em.nn.embedding_lookup(t, i, max_norm=max_norm))
    np.testing.assert_allclose(compiled(table, ids).numpy(), want, rtol=1e-6)
    with pytest.raises(TypeError, match="ids must be integers"):
        em.nn.embedding_lookup(table, [0.5])
