"""`Dataset.map` traced and compiled as tf.data's (Python runs once, at `map`), with
`num_parallel_calls` on a thread pool keeping the input's order."""

import gc
import threading
import time

import numpy as np
import pytest

import ember as em

Dataset = em.data.Dataset


def values(ds):
    return [np.asarray(x).tolist() for x in ds.as_numpy_iterator()]


def test_map_traces_once_and_agrees_with_numpy():
    traces = []

    def f(x):
        traces.append(x.shape)
        return em.tanh(x * 0.5) + em.reduce_sum(x)

    data = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    ds = Dataset.from_tensor_slices(data).batch(3).map(f)
    assert traces == [em.TensorShape([None, 3])]  # traced at map(), with the spec
    got = list(ds.as_numpy_iterator())
    assert len(traces) == 1  # not per element
    for batch, out in zip((data[:3], data[3:]), got):
        np.testing.assert_allclose(out, np.tanh(batch * 0.5) + batch.sum(), rtol=1e-6)
    assert ds.element_spec == em.TensorSpec([None, 3], em.float32)


def test_map_structures_and_constants():
    ds = Dataset.from_tensor_slices({"a": [1, 2], "b": [[1.0], [2.0]]})
    mapped = ds.map(lambda e: ({"sum": e["b"] * 2.0}, e["a"], 7))
    assert mapped.element_spec == ({"sum": em.TensorSpec([1], em.float32)},
                                   em.TensorSpec([], em.int32), em.TensorSpec([], em.int32))
    assert [(d["sum"].tolist(), int(a), int(c)) for d, a, c in mapped.as_numpy_iterator()] \
        == [([2.0], 1, 7), ([4.0], 2, 7)]
    as_list = Dataset.range(2).map(lambda x: [x, x + 1])
    assert values(as_list) == [[0, 1], [1, 2]]


def test_parallel_map_keeps_order_and_uses_threads():
    threads = set()

    def slow(v):
        threads.add(threading.current_thread().name)
        time.sleep(0.001 * (int(v.numpy()) % 3))  # later elements may finish first
        return v * 10

    def f(x):
        return em.py_function(slow, [x], em.int64)

    ds = Dataset.range(80).map(f, num_parallel_calls=3)  # 5 runs of 16 elements
    assert values(ds) == [10 * i for i in range(80)]
    assert len({t for t in threads if t.startswith("ember-data-map")}) > 1
    assert values(Dataset.range(5).map(lambda x: x * 2, num_parallel_calls=em.data.AUTOTUNE,
                                       deterministic=False)) == [0, 2, 4, 6, 8]


def test_parallel_map_passes_errors_on():
    def bad(v):
        if int(v.numpy()) == 4:
            raise ValueError("bad element 4")
        return v

    ds = Dataset.range(8).map(lambda x: em.py_function(bad, [x], em.int64),
                              num_parallel_calls=2)
    it = iter(ds)
    assert [int(next(it).numpy()) for _ in range(4)] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="bad element 4"):
        next(it)


def test_map_over_text_lines_parses_with_py_function(tmp_path):
    path = tmp_path / "numbers.txt"
    path.write_text("1.5\n2.5\n")

    def parse(line):
        return em.py_function(lambda s: float(s.numpy()), [line], em.float32)

    ds = em.data.TextLineDataset(str(path)).map(parse)
    assert values(ds) == [1.5, 2.5]


def test_map_errors_at_map_time():
    with pytest.raises(TypeError, match="map_func must be callable"):
        Dataset.range(3).map("f")
    with pytest.raises(ValueError, match="num_parallel_calls must be positive"):
        Dataset.range(3).map(lambda x: x, num_parallel_calls=-3)
    with pytest.raises(TypeError, match="Dataset.map: <lambda> returned: NoneType"):
        Dataset.range(3).map(lambda x: None)
    with pytest.raises(em.errors.OpShapeError) as info:
        Dataset.from_tensor_slices(([[1, 2]], [[1, 2, 3]])).map(lambda a, b: a + b)
    assert "while tracing <lambda>" in "".join(info.value.__notes__)


def test_parallel_workers_end_with_the_iterator():
    def workers():
        return [t for t in threading.enumerate()
                if t.name.startswith(("ember-data-map", "ember-data-prefetch"))]

    before = set(workers())  # (another test's, ending whenever its iterator is collected)
    it = iter(Dataset.range(40).map(lambda x: x + 1, num_parallel_calls=3))
    assert int(next(it).numpy()) == 1
    interleaved = iter(Dataset.range(4).interleave(lambda x: Dataset.range(1000),
                                                   cycle_length=2, num_parallel_calls=2))
    assert int(next(interleaved).numpy()) == 0
    assert set(workers()) - before
    del it, interleaved
    gc.collect()
    deadline = time.monotonic() + 5
    while set(workers()) - before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not set(workers()) - before


def test_new_datasets_loop_inside_em_function(tmp_path):
    @em.function
    def total(ds):
        s = em.constant(0, dtype=em.int64)
        for x in ds:
            s += em.reduce_sum(x)
        return s

    interleaved = Dataset.range(1, 5).interleave(lambda x: Dataset.range(x), cycle_length=2)
    assert int(total(interleaved.batch(3))) == 10
    assert int(total(Dataset.zip(Dataset.range(3), Dataset.range(3)).map(
        lambda a, b: a * b))) == 5
    path = str(tmp_path / "n.rec")
    with em.data.RecordWriter(path) as writer:
        for n in (4, 5):
            writer.write(str(n))
    parsed = em.data.RecordDataset(path).map(
        lambda s: em.py_function(lambda t: int(t.numpy()), [s], em.int64))
    assert int(total(parsed.shard(2, 1))) == 5
