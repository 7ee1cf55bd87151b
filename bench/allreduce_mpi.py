"""The multi-worker all-reduce bench (issue 18): `make bench-mpi`, or
`.venv/bin/python bench/allreduce_mpi.py` (it starts its 2 workers itself, through
`python -m ember.distribute.launch -n 2`).

A SUM all-reduce of 64 MiB (16 Mi float32) across 2 workers, each with one replica:
  - Ember: `strategy.run(fn)` where fn calls `get_replica_context().all_reduce(SUM, x)` on an
    em.Tensor, under `MultiWorkerMirroredStrategy` (the shape check, the non-blocking
    Iallreduce polled under the watchdog, the result as an em.Tensor);
  - raw: mpi4py's blocking `comm.Allreduce(x, out)` on numpy arrays, `out` preallocated.
Both results are checked against the expected sum before anything is timed. The two are timed
in alternating rounds (each call after a barrier), and the medians are reported, with the
throughput ratio Ember / raw (target from the issue: >= 0.8x). Needs `ember[mpi]`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

import numpy as np

N = 16 * 1024 * 1024  # float32 elements: 64 MiB
ROUNDS, CALLS = 5, 3  # alternating rounds, timed calls of each per round


def _time(comm, fn) -> list[float]:
    times = []
    for _ in range(CALLS):
        comm.Barrier()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def worker() -> None:
    import ember as em
    strategy = em.distribute.MultiWorkerMirroredStrategy()
    from mpi4py import MPI
    comm = MPI.COMM_WORLD.Dup()
    rank, size = comm.Get_rank(), comm.Get_size()
    x_np = np.full(N, rank + 1, np.float32)
    out = np.empty_like(x_np)
    x = em.constant(x_np)
    expected = size * (size + 1) / 2

    def ember_all_reduce():
        return strategy.run(lambda: em.distribute.get_replica_context().all_reduce(
            em.distribute.ReduceOp.SUM, x))

    def raw_all_reduce():
        comm.Allreduce(x_np, out, op=MPI.SUM)

    raw_all_reduce()
    ok = np.all(out == expected) and np.all(ember_all_reduce().numpy() == expected)
    if not comm.allreduce(bool(ok), op=MPI.LAND):
        if rank == 0:
            print("allreduce_mpi: a result differs from the expected sum; nothing timed")
        sys.exit(1)
    ember, raw = [], []
    for _ in range(ROUNDS):
        ember += _time(comm, ember_all_reduce)
        raw += _time(comm, raw_all_reduce)
    if rank == 0:
        e, r = statistics.median(ember) * 1e3, statistics.median(raw) * 1e3
        mib = N * 4 / 2**20
        print(f"all-reduce SUM of {mib:.0f} MiB float32 across {size} workers "
              f"(median of {ROUNDS * CALLS} calls each, load {os.getloadavg()[0]:.2f})")
        print(f"  raw mpi4py Allreduce      : {r:8.2f} ms  {mib / r * 1e3 / 1024:6.2f} GiB/s")
        print(f"  Ember strategy all_reduce : {e:8.2f} ms  {mib / e * 1e3 / 1024:6.2f} GiB/s")
        print(f"  Ember / raw throughput    : {r / e:8.2f}x   (target >= 0.8x)")


def main() -> int:
    if "PMI_RANK" in os.environ:  # started by mpiexec (hydra sets it)
        worker()
        return 0
    return subprocess.call([sys.executable, "-m", "ember.distribute.launch", "-n", "2",
                            os.path.abspath(__file__)])


if __name__ == "__main__":
    sys.exit(main())
