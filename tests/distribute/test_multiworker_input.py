"""The distributed input guide's auto-sharding tables on 2 real MPI workers (`python -m
ember.distribute.launch -n 2`), 1 replica each, global batch 4: FILE over files [0..5] and
[6..11], DATA and OFF over one file [0..11]; FILE with fewer files than workers is the
guide's InvalidArgumentError, which names AutoShardPolicy.DATA as the way out."""

import json

import pytest

from mw_launch import launch, require_mpi

GUIDE = {  # the guide's worker tables, per worker, per batch (each worker's one replica)
    "FILE": [[[0, 1], [2, 3], [4], [5]], [[6, 7], [8, 9], [10], [11]]],
    "DATA": [[[0, 1], [4, 5], [8, 9]], [[2, 3], [6, 7], [10, 11]]],
    "OFF": [[[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10, 11]]] * 2,
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    require_mpi()
    folder = tmp_path_factory.mktemp("files")
    done = launch(2, "mw_input_worker.py", folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return {rank: json.loads((folder / f"rank{rank}.json").read_text()) for rank in (0, 1)}


@pytest.mark.parametrize("policy", sorted(GUIDE))
def test_each_worker_reads_the_guides_batches(tables, policy):
    assert [tables[rank][policy] for rank in (0, 1)] == GUIDE[policy]


def test_file_sharding_with_fewer_files_than_workers_says_to_use_data(tables):
    for rank in (0, 1):
        assert "AutoShardPolicy.DATA" in tables[rank]["FILE, 1 file"]
