"""strategy.run, all_reduce, reduce and a distributed dataset loop inside em.function on 2
real MPI workers of 2 replicas each (mw_distfn_worker.py): each worker's replicas combine in
the IR and one host call (the strategy's `_cross_worker_sum_arrays`, MPI) adds the other
worker's; compiled agrees with eager on both workers."""

import json

from mw_launch import launch, require_mpi


def test_reductions_and_input_inside_a_function_on_two_workers(tmp_path):
    require_mpi()
    done = launch(2, "mw_distfn_worker.py", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    reports = [json.loads((tmp_path / f"worker-{rank}.json").read_text()) for rank in (0, 1)]
    for rank, report in enumerate(reports):
        assert report["compiled"] == report["eager"]
        total, mean, summed, averaged = report["compiled"]
        # replicas 0..3 hold [1, 2] * (r + 1): sum [10, 20], mean [2.5, 5]
        assert total == [[10.0, 20.0]] * 2 and mean == [[2.5, 5.0]] * 2
        assert summed == [30.0] and averaged == [3.75]  # over 8 elements
        assert report["loop"] == [190, 190]  # every element of range(20), once
