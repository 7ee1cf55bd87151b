"""em.keras.utils.to_categorical, as keras.utils.to_categorical."""

import numpy as np
import pytest

import ember as em

to_categorical = em.keras.utils.to_categorical


def test_ids_become_one_hot_rows():
    np.testing.assert_array_equal(to_categorical([0, 2, 1]),
                                  np.eye(3, dtype=np.float32)[[0, 2, 1]])
    assert to_categorical([0, 2, 1]).dtype == np.float32
    assert to_categorical(np.array([[1], [0]]), 4).shape == (2, 4)  # a trailing 1 dropped
    assert to_categorical(np.array([[1, 0]]), 2).shape == (1, 2, 2)
    assert to_categorical([1.0, 0.0], dtype="int32").dtype == np.int32
    model = em.keras.Sequential([em.keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="categorical_crossentropy")
    x = np.random.default_rng(0).standard_normal((6, 2)).astype(np.float32)
    model.fit(x, to_categorical([0, 1, 2, 0, 1, 2]), epochs=1, verbose=0)


@pytest.mark.parametrize("y, n, match", [([3], 2, r"in \[0, 2\)"), ([-1], 2, r"in \[0, 2\)"),
                                         ([0.5], None, "integer class ids")])
def test_ids_out_of_range_or_not_integers_are_refused(y, n, match):
    with pytest.raises(ValueError, match=match):
        to_categorical(y, n)
