"""Polymorphic dispatch: cache lookup rules, input_signature, reduce_retracing, retrace
explanations and warnings, concurrency, and the guard-rail errors."""

import threading
import warnings

import numpy as np
import pytest

import ember as em


def counting(fn=None, **kwargs):
    """An em.function whose Python body counts how often it is traced."""
    def wrap(f):
        calls = []

        def body(*args, **kw):
            calls.append(args)
            return f(*args, **kw)
        body.__name__ = f.__name__
        function = em.function(body, **kwargs)
        function.traces = calls
        return function
    return wrap if fn is None else wrap(fn)


def test_same_signature_reuses_the_trace():
    @counting
    def double(x):
        return x + x
    double(em.constant([1, 2]))
    double(em.constant([3, 4]))
    assert len(double.traces) == 1
    np.testing.assert_array_equal(double(em.constant([5, 6])).numpy(), [10, 12])


def test_new_shape_dtype_or_python_value_retraces():
    @counting
    def f(x, n):
        return x * n
    f(em.constant([1, 2]), 2)
    f(em.constant([1, 2, 3]), 2)
    f(em.constant([1.0, 2.0]), 2)
    f(em.constant([1, 2]), 3)
    assert f.experimental_get_tracing_count() == 4


def test_most_specific_trace_is_chosen():
    @counting
    def f(x):
        return x + 1
    specific = f.get_concrete_function(em.TensorSpec([2], em.int32))
    general = f.get_concrete_function(em.TensorSpec([None], em.int32))
    assert general is not specific
    assert f.get_concrete_function(em.TensorSpec([2], em.int32)) is specific
    assert f.get_concrete_function(em.TensorSpec([3], em.int32)) is general
    f(em.constant([1, 2]))
    f(em.constant([1, 2, 3]))
    assert f.experimental_get_tracing_count() == 2


def test_numpy_arrays_dispatch_like_tensors():
    @counting
    def f(x):
        return x * 2
    f(np.array([1, 2], dtype=np.int32))
    out = f(em.constant([3, 4]))
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(out.numpy(), [6, 8])


def test_input_signature_rejects_incompatible_calls_as_value_and_type_error():
    @em.function(input_signature=[em.TensorSpec([None], em.int32)])
    def f(x):
        return x
    f(em.constant([1, 2, 3]))
    with pytest.raises(ValueError, match="Python inputs incompatible with input_signature"):
        f(em.constant([[1, 2]]))
    with pytest.raises(TypeError, match=r"input_signature: \(\n    TensorSpec\(shape=\(None,\), "
                       r"dtype=em.int32, name=None\)\)"):
        f(em.constant([1.0]))
    assert f.experimental_get_tracing_count() == 1


def test_reduce_retracing_relaxes_to_common_supertype():
    @counting(reduce_retracing=True)
    def f(x):
        return x + 1
    for n in (1, 2, 3, 4, 5):
        f(em.constant(np.arange(n, dtype=np.int32)))
    assert f.experimental_get_tracing_count() == 2
    assert "shape=(None,)" in f.pretty_printed_concrete_signatures()


def test_explain_retrace_names_argument_and_types():
    @em.function
    def f(x, scale):
        return x * scale
    f(em.constant([1.0]), 2.0)
    f(em.constant([1.0, 2.0]), 2.0)
    f(em.constant([1.0, 2.0]), 3.0)
    text = f.explain_retrace()
    assert "'f' was traced 3 time(s)" in text
    assert "argument `x`: Tensor[float32, [1]] -> Tensor[float32, [2]]" in text
    assert "argument `scale`: Literal[2.0] -> Literal[3.0]" in text


def test_frequent_retracing_warns_once_with_cause_and_fix():
    @em.function
    def f(x):
        return x + 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 9):
            f(em.constant(np.zeros(n, np.float32)))
    found = [w for w in caught if issubclass(w.category, em.RetracingWarning)]
    assert len(found) == 1
    message = str(found[0].message)
    assert "retraced 5 times in its last 6 calls" in message  # calls 2-6 retraced
    assert "Argument `x` changed: Tensor[float32, [5]] -> Tensor[float32, [6]]" in message
    assert "reduce_retracing=True" in message


def test_python_value_retrace_warning_suggests_tensors():
    @em.function
    def f(n):
        return em.constant(1) * n
    with pytest.warns(em.RetracingWarning, match=r"Argument `n` changed: Literal\[4\] -> "
                      r"Literal\[5\].*pass it as a tensor"):
        for n in range(8):
            f(n)


def test_sixteen_threads_trace_each_signature_once():
    @counting
    def f(x):
        return x * 2
    barrier = threading.Barrier(16)
    errors = []

    def worker(i):
        try:
            barrier.wait()
            for _ in range(5):
                x = em.constant([i] * (2 + i % 2))
                np.testing.assert_array_equal(f(x).numpy(), [2 * i] * (2 + i % 2))
        except Exception as e:  # surfaced below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(f.traces) == 2
    assert f.experimental_get_tracing_count() == 2


def test_leaked_tensor_raises_type_error_naming_its_origin():
    leaked = []

    @em.function
    def f(x):
        leaked.append(x + 1)
        return x
    f(em.constant(1))
    with pytest.raises(TypeError, match=r"'add:0'.* is out of scope: it was created while "
                       r"tracing 'f' \(at .*test_dispatch.py:\d+\)"):
        leaked[0] * 2


def test_variable_on_non_first_call_raises_value_error():
    @em.function
    def f(x, make_new):
        return em.Variable(x).read_value() if make_new else em.constant(x)
    f(1.0, False)
    with pytest.raises(ValueError, match="only supports singleton em.Variables created on "
                                         "the first call"):
        f(2.0, True)


def test_variable_created_on_every_call_raises_on_the_first_call():
    # The first call traces twice when it creates variables (as TensorFlow does), so a
    # variable created unconditionally is caught at once (the tf.function guide's example).
    @em.function
    def f(x):
        return em.Variable(x).read_value()
    with pytest.raises(ValueError, match="tried to create variables on non-first call"):
        f(1.0)


def test_concrete_function_rejects_wrong_dtype_and_shape():
    @em.function
    def f(x):
        return x + 1
    cf = f.get_concrete_function(em.TensorSpec([2], em.int32))
    with pytest.raises(em.InvalidArgumentError, match="expected to be a int32 tensor but is "
                       "a float32 tensor"):
        cf(em.constant([1.0, 2.0]))
    with pytest.raises(em.InvalidArgumentError, match=r"has shape \(3,\), incompatible"):
        cf(em.constant([1, 2, 3]))


def test_method_functions_trace_per_instance():
    class Model:
        def __init__(self, k):
            self.k = k

        @em.function
        def scale(self, x):
            return x * self.k
    a, b = Model(2), Model(3)
    assert int(a.scale(em.constant(5))) == 10
    assert int(b.scale(em.constant(5))) == 15
    assert a.scale is a.scale and a.scale is not b.scale
    assert a.scale.experimental_get_tracing_count() == 1


def test_run_functions_eagerly_runs_the_python_body_each_call():
    calls = []

    @em.function
    def f(x):
        calls.append(1)
        return x
    em.config.run_functions_eagerly(True)
    try:
        f(em.constant(1))
        f(em.constant(1))
    finally:
        em.config.run_functions_eagerly(False)
    assert len(calls) == 2 and f.experimental_get_tracing_count() == 0


def test_the_retrace_warning_points_at_the_users_call():
    @em.function
    def f(n):
        return em.constant(1) * n
    with pytest.warns(em.RetracingWarning) as caught:
        for n in range(8):
            f(n)  # the line the warning names
    assert caught[0].filename == __file__
    with open(__file__) as source:
        assert "the line the warning names" in source.readlines()[caught[0].lineno - 1]
