"""em.random on Philox-4x32-10: known answers (Random123's KATs and TensorFlow's published
numbers), Generator state advancing eagerly and compiled alike, statistics, shapes, dtypes
and errors. Compiled runs use `set_fallback("error")`: no interpreter fallback."""

import contextlib
import math

import numpy as np
import pytest

import ember as em
from ember.dialects.ember import dtypes
from ember.dialects.ember.philox import PhiloxRandomOp, PhiloxUniformIntOp
from ember.frontend.dispatch import execute

# Random123 kat_vectors, philox4x32_10: (counter words, key words) -> output words
KATS = [
    ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
]


def state_of(counter, key) -> np.ndarray:
    words = [counter[0] | counter[1] << 32, counter[2] | counter[3] << 32, key[0] | key[1] << 32]
    return np.array([w - (1 << 64) if w >> 63 else w for w in words], np.int64)


def raw_bits(state, n):
    return execute(PhiloxRandomOp, [em.constant(state), em.constant([n], dtype=em.int64)],
                   {"distribution": "bits", "dtype": dtypes.int32})


@contextlib.contextmanager
def no_fallback():
    previous = em.config.get_fallback()
    em.config.set_fallback("error")
    try:
        yield
    finally:
        em.config.set_fallback(previous)


def compiled(fn, *args, **kwargs):
    with no_fallback():
        return em.function(fn, **kwargs)(*args)


# -- known answers ----------------------------------------------------------------------

@pytest.mark.parametrize("counter,key,want", KATS)
def test_philox_matches_random123_known_answers_eager_and_compiled(counter, key, want):
    state = state_of(counter, key)
    want = np.array(want, np.uint32).view(np.int32)
    np.testing.assert_array_equal(raw_bits(state, 4).numpy(), want)
    got = compiled(lambda s: raw_bits(s, 4), em.constant(state))
    np.testing.assert_array_equal(got.numpy(), want)


def test_counter_carries_into_the_high_word_eager_and_compiled():
    # block 1 after a low word of all ones is the counter (0, 0, 1, 0) with key 0
    state = state_of([0xFFFFFFFF, 0xFFFFFFFF, 0, 0], [0, 0])
    after = raw_bits(state_of([0, 0, 1, 0], [0, 0]), 4).numpy()
    np.testing.assert_array_equal(raw_bits(state, 8).numpy()[4:], after)
    got = compiled(lambda s: raw_bits(s, 8), em.constant(state))
    np.testing.assert_array_equal(got.numpy()[4:], after)


# Printed by TensorFlow on CPU: the docstring of tf.random.Generator, and the random-numbers
# guide's cell drawing from_seed(1).normal([]) twice from CPU replicas: equal bit for bit.
TF_CPU_FROM_SEED_1234_NORMAL = [[0.9356609, 1.0854305, -0.93788373],
                                [-0.5061547, 1.3169702, 0.7137579]]
TF_CPU_SEED_1_SCALARS = [0.43842274, 1.6272374]
# The rest of the guide ran on a GPU, whose sin/cos/log differ from glibc's in the last bits:
# within 2 ulp. (The GPU printed 0.43842277 for the first scalar above.)
TF_GPU_SPLIT = [2.536413, 0.33186463, -0.07144657, -0.79253083]
TF_GPU_STATELESS_NORMAL_1_2 = [[0.5441101, 0.20738031, 0.07356433],
                               [0.04643455, -1.30159, -0.95385665]]


def assert_ulps(got, want, ulps):
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    spacing = np.spacing(np.abs(want))
    assert np.all(np.abs(got - want) <= ulps * spacing), (got, want)


def test_generator_reproduces_tensorflow_numbers():
    g = em.random.Generator.from_seed(1234)
    np.testing.assert_array_equal(g.normal([2, 3]).numpy(),
                                  np.float32(TF_CPU_FROM_SEED_1234_NORMAL))
    g = em.random.Generator.from_seed(1)
    np.testing.assert_array_equal([g.normal([]).numpy(), g.normal([]).numpy()],
                                  np.float32(TF_CPU_SEED_1_SCALARS))
    g.reset_from_seed(1)
    np.testing.assert_array_equal(g.normal([]).numpy(), np.float32(TF_CPU_SEED_1_SCALARS[0]))
    news = g.split(3)
    assert_ulps([n.normal([]).numpy() for n in news] + [g.normal([]).numpy()], TF_GPU_SPLIT,
                ulps=2)


def test_generator_reproduces_tensorflow_numbers_compiled():
    g = em.random.Generator.from_seed(1234)
    with no_fallback():
        got = em.function(lambda: g.normal([2, 3]))()
    np.testing.assert_array_equal(got.numpy(), np.float32(TF_CPU_FROM_SEED_1234_NORMAL))


def test_stateless_normal_reproduces_tensorflow_numbers():
    got = em.random.stateless_normal([2, 3], seed=[1, 2])
    assert_ulps(got.numpy(), TF_GPU_STATELESS_NORMAL_1_2, ulps=2)


def test_generator_state_layout_and_advance_follow_tensorflow():
    g = em.random.Generator.from_seed(0)
    np.testing.assert_array_equal(g.state.numpy(), [0, 0, 0])
    g.normal([])
    np.testing.assert_array_equal(g.state.numpy(), [256, 0, 0])  # 256 per output
    g.uniform([2, 5])
    np.testing.assert_array_equal(g.state.numpy(), [256 * 11, 0, 0])
    big = em.random.Generator.from_seed(2**64 - 1 + (7 << 64) + (9 << 128))
    np.testing.assert_array_equal(big.state.numpy(), [-1, 7, 9])
    big.skip(1)  # the low word wraps and carries
    np.testing.assert_array_equal(big.state.numpy(), [255, 8, 9])
    np.testing.assert_array_equal(em.random.Generator.from_seed([5, 6]).state.numpy(),
                                  [0, 5, 6])  # short vectors pad on the left


def test_uniform_float32_takes_the_low_23_bits_of_each_word():
    state = state_of(*KATS[0][:2])
    g = em.random.Generator.from_state(state, alg="philox")
    words = np.array(KATS[0][2], np.uint32)
    want = ((words & 0x7FFFFF) | 0x3F800000).view(np.float32) - np.float32(1)
    np.testing.assert_array_equal(g.uniform([4]).numpy(), want)


# -- the Generator inside functions -----------------------------------------------------

@pytest.mark.parametrize("method,kwargs", [
    ("uniform", {}), ("uniform", {"minval": -3, "maxval": 9, "dtype": em.int64}),
    ("uniform", {"minval": 2.0, "maxval": 5.0, "dtype": em.float64}),
    ("normal", {}), ("truncated_normal", {"dtype": em.float16}),
    ("uniform_full_int", {"dtype": em.int32}),
])
def test_generator_eager_and_compiled_sequences_agree(method, kwargs):
    eager_gen = em.random.Generator.from_seed(99)
    compiled_gen = em.random.Generator.from_seed(99)

    def draw():
        return getattr(compiled_gen, method)([3, 5], **kwargs)
    with no_fallback():
        f = em.function(draw)
        outs = [f().numpy() for _ in range(3)]
    eager = [getattr(eager_gen, method)([3, 5], **kwargs).numpy() for _ in range(3)]
    assert not np.array_equal(outs[0], outs[1])  # each call advances the state
    for got, want in zip(outs, eager):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(compiled_gen.state.numpy(), eager_gen.state.numpy())


def test_generator_with_dynamic_shape_in_compiled_function():
    g, h = em.random.Generator.from_seed(5), em.random.Generator.from_seed(5)
    spec = [em.TensorSpec([None], em.float32)]
    with no_fallback():
        f = em.function(lambda x: x + g.normal(em.shape(x)), input_signature=spec)
        got = f(em.zeros([7])).numpy()
        empty = f(em.zeros([0])).numpy()
    np.testing.assert_array_equal(got, h.normal([7]).numpy())
    assert empty.shape == (0,)
    np.testing.assert_array_equal(g.state.numpy(), h.state.numpy())  # empty: no advance


def test_make_seeds_feeds_stateless_functions():
    g = em.random.Generator.from_seed(3)
    seeds = g.make_seeds(4)
    assert seeds.shape == [2, 4] and seeds.dtype == em.int64
    np.testing.assert_array_equal(seeds.numpy()[1], 0)
    a = em.random.stateless_uniform([5], seed=seeds[:, 0])
    b = em.random.stateless_uniform([5], seed=seeds[:, 1])
    assert not np.array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(g.state.numpy(), [3 + 4 * 256, 0, 0])


def test_non_deterministic_generators_differ():
    a = em.random.Generator.from_non_deterministic_state().uniform([8]).numpy()
    b = em.random.Generator.from_non_deterministic_state().uniform([8]).numpy()
    assert not np.array_equal(a, b)


def test_global_generator_and_op_seeds_repeat_after_set_seed():
    em.random.set_seed(42)
    first = [em.random.uniform([3]).numpy(), em.random.normal([2], seed=7).numpy(),
             em.random.normal([2], seed=7).numpy()]
    em.random.set_seed(42)
    again = [em.random.uniform([3]).numpy(), em.random.normal([2], seed=7).numpy(),
             em.random.normal([2], seed=7).numpy()]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[1], first[2])  # an op seed's sequence moves on
    assert em.random.get_global_generator() is em.random.get_global_generator()


def test_global_generator_inside_function_advances_per_call():
    em.random.set_seed(11)
    with no_fallback():
        f = em.function(lambda: em.random.uniform([4]))
        a, b = f().numpy(), f().numpy()
    em.random.set_seed(11)
    want = em.random.get_global_generator()
    np.testing.assert_array_equal(a, want.uniform([4]).numpy())
    np.testing.assert_array_equal(b, want.uniform([4]).numpy())


# -- stateless functions ----------------------------------------------------------------

STATELESS = [
    (em.random.stateless_uniform, {}),
    (em.random.stateless_uniform, {"minval": -4, "maxval": 4, "dtype": em.int32}),
    (em.random.stateless_uniform, {"minval": None, "maxval": None, "dtype": em.int64}),
    (em.random.stateless_normal, {"dtype": em.float64}),
    (em.random.stateless_truncated_normal, {"mean": 1.0, "stddev": 3.0}),
    (em.random.stateless_normal, {"dtype": em.bfloat16}),
]


@pytest.mark.parametrize("fn,kwargs", STATELESS)
@pytest.mark.parametrize("shape", [[2, 3], [0, 4], []])
def test_stateless_compiled_matches_eager(fn, kwargs, shape):
    seed = em.constant([7, -3], dtype=em.int32)
    want = fn(shape, seed=seed, **kwargs)
    got = compiled(lambda s: fn(shape, seed=s, **kwargs), seed)
    assert got.dtype == want.dtype and got.shape == want.shape == shape
    if want.dtype == em.float64 and fn is em.random.stateless_normal:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-15)  # libm's last bit
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(fn(shape, seed=[7, -3], **kwargs).numpy(), want.numpy())


def test_stateless_with_a_shape_known_only_at_run_time():
    spec = [em.TensorSpec([None, 3], em.float32)]
    with no_fallback():
        f = em.function(lambda x: em.random.stateless_uniform(em.shape(x), seed=[1, 2]),
                        input_signature=spec)
        got = f(em.zeros([5, 3]))
    np.testing.assert_array_equal(got.numpy(),
                                  em.random.stateless_uniform([5, 3], seed=[1, 2]).numpy())


def test_stateless_seeds_decide_the_numbers():
    a = em.random.stateless_uniform([6], seed=[1, 2]).numpy()
    assert not np.array_equal(a, em.random.stateless_uniform([6], seed=[2, 1]).numpy())
    # a longer shape extends the stream: groups of 4 do not depend on the size
    np.testing.assert_array_equal(
        em.random.stateless_uniform([10], seed=[1, 2]).numpy()[:6], a)
    np.testing.assert_array_equal(  # the old splitmix64 functions still work
        em.stateless_random_uniform([3], seed=[1, 2]).numpy(),
        em.stateless_random_uniform([3], seed=[1, 2]).numpy())


# -- statistics (loose: these are sanity bounds, not tests of randomness) ------------------

N = 100_000


@pytest.mark.parametrize("dtype", [em.float32, em.float64, em.float16, em.bfloat16])
def test_uniform_and_normal_statistics(dtype):
    u = em.random.stateless_uniform([N], seed=[1, 1], minval=-1, maxval=3, dtype=dtype)
    u = u.numpy().astype(np.float64)
    assert u.min() >= -1 and u.max() < 3 + 1e-9
    assert abs(u.mean() - 1) < 0.02 and abs(u.var() - 16 / 12) < 0.03
    z = em.random.stateless_normal([N], seed=[1, 1], mean=2, stddev=0.5, dtype=dtype)
    z = z.numpy().astype(np.float64)
    assert abs(z.mean() - 2) < 0.01 and abs(z.std() - 0.5) < 0.01


@pytest.mark.parametrize("dtype", [em.float32, em.float64, em.float16])
def test_truncated_normal_stays_within_two_stddev(dtype):
    t = em.random.Generator.from_seed(8).truncated_normal([N], mean=5.0, stddev=2.0,
                                                          dtype=dtype)
    t = t.numpy().astype(np.float64)
    assert np.all(np.abs(t - 5) <= 4)
    # the standard normal truncated to [-2, 2] has variance 1 - 4 phi(2) / (2 Phi(2) - 1)
    phi = math.exp(-2) / math.sqrt(2 * math.pi)
    var = 1 - 4 * phi / math.erf(2 / math.sqrt(2))
    assert abs(t.mean() - 5) < 0.02 and abs(t.var() / 4 - var) < 0.02


@pytest.mark.parametrize("dtype", [em.int32, em.int64])
def test_integer_uniform_covers_its_range_evenly(dtype):
    x = em.random.stateless_uniform([N], seed=[4, 4], minval=-3, maxval=7, dtype=dtype)
    assert x.dtype == dtype
    counts = np.bincount(x.numpy().astype(np.int64) + 3, minlength=10)
    assert counts.size == 10 and np.all(np.abs(counts - N / 10) < 5 * math.sqrt(N / 10))
    full = em.random.Generator.from_seed(1).uniform_full_int([N], dtype=dtype).numpy()
    assert full.min() < np.iinfo(full.dtype).min // 2 and full.max() > np.iinfo(full.dtype).max // 2


def test_categorical_frequencies_follow_the_logits():
    p = np.array([[0.1, 0.6, 0.3], [0.0, 0.0, 1.0]])
    logits = em.constant(np.log(np.maximum(p, 1e-30)), dtype=em.float32)
    s = em.random.stateless_categorical(logits, 20_000, seed=[1, 2])
    assert s.dtype == em.int64 and s.shape == [2, 20_000]
    freq = np.stack([np.bincount(r, minlength=3) / 20_000 for r in s.numpy()])
    np.testing.assert_allclose(freq, p, atol=0.015)
    got = compiled(lambda x: em.random.stateless_categorical(x, 50, seed=[1, 2]), logits)
    np.testing.assert_array_equal(got.numpy(),
                                  em.random.stateless_categorical(logits, 50, [1, 2]).numpy())
    g = em.random.categorical(logits, 7, dtype=em.int32, seed=3)
    assert g.dtype == em.int32 and g.shape == [2, 7] and np.all(g.numpy()[1] == 2)


def test_shuffle_permutes_the_first_dim():
    x = np.arange(40, dtype=np.int32).reshape(20, 2)
    s = em.random.shuffle(x, seed=5).numpy()
    assert sorted(map(tuple, s)) == sorted(map(tuple, x)) and not np.array_equal(s, x)
    a = em.random.experimental.stateless_shuffle(x, seed=[1, 2])
    got = compiled(lambda v: em.random.experimental.stateless_shuffle(v, seed=[1, 2]),
                   em.constant(x))
    np.testing.assert_array_equal(got.numpy(), a.numpy())
    assert em.random.shuffle(np.zeros((0, 3)), seed=1).shape == [0, 3]


# -- dropout ----------------------------------------------------------------------------

def test_dropout_scales_kept_values_and_drops_at_the_rate():
    x = np.ones((200, 500), np.float32)
    y = em.nn.dropout(x, 0.25, seed=3).numpy()
    kept = y != 0
    np.testing.assert_array_equal(y[kept], np.float32(1 / 0.75))
    assert abs(kept.mean() - 0.75) < 0.01
    col = em.nn.dropout(x, 0.5, noise_shape=[1, 500], seed=3).numpy()
    assert np.all(col == col[:1])  # one draw per column, broadcast over rows
    np.testing.assert_array_equal(em.nn.dropout(x, 0.0, seed=1).numpy(), x)


def test_stateless_dropout_compiled_matches_eager():
    x = em.constant(np.arange(24, dtype=np.float32).reshape(4, 6))
    want = em.nn.experimental.stateless_dropout(x, 0.5, seed=[3, 4])
    got = compiled(lambda v: em.nn.experimental.stateless_dropout(v, 0.5, seed=[3, 4]), x)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert set(np.unique(want.numpy() / np.maximum(x.numpy(), 1) / 2)) <= {0.0, 1.0}


# -- errors -----------------------------------------------------------------------------

def test_integer_uniform_needs_maxval():
    with pytest.raises(ValueError, match="minval and maxval must be both None .* pass maxval"):
        em.random.stateless_uniform([3], seed=[1, 2], dtype=em.int32)
    g = em.random.Generator.from_seed(1)
    with pytest.raises(ValueError, match="Generator.uniform: for integer dtype int64"):
        g.uniform([3], dtype=em.int64)
    np.testing.assert_array_equal(g.state.numpy(), [1, 0, 0])  # nothing drawn


def test_integer_uniform_needs_minval_below_maxval_eager_and_compiled():
    with pytest.raises(em.InvalidArgumentError, match="needs minval < maxval"):
        em.random.stateless_uniform([3], seed=[1, 2], minval=5, maxval=5, dtype=em.int32)
    with pytest.raises(em.InvalidArgumentError, match="needs minval < maxval"):
        compiled(lambda lo: em.random.stateless_uniform([3], seed=[1, 2], minval=lo,
                                                        maxval=2, dtype=em.int32),
                 em.constant(4))


@pytest.mark.parametrize("call,error,message", [
    (lambda: em.random.stateless_uniform([2], seed=[1, 2, 3]), ValueError,
     "seed must have shape \\[2\\]"),
    (lambda: em.random.stateless_normal([2], seed=[1.5, 2.0]), TypeError,
     "seed must be an int32 or int64 tensor"),
    (lambda: em.random.stateless_normal([2], seed=[1, 2], dtype=em.int32), TypeError,
     "dtype int32 is not supported"),
    (lambda: em.random.stateless_uniform([2], seed=[1, 2], dtype=em.int8, minval=0,
                                         maxval=3), TypeError, "dtype int8 is not supported"),
    (lambda: em.random.stateless_uniform([2, -1], seed=[1, 2]), ValueError,
     "shape \\[2, -1\\] has a negative dimension -1"),
    (lambda: em.random.stateless_uniform(em.constant([2, -1]), seed=[1, 2]), em.OpShapeError,
     "negative dimension -1"),
    (lambda: em.random.Generator.from_seed(1, alg="threefry"), ValueError,
     "Philox only"),
    (lambda: em.random.Generator(state=[1, 2]), ValueError, "has shape \\[3\\]"),
    (lambda: em.random.Generator.from_seed(np.zeros((2, 2), np.int64)), ValueError,
     "seed should have one dimension"),
    (lambda: em.random.categorical(em.zeros([3]), 2), ValueError,
     "logits must have shape \\[batch_size, num_classes\\]"),
    (lambda: em.random.shuffle(em.constant(1.0)), ValueError, "rank >= 1"),
    (lambda: em.nn.dropout(em.ones([3]), 1.0), ValueError, "range \\[0, 1\\), got 1.0"),
    (lambda: em.nn.dropout(em.ones([3], em.int32), 0.5), TypeError,
     "x must be floating-point"),
])
def test_bad_arguments_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_negative_run_time_dim_raises_compiled_as_eager():
    spec = [em.TensorSpec([2], em.int32)]
    with no_fallback():
        f = em.function(lambda s: em.random.stateless_normal(s, seed=[1, 2]),
                        input_signature=spec)
        with pytest.raises(em.OpShapeError, match="negative dimension -2"):
            f(em.constant([3, -2]))


def test_generators_made_inside_a_trace_are_made_eagerly():
    with no_fallback():
        f = em.function(lambda: em.random.normal([2], seed=424242))
        a, b = f().numpy(), f().numpy()
    assert not np.array_equal(a, b)


# -- seeded random programs: compiled against eager ----------------------------------------

DISTRIBUTIONS = ["bits", "uniform", "normal", "truncated_normal", "int"]


def _program(seed):
    """A random draw (distribution, dtype, shape, state near a carry) and arithmetic on it."""
    rng = np.random.default_rng(seed)
    dist = DISTRIBUTIONS[seed % len(DISTRIBUTIONS)]
    floats = [em.float16, em.bfloat16, em.float32, em.float64]
    dtype = [em.int32, em.int64][seed % 2] if dist in ("bits", "int") else \
        floats[rng.integers(4)]
    shape = [int(d) for d in rng.integers(0, 6, size=rng.integers(0, 4))]
    low = int(rng.integers(-2**63, 2**63 - 1, dtype=np.int64)) if seed % 3 else -3
    state = np.array([low, rng.integers(-9, 9), rng.integers(-2**63, 2**63 - 1,
                                                             dtype=np.int64)], np.int64)
    bounds = sorted(int(v) for v in rng.integers(-1000, 1000, size=2))
    bounds[1] += 1

    def run(state_tensor):
        n = em.constant(shape, dtype=em.int64) if shape else em.zeros([0], em.int64)
        if dist == "int":
            x = execute(PhiloxUniformIntOp, [state_tensor, n, em.constant(bounds[0], dtype),
                                             em.constant(bounds[1], dtype)])
        else:
            x = execute(PhiloxRandomOp, [state_tensor, n], {"distribution": dist,
                                                            "dtype": dtypes.as_dtype(dtype)})
        return x, em.reduce_max(x) if shape and 0 not in shape else x
    return state, run, dtype, dist


@pytest.mark.parametrize("seed", range(20))
def test_random_philox_programs_compiled_match_eager(seed):
    state, run, dtype, dist = _program(seed)
    want = run(em.constant(state))
    got = compiled(run, em.constant(state))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if dtype == em.float64 and "normal" in dist:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-15)  # libm's last bit
        else:
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_generator_constructors_and_state_accessors():
    g = em.random.Generator.from_key_counter(key=[9], counter=[4, 5], alg="philox")
    np.testing.assert_array_equal(g.state.numpy(), [4, 5, 9])
    assert g.key.numpy() == 9 and g.algorithm == em.random.Algorithm.PHILOX.value
    copy = em.random.Generator(copy_from=g)
    np.testing.assert_array_equal(copy.uniform([3]).numpy(), g.uniform([3]).numpy())
    g.reset([1, 2, 3])
    np.testing.assert_array_equal(g.state.numpy(), [1, 2, 3])
    g.reset_from_key_counter([7], [0, 1])
    np.testing.assert_array_equal(g.state.numpy(), [0, 1, 7])
    with pytest.raises(TypeError, match="needs a Generator"):
        em.random.set_global_generator(3)
