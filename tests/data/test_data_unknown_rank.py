"""Elements of unknown shape or rank (a py_function's result, `from_generator` with
`TensorSpec(None)`) through every transformation: tf.data keeps `TensorShape(None)` in the
element_spec and checks ranks only where a kernel needs one, when the value arrives."""

import numpy as np
import pytest

import ember as em

D = em.data.Dataset
UNKNOWN = em.TensorSpec(None, em.int64)


def _unknown(ds):
    """`ds` doubled by a py_function: the same values, of unknown rank."""
    return ds.map(lambda x: em.py_function(lambda t: t * 2, [x], em.int64))


def _ragged():
    def gen():
        yield np.array([1.0, 2.0], np.float32)
        yield np.array([[3.0]], np.float32)
        yield np.array(4.0, np.float32)
    return D.from_generator(gen, output_signature=em.TensorSpec(None, em.float32))


def _values(ds):
    return [np.asarray(v).tolist() for v in ds.as_numpy_iterator()]


@pytest.mark.parametrize("fn, expected", [
    (lambda x: x + 1, [1, 3, 5]),
    (lambda x: x, [0, 2, 4]),
    (lambda x: (x, x * 2), [(0, 0), (2, 4), (4, 8)]),
])
def test_map_over_unknown_rank(fn, expected):
    ds = _unknown(D.range(3)).map(fn)
    specs = ds.element_spec if isinstance(ds.element_spec, tuple) else (ds.element_spec,)
    assert all(s == UNKNOWN for s in specs)
    got = [tuple(int(t) for t in v) if isinstance(v, tuple) else int(v) for v in ds]
    assert got == expected


def test_map_with_parallel_calls_over_unknown_rank():
    ds = _unknown(D.range(40)).map(lambda x: x + 1, num_parallel_calls=4)
    assert _values(ds) == [2 * i + 1 for i in range(40)]


def test_map_over_from_generator_of_unknown_shape():
    ds = _ragged().map(lambda x: x * 2.0)
    assert ds.element_spec == em.TensorSpec(None, em.float32)
    assert _values(ds) == [[2.0, 4.0], [[6.0]], 8.0]
    assert _values(_ragged().map(em.reduce_sum)) == [3.0, 3.0, 4.0]
    assert _values(_ragged().map(em.shape)) == [[2], [1, 1], []]


def test_filter_over_unknown_rank():
    ds = _unknown(D.range(4)).filter(lambda x: x > 2)
    assert ds.element_spec == UNKNOWN
    assert _values(ds) == [4, 6]
    assert _values(_ragged().filter(lambda x: em.reduce_sum(x) > 3.5)) == [4.0]


def test_filter_predicate_of_unknown_shape_is_checked_per_element():
    # TF: a predicate compatible with a scalar bool is accepted; a value that is not a
    # scalar fails when it arrives
    keep = _unknown(D.range(3)).map(lambda x: x > 0)
    assert _values(D.zip((D.range(3), keep)).filter(lambda i, k: k).map(lambda i, k: i)) \
        == [1, 2]
    ds = _ragged().filter(lambda x: x > 1.0)
    with pytest.raises(em.errors.InvalidArgumentError, match="must return a scalar bool"):
        list(ds)
    with pytest.raises(ValueError, match="must return a scalar bool tensor"):
        _unknown(D.range(3)).filter(lambda x: x)


def test_batch_then_map_over_unknown_rank():
    ds = _unknown(D.range(3)).batch(2).map(lambda b: b + 1)
    assert ds.element_spec == UNKNOWN
    assert _values(ds) == [[1, 3], [5]]
    assert _values(_unknown(D.range(5)).map(lambda x: x + 1).batch(2)) == [[1, 3], [5, 7], [9]]


def test_padded_batch_needs_a_known_rank_or_padded_shapes():
    with pytest.raises(ValueError, match="component 0 has an unknown rank; give its shape"):
        _unknown(D.range(3)).padded_batch(2)
    ds = _unknown(D.range(3)).padded_batch(2, padded_shapes=[])
    assert _values(ds) == [[0, 2], [4]]
    with pytest.raises(em.errors.InvalidArgumentError,
                       match="same rank as the padded shape for component 0: expected rank 1 "
                             "but got element with rank 0"):
        list(_unknown(D.range(3)).padded_batch(2, padded_shapes=[None]))


def test_unbatch_of_unknown_rank_checks_each_element():
    # TF accepts an unknown rank (`s.ndims == 0` is false) and its kernel rejects scalars
    batched = _unknown(D.range(3)).batch(2)
    assert batched.unbatch().element_spec == UNKNOWN
    assert _values(batched.unbatch()) == [0, 2, 4]
    with pytest.raises(em.errors.InvalidArgumentError, match="non-scalar value in each"):
        list(_unknown(D.range(2)).unbatch())
    with pytest.raises(em.errors.InvalidArgumentError, match="non-scalar value in each"):
        list(_unknown(D.range(2)).rebatch(1))


def test_zip_concatenate_cache_prefetch_shuffle_over_unknown_rank():
    zipped = D.zip((_unknown(D.range(3)), D.range(3))).map(lambda a, b: a + b)
    assert zipped.element_spec == UNKNOWN
    assert _values(zipped) == [0, 3, 6]
    cached = _unknown(D.range(3)).cache().prefetch(2).map(lambda x: x + 1)
    assert _values(cached) == _values(cached) == [1, 3, 5]
    assert _values(_unknown(D.range(2)).concatenate(D.range(2)).map(lambda x: x * 3)) == \
        [0, 6, 0, 3]
    assert sorted(_values(_unknown(D.range(5)).shuffle(5, seed=1).map(lambda x: -x))) == \
        [-8, -6, -4, -2, 0]


def test_interleave_of_unknown_rank_datasets():
    ds = D.range(3).interleave(lambda x: _unknown(D.range(2)).map(lambda y: y + x),
                               cycle_length=2)
    assert ds.element_spec == UNKNOWN
    assert _values(ds) == [0, 1, 2, 3, 2, 4]


def _total(ds):
    total = em.constant(0.0)
    for x in ds:
        total += em.reduce_sum(em.cast(x, em.float32))
    return total


@pytest.mark.parametrize("make", [lambda: _unknown(D.range(4)).map(lambda x: x + 1),
                                  lambda: _ragged().map(lambda x: x * 2.0),
                                  lambda: _unknown(D.range(5)).batch(2).map(lambda b: b - 1)])
def test_iteration_in_function_matches_eager(make):
    compiled = em.function(_total)(make())
    eager = _total(make())
    assert float(compiled) == float(eager)


def test_map_inside_function_over_unknown_rank():
    @em.function
    def built_inside():
        return _total(_ragged().map(lambda x: x + 1.0))
    assert float(built_inside()) == (2.0 + 3.0) + 4.0 + 5.0
