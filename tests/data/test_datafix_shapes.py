"""Unknown shapes through batching, `em.ensure_shape`, and the messages of mistakes in
building a dataset (issue 18, trial)."""

import re

import numpy as np
import pytest

import ember as em

D = em.data.Dataset


def _unknown(ds):
    return ds.map(lambda x: em.py_function(lambda t: t * 2, [x], em.int64))


def test_batching_unknown_rank_elements_is_unknown_rank():
    ds = _unknown(D.range(3))
    assert ds.element_spec.shape.rank is None
    assert ds.batch(2).element_spec == em.TensorSpec(None, em.int64)
    assert ds.batch(2, drop_remainder=True).element_spec.shape.rank is None
    assert [b.tolist() for b in ds.batch(2).as_numpy_iterator()] == [[0, 2], [4]]
    assert ds.batch(2).rebatch(1).element_spec.shape.rank is None
    assert [b.tolist() for b in ds.batch(2).rebatch([1, 0, 2]).as_numpy_iterator()] == \
        [[0], [], [2, 4]]
    assert ds.batch(2).unbatch().element_spec.shape.rank is None
    with pytest.raises(ValueError, match="unknown rank; give its shape in padded_shapes"):
        ds.padded_batch(2)
    assert ds.padded_batch(2, padded_shapes=[]).element_spec.shape.as_list() == [None]


def _rows(x):
    return em.py_function(lambda t: em.fill([2, 3], t), [x], em.int64)


def test_ensure_shape_refines_a_py_function_result():
    ds = D.range(3).map(lambda x: em.ensure_shape(_rows(x), [None, 3]))
    assert ds.element_spec == em.TensorSpec([None, 3], em.int64)
    assert ds.batch(2).element_spec == em.TensorSpec([None, None, 3], em.int64)
    assert [b.shape for b in ds.batch(2).as_numpy_iterator()] == [(2, 2, 3), (1, 2, 3)]
    assert D.range(2).map(lambda x: em.ensure_shape(_rows(x), [2, 3])).element_spec == \
        em.TensorSpec([2, 3], em.int64)


@pytest.mark.parametrize("shape", [[None, 4], [3, 3], [2], [None, None, None], [2, 3, 1]])
def test_ensure_shape_checks_when_the_value_arrives(shape):
    ds = D.range(2).map(lambda x: em.ensure_shape(_rows(x), shape))
    expected = re.escape(f"compatible with expected shape {em.TensorShape(shape)}")
    with pytest.raises(em.errors.InvalidArgumentError, match=expected):
        list(ds)


def test_ensure_shape_eagerly_and_compiled():
    x = em.constant([[1.0, 2.0, 3.0]])
    assert em.ensure_shape(x, [None, 3]) is x
    with pytest.raises(em.errors.InvalidArgumentError,
                       match=r"Shape of tensor \(1, 3\) is not compatible with expected "
                             r"shape \(2, 3\)"):
        em.ensure_shape(x, [2, 3])
    f = em.function(lambda t: em.ensure_shape(t, [None, 3]),
                    input_signature=[em.TensorSpec([None, None], em.float32)])
    assert f.get_concrete_function().structured_outputs.shape.as_list() == [None, 3]
    np.testing.assert_array_equal(f(x).numpy(), x.numpy())
    with pytest.raises(em.errors.InvalidArgumentError, match="expected shape"):
        f(em.constant([[1.0, 2.0]]))
    with pytest.raises(ValueError, match=r"the tensor's shape \(2, 4\) is not compatible"):
        em.function(lambda t: em.ensure_shape(t, [None, 3]))(np.ones((2, 4), np.float32))


@pytest.mark.parametrize("build", [lambda: D.range(3), lambda: D.range(3).map(lambda x: x),
                                   lambda: D.from_tensor_slices([1, 2]).batch(2).prefetch(1),
                                   lambda: D.range(3).scan(em.constant(0, em.int64),
                                                           lambda s, x: (s, x))])
def test_a_typo_names_dataset_and_the_closest_method(build):
    with pytest.raises(AttributeError) as info:
        build().prefech(1)
    assert str(info.value) == \
        "'Dataset' object has no attribute 'prefech'; did you mean 'prefetch'?"
    with pytest.raises(AttributeError, match="^'Dataset' object has no attribute 'zzz'$"):
        build().zzz
    assert not hasattr(build(), "_no_such_attribute")


def test_a_dataset_of_a_symbolic_size_says_build_it_outside():
    @em.function
    def count(n):
        return len(list(D.range(n)))
    with pytest.raises(TypeError, match="Build the dataset outside the function and pass it "
                                        "in as an argument"):
        count(em.constant(3))
