"""The runtime's user-facing checks: unknown backends, input_signature mismatches that say
what differs, the fallback policy (em.config.set_fallback) and the exported error classes."""

import sys
import warnings

import numpy as np
import pytest

import ember as em
from ember.runtime import config


@pytest.fixture
def fallback_policy():
    """Restores the process-wide fallback policy after the test."""
    before = em.config.get_fallback()
    yield em.config.set_fallback
    em.config.set_fallback(before)


# -- backend ----------------------------------------------------------------------------------

@pytest.mark.parametrize("backend,extra", [("gpu", "the GPU backend is called 'cuda'"),
                                           ("nonsense", ""), ("CPU", ""), (None, "")])
def test_unknown_backend_is_a_value_error_listing_the_available_ones(backend, extra):
    with pytest.raises(ValueError, match=r"unknown backend .*available backends: 'cpu', 'cuda', 'cuda-emulated', 'interpreter'") as e:
        em.function(lambda x: x + 1, backend=backend)
    assert extra in str(e.value)
    with pytest.raises(ValueError, match="unknown backend"):  # the decorator form, at once
        em.function(backend=backend)


def test_cpu_backend_still_compiles():
    f = em.function(lambda x: x + 1, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(em.constant([1, 2])).numpy().tolist() == [2, 3]


# -- input_signature --------------------------------------------------------------------------

def _signed():
    @em.function(input_signature=[em.TensorSpec([None, 3], em.float32),
                                  [em.TensorSpec([2], em.int32)]])
    def f(x, pair):
        return x
    return f


@pytest.mark.parametrize("x,pair,match", [
    (np.zeros((1000, 4), np.float32), [np.zeros(2, np.int32)],
     r"argument `x` has shape \(1000, 4\), its em.TensorSpec shape \(None, 3\): dimension 1 "
     r"is 4, the signature fixes it to 3"),
    (np.zeros((5, 3), np.float64), [np.zeros(2, np.int32)],
     r"argument `x` has dtype float64, its em.TensorSpec dtype float32"),
    (np.zeros(5, np.float32), [np.zeros(2, np.int32)],
     r"argument `x` has shape \(5,\) \(rank 1\), its em.TensorSpec shape \(None, 3\) "
     r"\(rank 2\)"),
    (np.zeros((5, 3), np.float32), [np.zeros(3, np.int32)],
     r"argument `pair\[0\]` has shape \(3,\), its em.TensorSpec shape \(2,\): dimension 0"),
    (np.zeros((5, 3), np.float32), 7, r"argument `pair` should be a sequence of 1 value"),
])
def test_input_signature_mismatch_names_the_argument_and_what_differs(x, pair, match):
    with pytest.raises(em.InputSignatureError, match=match) as e:
        _signed()(x, pair)
    assert "ndarray(shape=" in str(e.value)


def test_input_signature_mismatch_shows_shapes_not_values():
    big = np.arange(4000, dtype=np.float32).reshape(1000, 4) + 12345.0
    with pytest.raises(ValueError) as e:
        _signed()(em.constant(big), [em.constant([1, 2])])
    text = str(e.value)
    assert "12345" not in text and len(text) < 1000
    assert "Tensor(shape=(1000, 4), dtype=float32)" in text


# -- fallback policy --------------------------------------------------------------------------

def _string_function():
    return em.function(lambda x: (em.identity(em.constant(["a"])), x + 1.0))


def test_fallback_policy_defaults_to_warn_and_rejects_unknown_policies(fallback_policy):
    assert em.config.get_fallback() == "warn"
    with pytest.raises(ValueError, match=r"one of 'warn', 'error', 'silent', got 'loud'"):
        fallback_policy("loud")
    assert em.config.get_fallback() == "warn"


def test_fallback_policy_error_names_the_op_and_line(fallback_policy):
    fallback_policy("error")
    f = _string_function()
    for _ in range(2):  # every call, not only the first
        with pytest.raises(em.InterpreterFallbackError,
                           match=r"'ember.constant' \(at .*test_public_api_errors.py:\d+\) "
                                 r"works on string tensors.*set_fallback\(\"warn\"\)"):
            f(em.constant(1.0))
    fallback_policy("warn")  # the same trace then runs on the interpreter, with a warning
    with pytest.warns(em.InterpreterFallbackWarning, match="'ember.constant'"):
        assert f(em.constant(1.0))[1].numpy() == 2.0


def test_fallback_policy_error_also_for_a_trace_that_fell_back_before(fallback_policy):
    f = _string_function()
    with pytest.warns(em.InterpreterFallbackWarning):
        f(em.constant(1.0))
    fallback_policy("error")
    with pytest.raises(em.errors.InterpreterFallbackError, match="works on string tensors"):
        f(em.constant(1.0))


def test_fallback_policy_silent_runs_on_the_interpreter_without_warning(fallback_policy):
    fallback_policy("silent")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _string_function()(em.constant(1.0))
    assert out[0].numpy().tolist() == [b"a"] and out[1].numpy() == 2.0


def test_fallback_policy_error_allows_host_work_by_design(fallback_policy, capsys):
    fallback_policy("error")

    @em.function
    def f(x):
        em.print("x:", x, output_stream=sys.stdout)  # compiled print
        return em.py_function(lambda v: v * 3, [x], em.float32) + 1.0

    assert f(em.constant(2.0)).numpy() == 7.0
    assert capsys.readouterr().out == "x: 2\n"
    g = em.function(lambda x: x + 1, jit_compile=False)
    assert g(em.constant(1)).numpy() == 2
    assert config.get_fallback() == "error"


# -- exported names ---------------------------------------------------------------------------

def test_warnings_and_errors_are_exported_like_tensorflows():
    from ember.frontend.control_flow import ControlFlowError
    from ember.frontend.tracing import OutOfScopeError
    from ember.runtime.executor import InterpreterFallbackWarning
    from ember.runtime.input_signature import InputSignatureError
    from ember.runtime.retracing import RetracingWarning
    assert em.InterpreterFallbackWarning is InterpreterFallbackWarning
    assert em.RetracingWarning is RetracingWarning
    assert em.OutOfScopeError is OutOfScopeError
    assert em.errors.InputSignatureError is InputSignatureError
    assert em.errors.ControlFlowError is ControlFlowError
    for name in ("OpTypeError", "OpShapeError", "OpAttributeError", "InvalidArgumentError"):
        assert issubclass(getattr(em.errors, name), em.errors.OpError)
    assert set(em.errors.__all__) <= set(dir(em.errors))


def test_errors_raised_by_ops_are_caught_as_em_errors():
    with pytest.raises(em.errors.InvalidArgumentError, match="division by zero"):
        em.function(lambda a, b: a // b)(em.constant([1]), em.constant([0]))
    with pytest.raises(em.errors.OpError):
        em.constant([1, 2]) + em.constant([1, 2, 3])


def test_backends_come_from_one_registry():
    """em.function, the runtime and ember-compile find backends through
    ember.backends (Backend protocol): 'interpreter' runs every trace on the reference
    interpreter, quietly; a registered backend is called to compile; an unknown name lists
    the registered ones."""
    import warnings

    from ember import backends
    assert {"cpu", "interpreter"} <= set(backends.names())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = em.function(lambda x: x * 2.0, backend="interpreter")
        assert f(em.constant([1.0])).numpy().tolist() == [2.0]

    calls = []

    class Refusing:
        name, compiles = "refusing", True

        def compile(self, module_text, symbol, arg_types, **options):
            calls.append((symbol, tuple(str(t) for t in arg_types)))
            raise backends.NotCompilable("refusing compiles nothing")

    backends.register("refusing", Refusing)
    try:
        g = em.function(lambda x: x + 1.0, backend="refusing")
        with pytest.warns(em.InterpreterFallbackWarning, match="refusing compiles nothing"):
            assert g(em.constant([1.0])).numpy().tolist() == [2.0]
        assert calls and calls[0][1] == ("tensor<1xf32>",)
    finally:
        backends.unregister("refusing")
    with pytest.raises(ValueError, match="available backends: 'cpu', 'cuda', 'cuda-emulated', 'interpreter'"):
        em.function(lambda x: x, backend="tpu")


def test_a_function_named_like_a_libm_function_compiles():
    """em.function(em.sin) traces a function called `sin`; compiled code also calls libm's
    sin (float64): the traced symbol must not be taken for it (it was: a crash)."""
    x = em.constant([0.5, 1.0], dtype=em.float64)
    np.testing.assert_allclose(em.function(em.sin)(x).numpy(), np.sin([0.5, 1.0]))
    np.testing.assert_allclose(em.function(em.math.erf)(x).numpy(), [0.5204998778130465,
                                                                    0.8427007929497149])


def test_a_cuda_function_that_compiles_nothing_needs_no_gpu():
    # jit_compile=False runs every trace on the interpreter: the backend's requirement
    # (a GPU, for cuda) is not checked, as nothing will run on it
    f = em.function(lambda x: x * 2.0, backend="cuda", jit_compile=False)
    assert f(em.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]


@pytest.mark.parametrize("call,message", [
    (lambda f: f(1.0, c=2.0), "got an unexpected keyword argument 'c'"),  # was "missing 'b'"
    (lambda f: f(1.0), "missing a required argument: 'b'"),
    (lambda f: f(1.0, 2.0, 3.0), "too many positional arguments"),
])
def test_a_bad_call_of_a_function_says_what_python_says(call, message):
    def add(a, b):
        return a + b
    with pytest.raises(TypeError, match=rf"add\(a, b\): {message}"):
        call(em.function(add))


@pytest.mark.parametrize("fn", [
    lambda x, a: em.reduce_sum(x, axis=a), lambda x, a: em.expand_dims(x, a),
    lambda x, a: em.argmax(x, axis=a), lambda x, a: em.gather(x, [0], axis=a)])
def test_a_traced_shape_argument_says_it_must_be_known_while_tracing(fn):
    """Found by a differential fuzz campaign: these run eagerly with a tensor axis but not
    traced (the result's shape depends on it), and the error did not say why."""
    x, a = np.ones((2, 3), np.float32), np.int32(1)
    fn(em.constant(x), em.constant(a))  # eagerly: fine
    with pytest.raises(TypeError, match="must be known while tracing: give a Python int"):
        em.function(fn)(x, a)
    em.function(fn)(x, 1)  # a Python int: part of the trace key


def reshaped_wrong(x):
    return em.reshape(x, [5]) * 2.0  # 3 elements cannot become 5


def test_an_op_rejected_eagerly_or_while_tracing_names_the_users_line():
    """As the compiled code's run-time errors do, and the interpreter's: a shape or type
    error found eagerly or while tracing says where in the user's code the op is, so the
    two say the same."""
    line = reshaped_wrong.__code__.co_firstlineno + 1
    with pytest.raises(em.errors.OpShapeError,
                       match=rf"'ember.reshape' op cannot reshape tensor<3xf32> \(3 elements\) "
                             rf"to \[5\] \(5 elements\) "
                             rf"\(at .*test_public_api_errors.py:{line}\)$"):
        em.function(reshaped_wrong)(em.ones([3]))
    with pytest.raises(em.errors.OpShapeError) as eager:
        reshaped_wrong(em.ones([3]))
    with pytest.raises(em.errors.OpShapeError) as traced:
        em.function(reshaped_wrong)(em.ones([3]))
    assert str(eager.value) == str(traced.value)
    assert eager.value.where == traced.value.where == f"{__file__}:{line}"
    with pytest.raises(em.errors.InvalidArgumentError, match=r"\(at .*:\d+\)$"):
        em.constant([1]) // em.constant([0])  # a kernel's error, eagerly, as compiled


def _asserted(x):
    em.debugging.assert_positive(x)
    return x


def _assigned(v, x):
    v.assign(x)
    return v.read_value()


def test_an_eager_assert_or_variable_write_names_the_users_line_as_compiled_code_does():
    """The eager paths of em.debugging's asserts and of Variable writes raise their op's
    error themselves (not through an op's dispatch); they name the user's line too."""
    v = em.Variable([1.0, 2.0])
    for fn, args in ((_asserted, (em.constant([-1.0]),)), (_assigned, (v, em.constant([1.0])))):
        line = fn.__code__.co_firstlineno + 1
        with pytest.raises(em.errors.OpError) as eager:
            fn(*args)
        with pytest.raises(em.errors.OpError) as compiled:
            em.function(fn)(*args)
        assert eager.value.where == f"{__file__}:{line}", fn.__name__
        assert eager.value.op_message == compiled.value.op_message
        assert compiled.value.where is not None


def test_op_errors_cross_processes_through_pickle_as_they_were():
    """A worker process's error reaches its parent pickled; OpError's constructor takes the
    op and the message apart, so pickle's default (the message alone) failed to rebuild it."""
    import pickle
    located = em.errors.OpShapeError("ember.reshape", "bad").located("f.py:3")
    for error in (em.errors.InvalidArgumentError("ember.gather", "index 5"), located,
                  em.errors.OutOfRangeError()):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error)
        assert (again.op_name, again.detail, again.where, again.op_message) == \
            (error.op_name, error.detail, error.where, error.op_message)
    assert str(em.errors.OutOfRangeError().located("g.py:1")).endswith("(at g.py:1)")
