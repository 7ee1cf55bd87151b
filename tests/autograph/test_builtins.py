"""frontend/autograph/py_builtins.py: the builtins AutoGraph stages on tensors (TensorFlow's
py_builtins): `int`, `float`, `any`, `all`, `sorted`, `len`, `range`, `enumerate`, `zip`,
compared eagerly (Python's builtin on eager tensors) and compiled by em.function; Python
values stay Python's in both, and what cannot be staged says why and what to use."""

import numpy as np
import pytest

import ember as em

X = np.array([-1.5, 2.75, 0.0, 2.75, -3.25], np.float32)


def _agree(program, *args):
    """The eager and compiled results of `program(*args)`, checked to have equal values
    (eagerly a Python value or a list of scalar tensors, compiled a tensor)."""
    tensors = [em.constant(a) for a in args]
    eager = program(*tensors)
    compiled = em.function(program)(*tensors)
    if isinstance(eager, list):
        eager = [np.asarray(e) for e in eager]
    np.testing.assert_array_equal(np.asarray(compiled), np.asarray(eager))
    return eager, compiled


def to_int(x):
    return int(x)


def to_float(x):
    return float(x)


@pytest.mark.parametrize("value,dtype", [(-2.75, np.float32), (2.75, np.float64),
                                         (7, np.int64), (True, np.bool_)])
def test_int_casts_to_int32_truncating_as_python(value, dtype):
    _, compiled = _agree(to_int, np.array(value, dtype))
    assert compiled.dtype is em.int32


@pytest.mark.parametrize("value,dtype", [(-2.5, np.float32), (3, np.int32), (False, np.bool_)])
def test_float_casts_to_float32(value, dtype):
    _, compiled = _agree(to_float, np.array(value, dtype))
    assert compiled.dtype is em.float32


def test_int_and_float_of_a_vector_cast_each_element_as_tensorflow():
    out = em.function(lambda x: (int(x), float(x)))(em.constant([1.5, -2.5]))
    assert out[0].numpy().tolist() == [1, -2] and out[0].dtype is em.int32
    assert out[1].numpy().tolist() == [1.5, -2.5]


def test_int_with_a_base_of_a_tensor_is_pythons_error():
    with pytest.raises(TypeError, match="explicit base"):
        em.function(lambda x: int(x, 10))(em.constant(3))


def any_of(x):
    return any(x)


def all_of(x):
    return all(x)


@pytest.mark.parametrize("values", [X, np.zeros(3, np.float32), np.array([1, 2, 0], np.int32),
                                    np.array([True, True]), np.zeros(0, np.float32),
                                    np.array([[1.0], [0.0]], np.float32),
                                    np.array([np.nan, 1.0], np.float32)])
@pytest.mark.parametrize("program", [any_of, all_of])
def test_any_and_all_test_each_rows_truth_as_python(program, values):
    _, compiled = _agree(program, values)
    assert compiled.dtype is em.bool_ and compiled.shape == ()


@pytest.mark.parametrize("values,why", [
    (np.float32(1.0), "a scalar has no rows"),
    (np.ones([2, 2], np.float32), r"a row of shape \(2,\) is not one value")])
def test_any_of_what_python_cannot_iterate_row_by_row_says_what_to_use(values, why):
    with pytest.raises(TypeError, match=rf"any\(\) of .*{why}.*em\.reduce_any"):
        em.function(any_of)(em.constant(values))


def sort_up(x):
    return sorted(x)


def sort_down(x):
    return sorted(x, reverse=True)


def sort_by_magnitude(x):
    return sorted(x, key=abs)


def sort_by_magnitude_down(x):
    return sorted(x, key=lambda v: abs(v), reverse=True)


@pytest.mark.parametrize("program", [sort_up, sort_down, sort_by_magnitude,
                                     sort_by_magnitude_down])
def test_sorted_is_a_stable_sort_as_pythons(program):
    values = np.array([3, -1, 2, -3, 1, -2, 3], np.int32)  # ties of |v| keep their order
    eager, compiled = _agree(program, values)
    assert compiled.shape == (7,)
    python = program(values.tolist())
    assert compiled.numpy().tolist() == python


def test_sorted_of_a_matrix_says_to_use_em_sort():
    with pytest.raises(TypeError, match=r"AutoGraph sorts rank-1 tensors .*em\.sort\(x, "
                                        r"axis=\.\.\.\)"):
        em.function(sort_up)(em.constant(np.ones([2, 2], np.float32)))


def lengths(x, ta_size: int):
    ta = em.TensorArray(em.float32, size=ta_size)
    return len(x), len(ta), abs(x)


def test_len_of_a_tensor_array_is_its_size_and_abs_stages():
    n, size, magnitude = em.function(lengths)(em.constant(X), 4)
    assert int(n) == 5 and int(size) == 4
    np.testing.assert_array_equal(magnitude.numpy(), np.abs(X))


def test_len_of_an_unknown_first_dimension_is_a_tensor():
    f = em.function(lambda x: len(x) * 2,
                    input_signature=[em.TensorSpec([None], em.float32)])
    assert int(f(em.constant(X))) == 10


def python_values(x):
    return (int("12", 16), float("1.5"), any([0, 1]), all([]), sorted([3, 1, 2], reverse=True),
            isinstance(x, em.Tensor), len([1, 2]), list(range(3)))


def test_python_values_use_pythons_builtins_in_a_trace():
    calls = []

    def program(x):
        calls.append(python_values(x))
        return x
    em.function(program)(em.constant(1.0))
    assert calls == [(18, 1.5, True, True, [3, 2, 1], True, 2, [0, 1, 2])]


def test_eager_tensors_in_a_trace_give_python_values():
    """An eager tensor is a value known while tracing: Python's builtin gives a Python
    value (usable as a shape), as range(eager) already did; sorted stages, as Python's
    cannot compare elements whose comparisons a trace stages."""
    seen = []
    known, two = em.constant([2.0, 0.0]), em.constant(2.5)

    def program(x):
        seen.append((int(two), float(two), any(known), all(known), len(known)))
        return sorted(known)
    assert em.function(program)(em.constant(1.0)).numpy().tolist() == [0.0, 2.0]
    assert seen == [(2, 2.5, True, False, 2)]


def test_print_runs_while_tracing_as_in_tensorflow(capsys):
    f = em.function(lambda x: (print("traced with", x), x + 1.0)[1])
    f(em.constant(1.0))
    f(em.constant(2.0))
    assert capsys.readouterr().out.count("traced with") == 1
