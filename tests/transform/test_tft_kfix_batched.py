"""emt.analyze on an already-batched dataset (the clear error, and batch_size=None), and
tf.Transform's `epsilon=` of emt.quantiles / emt.bucketize (kfix)."""

import numpy as np
import pytest

import ember as em
import ember.transform as emt

X = np.array([1.0, 2.0, 3.0, 4.0, 10.0, 7.0, 5.0], np.float32)


def _fn(inputs):
    x = inputs["x"]
    return {"q": emt.quantiles(x, 4, epsilon=0.01) + 0.0 * x[:, None],
            "b": emt.bucketize(x, 4, epsilon=0.25),
            "b_pos": emt.bucketize(x, 4, 0.25, name="pos")}


def test_a_batched_dataset_is_refused_with_the_way_out(tmp_path):
    ds = em.data.Dataset.from_tensor_slices({"x": X}).batch(2)
    with pytest.raises(emt.TransformError, match=r"looks batched .*\['x'\].*one instance per "
                                                 r"element.*batch_size=None"):
        emt.analyze(_fn, ds, tmp_path / "a")


def test_epsilon_is_accepted_and_quantiles_stay_exact(tmp_path):
    unbatched = em.data.Dataset.from_tensor_slices({"x": X})
    out = emt.analyze(_fn, unbatched, tmp_path / "u")
    again = emt.analyze(_fn, unbatched.batch(3), tmp_path / "b", batch_size=None)
    layer, layer2 = out.transform_features_layer(), again.transform_features_layer()
    got, got2 = layer({"x": em.constant(X)}), layer2({"x": em.constant(X)})
    for key in ("q", "b", "b_pos"):
        np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(got2[key]))
    want = np.searchsorted(np.asarray(got["q"])[0], X, side="right")
    np.testing.assert_array_equal(np.asarray(got["b"]), want)
    np.testing.assert_array_equal(np.asarray(got["b_pos"]), want)


def test_a_bad_epsilon_says_so(tmp_path):
    ds = em.data.Dataset.from_tensor_slices({"x": X})
    with pytest.raises(emt.TransformError, match=r"emt.bucketize: epsilon must be None or a "
                                                 r"float in \[0, 1\), got 2"):
        emt.analyze(lambda f: {"b": emt.bucketize(f["x"], 3, epsilon=2)}, ds, tmp_path / "e")
