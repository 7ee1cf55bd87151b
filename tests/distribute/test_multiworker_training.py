"""MultiWorkerMirroredStrategy over MPI, 2 workers launched as CI does (`python -m
ember.distribute.launch`): the digits MLP trained by 2 workers, each on its half of every
global batch, reaches the losses of 1 worker on the same global batches. Needs the mpi
extra (`make venv` installs it); without it the tests fail, saying so."""

import json

import numpy as np
import pytest

from mw_launch import finish, launch, require_mpi, start


@pytest.fixture(scope="module")
def mpi():
    return require_mpi()


def test_two_workers_train_the_digits_mlp_to_the_losses_of_one(mpi):
    jobs = {n: start(n, "mw_digits_worker.py", 6) for n in (1, 2)}  # at the same time
    runs = {}
    for n, job in jobs.items():
        done = finish(job)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[n] = json.loads(done.stdout.strip().splitlines()[-1])
    assert runs[2]["workers"] == 2
    one, two = np.array(runs[1]["losses"]), np.array(runs[2]["losses"])
    assert one[-1] < one[0] / 2  # it trains (scikit-learn's digits: 2.3 to under 0.9 in 6 steps)
    np.testing.assert_allclose(two, one, rtol=0, atol=1e-5)


@pytest.mark.parametrize("argv, message", [
    (["-n", "0", "x.py"], "-n: the number of workers must be at least 1, got 0"),
    (["-n", "2", "--timeout", "-1", "x.py"], "--timeout: must be a positive number of seconds"),
    (["-n", "2", "missing.py"], "missing.py: no such script")])
def test_launch_checks_its_arguments(argv, message, capsys, tmp_path, monkeypatch):
    from ember.distribute import launch
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.py").write_text("")
    with pytest.raises(SystemExit) as exit_:
        launch.main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_launch_without_mpi_says_how_to_install_it(monkeypatch):
    import importlib.metadata

    from ember.distribute import launch

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(Exception, match=r"MPI is not installed .*pip install 'ember\[mpi\]'"):
        launch.mpiexec_path()


def test_two_workers_of_two_replicas_each_reduce_as_one_group(mpi, tmp_path):
    done = launch(2, "mw_semantics_worker.py", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    for rank in (0, 1):
        report = json.loads((tmp_path / f"worker-{rank}.json").read_text())
        assert report["task_id"] == rank
        assert report["num_workers"] == 2 and report["replicas"] == 4
        assert report["chief"] is (rank == 0)
        assert report["devices"] == [f"/job:worker/replica:0/task:{rank}/device:CPU:{i}"
                                     for i in (0, 1)]
        # replica r holds [1, 2] * (r + 1): the sum over 4 replicas is [10, 20]
        assert report["run"] == [[2 * rank, 2 * rank + 1], [[10.0, 20.0]] * 2,
                                 [[2.5, 5.0]] * 2]
        assert report["reduce_mean"] == [2.5, 5.0]
        assert report["reduce_sum_axis0"] == 30.0 and report["reduce_mean_axis0"] == 3.75
        assert report["held_results"] == [4.0, 8.0]  # a held result is not reused
        assert report["mismatch"] == (
            f"MultiWorkerMirroredStrategy.reduce: worker {rank} passes a float32 value of "
            f"shape [{2 + rank}], and worker(s) [{1 - rank}] a value of another dtype or "
            "shape: every worker must all-reduce values of the same dtype and shape, in the "
            "same order")
        assert report["pair"] == [[[10.0, 20.0]] * 2, [[20.0, 40.0]] * 2]
        assert report["bool"] == [True, True] and report["float16"] == [1.5, 1.5]
        assert report["string"] == (
            "MultiWorkerMirroredStrategy.reduce: cannot all-reduce values of dtype object "
            "across workers: only numbers and bools can be summed")
        assert report["input_workers"] == [2, rank]
        # range(12) in global batches of 4, cut for 4 replicas: DATA keeps every other
        # per-replica slice (tf.data's shard after the rebatch), OFF all of them
        assert report["DATA"] == [[i] for i in range(rank, 12, 2)]
        assert report["OFF"] == [[i] for i in range(12)]
        assert report["has_data"] == [True, False]
        assert report["after"] == [10.0, 20.0]
