"""MultiWorkerMirroredStrategy as TensorFlow's, on 2 MPI workers launched as CI does:
variables created under the scope (or lazily in strategy.run) start from worker 0's initial
value, a TF-style training script (model and optimizer under the scope,
experimental_distribute_dataset, an em.function step calling apply_gradients) trains one
model that reaches 1 worker's weights, and `gather` all-gathers every worker's replicas."""

import json

import numpy as np
import pytest

from mw_launch import finish, launch, require_mpi, start


@pytest.fixture(scope="module")
def mpi():
    return require_mpi()


def test_variables_start_from_worker_0s_value_and_gather_spans_the_workers(mpi, tmp_path):
    done = launch(2, "mw_mwfix_init_worker.py", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    reports = [json.loads((tmp_path / f"worker-{r}.json").read_text()) for r in (0, 1)]
    for rank, report in enumerate(reports):
        # worker r's initializers give r + 1, rank == 1, r and seed r: worker 0's win
        assert report["v"] == [[1.0, 1.0]] * 2
        assert report["flag"] == [False, False]
        assert report["slot"] == [[[0.0] * 3] * 2] * 2
        for name in ("kernel", "lazy_kernel"):
            assert report[name][0] == report[name][1] == reports[0][name][0]
        # replica r (global, worker by worker) holds r + 1 rows of [r, r]
        assert report["gather0"] == [[float(r)] * 2 for r in range(4) for _ in range(r + 1)]
        assert report["gather1"] == [[float(r) for r in range(4) for _ in range(r + 1)]]
        assert report["gather_mismatch"] == (
            f"MultiWorkerMirroredStrategy.gather: worker {rank} passes float32 values of "
            f"shape [{2 + rank}] apart from the gathered axis, and worker(s) [{1 - rank}] "
            "values of another dtype or shape: the workers' values must agree in dtype and "
            "in every other axis")
        assert report["shape_mismatch"] == (
            "MultiWorkerMirroredStrategy (the initial value of variable 'odd'): worker "
            f"{rank} creates variable 'odd' as a float32 value of shape [{2 + rank}], and "
            f"worker(s) [{1 - rank}] with another dtype or shape: every worker must create "
            "the same variables, with the same dtypes and shapes, in the same order")
        assert "it is computed inside the em.function creating it" in report["traced_init"]
        assert report["after"] == 4.0  # the mismatches left the workers in step
    broadcast = "a broadcast (a variable's initial value from worker 0)"
    reduce = "an all-reduce (reduce, all_reduce, apply_gradients)"
    assert f"worker 0 is in {broadcast} while worker(s) [1] are in {reduce}" \
        in reports[0]["kind_mismatch"]
    assert f"worker 1 is in {reduce} while worker(s) [0] are in {broadcast}" \
        in reports[1]["kind_mismatch"]
    assert "variable 'stray'" in reports[0]["kind_mismatch"]


def test_a_tf_style_training_script_trains_one_model_as_one_worker_does(mpi):
    jobs = {(n, mode): start(n, "mw_mwfix_train_worker.py", mode)
            for n, mode in ((1, "lazy"), (2, "lazy"), (2, "built"))}
    runs = {}
    for key, job in jobs.items():
        done = finish(job)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[key] = json.loads(done.stdout.strip().splitlines()[-1])
    one = runs[1, "lazy"]
    assert one["losses"][-1] < one["losses"][0] / 4  # it trains
    for key in ((2, "lazy"), (2, "built")):
        two = runs[key]
        assert two["workers"] == 2
        np.testing.assert_allclose(two["losses"], one["losses"], rtol=0, atol=1e-5)
        for gathered, alone in zip(two["weights"], one["weights"]):
            assert len(gathered) == 2  # each worker's copy, gathered
            np.testing.assert_allclose(gathered, alone * 2, rtol=0, atol=1e-5)
