"""A worker of test_multiworker_watchdog: all-reduces in a loop; after step 3 worker 1
sends itself SIGNAL (SIGKILL: dead, SIGSTOP: frozen), or with EXIT leaves the loop and ends
normally. Worker 0 must then fail with the watchdog's UnavailableError instead of waiting
for ever.

Run: python -m ember.distribute.launch -n 2 tests/distribute/mw_watchdog_worker.py SIGNAL
"""

import os
import signal
import sys
import time

import ember as em

strategy = em.distribute.MultiWorkerMirroredStrategy()
rank = strategy.cluster_resolver.task_id
R = em.distribute.ReduceOp
for step in range(1000):
    total = strategy.run(
        lambda: em.distribute.get_replica_context().all_reduce(R.SUM, em.constant(1.0)))
    assert float(total) == 2.0, total
    if step == 3 and rank == 1 and sys.argv[1] == "EXIT":
        print(f"worker 1 (pid {os.getpid()}): leaving early", flush=True)
        break
    if step == 3 and rank == 1:
        print(f"worker 1 (pid {os.getpid()}): sending itself {sys.argv[1]}", flush=True)
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    time.sleep(0.01)
print(f"worker {rank}: finished all steps (the watchdog did not fire)", flush=True)
