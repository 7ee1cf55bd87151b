"""Map vectorisation (runtime/data/optimize.py): `map(f).batch(n)` as one compiled call of f
per batch when f's traced IR is elementwise, with exactly the unoptimised batches and errors;
the per-element path for everything else."""

import numpy as np
import pytest

import ember as em
from optimized_batches import assert_same_batches, flat, unoptimized

Dataset = em.data.Dataset


def vectorized(ds):
    return any(line.startswith("map_vectorization:") for line in ds._optimizations())


def source(n=11):
    rng = np.random.default_rng(n)
    return Dataset.from_tensor_slices((
        (rng.standard_normal((n, 3, 4)) * 3).astype(np.float32),
        rng.integers(-9, 9, n).astype(np.int32)))


SCALE = em.constant(np.linspace(-1, 1, 4, dtype=np.float32))

ELEMENTWISE = {
    "normalise": lambda x, y: (x / 255.0 * 2.0 - 1.0, y),
    "math": lambda x, y: (em.tanh(x) + em.exp(x * 0.1) * em.sigmoid(x), em.abs(y) + 1,
                          em.where(x > 0.5, em.sqrt(em.abs(x)), em.square(x) - 1.0),
                          em.minimum(em.maximum(x, -1.0), 1.0) * SCALE,
                          em.logical_and(x > 0.0, x < 2.0)),
    "casts": lambda x, y: {"i": em.cast(x * 10.0, em.int32), "f": em.cast(y, em.float64) / 3,
                           "promoted": (y // 2, y / 4, y * 3, x ** 2)},
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_data_elementwise_maps_vectorize_with_equal_batches(name):
    ds = source().map(ELEMENTWISE[name])
    for size, drop in ((4, False), (4, True), (1, False), (20, False)):
        batched = ds.batch(size, drop_remainder=drop)
        assert vectorized(batched), batched._optimizations()
        assert_same_batches(batched)


def test_data_generic_sources_and_map_chains_vectorize():
    gen = Dataset.from_generator(lambda: iter(np.arange(10, dtype=np.float32)),
                                 output_signature=em.TensorSpec([], em.float32))
    ds = gen.map(lambda x: x * 2.0).map(lambda x: x - 1.0).batch(3)
    assert [line.split(":")[0] for line in ds._optimizations()] == ["map_vectorization"] * 2
    assert_same_batches(ds)
    assert_same_batches(source().map(lambda x, y: (x + 1.0, y)).batch(3).prefetch(2))
    assert_same_batches(source().shard(2, 1).map(lambda x, y: -x).batch(2).repeat(2))


def captured_variable():
    v = em.Variable(2.0)
    return lambda x, y: x * v


REFUSED = {
    "reduce": (lambda x, y: x - em.reduce_sum(x), "ember.reduce_sum is not elementwise"),
    "reshape": (lambda x, y: em.reshape(x, [12]), "is not elementwise"),
    "random": (lambda x, y: x + em.random.uniform([3, 4]), "captures"),
    "py_function": (lambda x, y: em.py_function(lambda a: a * 2, [y], em.int32),
                    "calls Python"),
    "variable": (captured_variable(), "captures tensors or variables"),
    "constant_output": (lambda x, y: (x, 7), "does not depend on the element"),
    "component_broadcast": (lambda x, y: x + em.cast(y, em.float32), "is broadcast"),
    "shape_branch": (lambda x, y: x * 2.0 if x.shape.rank == 2 else x * 3.0,
                     "depends on the shape"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_data_non_elementwise_maps_keep_the_per_element_path(name):
    fn, reason = REFUSED[name]
    ds = source().map(fn).batch(4)
    lines = ds._optimizations()
    assert any(line.startswith("map_vectorization refused") and reason in line
               for line in lines), lines
    if name != "random":
        assert_same_batches(ds)
    else:
        assert [b.shape for b in ds.as_numpy_iterator()] == [(4, 3, 4)] * 2 + [(3, 3, 4)]


def test_data_unknown_shapes_and_strings_are_refused():
    gen = Dataset.from_generator(lambda: iter([np.ones(2, np.float32)]),
                                 output_signature=em.TensorSpec([None], em.float32))
    assert "not fully known" in gen.map(lambda x: x + 1.0).batch(2)._optimizations()[0]
    words = Dataset.from_tensor_slices(np.array([b"a", b"b"], dtype=object))
    assert "strings" in words.map(lambda s: s).batch(2)._optimizations()[0]


def test_data_source_error_surfaces_in_the_same_batch():
    def gen():
        yield from (np.float32(1.0), np.float32(2.0), "three", np.float32(4.0))

    ds = Dataset.from_generator(gen, output_signature=em.TensorSpec([], em.float32))
    for pipeline in (ds.map(lambda x: x * 2.0).batch(2), unoptimized(
            ds.map(lambda x: x * 2.0).batch(2))):
        it = iter(pipeline)
        np.testing.assert_array_equal(next(it).numpy(), [2.0, 4.0])
        with pytest.raises(em.errors.InvalidArgumentError, match=r"element 2"):
            next(it)


def test_data_failed_batched_call_falls_back_to_the_precise_element_error():
    ds = Dataset.range(10).map(lambda x: x * 3)
    batched = ds.batch(4)
    assert vectorized(batched)

    def batched_call(_):
        raise em.errors.InvalidArgumentError("Mul", "the whole batch failed")

    per_element = ds._call

    def element_call(element):
        if int(element.numpy()) == 6:
            raise em.errors.InvalidArgumentError("Mul", "element 6 failed")
        return per_element(element)

    ds._vectorized().call = batched_call
    assert [b.tolist() for b in batched.as_numpy_iterator()] == [
        [0, 3, 6, 9], [12, 15, 18, 21], [24, 27]]  # each batch mapped element by element
    ds._call = element_call
    it = iter(batched)
    assert next(it).numpy().tolist() == [0, 3, 6, 9]
    with pytest.raises(em.errors.InvalidArgumentError, match="element 6 failed"):
        next(it)


def test_data_option_off_skips_the_second_trace_even_behind_prefetch():
    traces = []

    def f(x):
        traces.append(x.shape.rank)
        return x + 1

    ds = Dataset.range(6).map(f).batch(4).prefetch(1)
    off = em.data.Options()
    off.experimental_optimization.map_vectorization = False
    assert [b.tolist() for b in ds.with_options(off).as_numpy_iterator()] == [
        [1, 2, 3, 4], [5, 6]]
    assert traces == [0]  # at map(): the element trace only
    assert [b.tolist() for b in ds.as_numpy_iterator()] == [[1, 2, 3, 4], [5, 6]]
    assert traces == [0, 1]  # and once over batches, on the first optimised pass
    list(ds)
    assert traces == [0, 1]


def assert_close(got, want):
    assert len(got) == len(want)
    for (layout, leaves), (want_layout, want_leaves) in zip(got, want):
        assert layout == want_layout
        for (dtype, a), (want_dtype, b) in zip(leaves, want_leaves):
            assert dtype == want_dtype
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_data_per_element_calls_agree_on_every_path():
    # the direct compiled entry (fastcall.py), em.function's general call (a recording tape,
    # functions run eagerly) and elements of unknown shape all give the same values
    ds = source(6).map(lambda x, y: (x - em.reduce_mean(x), y * 2)).batch(4)  # per element
    want = flat(ds)
    with em.GradientTape():
        assert_close(flat(ds), want)
    em.config.run_functions_eagerly(True)
    try:
        assert_close(flat(ds), want)
    finally:
        em.config.run_functions_eagerly(False)
    gen = Dataset.from_generator(lambda: iter([np.ones(n, np.float32) for n in (1, 3, 2)]),
                                 output_signature=em.TensorSpec([None], em.float32))
    assert [v.tolist() for v in gen.map(lambda x: x * 2.0).as_numpy_iterator()] == [
        [2.0], [2.0, 2.0, 2.0], [2.0, 2.0]]


def test_data_parallel_vectorized_batches_keep_order_and_errors():
    def gen():
        yield from [np.float32(i) for i in range(9)]
        yield "bad"

    ds = Dataset.from_generator(gen, output_signature=em.TensorSpec([], em.float32))
    mapped = ds.map(lambda x: x * 2.0, num_parallel_calls=3).batch(2)
    assert vectorized(mapped)
    it = iter(mapped)
    assert [next(it).numpy().tolist() for _ in range(4)] == [
        [0.0, 2.0], [4.0, 6.0], [8.0, 10.0], [12.0, 14.0]]
    with pytest.raises(em.errors.InvalidArgumentError, match="element 9"):
        next(it)
    assert_same_batches(source(23).map(lambda x, y: (x * x, -y),
                                       num_parallel_calls=em.data.AUTOTUNE).batch(4))


def test_data_vectorized_pipeline_iterates_inside_a_function():
    ds = Dataset.from_tensor_slices(np.arange(10, dtype=np.float32)).map(lambda x: x * 2.0)

    @em.function
    def total(dataset):
        s = em.constant(0.0)
        for batch in dataset:
            s += em.reduce_sum(batch)
        return s

    assert vectorized(ds.batch(3))
    assert float(total(ds.batch(3))) == 90.0
