"""em.function(experimental_follow_type_hints=True), as tf.function documents it: arguments
annotated `em.Tensor` are converted to tensors before tracing, so Python numbers passed there
do not retrace per value; other arguments keep the usual rules."""

from typing import Optional

import numpy as np
import pytest

import ember as em
from ember.runtime.type_hints import TypeHintError


def _counting(**options):
    traces = []

    @em.function(**options)
    def f(x: em.Tensor, y):
        traces.append((x, y))
        return x * 2

    return f, traces


def test_numbers_passed_to_a_tensor_hint_share_one_trace():
    f, traces = _counting(experimental_follow_type_hints=True)
    assert [int(f(i, 1)) for i in (1, 2, 3)] == [2, 4, 6]
    assert f.experimental_get_tracing_count() == 1
    assert isinstance(traces[0][0], em.Tensor) and traces[0][1] == 1
    assert (traces[0][0].dtype, traces[0][0].shape.as_list()) == (em.int32, [])
    f(1.5, 1)  # a float converts to float32: a new dtype, one more trace (as TF)
    assert f.experimental_get_tracing_count() == 2


def test_unannotated_arguments_and_the_default_keep_tracing_by_value():
    hinted, _ = _counting(experimental_follow_type_hints=True)
    for y in (1, 2):
        hinted(1, y)
    assert hinted.experimental_get_tracing_count() == 2  # y is a Python value
    plain, _ = _counting()  # the option is off by default, as in TF
    for x in (1, 2, 3):
        plain(x, 1)
    assert plain.experimental_get_tracing_count() == 3


@pytest.mark.parametrize("annotation", [Optional[em.Tensor], int, "Undefined"])
def test_only_the_exact_annotation_em_tensor_converts(annotation):
    def f(x):
        return x

    f.__annotations__ = {"x": annotation}
    g = em.function(f, experimental_follow_type_hints=True)
    g(1)
    g(2)
    assert g.experimental_get_tracing_count() == 2


def test_string_annotation_is_evaluated():
    @em.function(experimental_follow_type_hints=True)
    def f(x: "em.Tensor", y: "NotDefinedAnywhere" = 0):  # noqa: F821
        return x + 1

    f(1)
    f(2)
    assert f.experimental_get_tracing_count() == 1


def test_varargs_and_varkw_annotated_are_each_converted():
    seen = []

    @em.function(experimental_follow_type_hints=True)
    def f(*xs: em.Tensor, **named: em.Tensor):
        seen.append((xs, named))
        return em.add_n(list(xs) + list(named.values()))

    assert float(f(1.0, 2.0, a=3.0)) == 6.0
    assert float(f(4.0, 5.0, a=6.0)) == 15.0
    assert f.experimental_get_tracing_count() == 1
    xs, named = seen[0]
    assert all(isinstance(t, em.Tensor) for t in (*xs, *named.values()))


def test_default_values_are_not_converted():
    seen = []

    @em.function(experimental_follow_type_hints=True)
    def f(x: em.Tensor = 3):
        seen.append(x)
        return x

    f()
    assert seen == [3]  # the default stays a Python value: only passed arguments convert
    f(3)
    assert isinstance(seen[-1], em.Tensor)


def test_lists_convert_to_one_tensor_and_arrays_stay_tensors():
    @em.function(experimental_follow_type_hints=True)
    def f(x: em.Tensor):
        return em.reduce_sum(x)

    assert int(f([1, 2, 3])) == 6
    assert int(f([4, 5, 6])) == 15
    assert int(f(np.array([1, 1, 1], np.int32))) == 3
    assert f.experimental_get_tracing_count() == 1


def test_variable_is_read_as_tf_converts_it():
    seen = []

    @em.function(experimental_follow_type_hints=True)
    def f(x: em.Tensor):
        seen.append(x)
        return x + 1.0

    a, b = em.Variable(1.0), em.Variable(2.0)
    assert float(f(a)) == 2.0 and float(f(b)) == 3.0
    assert f.experimental_get_tracing_count() == 1  # by value's type, not identity
    assert not isinstance(seen[0], em.Variable)


def test_input_signature_wins_over_hints():
    @em.function(input_signature=[em.TensorSpec([], em.float32)],
                 experimental_follow_type_hints=True)
    def f(x: em.Tensor):
        return x

    assert f(1).dtype is em.float32  # the signature's dtype, not convert_to_tensor's int32
    assert f.experimental_get_tracing_count() == 1


def test_get_concrete_function_converts_too():
    @em.function(experimental_follow_type_hints=True)
    def f(x: em.Tensor):
        return x * 2

    cf = f.get_concrete_function(5)
    assert cf.structured_input_signature[0][0] == em.TensorSpec([], em.int32, name="x")
    assert int(cf(7)) == 14
    assert f.get_concrete_function(em.TensorSpec([], em.int32)) is cf


def test_methods_follow_hints():
    class Model:
        @em.function(experimental_follow_type_hints=True)
        def scale(self, x: em.Tensor):
            return x * 3

    m = Model()
    assert int(m.scale(1)) + int(m.scale(2)) == 9
    assert m.scale.experimental_get_tracing_count() == 1


def test_unconvertible_argument_names_the_parameter_and_the_fix():
    @em.function(experimental_follow_type_hints=True)
    def f(x: em.Tensor):
        return x

    with pytest.raises(TypeHintError, match=r"em.function 'f' \(defined at .*test_follow_type_"
                       r"hints.py:\d+\): argument x is annotated em.Tensor .* remove the "
                       r"em.Tensor annotation"):
        f(object())
    g = em.function(_varargs, experimental_follow_type_hints=True)
    with pytest.raises(TypeError, match=r"argument xs\[1\] is annotated"):
        g(1, {"not": "a tensor"})


def _varargs(*xs: em.Tensor):
    return xs
