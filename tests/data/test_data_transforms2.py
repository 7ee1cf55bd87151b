"""`from_generator`, `zip`, `concatenate`, `interleave`, `shard`, `padded_batch`, `unbatch`,
`rebatch` and `with_options`, against tf.data's documented examples (values by hand)."""

import collections

import numpy as np
import pytest

import ember as em

Dataset = em.data.Dataset


def values(ds):
    return [_plain(x) for x in ds.as_numpy_iterator()]


def _plain(x):
    if isinstance(x, tuple):
        return tuple(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return np.asarray(x).tolist()


def card(ds):
    return int(ds.cardinality().numpy())


def test_from_generator_converts_and_checks_each_element():
    def gen():
        yield [1, 2], 3
        yield [4.5], 5

    ds = Dataset.from_generator(gen, output_signature=(em.TensorSpec([None], em.float32),
                                                       em.TensorSpec([], em.int32)))
    assert values(ds) == [([1.0, 2.0], 3), ([4.5], 5)]
    assert values(ds) == [([1.0, 2.0], 3), ([4.5], 5)]  # the generator is called per pass
    x, y = next(iter(ds))
    assert x.dtype == em.float32 and y.dtype == em.int32
    assert card(ds) == em.data.UNKNOWN_CARDINALITY
    assert ds.element_spec == (em.TensorSpec([None], em.float32), em.TensorSpec([], em.int32))
    counted = Dataset.from_generator(lambda n: range(n), output_types=em.int64, args=(3,))
    assert values(counted) == [0, 1, 2]
    assert counted.element_spec == em.TensorSpec(None, em.int64)
    words = Dataset.from_generator(lambda: iter(["a", b"bc"]),
                                   output_signature=em.TensorSpec([], em.string))
    assert values(words) == [b"a", b"bc"]
    dicts = Dataset.from_generator(lambda: iter([{"a": 1, "b": [1.0]}]),
                                   output_signature={"a": em.TensorSpec([], em.int64),
                                                     "b": em.TensorSpec([1], em.float64)})
    assert values(dicts) == [{"a": 1, "b": [1.0]}]


def _gen(*items):
    return lambda: iter(items)


@pytest.mark.parametrize("items, spec, error, match", [
    (([1, 2], [1, 2, 3]), em.TensorSpec([2], em.int32), em.errors.InvalidArgumentError,
     r"element of shape \(3,\) where an element of shape \(2,\) was expected "
     r"\(element 1, component 0\)"),
    ((1, 2.5), em.TensorSpec([], em.int32), em.errors.InvalidArgumentError,
     r"element of type float64 where an element of type int32 was expected \(element 1"),
    ((2**40,), em.TensorSpec([], em.int32), em.errors.InvalidArgumentError,
     r"does not fit in int32 \(element 0"),
    ((1, (1, 2)), (em.TensorSpec([], em.int32), em.TensorSpec([], em.int32)),
     em.errors.InvalidArgumentError, r"did not match the expected structure \(element 0\)"),
    (("x",), em.TensorSpec([], em.float32), em.errors.InvalidArgumentError,
     "element of type string where an element of type float32"),
    ((1,), em.TensorSpec([], em.string), em.errors.InvalidArgumentError,
     "expected type was string"),
])
def test_from_generator_bad_elements(items, spec, error, match):
    with pytest.raises(error, match=match):
        values(Dataset.from_generator(_gen(*items), output_signature=spec))


def test_from_generator_bad_arguments():
    with pytest.raises(TypeError, match="give output_signature"):
        Dataset.from_generator(_gen(1))
    with pytest.raises(TypeError, match="cannot be used together"):
        Dataset.from_generator(_gen(1), output_types=em.int32,
                               output_signature=em.TensorSpec([], em.int32))
    with pytest.raises(TypeError, match="must be a callable"):
        Dataset.from_generator([1, 2], output_signature=em.TensorSpec([], em.int32))
    with pytest.raises(TypeError, match="found int 3"):
        Dataset.from_generator(_gen(1), output_signature=(em.TensorSpec([]), 3))


def test_zip_and_concatenate():
    a, b = Dataset.range(1, 4), Dataset.range(4, 7)
    assert values(Dataset.zip(a, b)) == [(1, 4), (2, 5), (3, 6)]
    assert values(Dataset.zip((a, b))) == [(1, 4), (2, 5), (3, 6)]
    c = Dataset.range(7, 13).batch(2)
    assert values(Dataset.zip((a, b, c))) == [(1, 4, [7, 8]), (2, 5, [9, 10]), (3, 6, [11, 12])]
    assert values(Dataset.zip({"x": a, "y": Dataset.range(2)})) == [{"x": 1, "y": 0},
                                                                      {"x": 2, "y": 1}]
    assert card(Dataset.zip(a, Dataset.range(2))) == 2
    assert card(Dataset.zip(a, Dataset.range(2).repeat())) == 3
    assert card(Dataset.zip(a, a.filter(lambda x: x > 1))) == em.data.UNKNOWN_CARDINALITY
    assert Dataset.zip(a, c).element_spec == (em.TensorSpec([], em.int64),
                                              em.TensorSpec([None], em.int64))
    assert values(a.concatenate(b)) == [1, 2, 3, 4, 5, 6]
    assert card(a.concatenate(b)) == 6
    mixed = Dataset.range(4).batch(2, drop_remainder=True).concatenate(
        Dataset.range(3).batch(3, drop_remainder=True))
    assert mixed.element_spec == em.TensorSpec([None], em.int64)
    with pytest.raises(TypeError, match="Incompatible dataset elements"):
        a.concatenate(Dataset.from_tensor_slices([1.0, 2.0]))
    with pytest.raises(TypeError, match="found int 3"):
        Dataset.zip(a, 3)
    with pytest.raises(ValueError, match="at least one dataset"):
        Dataset.zip(())


def test_interleave_orders_as_tf_data():
    # tf.data's docstring example.
    ds = Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6),
                                        cycle_length=2, block_length=4)
    assert values(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3,
                          4, 4, 5, 5, 5, 5, 5, 5]
    assert ds.element_spec == em.TensorSpec([], em.int64)
    # Uneven lengths: an exhausted slot is refilled when the cycle comes back to it.
    uneven = Dataset.range(1, 5).interleave(lambda x: Dataset.range(10 * x, 10 * x + x),
                                            cycle_length=2)
    assert values(uneven) == [10, 20, 21, 30, 31, 40, 32, 41, 42, 43]
    parallel = Dataset.range(1, 5).interleave(lambda x: Dataset.range(10 * x, 10 * x + x),
                                              cycle_length=2, num_parallel_calls=2)
    assert values(parallel) == values(uneven)
    pairs = Dataset.from_tensor_slices(([1, 2], [3, 4])).interleave(
        lambda a, b: Dataset.from_tensor_slices([a, b]), cycle_length=1)
    assert values(pairs) == [1, 3, 2, 4]
    with pytest.raises(TypeError, match="must return a `Dataset` object. Got int"):
        values(Dataset.range(2).interleave(lambda x: 3))
    with pytest.raises(TypeError, match="returned a dataset of .*float32.*structure and "
                                        "dtypes must agree"):
        values(Dataset.from_tensor_slices([1, 2]).interleave(
            lambda x: Dataset.from_tensors(1.5) if int(x.numpy()) == 2 else
            Dataset.from_tensors(x), cycle_length=1))
    with pytest.raises(ValueError, match="cycle_length must be positive"):
        Dataset.range(2).interleave(Dataset.from_tensors, cycle_length=0)
    with pytest.raises(ValueError, match="block_length must be positive"):
        Dataset.range(2).interleave(Dataset.from_tensors, block_length=0)


def test_shard_values_cardinality_and_tf_errors():
    assert values(Dataset.range(10).shard(3, 0)) == [0, 3, 6, 9]
    assert values(Dataset.range(10).shard(3, 2)) == [2, 5, 8]
    assert [card(Dataset.range(10).shard(3, i)) for i in range(3)] == [4, 3, 3]
    assert values(Dataset.range(2).shard(3, 2)) == []
    with pytest.raises(em.errors.InvalidArgumentError,
                       match=r"Index must be between 0 and 2 \(currently index = 3\)"):
        Dataset.range(10).shard(3, 3)
    with pytest.raises(em.errors.InvalidArgumentError,
                       match=r"Index must be between 0 and 2 \(currently index = -2\)"):
        Dataset.range(10).shard(3, -2)
    with pytest.raises(em.errors.InvalidArgumentError,
                       match=r"Number of shards must be greater than zero \(currently "
                             r"num_shards = 0\)"):
        Dataset.range(10).shard(0, 0)
    hint = em.data.experimental.SHARD_HINT
    with pytest.raises(em.errors.InvalidArgumentError, match="placeholder"):
        values(Dataset.range(4).shard(hint, hint))


def test_padded_batch():
    ragged = Dataset.range(1, 4).map(lambda x: em.fill([x], x))
    assert values(ragged.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3]]]
    assert ragged.padded_batch(2).element_spec == em.TensorSpec([None, None], em.int64)
    fixed = ragged.padded_batch(2, padded_shapes=[4], padding_values=em.constant(-1,
                                                                                 em.int64))
    assert values(fixed) == [[[1, -1, -1, -1], [2, 2, -1, -1]], [[3, 3, 3, -1]]]
    assert fixed.element_spec == em.TensorSpec([None, 4], em.int64)
    pairs = Dataset.zip(ragged, Dataset.range(3)).padded_batch(
        3, padded_shapes=([None], []), padding_values=(7, 0), drop_remainder=True)
    assert values(pairs) == [([[1, 7, 7], [2, 2, 7], [3, 3, 3]], [0, 1, 2])]
    assert pairs.element_spec[0] == em.TensorSpec([3, None], em.int64)
    words = Dataset.from_tensor_slices([[b"a"], [b"b"]]).padded_batch(2, padded_shapes=[2])
    assert values(words) == [[[b"a", b""], [b"b", b""]]]
    with pytest.raises(em.errors.InvalidArgumentError, match="pad to a smaller size"):
        values(ragged.padded_batch(3, padded_shapes=[2]))
    with pytest.raises(ValueError, match=r"padded shape \(2, 2\) is not compatible with the "
                                         r"shape \(None,\)"):
        ragged.padded_batch(2, padded_shapes=[2, 2])
    with pytest.raises(ValueError, match=r"padded shape \(2,\) is not compatible with the "
                                         r"shape \(3,\)"):
        Dataset.from_tensor_slices([[1, 2, 3]]).padded_batch(1, padded_shapes=[2])
    with pytest.raises(TypeError, match="must be a scalar of dtype int64"):
        ragged.padded_batch(2, padding_values=0.5)


def test_unbatch_and_rebatch_as_tf_data():
    assert values(Dataset.range(5).batch(2).unbatch()) == [0, 1, 2, 3, 4]
    Point = collections.namedtuple("Point", "a b")
    points = Dataset.from_tensors(Point(em.constant([1, 2]), em.constant([[3], [4]])))
    unbatched = points.unbatch()
    assert unbatched.element_spec == Point(em.TensorSpec([], em.int32),
                                           em.TensorSpec([1], em.int32))
    assert [(p.a, p.b.tolist()) for p in unbatched.as_numpy_iterator()] == [(1, [3]), (2, [4])]
    with pytest.raises(ValueError, match="component 0 is a scalar"):
        Dataset.range(3).unbatch()
    with pytest.raises(em.errors.InvalidArgumentError, match="same batch size"):
        values(Dataset.from_tensors((em.constant([1, 2]), em.constant([1]))).unbatch())
    # tf.data's Dataset.rebatch docstring examples.
    assert values(Dataset.range(6).batch(2).rebatch(3)) == [[0, 1, 2], [3, 4, 5]]
    assert values(Dataset.range(7).batch(4).rebatch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert values(Dataset.range(7).batch(2).rebatch(3, drop_remainder=True)) == [
        [0, 1, 2], [3, 4, 5]]
    assert values(Dataset.range(8).batch(4).rebatch([2, 1, 1])) == [[0, 1], [2], [3], [4, 5],
                                                                     [6], [7]]
    assert Dataset.range(8).batch(4).rebatch(2, True).element_spec == em.TensorSpec([2],
                                                                                    em.int64)
    assert Dataset.range(8).batch(4).rebatch([2, 1]).element_spec == em.TensorSpec([None],
                                                                                   em.int64)
    assert values(Dataset.range(4).batch(4).rebatch([2, 0, 2])) == [[0, 1], [], [2, 3]]
    with pytest.raises(ValueError, match="Dataset.rebatch: expected a dataset whose elements "
                                         "have rank >= 1"):
        Dataset.range(4).rebatch(2)
    with pytest.raises(ValueError, match="non-negative"):
        Dataset.range(4).batch(2).rebatch([-1, 2])


def test_options_set_merge_and_errors():
    policy = em.data.experimental.AutoShardPolicy
    assert [p.value for p in (policy.OFF, policy.AUTO, policy.FILE, policy.DATA,
                              policy.HINT)] == [-1, 0, 1, 2, 3]
    ds = Dataset.range(4)
    assert ds.options().experimental_distribute.auto_shard_policy == policy.AUTO
    data = em.data.Options()
    data.experimental_distribute.auto_shard_policy = policy.DATA
    ds = ds.with_options(data).map(lambda x: x + 1)
    assert ds.options().experimental_distribute.auto_shard_policy == policy.DATA
    assert values(ds) == [1, 2, 3, 4]
    other = em.data.Options()
    other.deterministic = False
    both = ds.with_options(other).options()
    assert both.deterministic is False
    assert both.experimental_distribute.auto_shard_policy == policy.DATA  # unset: kept
    off = em.data.Options()
    off.experimental_distribute.auto_shard_policy = policy.OFF
    assert ds.with_options(off).options().experimental_distribute.auto_shard_policy == \
        policy.OFF
    assert data.experimental_distribute.auto_shard_policy == policy.DATA  # not mutated
    with pytest.raises(AttributeError, match="Cannot set the property shard_policy"):
        data.experimental_distribute.shard_policy = policy.DATA
    with pytest.raises(ValueError, match="must be an em.data.experimental.AutoShardPolicy"):
        data.experimental_distribute.auto_shard_policy = 7
    with pytest.raises(TypeError, match="must be an em.data.Options"):
        Dataset.range(2).with_options({"deterministic": True})


def test_every_node_exposes_its_inputs():
    a, b = Dataset.range(3), Dataset.range(5)
    assert a._inputs() == ()
    assert a.map(lambda x: x).batch(2)._inputs()[0]._inputs() == (a,)
    assert Dataset.zip({"p": a, "q": b})._inputs() == (a, b)
    assert a.concatenate(b)._inputs() == (a, b)
    assert em.data.TextLineDataset("x.txt")._inputs()[0].element_spec == em.TensorSpec(
        [], em.string)
    swapped = a.concatenate(b)._replace_inputs([b, a])
    assert values(swapped) == [0, 1, 2, 3, 4, 0, 1, 2]
    assert values(a.skip(1)._replace_inputs([b])) == [1, 2, 3, 4]


def test_padded_batch_structure_mismatch():
    pairs = Dataset.zip(Dataset.range(2).map(lambda x: em.fill([x], x)), Dataset.range(2))
    with pytest.raises(ValueError, match="padded_shapes .* does not match the structure"):
        pairs.padded_batch(2, padded_shapes={"a": [None]})
    with pytest.raises(ValueError, match="padding_values .* does not match the structure"):
        pairs.padded_batch(2, padding_values=(1, 2, 3))
    assert values(pairs.padded_batch(2, padded_shapes=[[2], []])) == [([[0, 0], [1, 0]],
                                                                       [0, 1])]


def test_slices_do_not_alias_the_callers_array():
    array = np.arange(3)
    ds = Dataset.from_tensor_slices(array)
    array[0] = 9
    assert values(ds) == [0, 1, 2]
    row = next(iter(Dataset.from_tensor_slices(np.ones((2, 3), np.float32)))).numpy()
    assert row.shape == (3,) and not row.flags.writeable
    first = next(ds.as_numpy_iterator())
    assert values(ds) == [0, 1, 2]
    assert int(first) == 0
