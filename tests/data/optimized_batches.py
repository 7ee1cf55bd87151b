"""What the tests of em.data's optimisations share: the same pipeline with the optimisations
off, and the check that both give the same batches bit for bit."""

import numpy as np

import ember as em
from ember.runtime.data import structure


def unoptimized(ds):
    options = em.data.Options()
    options.experimental_optimization.map_vectorization = False
    options.experimental_optimization.source_batching = False
    return ds.with_options(options)


def flat(ds):
    """Each batch's layout and leaves (dtype, value)."""
    return [(structure.map_structure(lambda _: "*", element),
             [(t.dtype, np.array(t.numpy())) for t in structure.flatten(element)])
            for element in ds]


def assert_same_batches(ds):
    """`ds` gives exactly the batches of its unoptimised pipeline: layouts, dtypes, shapes
    and values bit for bit (not merely close)."""
    fast, slow = flat(ds), flat(unoptimized(ds))
    assert len(fast) == len(slow)
    for (layout, got), (want_layout, want) in zip(fast, slow):
        assert layout == want_layout and len(got) == len(want)
        for (dtype, array), (want_dtype, want_array) in zip(got, want):
            assert dtype == want_dtype
            assert array.dtype == want_array.dtype and array.shape == want_array.shape
            np.testing.assert_array_equal(array, want_array)
