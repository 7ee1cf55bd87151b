"""The array compositions with TensorFlow's run-time arguments (issue 13's new-user trial):
per-element `repeat` counts, batched `linspace` along `axis`, tensor `roll` shifts, `tile`
multiples and `split` sizes, `gather(batch_dims=)`, and `?` dims for those and `meshgrid`,
`linalg.diag`/`diag_part`. Eager against numpy; compiled against eager with static and with
all-`None` input signatures, no fallback to the interpreter."""

import warnings

import numpy as np
import pytest

import ember as em
from ember.frontend.effects import AssertionFailedError

X = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
N = np.arange(12, dtype=np.int32).reshape(3, 4)
P3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
I2 = np.array([[0, 2], [1, 1]], np.int32)
E = np.zeros((0, 4), np.float32)
i32 = np.int32


def _batched_take(p, i, axis):
    return np.stack([np.take(p[k], i[k], axis=axis - 1) for k in range(len(p))])


# name -> (function of tensors, numpy oracle, operands)
CASES = {
    "repeat_list": (lambda x: em.repeat(x, [1, 0, 2], axis=0),
                    lambda x: np.repeat(x, [1, 0, 2], axis=0), [X]),
    "repeat_numpy": (lambda x: em.repeat(x, np.array([2, 0, 1, 3]), axis=-1),
                     lambda x: np.repeat(x, [2, 0, 1, 3], axis=-1), [N]),
    "repeat_tensor": (lambda x, r: em.repeat(x, r, axis=0),
                      lambda x, r: np.repeat(x, r, axis=0), [X, np.array([3, 0, 1], i32)]),
    "repeat_tensor_one": (lambda x, r: em.repeat(x, r, axis=1),
                          lambda x, r: np.repeat(x, r, axis=1), [N, np.array([2], i32)]),
    "repeat_scalar_tensor": (lambda x, r: em.repeat(x, r),
                             lambda x, r: np.repeat(x, r), [N, i32(2)]),
    "repeat_list_of_tensors": (lambda x, r: em.repeat(x, [r, 1, r], axis=0),
                               lambda x, r: np.repeat(x, [r, 1, r], axis=0), [X, i32(2)]),
    "repeat_empty": (lambda x, r: em.repeat(x, r, axis=0),
                     lambda x, r: np.repeat(x, r, axis=0), [E, np.zeros(0, i32)]),
    "linspace_batched": (lambda: em.linspace([0., 1.], [2., 5.], 3, axis=0),
                         lambda: np.linspace([0., 1.], [2., 5.], 3, axis=0).astype(np.float32),
                         []),
    "linspace_axis_last": (lambda a, b: em.linspace(a, b, 5, axis=-1),
                           lambda a, b: np.linspace(a, b, 5, axis=-1).astype(np.float32),
                           [X, X * 2 + 1]),
    "linspace_broadcast": (lambda a, b: em.linspace(a, b, 4, axis=1),
                           lambda a, b: np.linspace(a, b, 4, axis=1).astype(np.float32),
                           [X, np.float32(3.0)]),
    "linspace_num_tensor": (lambda a, n: em.linspace(a, 1.0, n),
                            lambda a, n: np.linspace(a, 1.0, n).astype(np.float32),
                            [np.float32(-2.0), i32(6)]),
    "linspace_num_one": (lambda n: em.linspace(3.0, 9.0, n),
                         lambda n: np.array([3.0], np.float32), [i32(1)]),
    "linspace_num_zero": (lambda n: em.linspace(3.0, 9.0, n),
                          lambda n: np.zeros(0, np.float32), [i32(0)]),
    "roll_tensor_shift": (lambda x, s: em.roll(x, s, 1), lambda x, s: np.roll(x, s, 1),
                          [X, i32(3)]),
    "roll_numpy_shift": (lambda x: em.roll(x, np.int64(-5), 0),
                         lambda x: np.roll(x, -5, 0), [N]),
    "roll_list_of_shifts": (lambda x, s: em.roll(x, [s, -1], [0, 1]),
                            lambda x, s: np.roll(x, [s, -1], [0, 1]), [X, i32(2)]),
    "roll_1d_tensor": (lambda x, s: em.roll(x, s, [1, 0, 1]),
                       lambda x, s: np.roll(x, s, [1, 0, 1]), [N, np.array([1, -4, 2], i32)]),
    "roll_static_shift": (lambda x: em.roll(x, 7, -1), lambda x: np.roll(x, 7, -1), [X]),
    "roll_empty": (lambda x, s: em.roll(x, s, 0), lambda x, s: np.roll(x, s, 0), [E, i32(2)]),
    "tile_tensor": (lambda x, m: em.tile(x, m), np.tile, [X, np.array([2, 3], i32)]),
    "tile_int64": (lambda x, m: em.tile(x, m), np.tile, [N, np.array([1, 2], np.int64)]),
    "tile_mixed": (lambda x, m: em.tile(x, [m, 2]), lambda x, m: np.tile(x, [m, 2]),
                   [X, i32(0)]),
    "tile_static": (lambda x: em.tile(x, [2, 1]), lambda x: np.tile(x, [2, 1]), [N]),
    "split_rest": (lambda x: em.split(x, [2, -1], axis=1),
                   lambda x: np.split(x, [2], axis=1), [X]),
    "split_equal": (lambda x: em.split(x, 3), lambda x: np.split(x, 3), [X]),
    "split_equal_axis": (lambda x: em.split(x, 2, axis=-1), lambda x: np.split(x, 2, -1), [N]),
    "split_tensor_sizes": (lambda x, s: em.split(x, s, axis=1, num=3),
                           lambda x, s: np.split(x, np.cumsum(s)[:-1], axis=1),
                           [X, np.array([1, 0, 3], i32)]),
    "split_tensor_size_and_rest": (lambda x, s: em.split(x, [s, -1], axis=1),
                                   lambda x, s: np.split(x, [s], axis=1), [N, i32(3)]),
    "split_empty": (lambda x: em.split(x, 2), lambda x: np.split(x, 2), [E]),
    "gather_batch": (lambda p, i: em.gather(p, i, batch_dims=1),
                     lambda p, i: np.take_along_axis(p, i, 1),
                     [X, np.array([[0, 3, 3], [1, 1, 0], [2, 0, 1]], i32)]),
    "gather_batch_axis": (lambda p, i: em.gather(p, i, axis=2, batch_dims=1),
                          lambda p, i: _batched_take(p, i, 2), [P3, I2]),
    "gather_batch_negative": (lambda p, i: em.gather(p, i, axis=-2, batch_dims=-1),
                              lambda p, i: _batched_take(p, i, 1), [P3, I2]),
    "gather_batch_scalar_index": (lambda p, i: em.gather(p, i, axis=1, batch_dims=1),
                                  lambda p, i: p[np.arange(3), i], [N, np.array([3, 0, 1],
                                                                               i32)]),
    "gather_batch_two": (lambda p, i: em.gather(p, i, batch_dims=2),
                         lambda p, i: np.take_along_axis(p, i, 2),
                         [P3, np.array([[[0], [3], [1]], [[2], [2], [0]]], i32)]),
    "gather_axis_keyword": (lambda p, i: em.gather(p, i, axis=1),
                            lambda p, i: np.take(p, i, axis=1), [X, np.array([3, 0], i32)]),
    "meshgrid_xy": (lambda a, b: em.meshgrid(a, b), np.meshgrid,
                    [np.arange(3, dtype=np.float32), np.arange(2, dtype=np.float32)]),
    "meshgrid_ij3": (lambda a, b, c: em.meshgrid(a, b, c, indexing="ij"),
                     lambda a, b, c: np.meshgrid(a, b, c, indexing="ij"),
                     [np.arange(2, dtype=i32), np.arange(3, dtype=i32),
                      np.arange(4, dtype=i32)]),
    "diag": (em.linalg.diag, lambda d: np.apply_along_axis(np.diag, -1, d), [X]),
    "diag_part_wide": (em.linalg.diag_part, lambda x: np.diagonal(x, 0, -2, -1), [X]),
    "diag_part_tall": (em.linalg.diag_part, lambda x: np.diagonal(x, 0, -2, -1),
                       [P3.transpose(0, 2, 1)]),
}


def _as_list(value):
    return [np.asarray(v) for v in value] if isinstance(value, (list, tuple)) else \
        [np.asarray(value)]


def _compiled(fn, arrays, dynamic: bool):
    signature = None
    if dynamic:
        signature = [em.TensorSpec([None] * np.ndim(a), em.as_dtype(np.asarray(a).dtype))
                     for a in arrays]
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", em.InterpreterFallbackWarning)
            return em.function(fn, input_signature=signature)(
                *[em.constant(a) for a in arrays])
    finally:
        em.config.set_fallback(previous)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_matches_numpy(name):
    fn, oracle, arrays = CASES[name]
    got = _as_list(fn(*[em.constant(a) for a in arrays]))
    want = _as_list(oracle(*arrays))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g, w)
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "none_dims"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_matches_eager(name, dynamic):
    fn, _, arrays = CASES[name]
    want = _as_list(fn(*[em.constant(a) for a in arrays]))
    got = _as_list(_compiled(fn, arrays, dynamic))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_none_dims_stay_unknown_while_tracing():
    """The `?` dims reach the compositions (not specialised away by the signature)."""
    seen = []

    def fn(x, s):
        seen.append(x.shape[0])
        return em.roll(x, s, 0)

    _compiled(fn, [X, i32(1)], dynamic=True)
    assert seen == [None]


# name -> (function, operands, error raised by eager, by compiled static, by compiled
# with None dims, message); tensor-valued bad counts raise alike everywhere
ERRORS = {
    "repeat_negative_tensor": (lambda x, r: em.repeat(x, r, axis=0),
                               [X, np.array([1, -1, 2], i32)],
                               (AssertionFailedError,) * 3, "repeats must be >= 0"),
    "repeat_count_mismatch": (lambda x, r: em.repeat(x, r, axis=0), [X, np.array([1, 2], i32)],
                              (ValueError, ValueError, AssertionFailedError),
                              "repeats for dim 0 of the input of shape .*: give one per element"),
    "tile_negative_tensor": (lambda x, m: em.tile(x, m), [X, np.array([1, -1], i32)],
                             (AssertionFailedError,) * 3, "multiples must be >= 0"),
    "tile_wrong_length": (lambda x, m: em.tile(x, m), [X, np.array([1, 1, 1], i32)],
                          (ValueError, ValueError, AssertionFailedError),
                          "3 multiples for a rank-2|multiples must have 2 elements"),
    "split_unequal": (lambda x: em.split(x, 3, axis=1), [X],
                      (ValueError, ValueError, AssertionFailedError),
                      "does not split into 3 equal parts"),
    "split_sizes_too_big": (lambda x: em.split(x, [4, -1], axis=0), [X],
                            (ValueError, ValueError, AssertionFailedError),
                            r"sizes \[4, -1\] do not add up to dim 0"),
    "split_tensor_sizes_sum": (lambda x, s: em.split(x, s, axis=1, num=2),
                               [X, np.array([1, 2], i32)],
                               (AssertionFailedError,) * 3, "do not add up to dim 1"),
    "gather_batch_out_of_range": (lambda p, i: em.gather(p, i, batch_dims=1),
                                  [X, np.array([[0], [4], [1]], i32)],
                                  (AssertionFailedError,) * 3, "out of range"),
    "linspace_negative_num_tensor": (lambda n: em.linspace(0.0, 1.0, n), [i32(-3)],
                                     (AssertionFailedError,) * 3, "num must be >= 0"),
    "gather_batch_dims_differ": (lambda p, i: em.gather(p, i, batch_dims=1),
                                 [X, np.array([[0], [1]], i32)],
                                 (ValueError, ValueError, AssertionFailedError),
                                 "batch dims of params .* differ"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_say_what_eager_and_compiled(name):
    fn, arrays, (eager, static, dynamic), message = ERRORS[name]
    with pytest.raises(eager, match=message):
        fn(*[em.constant(a) for a in arrays])
    with pytest.raises(static, match=message):
        _compiled(fn, arrays, dynamic=False)
    with pytest.raises(dynamic, match=message):
        _compiled(fn, arrays, dynamic=True)


@pytest.mark.parametrize("call, error, message", [
    (lambda: em.gather(em.constant(X), [[0]], axis=0, batch_dims=1), ValueError,
     "batch_dims <= axis"),
    (lambda: em.repeat(em.constant(X), [1, -1, 0], axis=0), ValueError,
     "repeats must be >= 0, got -1"),
    (lambda: em.split(em.constant(X), [1, -1, -1]), ValueError, "at most one size may be -1"),
    (lambda: em.roll(em.constant(X), [1, 2], 0), ValueError, "2 shifts for 1 axes"),
    (lambda: em.linspace(0.0, 1.0, -1), ValueError, "num must be >= 0, got -1"),
    (lambda: em.linspace(0.0, 1.0, [2]), ValueError, "num must be a scalar int"),
    (lambda: em.tile(em.constant(X), [1.5, 2]), TypeError, "multiples must be"),
])
def test_bad_python_arguments_are_value_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_counts_of_outputs_unknown_while_tracing_are_errors_that_say_so():
    spec = [em.TensorSpec([3, 4], em.float32), em.TensorSpec([None], em.int32)]
    with pytest.raises(TypeError, match="length known while tracing"):
        em.function(lambda x, s: em.split(x, s, axis=1),
                    input_signature=spec).get_concrete_function()
    spec = [em.TensorSpec([3, 4], em.float32), em.TensorSpec([], em.int32)]
    with pytest.raises(ValueError, match="number of parts must be known while tracing"):
        em.function(lambda x, n: em.split(x, n, axis=1),
                    input_signature=spec).get_concrete_function()


def _both(fn, *args):
    """fn's result (or error) eagerly and compiled, on tensors of `args`."""
    out = []
    for run in (fn, em.function(fn)):
        try:
            out.append(run(*[em.constant(a) for a in args]).numpy().tolist())
        except em.errors.OpError as e:
            out.append(str(e).split(" (at ")[0])
    return out


@pytest.mark.parametrize("source", ["em.tile(em.ones([1]), [n])", "em.repeat(em.ones([2]), n)",
                                    "em.split(em.range(3.0), [n, 3 - n])[0]"])
def test_int64_counts_outside_int32_raise_not_wrap(source):
    """A cast to int32 wrapped 3 - 2**32 around to 3: compiled code tiled 3 times."""
    fn = eval(f"lambda n: {source}")  # noqa: S307 - the test's own expressions
    eager, compiled = _both(fn, np.int64(3 - 2**32))
    assert eager == compiled and "must lie in int32's range" in eager


def test_roll_by_an_int64_shift_and_by_int_min():
    x = np.arange(5, dtype=np.float32)
    for shift in (np.int64(2**32 + 3), np.int32(-2**31), np.int32(-2**31 + 1)):
        want = np.roll(x, int(shift)).tolist()
        assert _both(lambda v, s: em.roll(v, s, 0), x, shift) == [want, want], shift


def test_one_hot_of_a_traced_depth_past_the_indices_dtype():
    """The depth was cast to the indices' dtype: uint8 indices and depth 300 gave 44 columns;
    a negative depth gave none where eager raises."""
    for idx, depth in ((np.array([0, 1], np.uint8), 300), (np.array([0, 1], np.int8), 130)):
        eager, compiled = _both(lambda i, d: em.one_hot(i, d), idx, np.int32(depth))
        assert eager == compiled and np.asarray(compiled).shape == (2, depth)
    for run in (em.one_hot, em.function(em.one_hot)):  # one error class in both modes
        with pytest.raises(AssertionFailedError, match="depth must be >= 0"):
            run(em.constant([0]), em.constant(-3))
