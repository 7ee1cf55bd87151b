"""Scatter, gather_nd, where/boolean_mask, segment reductions and bincount: eager against
numpy oracles written with loops, and compiled (no interpreter fallback) against eager on
static shapes, on `?` dims (input_signature) and on empty shapes, in every dtype they take;
duplicate indices; out-of-range indices raise the same error eagerly and compiled."""

import warnings

import ml_dtypes
import numpy as np
import pytest

import ember as em

F = np.array([[1.5, -2.0, 0.0], [4.0, np.nan, -6.25], [7.0, 8.0, 9.0], [-1.0, 0.5, 3.0]],
             np.float32)
ROWS_IDX = np.array([[2], [0], [2]], np.int32)           # a duplicate row
ROWS_UPD = np.array([[1, 2, 3], [4, 5, 6], [-7, 8, 0.5]], np.float32)
ELEM_IDX = np.array([[1, 2], [3, 0], [1, 2]], np.int64)  # a duplicate element
ELEM_UPD = np.array([10.0, -3.0, 2.5], np.float32)
IDS = np.array([0, 0, 2, 2], np.int32)
UIDS = np.array([3, -1, 0, 3], np.int64)                 # unsorted, one dropped (-1)
ARR = np.array([[1, 1], [3, 5]], np.int32)


def scatter_loops(t, indices, updates, combine):
    out = t.copy()
    k = indices.shape[-1]
    for row, upd in zip(indices.reshape(-1, k).tolist(),
                        updates.reshape((-1,) + t.shape[k:])):
        out[tuple(row)] = combine(out[tuple(row)], upd)
    return out


def gather_nd_loops(p, idx, batch_dims=0):
    k = idx.shape[-1]
    out = []
    for pos in np.ndindex(*idx.shape[:-1]):
        batch = pos[:batch_dims]
        out.append(p[batch + tuple(idx[pos].tolist())])
    tail = p.shape[batch_dims + k:]
    return np.array(out, p.dtype).reshape(idx.shape[:-1] + tail)


def segment_loops(data, ids, num, reduce, empty):
    out = []
    for s in range(num):
        rows = [data[i] for i in range(len(ids)) if ids[i] == s]
        out.append(reduce(np.stack(rows)) if rows else np.full(data.shape[1:], empty))
    return np.array(out, data.dtype).reshape((num,) + data.shape[1:])


LOWEST, HIGHEST = float(np.finfo(np.float32).min), float(np.finfo(np.float32).max)

# name -> (function of tensors, numpy oracle, operands, operands whose last dim stays
# static in the dynamic variant: the index depth)
CASES = {
    "update_rows": (em.tensor_scatter_nd_update,
                    lambda t, i, u: scatter_loops(t, i, u, lambda a, b: b),
                    [F, ROWS_IDX, ROWS_UPD], {1}),
    "add_rows": (em.tensor_scatter_nd_add,
                 lambda t, i, u: scatter_loops(t, i, u, lambda a, b: a + b),
                 [F, ROWS_IDX, ROWS_UPD], {1}),
    "sub_elements": (em.tensor_scatter_nd_sub,
                     lambda t, i, u: scatter_loops(t, i, u, lambda a, b: a - b),
                     [F, ELEM_IDX, ELEM_UPD], {1}),
    "max_elements": (em.tensor_scatter_nd_max,
                     lambda t, i, u: scatter_loops(t, i, u, np.maximum),
                     [F, ELEM_IDX, ELEM_UPD], {1}),
    "min_rows": (em.tensor_scatter_nd_min,
                 lambda t, i, u: scatter_loops(t, i, u, np.minimum),
                 [F, ROWS_IDX, ROWS_UPD], {1}),
    "add_batched_indices": (em.tensor_scatter_nd_add,
                            lambda t, i, u: scatter_loops(t, i, u, lambda a, b: a + b),
                            [F, ELEM_IDX.reshape(3, 1, 2), ELEM_UPD.reshape(3, 1)], {1}),
    "update_no_rows": (em.tensor_scatter_nd_update, lambda t, i, u: t,
                       [F, np.zeros((0, 1), np.int32), np.zeros((0, 3), np.float32)], {1}),
    "add_one_index": (em.tensor_scatter_nd_add,  # indices [k]: one row, one element
                      lambda t, i, u: scatter_loops(t, i, u, lambda a, b: a + b),
                      [F, np.array([3, 1], np.int32), np.float32(2.5)], {1}),
    "add_depth_zero": (em.tensor_scatter_nd_add,  # k = 0: each row updates everything
                       lambda t, i, u: t + u.sum(0),
                       [F, np.zeros((2, 0), np.int32), np.ones((2, 4, 3), np.float32)], {1}),
    "scatter_nd": (lambda i, u: em.scatter_nd(i, u, [4, 3]),
                   lambda i, u: scatter_loops(np.zeros((4, 3), np.float32), i, u,
                                              lambda a, b: a + b),
                   [ROWS_IDX, ROWS_UPD], {0}),
    "gather_nd_rows": (em.gather_nd, gather_nd_loops, [F, np.array([[3], [0], [3]])], {1}),
    "gather_nd_elements": (em.gather_nd, gather_nd_loops, [F, ELEM_IDX], {1}),
    "gather_nd_batch": (lambda p, i: em.gather_nd(p, i, batch_dims=1),
                        lambda p, i: gather_nd_loops(p, i, 1),
                        [F, np.array([[2], [0], [1], [1]], np.int32)], {1}),
    "gather_nd_empty": (em.gather_nd, gather_nd_loops, [F, np.zeros((0, 2), np.int32)], {1}),
    "where": (em.where, lambda c: np.array(
        [[i, j] for i in range(4) for j in range(3) if c[i, j]], np.int64).reshape(-1, 2),
        [F > 0], set()),
    "where_numeric": (em.where, lambda c: np.array(
        [[i] for i in range(len(c)) if c[i] != 0], np.int64).reshape(-1, 1),
        [np.array([0, 3, 0, -1, 7], np.int8)], set()),
    "where_none_true": (em.where, lambda c: np.zeros((0, 2), np.int64),
                        [np.zeros((3, 2), bool)], set()),
    "where_empty": (em.where, lambda c: np.zeros((0, 2), np.int64), [np.zeros((0, 2), bool)],
                    set()),
    "where_select": (lambda c, x, y: em.where(c, x, y), np.where,
                     [F > 0, F, -F], set()),
    "boolean_mask": (em.boolean_mask, lambda t, m: np.array(
        [t[i] for i in range(4) if m[i]], t.dtype).reshape(-1, 3),
        [F, np.array([True, False, True, True])], set()),
    "boolean_mask_2d": (em.boolean_mask, lambda t, m: np.array(
        [t[i, j] for i in range(4) for j in range(3) if m[i, j]], t.dtype),
        [F, F > 1], set()),
    "boolean_mask_axis": (lambda t, m: em.boolean_mask(t, m, axis=1), lambda t, m: np.array(
        [[t[i, j] for j in range(3) if m[j]] for i in range(4)], t.dtype).reshape(4, -1),
        [F, np.array([False, True, True])], set()),
    "segment_sum": (em.math.segment_sum, lambda d, s: segment_loops(d, s, 3, sum, 0),
                    [F, IDS], set()),
    "segment_mean": (em.math.segment_mean, lambda d, s: segment_loops(
        d, s, 3, lambda r: r.mean(0), 0), [F, IDS], set()),
    "segment_max": (em.math.segment_max, lambda d, s: segment_loops(
        d, s, 3, lambda r: r.max(0), 0), [F, IDS], set()),
    "segment_min": (em.math.segment_min, lambda d, s: segment_loops(
        d, s, 3, lambda r: r.min(0), 0), [F, IDS], set()),
    "segment_prod": (em.math.segment_prod, lambda d, s: segment_loops(
        d, s, 3, lambda r: r.prod(0), 1), [F, IDS], set()),
    "segment_sum_empty": (em.math.segment_sum, lambda d, s: np.zeros((0, 3), np.float32),
                          [F[:0], IDS[:0]], set()),
    "segment_max_int": (em.math.segment_max, lambda d, s: segment_loops(
        d, s, 4, lambda r: r.max(0), 0), [np.array([5, -2, 7], np.int32),
                                          np.array([0, 3, 3], np.int64)], set()),
    "unsorted_sum": (lambda d, s: em.math.unsorted_segment_sum(d, s, 5),
                     lambda d, s: segment_loops(d, s, 5, sum, 0), [F, UIDS], set()),
    "unsorted_mean": (lambda d, s: em.math.unsorted_segment_mean(d, s, 5),
                      lambda d, s: segment_loops(d, s, 5, lambda r: r.mean(0), 0),
                      [F, UIDS], set()),
    "unsorted_max": (lambda d, s: em.math.unsorted_segment_max(d, s, 5),
                     lambda d, s: segment_loops(d, s, 5, lambda r: r.max(0), LOWEST),
                     [F, UIDS], set()),
    "unsorted_min": (lambda d, s: em.math.unsorted_segment_min(d, s, 5),
                     lambda d, s: segment_loops(d, s, 5, lambda r: r.min(0), HIGHEST),
                     [F, UIDS], set()),
    "unsorted_prod": (lambda d, s: em.math.unsorted_segment_prod(d, s, 5),
                      lambda d, s: segment_loops(d, s, 5, lambda r: r.prod(0), 1),
                      [F, UIDS], set()),
    "unsorted_sum_tensor_num": (lambda d, s, n: em.math.unsorted_segment_sum(d, s, n),
                                lambda d, s, n: segment_loops(d, s, int(n), sum, 0),
                                [F, UIDS, np.int32(4)], set()),
    "unsorted_mean_int": (lambda d, s: em.math.unsorted_segment_mean(d, s, 2),
                          lambda d, s: np.array([(7 + 2) // 2, -3], np.int32),
                          [np.array([7, -3, 2], np.int32), np.array([0, 1, 0])], set()),
    "bincount": (em.math.bincount, lambda a: np.bincount(a.ravel()).astype(np.int32), [ARR],
                 set()),
    "bincount_limits": (lambda a: em.math.bincount(a, minlength=8, maxlength=4),
                        lambda a: np.bincount(a.ravel(), minlength=8)[:4].astype(np.int32),
                        [ARR], set()),
    "bincount_minlength": (lambda a: em.math.bincount(a, minlength=8, dtype=em.int64),
                           lambda a: np.bincount(a.ravel(), minlength=8), [ARR], set()),
    "bincount_weights": (em.math.bincount, lambda a, w: np.bincount(
        a.ravel(), w.ravel()).astype(np.float32), [ARR, np.array([[.5, 1], [2, 4]],
                                                                 np.float32)], set()),
    "bincount_rows": (lambda a: em.math.bincount(a, axis=-1, maxlength=5),
                      lambda a: np.array([np.bincount(r, minlength=6)[:5] for r in a],
                                         np.int32), [ARR], set()),
    "bincount_binary": (lambda a: em.math.bincount(a, binary_output=True, dtype=em.float32),
                        lambda a: (np.bincount(a.ravel()) > 0).astype(np.float32), [ARR],
                        set()),
    "bincount_empty": (em.math.bincount, lambda a: np.zeros((0,), np.int32),
                       [np.zeros((0,), np.int32)], set()),
}


def _compiled(fn, args, signature=None):
    with warnings.catch_warnings():
        warnings.simplefilter("error", em.InterpreterFallbackWarning)
        return em.function(fn, input_signature=signature)(*args)


def _eager(fn, args):
    return fn(*[em.constant(a) for a in args])


def _dynamic_signature(args, static_last: set):
    specs = []
    for k, a in enumerate(args):
        a = np.asarray(a)
        shape = [None] * a.ndim
        if k in static_last and a.ndim:
            shape[-1] = a.shape[-1]
        specs.append(em.TensorSpec(shape, em.as_dtype(a.dtype)))
    return specs


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_matches_numpy(name):
    fn, oracle, args, _ = CASES[name]
    got = _eager(fn, args).numpy()
    want = np.asarray(oracle(*[np.asarray(a) for a in args]))
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=2e-6, equal_nan=True)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_matches_eager(name, dynamic):
    fn, _, args, static_last = CASES[name]
    signature = _dynamic_signature(args, static_last) if dynamic else None
    copies = [np.array(a, copy=True) for a in args]
    _same(_compiled(fn, args, signature), _eager(fn, args).numpy())
    for a, before in zip(args, copies):  # the caller's arrays are inputs, never outputs
        np.testing.assert_array_equal(np.asarray(a), before)


def test_where_result_dim_is_known_only_at_run_time():
    f = em.function(em.where, input_signature=[em.TensorSpec([None], em.bool)])
    assert f.get_concrete_function().structured_outputs.shape.as_list() == [None, 1]
    for n in (0, 1, 5):
        mask = np.arange(7) < n
        _same(_compiled(f, [mask]), np.arange(n, dtype=np.int64).reshape(-1, 1))


def test_where_needs_both_x_and_y_or_neither():
    with pytest.raises(ValueError, match="x and y must both be given or both be None"):
        em.where([True], [1.0])


ALL_DTYPES = [np.bool_, np.uint8, np.int8, np.int32, np.int64, np.float16,
              ml_dtypes.bfloat16, np.float32, np.float64]
NUMERIC = ALL_DTYPES[1:]


def _values(dtype, shape):
    values = (np.arange(np.prod(shape)).reshape(shape) * 3 % 7)
    return values.astype(bool) if dtype is np.bool_ else values.astype(dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_update_and_gather_nd_in_every_dtype(dtype):
    t, u = _values(dtype, (4, 2)), _values(dtype, (3, 2))[::-1].copy()
    i = np.array([[3], [1], [3]], np.int32)
    want = t.copy()
    want[1], want[3] = u[1], u[2]  # the last duplicate wins
    _same(_eager(em.tensor_scatter_nd_update, [t, i, u]).numpy(), want)
    _same(_compiled(em.tensor_scatter_nd_update, [t, i, u]).numpy(), want)
    g = np.array([[3, 1], [0, 0]], np.int64)
    _same(_compiled(em.gather_nd, [t, g]).numpy(), np.array([t[3, 1], t[0, 0]], t.dtype))
    _same(_compiled(em.boolean_mask, [t, np.array([True, False, False, True])]).numpy(),
          t[[0, 3]])


@pytest.mark.parametrize("mode", ["add", "sub", "max", "min"])
@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: np.dtype(d).name)
def test_accumulating_modes_in_every_numeric_dtype(dtype, mode):
    fn = getattr(em, f"tensor_scatter_nd_{mode}")
    combine = {"add": np.add, "sub": np.subtract, "max": np.maximum, "min": np.minimum}[mode]
    t, u = _values(dtype, (5,)), _values(dtype, (4,))
    i = np.array([[4], [0], [4], [4]], np.int64)
    want = t.copy()
    for row, v in zip(i[:, 0], u):
        want[row] = combine(want[row], v)
    _same(_eager(fn, [t, i, u]).numpy(), want)
    _same(_compiled(fn, [t, i, u]).numpy(), want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64,
                                   ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_segment_sum_and_unsorted_max_in_numeric_dtypes(dtype):
    data, ids = _values(dtype, (4, 2)), np.array([0, 1, 1, 3], np.int32)
    for fn in (em.math.segment_sum, lambda d, s: em.math.unsorted_segment_max(d, s, 4)):
        _same(_compiled(fn, [data, ids]).numpy(), _eager(fn, [data, ids]).numpy())


def test_bool_is_only_for_update():
    t = np.array([True, False])
    with pytest.raises(em.OpTypeError, match="mode 'add' needs numeric elements"):
        em.tensor_scatter_nd_add(t, [[0]], [True])


# -- errors: the same class and message eagerly and compiled -----------------------------

ERRORS = {
    "scatter_above": (em.tensor_scatter_nd_add, [F, np.array([[1], [4]], np.int32),
                                                 ROWS_UPD[:2]],
                      r"indices\[1, 0\] = 4 is out of range \[0, 4\) for dim 0 of the tensor"),
    "scatter_negative_column": (em.tensor_scatter_nd_update,
                                [F, np.array([[1, 2], [0, -1]], np.int64), ELEM_UPD[:2]],
                                r"indices\[1, 1\] = -1 is out of range \[0, 3\) for dim 1"),
    "scatter_nd_range": (lambda i, u: em.scatter_nd(i, u, [3]),
                   [np.array([[0], [3]], np.int32), np.array([1, 2], np.int32)],
                   r"indices\[1, 0\] = 3 is out of range \[0, 3\)"),
    "gather_nd": (em.gather_nd, [F, np.array([[1, 3]], np.int32)],
                  r"em.gather_nd: an index is out of range"),
    "gather_nd_negative": (em.gather_nd, [F, np.array([[-1]], np.int32)],
                           r"em.gather_nd: an index is out of range"),
    "unsorted_segment_above": (lambda d, s: em.math.unsorted_segment_sum(d, s, 3),
                               [F, np.array([0, 3, 1, 1], np.int32)],
                               "segment ids must be < num_segments"),
    "segment_not_sorted": (em.math.segment_sum, [F, np.array([0, 2, 1, 2], np.int32)],
                           "segment ids are not increasing"),
    "segment_negative": (em.math.segment_max, [F, np.array([-1, 0, 0, 1], np.int32)],
                         "segment ids must be >= 0"),
    "bincount_negative": (em.math.bincount, [np.array([1, -2], np.int32)],
                          "Input arr must be non-negative!"),
    "update_shape": (em.tensor_scatter_nd_update, [F, ROWS_IDX, ROWS_UPD[:2]],
                     r"updates of type tensor<2x3xf32> must have shape"),
}


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_the_same_eagerly_and_compiled(name, dynamic):
    fn, args, message = ERRORS[name]
    depth = {0} if name == "scatter_nd_range" else {1} if "scatter" in name or "gather" in \
        name or "update" in name else set()
    signature = _dynamic_signature(args, depth) if dynamic else None
    seen = []
    for run in (lambda: _eager(fn, args), lambda: _compiled(fn, args, signature)):
        with pytest.raises(em.errors.OpError, match=message) as info:
            run()
        seen.append((type(info.value), str(info.value).split(" (at ")[0]))
    assert seen[0] == seen[1]


# -- random programs: compiled against eager ---------------------------------------------

def _random_program(seed: int):
    """A seeded random use of one of the functions above on random shapes, dtypes and
    indices (duplicates likely, all in range): (function, arguments)."""
    rng = np.random.default_rng(seed)
    dtype = rng.choice([np.int32, np.int64, np.float32, np.float64, np.uint8])
    rows, width = int(rng.integers(0, 6)), int(rng.integers(1, 4))
    data = (rng.standard_normal((rows + 2, width)) * 5).astype(dtype)
    ids = np.sort(rng.integers(0, 4, rows + 2)).astype(rng.choice([np.int32, np.int64]))
    kind = seed % 6
    if kind == 0:
        mode = str(rng.choice(["update", "add", "sub", "max", "min"]))
        k = int(rng.integers(1, 3))
        index = np.stack([rng.integers(0, d, rows) for d in data.shape[:k]], -1)
        updates = (rng.standard_normal((rows,) + data.shape[k:]) * 5).astype(dtype)
        return getattr(em, f"tensor_scatter_nd_{mode}"), [data, index.astype(np.int32),
                                                          updates]
    if kind == 1:
        index = np.stack([rng.integers(0, d, (rows, 2)) for d in data.shape], -1)
        return em.gather_nd, [data, index.astype(np.int64)]
    if kind == 2:
        fn = getattr(em.math, f"segment_{rng.choice(['sum', 'mean', 'max', 'min', 'prod'])}")
        return fn, [data, ids]
    if kind == 3:
        name = str(rng.choice(["sum", "mean", "max", "min", "prod"]))
        num = int(rng.integers(4, 7))
        shuffled = rng.permutation(ids) - (rng.random(len(ids)) < 0.2)  # some dropped (< 0)
        return (lambda d, s: getattr(em.math, f"unsorted_segment_{name}")(d, s, num),
                [data, shuffled.astype(ids.dtype)])
    if kind == 4:
        minlength = int(rng.integers(0, 6))
        return (lambda a: em.math.bincount(a, minlength=minlength)), [
            np.abs(data.astype(np.int32))]
    return em.boolean_mask, [data, rng.random(data.shape[0]) < 0.5]


@pytest.mark.parametrize("seed", range(30))
def test_random_program_compiled_matches_eager(seed):
    fn, args = _random_program(seed)
    want = _eager(fn, args).numpy()
    dynamic = _dynamic_signature(args, {1} if seed % 6 in (0, 1) else set())
    for signature in (None, dynamic):
        got = np.asarray(_compiled(fn, args, signature))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=1e-6, equal_nan=True, err_msg=f"seed {seed}")


@pytest.mark.parametrize("call, error, message", [
    (lambda: em.gather_nd(F, [[0]], batch_dims=2), ValueError,
     "batch_dims=2 and index depth 1 do not fit params of rank 2 and indices of rank 2"),
    (lambda: em.gather_nd(F, np.array([[0.5]])), TypeError, "indices must be int32 or int64"),
    (lambda: em.boolean_mask(F, [True, False]), ValueError,
     r"mask shape \(2,\) does not match dims 0..0"),
    (lambda: em.boolean_mask(F, [1, 0, 1, 1]), TypeError, "mask must be bool"),
    (lambda: em.math.bincount([1, 2], weights=[1.0, 2.0, 3.0]), ValueError,
     r"weights of shape \(3,\) must have the shape of arr, \(2,\)"),
    (lambda: em.math.segment_sum(F, [[0, 0], [1, 1]]), ValueError,
     "segment_ids must be 1-D"),
    (lambda: em.math.unsorted_segment_sum(F, [0.0, 1.0, 1.0, 2.0], 3), TypeError,
     "segment_ids must be int32 or int64"),
    (lambda: em.tensor_scatter_nd_add(F, [[0]], [[1.0, 2.0]]), em.OpShapeError,
     r"must have shape indices.shape\[:-1\] \+ tensor.shape\[1:\] = \[1x3\]"),
])
def test_bad_arguments_say_what_is_wrong(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("value", [True, False, 0.0, 3])
def test_where_of_a_scalar_condition_is_one_row_or_none_of_no_coordinates(value):
    want = np.argwhere(value).shape  # (1, 0) where true, (0, 0) where false
    c = em.constant(value)
    assert em.where(c).shape == want
    assert em.function(lambda c: em.where(c))(c).shape == want
