"""em.transform's analyzers and mappers against numpy: mean, var, min, max (whole tensor and
per element), quantiles and bucketize, vocabularies (tf.Transform's order, top_k,
frequency_threshold, OOV buckets), analyzers over other analyzers' results (a second pass),
and what working_dir holds."""

import os

import numpy as np
import pytest

import ember as em
import ember.transform as emt

RNG = np.random.default_rng(0)
X = RNG.normal(5.0, 3.0, size=37).astype(np.float32)
N = RNG.integers(-50, 50, size=37).astype(np.int32)
M = RNG.uniform(-1, 1, size=(37, 3)).astype(np.float32)
TOKENS = [b"b", b"a", b"c", b"a", b"d", b"b", b"a", b"e", b"c", b"b", b"", b"x\ny"] * 3 + [b"z"]


def _dataset():
    return em.data.Dataset.from_tensor_slices(
        {"x": X, "n": N, "m": M, "s": np.array(TOKENS, dtype=object)})


def statistics_fn(inputs):
    x, n, m = inputs["x"], inputs["n"], inputs["m"]
    return {"mean": emt.mean(x), "var": emt.var(x), "min": emt.min(x), "max": emt.max(x),
            "n_mean": emt.mean(n), "n_var": emt.var(n), "n_min": emt.min(n),
            "n_max": emt.max(n),
            "m_mean": emt.mean(m, reduce_instance_dims=False),
            "m_var": emt.var(m, reduce_instance_dims=False),
            "m_min": emt.min(m, reduce_instance_dims=False),
            "m_max": emt.max(m, reduce_instance_dims=False),
            "q": emt.quantiles(x, 5)}


@pytest.fixture(scope="module")
def stats(tmp_path_factory):
    out = emt.analyze(statistics_fn, _dataset(), tmp_path_factory.mktemp("stats"),
                      batch_size=5)  # 37 = 7 batches of 5 and one of 2
    result = out.transform_features_layer()({"x": X, "n": N, "m": M})
    return {k: v.numpy() for k, v in result.items()}


def test_mean_var_min_max_of_floats_match_numpy(stats):
    x = X.astype(np.float64)
    np.testing.assert_allclose(stats["mean"], x.mean(), rtol=1e-6)
    np.testing.assert_allclose(stats["var"], x.var(), rtol=1e-5)  # biased, as tft.var
    assert stats["min"] == X.min() and stats["max"] == X.max()
    assert stats["mean"].dtype == np.float32 and stats["min"].dtype == np.float32


def test_integers_give_float32_moments_and_integer_extremes(stats):
    n = N.astype(np.float64)
    np.testing.assert_allclose(stats["n_mean"], n.mean(), rtol=1e-6)
    np.testing.assert_allclose(stats["n_var"], n.var(), rtol=1e-5)
    assert stats["n_mean"].dtype == np.float32
    assert (stats["n_min"], stats["n_max"]) == (N.min(), N.max())
    assert stats["n_min"].dtype == np.int32


def test_reduce_instance_dims_false_reduces_over_the_batch_only(stats):
    np.testing.assert_allclose(stats["m_mean"], M.astype(np.float64).mean(0), rtol=1e-5,
                               atol=1e-7)
    np.testing.assert_allclose(stats["m_var"], M.astype(np.float64).var(0), rtol=1e-5)
    np.testing.assert_array_equal(stats["m_min"], M.min(0))
    np.testing.assert_array_equal(stats["m_max"], M.max(0))


def test_quantiles_are_numpys_exact_quantiles(stats):
    expected = np.quantile(X, [0.2, 0.4, 0.6, 0.8], method="inverted_cdf")
    np.testing.assert_array_equal(stats["q"], expected.reshape(1, 4).astype(np.float32))


def mapped_fn(inputs):
    x, s = inputs["x"], inputs["s"]
    return {"z": emt.scale_to_z_score(x), "u": emt.scale_to_0_1(x),
            "b": emt.bucketize(x, 4),
            "id": emt.compute_and_apply_vocabulary(s, vocab_filename="tokens"),
            "top2": emt.compute_and_apply_vocabulary(s, top_k=2, default_value=-7),
            "oov": emt.compute_and_apply_vocabulary(s, frequency_threshold=4,
                                                    num_oov_buckets=3),
            "ints": emt.compute_and_apply_vocabulary(inputs["n"] % 3)}


@pytest.fixture(scope="module")
def mapped(tmp_path_factory):
    return emt.analyze(mapped_fn, _dataset(), tmp_path_factory.mktemp("mapped"),
                       batch_size=8)


def _apply(out, s=TOKENS, x=X, n=N):
    result = out.transform_features_layer()(
        {"x": em.constant(x), "s": em.constant(np.array(s, dtype=object)),
         "n": em.constant(n)})
    return {k: v.numpy() for k, v in result.items()}


def test_scalers_and_buckets_match_numpy(mapped):
    r = _apply(mapped)
    x = X.astype(np.float64)
    np.testing.assert_allclose(r["z"], (x - x.mean()) / x.std(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r["u"], (x - x.min()) / (x.max() - x.min()), rtol=1e-5,
                               atol=1e-6)
    bounds = np.quantile(X, [0.25, 0.5, 0.75], method="inverted_cdf")
    np.testing.assert_array_equal(r["b"], np.searchsorted(bounds, X, side="right"))
    assert r["b"].dtype == np.int64 and np.bincount(r["b"]).tolist() == [9, 9, 9, 10]


def test_the_vocabulary_is_ordered_by_frequency_then_reverse_lexicographically(mapped):
    # counts: a 9, b 9, c 6, d 3, e 3, z 1; "" and "x\ny" cannot be lines of the file
    assert mapped.vocabulary_by_name("tokens") == [b"b", b"a", b"c", b"e", b"d", b"z"]
    with open(mapped.vocabulary_file_by_name("tokens"), "rb") as f:
        assert f.read() == b"b\na\nc\ne\nd\nz\n"
    r = _apply(mapped)
    vocab = [b"b", b"a", b"c", b"e", b"d", b"z"]
    assert r["id"].tolist() == [vocab.index(t) if t in vocab else -1 for t in TOKENS]
    assert mapped.num_buckets_for_transformed_feature("id") == 6


def test_top_k_keeps_the_most_frequent_and_maps_the_rest_to_default_value(mapped):
    top2 = "vocab_compute_and_apply_vocabulary_1_vocabulary"  # the second call's scope
    assert mapped.vocabulary_by_name(top2) == [b"b", b"a"]
    r = _apply(mapped, s=[b"a", b"b", b"c", b"never"])
    assert r["top2"].tolist() == [1, 0, -7, -7]


def test_oov_buckets_follow_the_vocabulary_and_are_stable(mapped):
    assert mapped.vocabulary_by_name("vocab_compute_and_apply_vocabulary_2_vocabulary") == \
        [b"b", b"a", b"c"]  # frequency_threshold=4
    r = _apply(mapped, s=[b"b", b"d", b"never", b"d", b"again"])
    assert r["oov"][0] == 0 and all(3 <= v < 6 for v in r["oov"][1:])
    assert r["oov"][1] == r["oov"][3]
    assert mapped.num_buckets_for_transformed_feature("oov") == 6


def test_integer_tokens_are_written_and_looked_up_as_text(mapped):
    tokens = mapped.vocabulary_by_name("vocab_compute_and_apply_vocabulary_3_vocabulary")
    counts = np.bincount(N % 3)
    assert tokens == [str(v).encode() for v in sorted(range(3), key=lambda v: (-counts[v],
                                                                                -v))]
    r = _apply(mapped)
    assert r["ints"].tolist() == [tokens.index(str(v).encode()) for v in (N % 3)]


def test_the_schema_has_dtypes_shapes_and_integer_domains(mapped):
    spec = mapped.transformed_feature_spec()
    assert {k: (s.dtype, s.shape.as_list()) for k, s in spec.items()} == {
        "z": (em.float32, []), "u": (em.float32, []), "b": (em.int64, []),
        "id": (em.int64, []), "top2": (em.int64, []), "oov": (em.int64, []),
        "ints": (em.int64, [])}
    assert mapped.num_buckets_for_transformed_feature("b") == 4
    with pytest.raises(ValueError, match="'z' has no integer domain"):
        mapped.num_buckets_for_transformed_feature("z")
    assert sorted(os.listdir(os.path.join(mapped.working_dir, "transform_fn", "assets"))) == [
        "tokens", *(f"vocab_compute_and_apply_vocabulary_{i}_vocabulary" for i in (1, 2, 3))]


def nested_fn(inputs):
    x = inputs["x"]
    centred = x - emt.mean(x)
    z = emt.scale_to_z_score(x)
    ids = emt.compute_and_apply_vocabulary(inputs["s"])
    return {"centred_mean": emt.mean(centred), "z_var": emt.var(z),
            "z_max": emt.max(emt.scale_to_0_1(z) * 2.0), "id_mean": emt.mean(ids),
            "bucket_max": emt.max(emt.bucketize(x, 3) + ids)}


def test_an_analyzer_of_an_analyzers_result_gets_a_later_pass(tmp_path):
    r = emt.analyze(nested_fn, _dataset(), tmp_path, batch_size=6)
    r = {k: v.numpy() for k, v in r.transform_features_layer()(
        {"x": X, "s": np.array(TOKENS[:len(X)], dtype=object)}).items()}
    assert abs(r["centred_mean"]) < 1e-5
    np.testing.assert_allclose(r["z_var"], 1.0, rtol=1e-5)
    np.testing.assert_allclose(r["z_max"], 2.0, rtol=1e-6)
    vocab = [b"b", b"a", b"c", b"e", b"d", b"z"]
    ids = np.array([vocab.index(t) if t in vocab else -1 for t in TOKENS])
    np.testing.assert_allclose(r["id_mean"], ids.mean(), rtol=1e-6)
    bounds = np.quantile(X, [1 / 3, 2 / 3], method="inverted_cdf")
    assert r["bucket_max"] == (np.searchsorted(bounds, X, side="right") + ids).max()


def branchy_fn(inputs):
    x = inputs["x"]
    mean, lowest = emt.mean(x), emt.min(x)
    if mean > 0.0:  # AutoGraph stages it: a cond on the statistic
        y = x - lowest
    else:
        y = x
    return {"y": y}


def test_python_control_flow_on_statistics_is_converted(tmp_path):
    out = emt.analyze(branchy_fn, _dataset(), tmp_path)
    np.testing.assert_allclose(out.transform_features_layer()({"x": X})["y"].numpy(),
                               X - X.min())


def analyzer_in_branch_fn(inputs):
    x = inputs["x"]
    if em.reduce_sum(x) > 0.0:
        x = x - emt.min(x)
    return {"x": x}


def test_an_analyzer_inside_a_branch_is_refused(tmp_path):
    with pytest.raises(emt.TransformError, match=r"analyzer call #1 \(min_max\) is inside "
                       "the true branch.*call the analyzer before"):
        emt.analyze(analyzer_in_branch_fn, _dataset(), tmp_path)


def test_analyze_and_transform_maps_the_dataset(tmp_path):
    def fn(inputs):
        return {"u": emt.scale_to_0_1(inputs["n"])}
    data, out = emt.analyze_and_transform(fn, _dataset(), tmp_path)
    got = [float(e["u"].numpy()) for e in data]
    np.testing.assert_allclose(got, (N - N.min()) / (N.max() - N.min()), rtol=1e-6)
    assert isinstance(out, emt.TFTransformOutput)


def scalers_fn(inputs):
    x = inputs["x"]
    return {"z": emt.scale_to_z_score(x), "u": emt.scale_to_0_1(x), "lo": emt.min(x),
            "id": emt.compute_and_apply_vocabulary(inputs["s"], num_oov_buckets=1)}


def test_an_empty_dataset_gives_tf_transforms_fallbacks(tmp_path):
    out = emt.analyze(scalers_fn, _dataset().take(0), tmp_path)
    r = _numpy(out.transform_features_layer()({"x": X[:3], "s": np.array([b"a"] * 3)}))
    np.testing.assert_allclose(r["z"], X[:3])                   # unscaled
    np.testing.assert_allclose(r["u"], 1 / (1 + np.exp(-X[:3])), rtol=1e-6)  # sigmoid
    assert r["lo"] == np.inf and r["id"].tolist() == [0, 0, 0]  # all in the OOV bucket
    assert out.vocabulary_by_name("vocab_compute_and_apply_vocabulary_vocabulary") == []


def test_a_dataset_of_batches_is_analyzed_with_batch_size_none(tmp_path):
    out = emt.analyze(scalers_fn, _dataset().batch(10), tmp_path, batch_size=None)
    assert _numpy(out.transform_features_layer()({"x": X, "s": TOKENS[:37]}))["lo"] == X.min()
    with pytest.raises(emt.TransformError, match=r"analyzer call #1 \(moments\) is over a "
                       "scalar.*batch_size=None only for a dataset of batches"):
        emt.analyze(scalers_fn, _dataset(), tmp_path, batch_size=None)


def _numpy(result):
    return {k: v.numpy() for k, v in result.items()}


def test_apply_vocabulary_takes_a_file_path_as_a_string_scalar_tensor(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("a\nb\nc\n")
    ids = emt.apply_vocabulary(em.constant(["b", "z", "c"]), em.constant(str(path)))
    assert ids.dtype is em.int64 and ids.numpy().tolist() == [1, -1, 2]
