"""The distributed input guide's tf.Transform example end to end: emt.analyze over a small
dataset of string and numeric features, then TFTransformOutput's layer created under a
2-replica MirroredStrategy's scope and mapped in distribute_datasets_from_function's
dataset_fn (tft_distributed_guide.py, in a subprocess: the CPU split into 2 logical CPUs is
fixed once per process). Each replica's batch is checked against numpy's statistics of the
whole dataset."""

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

GUIDE = pathlib.Path(__file__).with_name("tft_distributed_guide.py")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    working_dir = tmp_path_factory.mktemp("tft") / "working_dir"
    done = subprocess.run([sys.executable, str(GUIDE), str(working_dir)], capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    return json.loads(done.stdout)


def _vocabulary(tokens):
    counts = {}
    for t in tokens:
        counts[t] = counts.get(t, 0) + 1
    return [t for _, t in sorted(((n, t) for t, n in counts.items()), reverse=True)]


def test_every_step_gives_each_of_the_two_replicas_a_per_replica_batch(run):
    assert run["replicas"] == 2
    assert len(run["steps"]) == 40 // 8
    for step in run["steps"]:
        assert [len(r["x"]) for r in step["replicas"]] == [4, 4]
    seen = [x for step in run["steps"] for r in step["replicas"] for x in r["x"]]
    assert sorted(seen) == sorted(run["raw"]["x"])  # every instance once


def test_the_replicas_values_use_the_whole_datasets_statistics(run):
    x = np.asarray(run["raw"]["x"], np.float64)
    n = np.asarray(run["raw"]["n"], np.float64)
    vocab = _vocabulary(run["raw"]["s"])
    boundaries = np.quantile(n.astype(np.float32), [0.25, 0.5, 0.75], method="inverted_cdf")
    for step in run["steps"]:
        for r in step["replicas"]:
            rx, rn = np.asarray(r["x"]), np.asarray(r["n"], np.float64)
            np.testing.assert_allclose(r["x_z"], (rx - x.mean()) / x.std(), rtol=1e-5,
                                       atol=1e-6)
            np.testing.assert_allclose(r["n_01"], (rn - n.min()) / (n.max() - n.min()),
                                       rtol=1e-6, atol=1e-7)
            assert r["n_bucket"] == np.searchsorted(boundaries, rn, side="right").tolist()
            assert r["s_id"] == [vocab.index(t) for t in r["s"]]


def test_a_compiled_step_runs_on_each_replicas_transformed_batch(run):
    for step in run["steps"]:
        expected = [sum(r["x_z"]) + sum(r["s_id"]) for r in step["replicas"]]
        np.testing.assert_allclose(step["sums"], expected, rtol=1e-5, atol=1e-5)


def test_the_outputs_schema_vocabulary_and_buckets(run):
    assert run["vocabulary"] == ["red", "green", "teal", "blue"]  # tie: reverse lexicographic
    assert run["buckets"] == [4, 4]
    assert run["spec"] == {"x_z": ["float32", []], "n_01": ["float32", []],
                           "n_bucket": ["int64", []], "s_id": ["int64", []],
                           "x": ["float32", []], "n": ["int64", []], "s": ["string", []]}
