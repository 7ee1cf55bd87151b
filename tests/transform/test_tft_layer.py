"""TFTransformOutput and its transform layer: the same values eagerly, inside an
em.function and in Dataset.map; what a missing or damaged working_dir, a changed
preprocessing_fn and misuse raise; `import ember` loading none of it."""

import doctest
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember as em
import ember.transform as emt

X = np.array([3.0, -1.0, 4.0, 1.5, 9.0, 2.5, -6.0, 5.0, 3.0, 5.0], np.float32)
S = np.array([b"cat", b"dog", b"cat", b"eel", b"dog", b"cat", b"fox", b"cat", b"eel", b"ant"],
             dtype=object)


def _dataset():
    return em.data.Dataset.from_tensor_slices({"x": X, "s": S, "label": np.arange(10)})


def preprocessing_fn(inputs):
    x, s = inputs["x"], inputs["s"]
    return {"z": emt.scale_to_z_score(x), "b": emt.bucketize(x, 3),
            "s": emt.compute_and_apply_vocabulary(s, num_oov_buckets=2, vocab_filename="s"),
            "label": inputs["label"]}


@pytest.fixture(scope="module")
def output(tmp_path_factory):
    working_dir = tmp_path_factory.mktemp("layer")
    emt.analyze(preprocessing_fn, _dataset(), working_dir, batch_size=4)
    return emt.TFTransformOutput(working_dir)  # preprocessing_fn found by module and name


def _numpy(result):
    return {k: v.numpy() for k, v in result.items()}


def test_eager_em_function_and_dataset_map_agree(output):
    layer = output.transform_features_layer()
    raw = {"x": em.constant(X), "s": em.constant(S), "label": em.constant(np.arange(10))}
    eager = _numpy(layer(raw))

    @em.function(backend="interpreter")  # string tensors run on the host
    def transform(features):
        return layer(features)

    traced = _numpy(transform(raw))
    mapped = [_numpy(e) for e in _dataset().batch(4).map(
        layer, num_parallel_calls=em.data.AUTOTUNE)]
    per_instance = [_numpy(e) for e in _dataset().map(layer)]
    for key in eager:
        np.testing.assert_array_equal(traced[key], eager[key])
        np.testing.assert_array_equal(np.concatenate([m[key] for m in mapped]), eager[key])
        np.testing.assert_array_equal(np.stack([m[key] for m in per_instance]), eager[key])
    x = X.astype(np.float64)
    np.testing.assert_allclose(eager["z"], (x - x.mean()) / x.std(), rtol=1e-5, atol=1e-6)
    # cat 4, then dog and eel 2 (ties: reverse lexicographic), fox and ant 1
    assert eager["s"].tolist() == [0, 2, 0, 1, 2, 0, 3, 0, 1, 4]


def test_the_output_describes_features_and_vocabularies(output):
    spec = output.transformed_feature_spec()
    assert {k: (s.dtype, s.shape.as_list()) for k, s in spec.items()} == {
        "z": (em.float32, []), "b": (em.int64, []), "s": (em.int64, []),
        "label": (em.int64, [])}
    assert {k: s.dtype for k, s in output.raw_feature_spec().items()} == {
        "x": em.float32, "s": em.string, "label": em.int64}
    assert output.vocabulary_by_name("s") == [b"cat", b"eel", b"dog", b"fox", b"ant"]
    assert output.transform_fn_dir == os.path.join(output.working_dir, "transform_fn")
    assert output.vocabulary_size_by_name("s") == 5
    assert output.vocabulary_file_by_name("s") == os.path.join(
        output.working_dir, "transform_fn", "assets", "s")
    assert output.num_buckets_for_transformed_feature("s") == 5 + 2
    assert output.num_buckets_for_transformed_feature("b") == 3
    with pytest.raises(emt.TransformArtifactError, match="no vocabulary named 'q'.*has: s"):
        output.vocabulary_by_name("q")


def test_the_layer_is_created_under_a_strategy_scope(output):
    strategy = em.distribute.MirroredStrategy()
    with strategy.scope():
        layer = emt.TFTransformOutput(output.working_dir).transform_features_layer()
    result = layer({"x": X[:3], "s": S[:3], "label": np.arange(3)})
    assert result["s"].numpy().tolist() == [0, 2, 0]


def test_an_analyzer_outside_a_preprocessing_fn_says_where_it_belongs():
    with pytest.raises(emt.TransformError, match="emt.mean is an analyzer.*inside a "
                       "preprocessing_fn given to emt.analyze"):
        emt.mean(em.constant([1.0, 2.0]))


def test_apply_vocabulary_takes_a_vocabulary_file_outside_a_preprocessing_fn(tmp_path):
    path = tmp_path / "v.txt"
    path.write_bytes(b"x\ny\n")
    ids = emt.apply_vocabulary(em.constant(["y", "q", "x"]), str(path), default_value=-3)
    assert ids.numpy().tolist() == [1, -3, 0]


@pytest.mark.parametrize("bad_fn, error, match", [
    (lambda d: {"m": emt.mean(d["s"])}, emt.TransformError,
     "emt.mean: x must be a numeric.*got dtype string"),
    (lambda d: {"v": emt.vocabulary(d["x"])}, emt.TransformError,
     "emt.vocabulary: x must be a string or integer.*got dtype float32"),
    (lambda d: [d["x"]], emt.TransformError, "must return a non-empty dict"),
    (lambda d: {"a": emt.compute_and_apply_vocabulary(d["s"], vocab_filename="v"),
                "b": emt.compute_and_apply_vocabulary(d["s"], vocab_filename="v")},
     emt.TransformError, "two vocabularies are named 'v'"),
    (lambda d: {"b": emt.bucketize(d["x"], 0)}, emt.TransformError,
     "num_buckets must be an int >= 1, got 0"),
])
def test_a_preprocessing_fn_em_transform_cannot_analyze(tmp_path, bad_fn, error, match):
    with pytest.raises(error, match=match):
        emt.analyze(bad_fn, _dataset(), tmp_path)


def test_the_dataset_must_hold_dicts_of_features(tmp_path):
    with pytest.raises(emt.TransformError, match="elements must be dicts of feature name"):
        emt.analyze(preprocessing_fn, em.data.Dataset.range(3), tmp_path)
    with pytest.raises(emt.TransformError, match="must be an em.data.Dataset, got list"):
        emt.analyze(preprocessing_fn, [1, 2], tmp_path)


def test_a_lambda_is_loaded_only_when_passed_again(tmp_path):
    fn = lambda d: {"u": emt.scale_to_0_1(d["x"])}  # noqa: E731
    emt.analyze(fn, _dataset(), tmp_path)
    with pytest.raises(emt.TransformArtifactError, match="cannot be imported.*pass it"):
        emt.TFTransformOutput(tmp_path)
    layer = emt.TFTransformOutput(tmp_path, preprocessing_fn=fn).transform_features_layer()
    assert layer({"x": X})["u"].numpy().max() == 1.0


def numeric_fn(inputs):
    x = inputs["x"]
    return {"z": emt.scale_to_z_score(x), "u": emt.scale_to_0_1(x * x),
            "b": emt.bucketize(x, 4), "e": emt.scale_to_z_score(inputs["m"], elementwise=True)}


def test_a_numeric_transform_compiles_in_an_em_function_and_agrees_with_eager(tmp_path):
    m = np.stack([X, X * 2 + 1], axis=1)
    data = em.data.Dataset.from_tensor_slices({"x": X, "m": m})
    layer = emt.analyze(numeric_fn, data, tmp_path, batch_size=3).transform_features_layer()
    compiled = em.function(lambda features: layer(features))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to the interpreter
        traced = _numpy(compiled({"x": em.constant(X), "m": em.constant(m)}))
    eager = _numpy(layer({"x": X, "m": m}))
    for key in eager:
        np.testing.assert_allclose(traced[key], eager[key], rtol=1e-6)
    np.testing.assert_allclose(eager["e"], (m - m.mean(0)) / m.std(0), rtol=1e-5, atol=1e-6)


def test_the_layer_runs_in_a_loop_over_a_dataset_inside_an_em_function(tmp_path):
    data = em.data.Dataset.from_tensor_slices({"x": X, "m": np.stack([X, X], axis=1)})
    layer = emt.analyze(numeric_fn, data, tmp_path).transform_features_layer()

    @em.function
    def total_of_buckets():
        total = em.constant(0, em.int64)
        for batch in data.batch(4):  # one loop in the IR; the layer traced in its body
            total += em.reduce_sum(layer(batch)["b"])
        return total

    assert int(total_of_buckets()) == int(layer({"x": X, "m": data_m(X)})["b"].numpy().sum())


def data_m(x):
    return np.stack([x, x], axis=1)


def other_fn(inputs):
    return {"z": emt.scale_to_0_1(inputs["x"]), "b": emt.bucketize(inputs["x"], 3)}


def test_another_preprocessing_fn_is_refused(output):
    with pytest.raises(emt.TransformArtifactError, match="source of the preprocessing_fn "
                       "other_fn differs from the one analyzed"):
        emt.TFTransformOutput(output.working_dir, preprocessing_fn=other_fn)


SCALER = {"fn": emt.scale_to_z_score}


def swappable_fn(inputs):
    return {"x": SCALER["fn"](inputs["x"])}


def test_analyzer_calls_that_changed_since_the_analysis_are_refused(tmp_path, monkeypatch):
    emt.analyze(swappable_fn, _dataset(), tmp_path)
    monkeypatch.setitem(SCALER, "fn", emt.scale_to_0_1)  # a helper changed, not the fn
    layer = emt.TFTransformOutput(tmp_path).transform_features_layer()
    with pytest.raises(emt.TransformArtifactError, match="does not match the analysis.*"
                       "call #1 is .*min_max.*recorded .*moments.*re-run emt.analyze"):
        layer({"x": X})
    monkeypatch.setitem(SCALER, "fn", lambda x: x)
    with pytest.raises(emt.TransformArtifactError, match="it called 0 analyzers, the "
                       "analysis recorded 1"):
        layer({"x": X})


def _copy(output, tmp_path):
    import shutil
    target = tmp_path / "copy"
    shutil.copytree(output.working_dir, target)
    return target


def test_a_missing_working_dir_or_manifest_names_the_path(tmp_path):
    with pytest.raises(emt.TransformArtifactError, match="nowhere is not a directory"):
        emt.TFTransformOutput(tmp_path / "nowhere")
    with pytest.raises(emt.TransformArtifactError, match=r"transform_fn/transform.json: "
                       "missing"):
        emt.TFTransformOutput(tmp_path)


@pytest.mark.parametrize("damage, match", [
    (lambda d: (d / "transform_fn/assets/s").write_bytes(b"cat\ndog\n"),
     r"transform_fn/assets/s: damaged or changed"),
    (lambda d: (d / "transform_fn/statistics.npz").unlink(),
     r"transform_fn/statistics.npz: missing"),
    (lambda d: (d / "transformed_metadata/schema.json").write_text("{}"),
     r"transformed_metadata/schema.json: damaged or changed"),
    (lambda d: (d / "transform_fn/transform.json").write_text("{not json"),
     r"transform_fn/transform.json: cannot be read as JSON"),
    (lambda d: (d / "transform_fn/transform.json").write_text(
        '{"format": "ember-transform", "version": 99}'), r"version 99"),
])
def test_a_damaged_working_dir_names_the_file(output, tmp_path, damage, match):
    copy = _copy(output, tmp_path)
    damage(copy)
    with pytest.raises(emt.TransformArtifactError, match=match):
        emt.TFTransformOutput(copy)


def test_import_ember_loads_em_transform_on_first_use():
    probe = ("import sys\nimport ember as em\n"
             "print('ember.runtime.transform' in sys.modules, 'transform' in dir(em))\n"
             "print(em.transform.TFTransformOutput.__name__, "
             "em.errors.TransformArtifactError.__name__)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split("\n")
    assert out[:2] == ["False True", "TFTransformOutput TransformArtifactError"]


def test_the_modules_example_runs():
    import ember.transform
    result = doctest.testmod(ember.transform, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 4
