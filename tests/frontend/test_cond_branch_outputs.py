"""em.cond as tf.cond in TensorFlow 2: inside em.function the branches' outputs go through
convert_to_tensor (Python numbers and bools, numpy values and variables become tensors),
and both branches are traced whatever the predicate, so a predicate known while tracing (a
Python bool, an eager tensor) gets the same structure and dtype checks as a tensor one.
Eagerly only the chosen branch runs, and its value is returned as it is (as TF's)."""

import numpy as np
import pytest

import ember as em


@pytest.mark.parametrize("flag", [True, False])
@pytest.mark.parametrize("true_value,false_value,dtype", [
    (1, 0, em.int32), (1.5, -0.5, em.float32), (True, False, em.bool_),
    (np.float64(2.0), np.float64(3.0), em.float64), (np.int64(7), np.int64(8), em.int64)])
def test_branches_returning_python_numbers_give_a_tensor(flag, true_value, false_value, dtype):
    def program(p):
        return em.cond(p, lambda: true_value, lambda: false_value)
    eager = program(em.constant(flag))
    compiled = em.function(program)(em.constant(flag))
    assert eager == (true_value if flag else false_value)  # eagerly: the branch's own value
    assert isinstance(compiled, em.Tensor) and compiled.dtype is dtype
    assert compiled.numpy() == eager


def test_a_list_of_numbers_gives_a_list_of_scalar_tensors():
    f = em.function(lambda p: em.cond(p, lambda: [1, 2], lambda: [3, 4]))
    out = f(em.constant(False))
    assert isinstance(out, list) and [int(t) for t in out] == [3, 4]


def test_a_tensor_in_one_branch_and_a_python_number_in_the_other():
    f = em.function(lambda p, x: em.cond(p, lambda: x * 2.0, lambda: 0.0))
    assert float(f(em.constant(True), em.constant(3.0))) == 6.0
    assert float(f(em.constant(False), em.constant(3.0))) == 0.0


def test_a_variable_returned_by_a_branch_is_read():
    v = em.Variable(5.0)
    f = em.function(lambda p: em.cond(p, lambda: v, lambda: -1.0))
    assert float(f(em.constant(True))) == 5.0
    v.assign(6.0)
    assert float(f(em.constant(True))) == 6.0


def test_python_numbers_of_two_dtypes_say_which_and_how_to_fix():
    f = em.function(lambda p: em.cond(p, lambda: 1, lambda: 0.5))
    with pytest.raises(em.errors.ControlFlowError,
                       match=r"output 0 of em.cond has dtype int32 in the true branch and "
                             r"float32 in the false branch; cast one of them \(em.cast"):
        f(em.constant(True))


def test_none_and_equal_python_values_pass_different_strings_do_not():
    f = em.function(lambda p, x: (em.cond(p, lambda: None, lambda: None),
                                  em.cond(p, lambda: "same", lambda: "same"), x)[2])
    assert float(f(em.constant(True), em.constant(1.0))) == 1.0
    g = em.function(lambda p: em.cond(p, lambda: "a", lambda: "b"))
    with pytest.raises(em.errors.ControlFlowError, match="different Python values 'a'"):
        g(em.constant(True))


def tuple_or_scalar(pred):
    return em.cond(pred, lambda: (1, 2), lambda: 3)


@pytest.mark.parametrize("pred", [True, False, np.bool_(True)], ids=["True", "False", "np"])
def test_a_predicate_known_while_tracing_gets_the_structure_check(pred):
    f = em.function(lambda: tuple_or_scalar(pred))
    with pytest.raises(em.errors.ControlFlowError,
                       match="em.cond branches must return the same structure"):
        f()
    known = em.constant(bool(pred))  # an eager tensor, captured by the trace
    with pytest.raises(em.errors.ControlFlowError,
                       match="em.cond branches must return the same structure"):
        em.function(lambda: tuple_or_scalar(known))()
    with pytest.raises(em.errors.ControlFlowError,
                       match="em.cond branches must return the same structure"):
        em.function(tuple_or_scalar)(em.constant(bool(pred)))
    assert tuple_or_scalar(pred) == ((1, 2) if pred else 3)  # eagerly: the branch runs


@pytest.mark.parametrize("pred", [True, False])
def test_a_python_bool_predicate_traces_both_branches_and_picks_at_run_time(pred):
    traced = []

    def branch(name, value):
        def fn():
            traced.append(name)
            return em.constant(value)
        return fn

    f = em.function(lambda x: em.cond(pred, branch("true", 1.0), branch("false", 2.0)) * x)
    assert float(f(em.constant(3.0))) == (3.0 if pred else 6.0)
    assert sorted(traced) == ["false", "true"]


@pytest.mark.parametrize("known", [True, False])
def test_smart_cond_picks_a_known_branch_for_embers_own_code(known):
    """Ember's own code (TensorArray growth, gradients of broadcasts, map_fn) decides on
    conditions that are often known while tracing: smart_cond (TensorFlow's) runs only
    the chosen branch then, so the other cannot widen a static shape to `?`."""
    from ember.frontend.control_flow import smart_cond
    traced = []

    def branch(name, shape):
        def fn():
            traced.append(name)
            return em.zeros(shape)
        return fn

    @em.function
    def f(p):
        picked = smart_cond(known, branch("true", [2]), branch("false", [3]))
        staged = smart_cond(p, branch("true", [2]), branch("false", [3]))
        return picked, staged
    picked, staged = f(em.constant(True))
    assert picked.shape == ((2,) if known else (3,))
    assert staged.shape == (2,)
    assert traced == ["true" if known else "false", "true", "false"]
