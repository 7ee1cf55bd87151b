"""Fixes from a new-user trial of em.keras: input rank checks, nested inputs, summary on an
unbuilt model, names and callbacks users reach for (kfix)."""

import numpy as np
import pytest

import ember as em


def _data(n=10):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, 5)).astype(np.float32), (np.arange(n) % 2).astype(np.int32)


def _model():
    em.random.set_seed(0)
    m = em.keras.Sequential([em.keras.layers.Dense(2)])
    m.compile(optimizer="adam",
              loss=em.losses.SparseCategoricalCrossentropy(from_logits=True))
    return m


def test_unbatched_dataset_on_a_built_model_is_rejected_like_keras():
    x, y = _data()
    m = _model()
    m.build((None, 5))
    with pytest.raises(ValueError, match=r'layer "dense.*expected min_ndim=2, found ndim=1'
                                         r'.*batch the dataset'):
        m.fit(em.data.Dataset.from_tensor_slices((x, y)), epochs=1, verbose=0)


def test_batched_then_unbatched_dataset_gives_a_clear_error():
    x, y = _data()
    m = _model()
    m.fit(em.data.Dataset.from_tensor_slices((x, y)).batch(4), epochs=1, verbose=0)
    with pytest.raises(ValueError, match=r"(min_ndim=2, found ndim=1|unknown rank).*batch"):
        m.fit(em.data.Dataset.from_tensor_slices((x, y)), epochs=1, verbose=0)


def test_dense_called_on_a_vector_names_the_layer():
    layer = em.keras.layers.Dense(3, name="d0")
    with pytest.raises(ValueError, match=r'"d0".*min_ndim=2, found ndim=1'):
        layer(em.ones([4]))
