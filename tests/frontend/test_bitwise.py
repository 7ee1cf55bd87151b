"""em.bitwise and the integer operators `& | ^ ~ << >>` (dialects/ember/elementwise/bitwise.py):
TensorFlow's results, eagerly and compiled, the shift amounts clamped to [0, bits - 1] as
TensorFlow's kernels clamp them; on bool tensors `& | ^ ~` stay the logical ops."""

import numpy as np
import pytest

import ember as em


@pytest.fixture(autouse=True)
def compiled_first_calls(monkeypatch):
    monkeypatch.setenv("EMBER_TIER0", "off")  # the first call compiles


X = np.array([1, -8, 7, -1], np.int32)
Y = np.array([40, 2, -1, 31], np.int32)
U = np.array([200, 3], np.uint8)
V = np.array([9, 1], np.uint8)

# What tf.bitwise and tf.Tensor's operators give for X, Y, U, V (TensorFlow 2.21).
EXPECTED = [
    [-2147483648, -32, 7, -2147483648],  # left_shift(X, Y): 40 -> 31, -1 -> 0
    [0, -2, 7, -1],                      # right_shift(X, Y): arithmetic
    [1, 1],                              # right_shift(U, V): 9 -> 7, logical
    [0, 6],                              # left_shift(U, V): wraps
    [1, 0, 3, 3], [3, -5, 7, -1], [2, -5, 4, -4],  # X & 3, X | 3, X ^ 3
    [-2, 7, -8, 0], [55, 252],           # ~X, ~U
    [2, -16, 14, -2], [0, -4, 3, -1],    # X << 1, X >> 1
    [1, 0, 5, 5],                        # 5 & X (reflected)
]


def program(x, y, u, v):
    b = em.bitwise
    return (b.left_shift(x, y), b.right_shift(x, y), b.right_shift(u, v), b.left_shift(u, v),
            x & 3, x | 3, x ^ 3, ~x, ~u, x << 1, x >> 1, 5 & x)


@pytest.mark.parametrize("mode", ["eager", "compiled", "dynamic"])
def test_bitwise_ops_give_tensorflows_results(mode):
    fn = {"eager": program, "compiled": em.function(program),
          "dynamic": em.function(program, input_signature=[
              em.TensorSpec([None], em.int32), em.TensorSpec([None], em.int32),
              em.TensorSpec([None], em.uint8), em.TensorSpec([None], em.uint8)])}[mode]
    got = fn(em.constant(X), em.constant(Y), em.constant(U), em.constant(V))
    assert [t.numpy().tolist() for t in got] == EXPECTED
    assert [t.dtype for t in got] == [em.int32, em.int32, em.uint8, em.uint8] + \
        [em.int32] * 3 + [em.int32, em.uint8] + [em.int32] * 3


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int64, np.uint8])
def test_every_integer_dtype_matches_pythons_ints(dtype):
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)
    s = rng.integers(-3, 8 * x.itemsize + 4, 64).astype(dtype) if info.min < 0 else \
        rng.integers(0, 8 * x.itemsize + 4, 64).astype(dtype)
    bits = 8 * x.itemsize

    def wrap(v):
        v %= 1 << bits
        return v - (1 << bits) if info.min < 0 and v > info.max else v
    amount = [min(max(int(a), 0), bits - 1) for a in s]
    want = ([wrap(int(a) << k) for a, k in zip(x, amount)],
            [int(a) >> k for a, k in zip(x, amount)],
            [wrap(~int(a)) for a in x])

    def fn(x, s):
        return em.bitwise.left_shift(x, s), em.bitwise.right_shift(x, s), em.bitwise.invert(x)
    for run in (fn, em.function(fn)):
        got = run(em.constant(x), em.constant(s))
        assert [t.numpy().tolist() for t in got] == list(want)


def test_bool_operators_stay_logical_and_variables_have_them():
    b = em.constant([True, False])
    assert (~b).numpy().tolist() == [False, True]
    assert (b ^ True).numpy().tolist() == [False, True]
    assert (True & b).numpy().tolist() == [True, False]
    v = em.Variable(np.array([6, 3], np.int64))
    assert (v & 5).numpy().tolist() == [4, 1]
    assert (v << 2).numpy().tolist() == [24, 12]
    assert (1 << v).numpy().tolist() == [64, 8]
    assert (~v).numpy().tolist() == [-7, -4]


def test_bits_of_floats_and_logic_of_ints_are_clear_errors():
    with pytest.raises(em.OpTypeError, match="must have integer"):
        em.constant([1.0]) & em.constant([2.0])
    with pytest.raises(em.OpTypeError, match=r"em.logical_xor. op takes bool tensors; got int32"):
        em.logical_xor(em.constant([1]), em.constant([0]))


def test_bitwise_ops_have_no_gradient():
    x = em.constant([3.0])
    with em.GradientTape() as tape:
        tape.watch(x)
        y = em.cast(em.bitwise.left_shift(em.cast(x, em.int32), 1), em.float32)
    assert tape.gradient(y, x) is None
