"""`Dataset.map`/`filter` trace their function with AutoGraph, as `em.function` does, and
the "compute with em ops" note goes only with the errors it is about (issue 18, trial)."""

import numpy as np
import pytest

import ember as em

D = em.data.Dataset


def doubled_above_one(x):
    if x > 1:
        y = x * 2
    else:
        y = x
    return y


def test_map_converts_if_on_tensors():
    assert list(D.range(4).map(doubled_above_one).as_numpy_iterator()) == [0, 1, 4, 6]


def test_map_converts_a_conditional_expression_and_a_while_loop():
    def f(x):
        n = x
        while n > 2:
            n -= 2
        return n * 10 if x > 2 else n
    assert list(D.range(6).map(f).as_numpy_iterator()) == [0, 1, 2, 10, 20, 10]


def test_filter_converts_its_predicate():
    def even(x):
        if x % 2 == 0:
            return True
        return False
    assert list(D.range(6).filter(even).as_numpy_iterator()) == [0, 2, 4]


def test_a_branching_map_is_not_vectorised_but_batches_agree():
    ds = D.range(5).map(doubled_above_one).batch(2)
    assert any("refused for map(doubled_above_one)" in line for line in ds._optimizations())
    assert [b.tolist() for b in ds.as_numpy_iterator()] == [[0, 1], [4, 6], [8]]


def test_a_python_loop_map_is_still_vectorised():
    def f(x):
        for _ in range(2):
            x = x + 1
        return x
    ds = D.range(4).map(f).batch(2)
    assert "map_vectorization: map(f).batch(2) runs as batch(2).map(batched)" in \
        ds._optimizations()
    assert [b.tolist() for b in ds.as_numpy_iterator()] == [[2, 3], [4, 5]]


def test_a_shape_dependent_map_is_still_refused():
    def f(x):
        if x.shape[0] == 1:  # Python: the element is (1,), a batch (None, 1)
            return x * 2
        return x
    ds = D.from_tensor_slices(np.array([[1], [2], [3]])).map(f).batch(2)
    assert any("computes differently" in line for line in ds._optimizations())
    assert [b.tolist() for b in ds.as_numpy_iterator()] == [[[2], [4]], [[6]]]


def _notes(build):
    with pytest.raises(Exception) as info:
        build()
    return " ".join(getattr(info.value, "__notes__", []))


def test_the_values_note_goes_with_value_errors_only():
    assert "em.py_function" in _notes(lambda: D.range(3).map(lambda x: x.numpy() + 1))
    assert "em.py_function" in _notes(lambda: D.range(3).map(lambda x: [10, 20, 30][x]))
    for build in (lambda: D.from_tensor_slices(([1], [2])).map(lambda x: x + 1),
                  lambda: D.range(3).map(lambda x: x.no_such_method())):
        note = _notes(build)
        assert "while tracing <lambda> with the element_spec" in note
        assert "em.py_function" not in note


def test_int_and_float_of_an_element_are_casts_as_in_tensorflow():
    ints = D.range(3).map(lambda x: int(x * 2))
    floats = D.range(3).map(lambda x: float(x) / 2)
    assert ints.element_spec.dtype is em.int32 and floats.element_spec.dtype is em.float32
    assert list(ints.as_numpy_iterator()) == [0, 2, 4]
    assert list(floats.as_numpy_iterator()) == [0.0, 0.5, 1.0]


def test_a_lambda_branching_on_a_tensor_is_converted():
    assert list(D.range(3).map(lambda x: x * 2 if x > 1 else x).as_numpy_iterator()) == \
        [0, 1, 4]


def test_a_lambda_without_source_branching_on_a_tensor_is_told_to_use_a_def():
    branching = eval("lambda x: x * 2 if x > 1 else x")  # noqa: S307 - no source to read
    note = _notes(lambda: D.range(3).map(branching))
    assert "only where it can read its source" in note and "use a def in a file" in note
