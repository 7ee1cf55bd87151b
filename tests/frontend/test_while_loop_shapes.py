"""em.while_loop loop variables whose shape changes: an error without shape_invariants (as in
TensorFlow), eager's answer with them, compiled also where the result's shape depends on the
trip count — never an abort of the process."""

import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import pytest

import ember as em
from ember.frontend.control_flow import ControlFlowError
from ember.runtime.executor import InterpreterFallbackWarning

_INVARIANTS = (em.TensorShape([]), em.TensorShape([None]))


def _doubling(i, x):
    return i + 1, em.concat([x, x], 0)


def _run_isolated(code: str) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter (an abort there is a failure, not a dead run)."""
    env = dict(os.environ, EMBER_CACHE_DIR=tempfile.mkdtemp(prefix="ember-test-cache-"))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)


def test_growing_loop_variable_with_shape_invariants_runs_in_subprocess():
    # This aborted the process: the tensor.cast of the initial value to the invariant type
    # was built outside any block and destroyed while the scf.while still used it.
    done = _run_isolated(
        "import warnings, numpy as np, ember as em\n"
        "warnings.simplefilter('ignore')\n"
        "f = em.function(lambda a: em.while_loop(lambda i, x: i < 3, lambda i, x: "
        "(i + 1, em.concat([x, x], 0)), (0, a), shape_invariants=(em.TensorShape([]), "
        "em.TensorShape([None]))))\n"
        "i, x = f(np.ones(2, np.float32))\n"
        "print(int(i), x.numpy().tolist())\n")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[0] == f"3 {[1.0] * 16}"


def test_growing_loop_variable_with_shape_invariants_matches_eager():
    a = np.arange(3, dtype=np.float32)
    eager = em.while_loop(lambda i, x: i < 3, _doubling, (0, em.constant(a)))
    f = em.function(lambda a: em.while_loop(lambda i, x: i < 3, _doubling, (0, a),
                                            shape_invariants=_INVARIANTS))
    # the result's length depends on the trip count: compiled code allocates and returns it
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        i, x = f(a)
    assert int(i) == int(eager[0]) == 3
    np.testing.assert_array_equal(x.numpy(), eager[1].numpy())
    assert x.shape == (24,)


def test_loop_carrying_dynamic_shape_with_static_result_is_compiled():
    @em.function
    def total(a):
        _, x = em.while_loop(lambda i, x: i < 3, _doubling, (0, a),
                             shape_invariants=_INVARIANTS)
        return em.reduce_sum(x * 2.0)

    a = np.arange(5, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        got = total(a)
    assert float(got) == float(np.sum(np.tile(a, 8) * 2.0))
    executor = total.get_concrete_function(a)._executor
    assert executor.fallback_reason is None and executor.compiled_shapes


def test_shape_invariants_with_maximum_iterations():
    f = em.function(lambda a: em.while_loop(lambda i, x: i < 10, _doubling, (0, a),
                                            shape_invariants=_INVARIANTS,
                                            maximum_iterations=2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        i, x = f(np.ones(3, np.float32))
    assert int(i) == 2 and x.shape == (12,)


def test_loop_variable_changing_shape_without_invariants_is_an_error():
    f = em.function(lambda a: em.while_loop(lambda i, x: i < 3, _doubling, (0, a)))
    with pytest.raises(ControlFlowError,
                       match=r"loop variable 1 of em\.while_loop at .*test_while_loop_shapes\.py:"
                             r"\d+ \(initial value .*'a:0'.*\) "
                             r"has shape \(2,\) \(the shape it enters the loop with\) but "
                             r"shape \(4,\) after one iteration; .*pass shape_invariants.*"
                             r"em\.TensorShape\(\[None\]\)"):
        f(np.ones(2, np.float32))


def test_body_output_breaking_its_shape_invariant_is_an_error():
    f = em.function(lambda a: em.while_loop(
        lambda i, x: i < 3, lambda i, x: (i + 1, em.concat([x, x], 1)), (0, a),
        shape_invariants=(em.TensorShape([]), em.TensorShape([None, 2]))))
    with pytest.raises(ControlFlowError, match=r"has shape \(None, 2\) \(its shape invariant\) "
                                               r"but shape \(None, 4\) after one iteration"):
        f(np.ones((2, 2), np.float32))


def test_shape_invariant_that_rejects_the_initial_value_is_an_error():
    f = em.function(lambda a: em.while_loop(lambda i, x: i < 3, _doubling, (0, a),
                                            shape_invariants=(em.TensorShape([]),
                                                              em.TensorShape([3]))))
    with pytest.raises(ControlFlowError, match=r"loop variable 1 .* enters the loop with shape "
                                               r"\(2,\), which its shape invariant \(3,\)"):
        f(np.ones(2, np.float32))


def _entering_unknown_columns(x):
    return em.while_loop(lambda v: em.shape(v)[0] < 10,
                         lambda v: (em.concat([v, v], 0),), (x,),
                         shape_invariants=(em.TensorShape([None, 2]),))


def test_an_initial_value_of_unknown_dims_its_invariant_rejects_names_the_users_line():
    """A value entering as (None, None) under an invariant of (None, 2): the error named
    neither the user's file nor line. It names the em.while_loop call's."""
    import inspect
    lines, first = inspect.getsourcelines(_entering_unknown_columns)
    call = range(first + 1, first + len(lines))  # the call's lines (Python reports one)
    f = em.function(_entering_unknown_columns, input_signature=[em.TensorSpec([None, None])])
    with pytest.raises(ControlFlowError) as e:
        f(np.ones((1, 2), np.float32))
    message = str(e.value)
    assert "loop variable 0 of em.while_loop at " in message
    assert any(f"{__file__}:{line} enters the loop with shape (None, None), which its shape "
               f"invariant (None, 2) does not allow" in message for line in call), message
    assert "em.ensure_shape" in message


def test_shape_invariants_of_another_structure_are_an_error():
    f = em.function(lambda a: em.while_loop(lambda i, x: i < 3, _doubling, (0, a),
                                            shape_invariants=(em.TensorShape([None]),)))
    with pytest.raises(ControlFlowError, match="do not match the structure of its loop_vars"):
        f(np.ones(2, np.float32))


def test_tf_while_loop_parameters_in_tfs_order():
    """parallel_iterations and swap_memory are accepted (no effect); back_prop=False stops
    gradients; positional arguments follow tf.while_loop's order (the fifth is
    parallel_iterations, not maximum_iterations)."""
    x = em.constant(2.0)

    def run(*args, **kwargs):
        with em.GradientTape() as tape:
            tape.watch(x)
            y = em.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x),
                              (em.constant(0), x), *args, **kwargs)[1]
        grad = tape.gradient(y, x)
        return float(y), None if grad is None else float(grad)
    assert run(parallel_iterations=32, swap_memory=True) == (16.0, 32.0)
    assert run(back_prop=False) == (16.0, None)
    assert run(None, 1)[0] == 16.0  # parallel_iterations=1: all three iterations run
    assert run(maximum_iterations=1)[0] == 4.0
    f = em.function(lambda x: em.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x),
                                            (em.constant(0), x), None, 1, False)[1])
    assert float(f(x)) == 16.0
