"""em.TensorArray with a partially known element_shape (`[None, 3]`, `em.TensorShape([None])`),
as tf.TensorArray takes it: elements of different first dims with infer_shape=False,
concat() joining them and stack() needing one shape, eagerly, compiled and carried by
AutoGraph's loops and em.while_loop; shapes that do not fit raise the same error eagerly
and compiled."""

import numpy as np
import pytest

import ember as em

AssertionFailed = em.errors.AssertionFailedError


def _runs(fn, signature):
    """`fn` eagerly, compiled, and compiled for inputs of unknown dims."""
    return [fn, em.function(fn), em.function(fn, input_signature=signature)]


def _n():
    return [em.TensorSpec([], em.int32)]


def ragged_rows(n, dynamic, read=True):
    ta = em.TensorArray(em.float32, size=0 if dynamic else n, dynamic_size=dynamic,
                        element_shape=[None, 3], infer_shape=False)
    for i in em.range(n):
        rows = em.cast(i + 1, em.float32) * em.ones(em.stack([i + 1, 3]))
        ta = ta.write(i, rows)
    return ta.concat(), ta.size(), ta.read(1) if read else None


@pytest.mark.parametrize("dynamic", [False, True])
def test_elements_of_different_first_dims_concat_eagerly_and_compiled(dynamic):
    want = np.concatenate([np.full((i + 1, 3), i + 1.0, np.float32) for i in range(4)])
    for run in _runs(lambda n: ragged_rows(n, dynamic), _n()):
        joined, size, second = run(em.constant(4))
        np.testing.assert_array_equal(joined.numpy(), want)
        assert int(size) == 4
        np.testing.assert_array_equal(second.numpy(), np.full((2, 3), 2.0))


def prefixes(x, gather):
    ta = em.TensorArray(em.float32, size=0, dynamic_size=True,
                        element_shape=em.TensorShape([None]), infer_shape=False)
    for i in em.range(em.shape(x)[0]):
        ta = ta.write(i, x[:i + 1])
    return ta.gather([2, 0]) if gather else ta.concat()


def test_a_tensor_shape_with_a_none_dim_collects_prefixes_of_a_vector():
    """The elements' shapes are known only when the code runs: (?,) traced. gather(),
    as stack(), needs the elements it takes of one shape."""
    x = em.constant([1.0, 2.0, 3.0])
    for run in _runs(lambda v: prefixes(v, False), [em.TensorSpec([None])]):
        np.testing.assert_array_equal(run(x).numpy(), [1, 1, 2, 1, 2, 3])
    for run in _runs(lambda v: prefixes(v, True), [em.TensorSpec([None])]):
        with pytest.raises(AssertionFailed, match=r"em\.TensorArray\.gather: elements of "
                                                  r"different shapes"):
            run(x)


def stacked(n, same):
    ta = em.TensorArray(em.float32, size=n, element_shape=[None], infer_shape=False)
    for i in em.range(n):
        ta = ta.write(i, em.ones(em.reshape(3 if same else i + 1, [1])))
    return ta.stack()


def test_stack_needs_elements_of_one_shape_eagerly_and_compiled():
    for run in _runs(lambda n: stacked(n, True), _n()):
        np.testing.assert_array_equal(run(em.constant(2)).numpy(), np.ones((2, 3)))
    for run in _runs(lambda n: stacked(n, False), _n()):
        with pytest.raises(AssertionFailed, match=r"em\.TensorArray\.stack: elements of "
                                                  r"different shapes; stack\(\) needs every "
                                                  r"element of one shape \(concat\(\) joins"):
            run(em.constant(3))


def concat_of_different_columns(x):
    ta = em.TensorArray(em.float32, size=2, element_shape=[None, None], infer_shape=False)
    return ta.write(0, x).write(1, em.concat([x, x], 1)).concat()


def test_concat_needs_elements_equal_after_their_first_dim():
    x = em.ones([2, 3])
    for run in _runs(concat_of_different_columns, [em.TensorSpec([None, None])]):
        with pytest.raises(AssertionFailed, match=r"em\.TensorArray\.concat: elements that "
                                                  r"differ in a dimension other than the first"):
            run(x)


def grow_with_infer_shape(n):
    ta = em.TensorArray(em.float32, size=n, element_shape=[None])
    for i in em.range(n):
        ta = ta.write(i, em.ones(em.reshape(i + 1, [1])))
    return ta.concat()


def test_infer_shape_keeps_every_element_at_the_first_ones_shape():
    """TensorFlow's infer_shape=True (the default): all elements have one shape; the
    first write fixes it, a later one of another shape raises."""
    for run in _runs(grow_with_infer_shape, _n()):
        np.testing.assert_array_equal(run(em.constant(1)).numpy(), [1.0])
        with pytest.raises(AssertionFailed, match=r"em\.TensorArray\.write: an element of a "
                                                  r"shape other than that of the elements "
                                                  r"written before it: with infer_shape=True"):
            run(em.constant(3))


def same_rows(x):
    ta = em.TensorArray(em.float32, size=3, element_shape=[None, 3])
    for i in em.range(3):
        ta = ta.write(i, x * em.cast(i, em.float32))
    return ta.stack(), ta.concat(), ta.read(2), ta.gather([1])


def test_elements_of_one_shape_unknown_when_tracing_compile():
    """Found as a gap: `?` dims in the elements' traced shape were refused ("elements of
    shape (None, 3) (not fully known); give element_shape=")."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = [np.stack([x * i for i in range(3)]), np.concatenate([x * i for i in range(3)]),
            x * 2, (x * 1)[None]]
    for run in _runs(same_rows, [em.TensorSpec([None, 3])]):
        for got, expected in zip(run(em.constant(x)), want):
            np.testing.assert_array_equal(got.numpy(), expected)
            assert got.shape.as_list()[-1] == 3


def write_one(x):
    ta = em.TensorArray(em.float32, size=2, element_shape=[None, 3])
    return ta.write(0, x).stack()


def test_an_element_that_does_not_fit_the_element_shape_is_an_error():
    """It was written, its (2, 4) replacing the declared (None, 3). Eagerly and compiled
    with `?` dims the check runs on the value (AssertionFailedError); where the traced
    shape already shows it, tracing raises ValueError. Both are ValueErrors."""
    x = em.ones([2, 4])
    message = r"an element( of shape \(2, 4\))? does not fit the array's element_shape " \
              r"\(None, 3\)"
    for run in (write_one, em.function(write_one, input_signature=[em.TensorSpec([None, None])])):
        with pytest.raises(AssertionFailed, match=message):
            run(x)
    with pytest.raises(ValueError, match=message):
        em.function(write_one)(x)


def unstack_then_write(x):
    ta = em.TensorArray(em.float32, size=2, element_shape=[None], infer_shape=False)
    ta = ta.unstack(x).write(1, em.constant([9.0, 9.0, 9.0]))
    return ta.read(0), ta.read(1), ta.concat(), ta.size()


def test_unstack_read_and_size_of_elements_of_varying_shape():
    x = em.constant([[1.0, 2.0], [3.0, 4.0]])
    for run in _runs(unstack_then_write, [em.TensorSpec([None, None])]):
        first, second, joined, size = run(x)
        assert first.numpy().tolist() == [1.0, 2.0] and second.numpy().tolist() == [9.0] * 3
        assert joined.numpy().tolist() == [1.0, 2.0, 9.0, 9.0, 9.0] and int(size) == 2


def read_at(i):
    ta = em.TensorArray(em.float32, size=2, element_shape=[None], infer_shape=False)
    return ta.write(0, [1.0]).read(i)


def test_a_read_outside_the_array_is_an_error_eagerly_and_compiled():
    for run in _runs(read_at, _n()):
        assert run(em.constant(0)).numpy().tolist() == [1.0]
        assert run(em.constant(1)).shape == (0,)  # never written: zeros, none of them
        with pytest.raises(em.errors.InvalidArgumentError, match="index out of range"):
            run(em.constant(2))


def written_in_one_branch(x):
    ta = em.TensorArray(em.float32, size=2, element_shape=[None], infer_shape=False)
    if em.reduce_sum(x) > 0:
        ta = ta.write(1, x)
    return ta.stack(), ta.concat()


def test_an_element_written_in_one_branch_of_a_staged_if():
    """An element never written is zeros: of the written ones' shape in stack(), none
    of its rows in concat(); with nothing written, of size 0 where the shape is open."""
    for run in _runs(written_in_one_branch, [em.TensorSpec([None])]):
        stack, concat = run(em.constant([1.0, 2.0]))
        assert stack.numpy().tolist() == [[0.0, 0.0], [1.0, 2.0]]
        assert concat.numpy().tolist() == [1.0, 2.0]
        stack, concat = run(em.constant([-1.0, -2.0, 0.5]))
        assert stack.shape == (2, 0) and concat.shape == (0,)


def no_element_shape(x, n):
    ta = em.TensorArray(em.float32, size=0, dynamic_size=True, infer_shape=False)
    for i in em.range(n):
        ta = ta.write(ta.size(), x[i:])
    return ta.concat()


def test_without_an_element_shape_the_first_write_in_a_loop_sets_the_rank():
    """No element_shape, elements of a shape known when the code runs: the loop's trial
    trace finds their rank."""
    x = em.constant([1.0, 2.0, 3.0])
    for run in _runs(no_element_shape, [em.TensorSpec([None]), em.TensorSpec([], em.int32)]):
        assert run(x, em.constant(3)).numpy().tolist() == [1, 2, 3, 2, 3, 3]


def functional_loop(n):
    ta = em.TensorArray(em.float32, size=0, dynamic_size=True, element_shape=[None],
                        infer_shape=False)
    _, ta = em.while_loop(lambda i, ta: i < n,
                          lambda i, ta: (i + 1, ta.write(i, em.fill(em.reshape(i, [1]),
                                                                    em.cast(i, em.float32)))),
                          (0, ta))
    return ta.concat()


def functional_scalars(n):
    ta = em.TensorArray(em.float32, size=0, dynamic_size=True, element_shape=[])
    _, ta = em.while_loop(lambda i, ta: i < n,
                          lambda i, ta: (i + 1, ta.write(i, em.cast(i, em.float32))), (0, ta))
    return ta.stack()


def test_em_while_loop_carries_an_array_whose_buffer_grows():
    """em.while_loop gives an array's buffer the shapes it varies in (a growing first dim,
    the open dims of its elements) without shape_invariants, as tf.while_loop does; a
    growing array of scalars was an error ("has shape (1,) ... but shape (None,) after one
    iteration")."""
    for run in _runs(functional_loop, _n()):
        assert run(em.constant(4)).numpy().tolist() == [1.0, 2.0, 2.0, 3.0, 3.0, 3.0]
    for run in _runs(functional_scalars, _n()):
        assert run(em.constant(3)).numpy().tolist() == [0.0, 1.0, 2.0]


def test_em_while_loop_over_an_array_with_nothing_written_says_to_give_its_shape():
    def fn(n):
        ta = em.TensorArray(em.float32, size=0, dynamic_size=True)
        return em.while_loop(lambda i, ta: i < n,
                             lambda i, ta: (i + 1, ta.write(i, 1.0)), (0, ta))[1].stack()
    with pytest.raises(em.errors.ControlFlowError,
                       match=rf"em\.while_loop at {__file__}:\d+ carries an em\.TensorArray "
                             r"nothing is written to before the loop.*give it element_shape="):
        em.function(fn)(em.constant(3))


def test_arrays_of_size_zero_known_only_when_the_code_runs():
    """A size 0 that specialisation makes static: a buffer of size 0 reaching a slice
    through a loop failed to compile ("offset 0 is out-of-bounds: 0 >= 0")."""
    def fn(x):
        return stacked(em.shape(x)[0], True), ragged_rows(em.shape(x)[0], False, False)[0]
    for shape in [(0, 2), (2, 2)]:
        for run in _runs(fn, [em.TensorSpec([None, None])]):
            stack, joined = run(em.zeros(shape))
            assert stack.shape == (shape[0], 3 if shape[0] else 0)
            assert joined.shape == (3 if shape[0] else 0, 3)


def squares_of_prefixes(x):
    with em.GradientTape() as tape:
        tape.watch(x)
        ta = em.TensorArray(em.float32, size=3, element_shape=[None], infer_shape=False)
        for i in em.range(3):
            ta = ta.write(i, x[:i + 1] * em.cast(i + 1, em.float32))
        y = em.reduce_sum(ta.concat() ** 2) + em.reduce_sum(ta.read(1))
    return y, tape.gradient(y, x)


def test_gradients_flow_through_elements_of_different_shapes():
    """y = sum_i sum_{j<=i} ((i+1) x_j)^2 + 2 (x_0 + x_1)."""
    x = np.array([1.0, 2.0, 3.0], np.float32)
    want_y = sum(float((((i + 1) * x[:i + 1]) ** 2).sum()) for i in range(3)) + 2 * 3.0
    want_g = np.array([2 * x[0] * (1 + 4 + 9) + 2, 2 * x[1] * (4 + 9) + 2, 2 * x[2] * 9])
    for run in _runs(squares_of_prefixes, [em.TensorSpec([None])]):
        y, g = run(em.constant(x))
        np.testing.assert_allclose(float(y), want_y, rtol=1e-6)
        np.testing.assert_allclose(g.numpy(), want_g, rtol=1e-6)
