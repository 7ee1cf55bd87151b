"""em.TensorArray and map_fn/scan/foldl/foldr: eager and compiled agree; the guide's
dynamic_rnn (tf-function-guide-2020: 在循环中累积值) compiles, with no fallback."""

import numpy as np
import pytest

import ember as em


def rnn_step(inp, state):
    return inp + state


@em.function
def dynamic_rnn(rnn_step, input_data, initial_state):
    # [batch, time, features] -> [time, batch, features]
    input_data = em.transpose(input_data, [1, 0, 2])
    max_seq_len = input_data.shape[0]

    states = em.TensorArray(em.float32, size=max_seq_len)
    state = initial_state
    for i in em.range(max_seq_len):
        state = rnn_step(input_data[i], state)
        states = states.write(i, state)
    return em.transpose(states.stack(), [1, 0, 2])


def test_the_guides_dynamic_rnn_accumulates_states():
    batch_size, seq_len, feature_size = 2, 3, 4
    x = np.random.default_rng(0).uniform(size=(batch_size, seq_len, feature_size))
    x = x.astype(np.float32)
    out = dynamic_rnn(rnn_step, em.constant(x), em.zeros([batch_size, feature_size]))
    assert out.shape == (2, 3, 4)
    np.testing.assert_allclose(out.numpy(), np.cumsum(x, axis=1), rtol=1e-6)


def squares(n):
    ta = em.TensorArray(em.int32, size=0, dynamic_size=True)
    for i in range(n):
        ta = ta.write(i, i * i)
    return ta.stack(), ta.size()


@pytest.mark.parametrize("n", [1, 5, 11])
def test_a_dynamic_array_grows_eagerly_and_compiled(n):
    expected = np.arange(n) ** 2
    got, size = squares(em.constant(n))
    np.testing.assert_array_equal(got.numpy(), expected)
    got, size = em.function(squares)(em.constant(n))
    np.testing.assert_array_equal(got.numpy(), expected)
    assert size.numpy() == n


def all_ops(x):
    ta = em.TensorArray(em.float32, size=4)
    ta = ta.unstack(x)
    ta = ta.write(1, ta.read(2) * 10.0)
    ta = ta.scatter(em.constant([0, 3]), em.stack([ta.read(1), ta.read(1)]))
    return ta.stack(), ta.gather(em.constant([3, 1])), ta.concat(), ta.size()


def test_read_write_unstack_scatter_gather_concat_agree():
    x = em.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    eager = all_ops(x)
    compiled = em.function(all_ops)(x)
    for e, c in zip(eager, compiled):
        np.testing.assert_array_equal(c.numpy(), e.numpy())
    np.testing.assert_array_equal(eager[0].numpy(), [[40, 50], [40, 50], [4, 5], [40, 50]])


def write_at(i):
    ta = em.TensorArray(em.float32, size=3)
    return ta.write(i, 1.0).stack()


def test_a_write_outside_the_array_is_an_error_eagerly_and_compiled():
    with pytest.raises(em.errors.InvalidArgumentError, match="index out of range"):
        write_at(em.constant(3))
    with pytest.raises(em.errors.InvalidArgumentError, match="index out of range"):
        em.function(write_at)(em.constant(3))
    np.testing.assert_array_equal(em.function(write_at)(em.constant(2)).numpy(), [0, 0, 1])


def functional(x, m):
    return (em.map_fn(lambda v: v * v, x), em.scan(lambda a, v: a + v, x),
            em.foldl(lambda a, v: a * v, x), em.foldr(lambda a, v: a - v, x),
            em.scan(lambda a, v: a + v, x, reverse=True),
            em.scan(lambda a, v: a + v, x, initializer=em.constant(10)),
            em.map_fn(lambda row: em.reduce_sum(row) * 2.0, m),
            em.map_fn(lambda pair: (pair[0] + pair[1], pair[0] * pair[1]), (x, x)))


def test_map_fn_scan_and_folds_agree_eagerly_and_compiled():
    x = em.constant([1, 2, 3, 4])
    m = em.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    eager = functional(x, m)
    compiled = em.function(functional)(x, m)
    expected = [[1, 4, 9, 16], [1, 3, 6, 10], 24, -2, [10, 9, 7, 4], [11, 13, 16, 20],
                [2, 10, 18]]
    for e, c, want in zip(eager, compiled, expected):
        np.testing.assert_array_equal(e.numpy(), want)
        np.testing.assert_array_equal(c.numpy(), want)
    for e, c in zip(eager[-1], compiled[-1]):
        np.testing.assert_array_equal(c.numpy(), e.numpy())


@pytest.mark.parametrize("signature", [[None], [None, 3], [None, None]])
def test_scan_over_unknown_dims_compiles(signature):
    """A scan's accumulated results may have `?` dims: the arrays that collect them are
    allocated with the accumulator's run-time shape before the loop."""
    x = np.arange(12, dtype=np.float32).reshape((12,) if len(signature) == 1 else (4, 3))

    def scans(v):
        return (em.scan(lambda a, r: a + r, v),
                em.scan(lambda a, r: a * 0.5 + r, v, initializer=em.zeros_like(v[0])))
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        compiled = em.function(scans, input_signature=[em.TensorSpec(signature)])(x)
    finally:
        em.config.set_fallback(previous)
    for c, e in zip(compiled, scans(em.constant(x))):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-6)
    np.testing.assert_allclose(compiled[0].numpy(), np.cumsum(x, axis=0), rtol=1e-6)


@em.function
def _write_in_an_if(x):
    ta = em.TensorArray(em.float32, size=2)
    if x > 0:
        ta = ta.write(0, x)
    return ta.stack()


@em.function
def _filter_times_ten(x, dynamic):
    ta = em.TensorArray(em.float32, size=0, dynamic_size=True) if dynamic else \
        em.TensorArray(em.float32, size=5)
    n = 0
    for v in x:
        if v > 0:
            ta = ta.write(n, v * 10)
            n += 1
    return ta.stack()[:n]


def test_an_array_first_written_in_one_branch_is_empty_in_the_other():
    """TensorFlow's pattern: no element shape given, the first write inside a staged `if`
    (the other branch leaves the array as it was: zeros of the written element's type)."""
    assert _write_in_an_if(em.constant(3.0)).numpy().tolist() == [3.0, 0.0]
    assert _write_in_an_if(em.constant(-3.0)).numpy().tolist() == [0.0, 0.0]
    x = em.constant([1.0, -2.0, 3.0, 0.0, 5.0])
    for dynamic in (False, True):
        assert _filter_times_ten(x, dynamic).numpy().tolist() == [10.0, 30.0, 50.0]


@pytest.mark.parametrize("signature", [[None, None], [None, 3, None], [None, None, None]])
def test_map_fn_over_unknown_inner_dims_compiles_and_runs_fn_once_per_row(signature, capsys):
    """Found by a differential fuzz campaign: a map_fn whose output has `?` dims failed to
    trace ("cannot convert NoneType None to a tensor"): its arrays could not be allocated
    before the loop. They are sized by the first row's output, written before the loop."""
    def fn(x):
        def row(r):
            em.print("row")
            return em.reduce_sum(r, axis=-1, keepdims=True) * r
        return em.map_fn(row, x)
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        compiled = em.function(fn, input_signature=[em.TensorSpec(signature)])
        for shape in [(2, 3), (4, 3), (1, 5), (0, 3)] if len(signature) == 2 else \
                [(2, 3, 1), (3, 3, 4), (0, 3, 2)]:
            x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
            if not shape[0]:
                # eagerly the element's shape is known, so the empty result's is (as in
                # TensorFlow); compiled, a `?` output dim is not: a clear error
                assert fn(em.constant(x)).shape == shape
                with pytest.raises(ValueError, match="map_fn over zero elements cannot know"):
                    compiled(x)
                continue
            capsys.readouterr()
            got = compiled(x).numpy()
            assert capsys.readouterr().err.count("row") == shape[0]  # fn once per row (stderr)
            np.testing.assert_array_equal(got, x.sum(-1, keepdims=True) * x)
            assert got.shape == shape
    finally:
        em.config.set_fallback(previous)


def test_a_write_in_a_staged_loop_replaces_one_row_not_the_whole_buffer():
    """A write was a select over every row (a range compared with the index), so map_fn
    and scan were O(n^2): 32,000 rows took 187 ms compiled. It is one tensor_scatter of
    one row, which the compiled loop does in place."""
    fn = em.function(lambda x: em.map_fn(lambda v: v * 2.0, x))
    concrete = fn.get_concrete_function(em.TensorSpec([8000, 3], em.float32))
    text = concrete.mlir("optimized")
    assert '"ember.tensor_scatter"' in text
    assert '"ember.select"' not in text and '"ember.range"' not in text
    x = np.arange(8000 * 3, dtype=np.float32).reshape(8000, 3)
    np.testing.assert_array_equal(fn(x).numpy(), x * 2)


def _written_in_a_loop_in_an_if(x, n):
    ta = em.TensorArray(em.float32, size=0, dynamic_size=True)
    if n > 1:
        for i in em.range(n):
            ta = ta.write(ta.size(), em.reduce_sum(x))
    return ta.stack()


def _written_in_nested_loops_after_a_break(x, n):
    ta = em.TensorArray(em.float32, size=0, dynamic_size=True)
    for i in em.range(n):
        if em.reduce_sum(x) > 100.0:
            break
        for j in em.range(n):
            ta = ta.write(ta.size(), em.reduce_sum(x))
    return ta.stack()


@pytest.mark.parametrize("fn,n,expected", [
    (_written_in_a_loop_in_an_if, 3, [3.0] * 3), (_written_in_a_loop_in_an_if, 1, []),
    (_written_in_nested_loops_after_a_break, 3, [3.0] * 9)])
def test_an_array_written_in_a_loop_inside_staged_control_flow(fn, n, expected):
    """Found by a differential fuzz campaign: the array a staged loop gave back had lost
    its element shape, so an enclosing `if` (or loop) could not merge it ("elements of
    shape <unknown>; give element_shape=")."""
    x = em.constant([1.0, 2.0])
    assert fn(x, em.constant(n)).numpy().tolist() == expected
    assert em.function(fn)(x, em.constant(n)).numpy().tolist() == expected


def test_map_fn_over_zero_rows_gives_an_empty_result_eagerly_and_compiled():
    """Found by a differential fuzz campaign: eager raised, compiled code with static
    shapes leaked an OpShapeError from x[0], and with a `?` batch dim returned (0,)."""
    def fn(x):
        return em.map_fn(lambda r: (em.reduce_sum(r), r * 2), x)
    x = np.zeros([0, 3], np.float32)
    for run in (fn, em.function(fn),
                em.function(fn, input_signature=[em.TensorSpec([None, 3], em.float32)])):
        total, doubled = run(em.constant(x))
        assert total.shape == (0,) and doubled.shape == (0, 3)
        assert total.dtype == em.float32


def test_scan_over_zero_rows_with_an_initializer_is_empty_eagerly_and_compiled():
    """Eager raised from the nest helper (no result to pack); compiled code gave (0, 2)."""
    def fn(x):
        return em.scan(lambda a, v: (a[0] + v, a[1] * 2), x,
                       initializer=(em.constant([0.0, 0.0]), em.constant(1)))
    x = np.zeros([0, 2], np.float32)
    for run in (fn, em.function(fn),
                em.function(fn, input_signature=[em.TensorSpec([None, 2], em.float32)])):
        sums, counts = run(em.constant(x))
        assert sums.shape == (0, 2) and sums.dtype == em.float32
        assert counts.shape == (0,) and counts.dtype == em.int32


def _sized_at_run_time(n, element_shape):
    ta = em.TensorArray(em.float32, size=n, dynamic_size=True, element_shape=element_shape)
    return ta.write(0, em.ones([2])).stack()


@pytest.mark.parametrize("element_shape", [None, [None]])
def test_a_dynamic_array_of_a_size_known_at_run_time_has_that_many_elements(element_shape):
    """Compiled, an array of `size=n` (a tensor) with dynamic_size=True was made with room
    for one element, and stack() gave that one where eagerly it gave n (as TensorFlow)."""
    want = [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]
    for run in (_sized_at_run_time, em.function(_sized_at_run_time)):
        assert run(em.constant(3), element_shape).numpy().tolist() == want
