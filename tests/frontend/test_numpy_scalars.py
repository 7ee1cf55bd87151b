"""`.numpy()` of a 0-d tensor is a numpy scalar (`bytes` for a string), as TensorFlow's;
n-d values and the numpy protocol (`np.asarray(t)`) stay arrays."""

import collections
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember as em

SCALARS = [
    (em.float16, 1.5), (em.float32, 3.0), (em.float64, -2.25), (em.bfloat16, 0.5),
    (em.int8, -128), (em.int16, 300), (em.int32, 7), (em.int64, 2**40), (em.uint8, 255),
    (em.bool, True), (em.complex64, 1 + 2j), (em.complex128, -3j),
]


@pytest.mark.parametrize("dtype,value", SCALARS, ids=lambda v: getattr(v, "name", str(v)))
def test_numpy_of_scalar_is_numpy_scalar_of_its_dtype(dtype, value):
    got = em.constant(value, dtype=dtype).numpy()
    assert type(got) is dtype.np_dtype.type and not isinstance(got, np.ndarray)
    assert got == value


@pytest.mark.parametrize("text", ["abc", "", "é", "a\x00"])
def test_numpy_of_string_scalar_is_bytes(text):
    got = em.constant(text).numpy()
    assert type(got) is bytes and got == text.encode()
    assert got.decode() == text


def test_numpy_scalars_index_dicts_and_count():
    names = {0: "cat", 1: "dog"}
    assert names[em.constant(1).numpy()] == "dog"
    labels = [em.constant(y) for y in [1, 0, 1]]
    assert collections.Counter(y.numpy() for y in labels) == {1: 2, 0: 1}
    words = collections.Counter(w.numpy().decode() for w in em.constant(["a", "b", "a"]))
    assert words == {"a": 2, "b": 1}


def test_numpy_of_nd_tensor_is_unchanged_read_only_array():
    for value in ([1.0], [[1, 2]], ["a", "b"], np.zeros((0, 3))):
        got = em.constant(value).numpy()
        assert type(got) is np.ndarray and got.shape == np.shape(value)
        assert not got.flags.writeable
    assert em.constant([[True]]).numpy().shape == (1, 1)  # one element is not a scalar


@pytest.mark.parametrize("value", [3.0, 7, True, "abc"])
def test_numpy_protocol_of_scalar_is_0d_array(value):
    t = em.constant(value)
    for array in (np.asarray(t), np.array(t), t.__array__()):
        assert type(array) is np.ndarray and array.shape == () and array.dtype == \
            (object if isinstance(value, str) else t.dtype.np_dtype)
    assert np.asarray(t)[()] == t.numpy()


def test_variable_numpy_of_scalar_is_numpy_scalar():
    v = em.Variable(2.0)
    v.assign_add(1.0)
    assert type(v.numpy()) is np.float32 and v.numpy() == 3.0
    assert type(em.Variable(5, dtype=em.int64).numpy()) is np.int64
    assert type(em.Variable("x").numpy()) is bytes
    vector = em.Variable([1.0, 2.0]).numpy()
    assert type(vector) is np.ndarray and vector.tolist() == [1.0, 2.0]
    assert type(np.asarray(v)) is np.ndarray and np.asarray(v).shape == ()


def test_numpy_inside_py_function_follows_the_same_rule():
    seen = []

    def record(x, s):
        seen.append((x.numpy(), s.numpy()))
        return x.numpy() * 2, s.numpy().decode().upper()

    x, s = em.py_function(record, [em.constant(3.0), em.constant("ab")], [em.float32, em.string])
    assert seen == [(np.float32(3.0), b"ab")] and type(seen[0][0]) is np.float32
    assert x.numpy() == 6.0 and s.numpy() == b"AB"


def test_numpy_inside_py_function_in_em_function():
    seen = []

    @em.function
    def f(x):
        return em.py_function(lambda t: seen.append(t.numpy()) or t + 1, [x], em.int32) * 2

    assert f(em.constant(4)).numpy() == 10
    assert type(seen[0]) is np.int32 and seen[0] == 4


def test_numpy_of_compiled_results():
    @em.function
    def f(x):
        return em.reduce_sum(x), x * 2, em.reduce_all(x > 0)

    total, doubled, positive = f(em.constant([1.0, 2.0]))
    assert type(total.numpy()) is np.float32 and total.numpy() == 3.0
    assert type(positive.numpy()) is np.bool_ and positive.numpy()
    assert type(doubled.numpy()) is np.ndarray and doubled.numpy().tolist() == [2.0, 4.0]


def test_numpy_of_mirrored_variable_and_reduce_result():
    strategy = em.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        v = em.Variable(1.5)
    assert type(v.numpy()) is np.float32 and v.numpy() == 1.5
    total = strategy.reduce("SUM", strategy.run(lambda: em.constant(2)), axis=None)
    assert type(total.numpy()) is np.int32 and total.numpy() == 2


def test_numpy_of_mirrored_values_across_two_cpus():
    code = textwrap.dedent("""
        import numpy as np
        import ember as em
        cpu = em.config.list_physical_devices("CPU")[0]
        em.config.set_logical_device_configuration(
            cpu, [em.config.LogicalDeviceConfiguration()] * 2)
        strategy = em.distribute.MirroredStrategy()
        with strategy.scope():
            v = em.Variable(1.5)
        per_replica = strategy.run(lambda: v * 2)
        locals_ = [t.numpy() for t in strategy.experimental_local_results(per_replica)]
        total = strategy.reduce("SUM", per_replica, axis=None).numpy()
        print(repr(v.numpy()), locals_, repr(total), type(np.asarray(v)).__name__)
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["np.float32(1.5)", "[np.float32(3.0),", "np.float32(3.0)]",
                                   "np.float32(6.0)", "ndarray"]


def test_repr_of_scalar_shows_the_bare_value():
    assert repr(em.constant(3.0)) == "<ember.Tensor: shape=(), dtype=float32, numpy=3.0>"
    assert repr(em.constant("a")) == "<ember.Tensor: shape=(), dtype=string, numpy=b'a'>"
