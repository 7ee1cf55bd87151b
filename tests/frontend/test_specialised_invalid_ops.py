"""Ops that a call's static shapes make invalid, where the trace's `?` dims allowed them,
raise eager's error when the compiled code runs (found by a differential fuzz campaign,
where compiled code returned numbers and eager raised):

- folding must not erase such an op: `x * 0 + ones([7])` with an x of 5 elements folded
  `x * 0` to zeros of 5 and then `zeros + ones` to the ones, losing the broadcast error;
- a REFLECT or SYMMETRIC pad of a `?` dim checks its bound (n - 1, or n) when it runs: it
  read outside the tensor."""

import numpy as np
import pytest

import ember as em

I32 = em.TensorSpec([None], em.int32)
FOLDED = {
    "mul_zero": lambda x: x * 0 + em.ones([7], em.int32),
    "sub_self": lambda x: (x - x) + em.ones([7], em.int32),
    "mul_one": lambda x: x * 1 + em.ones([7], em.int32),
    "zero_plus": lambda x: em.zeros([7], em.int32) + x * 0,
}


@pytest.mark.parametrize("name", sorted(FOLDED))
def test_an_op_made_invalid_by_the_call_shapes_is_not_folded_away(name):
    fn = FOLDED[name]
    compiled = em.function(fn, input_signature=[I32])
    np.testing.assert_array_equal(compiled(np.arange(7, dtype=np.int32)).numpy(),
                                  fn(em.constant(np.arange(7, dtype=np.int32))).numpy())
    x = np.arange(5, dtype=np.int32)
    with pytest.raises(em.OpShapeError) as eager:
        fn(em.constant(x))
    with pytest.raises(em.OpShapeError) as staged:
        compiled(x)
    assert str(staged.value).startswith(str(eager.value)), (staged.value, eager.value)


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("paddings", [[[1, 2], [0, 0]], [[0, 0], [3, 1]], [[2, 0], [0, 2]]])
def test_a_mirror_pad_of_unknown_dims_checks_its_bound_when_it_runs(mode, paddings):
    def fn(x):  # the loop carries `?` dims: specialisation does not make them static
        return em.pad(em.math.cumulative_logsumexp(x, axis=0), paddings, mode=mode)
    compiled = em.function(fn, input_signature=[em.TensorSpec([None, None], em.float32)])
    for shape in [(1, 1), (2, 2), (2, 3), (3, 4), (4, 2)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
        try:
            expected = fn(em.constant(x)).numpy()
        except em.OpShapeError as eager:
            with pytest.raises(em.OpShapeError) as staged:
                compiled(x)
            assert str(staged.value).startswith(str(eager)), (shape, staged.value)
            continue
        np.testing.assert_allclose(compiled(x).numpy(), expected, rtol=1e-6, err_msg=str(shape))


@pytest.fixture
def compile_or_raise():
    """Compiled code or InterpreterFallbackError: a fallback to the interpreter (whose
    error would be eager's) must not hide a compile failure here."""
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    yield
    em.config.set_fallback(previous)


FAILING = {  # (function, signature, input): the op that fails is followed by more code
    "argmax_then_index": (lambda x: em.argmax(x, axis=1)[-1],
                          [None, None], np.ones((3, 0), np.float32)),
    "map_fn_then_index": (lambda x: em.map_fn(lambda e: e * 2, x)[5],
                          [None], np.arange(4, dtype=np.float32)),
    "reshape_then_reshape": (lambda x: em.matmul(em.reshape(em.reshape(x, [6]), [1, -1]),
                                                 em.ones([1, 2]), transpose_a=True),
                             [None], np.arange(4, dtype=np.float32)),
}


@pytest.mark.parametrize("name", sorted(FAILING))
def test_code_after_an_op_that_fails_compiles_and_raises_eagers_error(name, compile_or_raise):
    fn, dims, x = FAILING[name]
    with pytest.raises(em.OpShapeError) as eager:
        fn(em.constant(x))
    compiled = em.function(fn, input_signature=[em.TensorSpec(dims, em.float32)])
    with pytest.raises(em.OpShapeError) as staged:
        compiled(x)
    assert str(staged.value).startswith(str(eager.value)), (staged.value, eager.value)


@pytest.mark.parametrize("index", [0, 1, 2, 3, -1, -3, -4, 7])
def test_an_index_into_a_dim_known_only_at_run_time_is_checked(index, compile_or_raise):
    def fn(x):  # boolean_mask's result has a `?` dim even in the specialised code
        return em.boolean_mask(x, x[:, 0] > 0)[index, 1]
    x = np.array([[1, 10], [-1, 20], [2, 30], [-3, 40], [4, 50]], np.float32)
    compiled = em.function(fn)
    try:
        expected = fn(em.constant(x)).numpy()
    except em.OpShapeError as eager:
        with pytest.raises(em.OpShapeError) as staged:  # it read outside the buffer
            compiled(x)
        assert str(staged.value).startswith(str(eager)), staged.value
        return
    np.testing.assert_array_equal(compiled(x).numpy(), expected)
