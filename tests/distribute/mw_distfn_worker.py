"""A worker of test_distfn_multiworker: 2 workers of 2 logical CPUs each (4 replicas in
sync) run strategy.run, all_reduce, reduce and a loop over a distributed dataset inside
em.function, and the same eagerly; each writes its results as JSON to OUT_DIR/worker-RANK.json.

Run: python -m ember.distribute.launch -n 2 tests/distribute/mw_distfn_worker.py OUT_DIR
"""

import json
import os
import sys

import ember as em

cpu = em.config.list_physical_devices("CPU")[0]
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * 2)
em.config.set_fallback("error")
strategy = em.distribute.MultiWorkerMirroredStrategy()
R = em.distribute.ReduceOp
rank = strategy.cluster_resolver.task_id


def local(value):
    return [v.numpy().tolist() for v in strategy.experimental_local_results(value)]


def step(x):
    ctx = em.distribute.get_replica_context()
    return ctx.all_reduce(R.SUM, x), ctx.all_reduce(R.MEAN, x)


def reductions(x):
    total, mean = strategy.run(step, args=(x,))
    return total, mean, strategy.reduce(R.SUM, x, axis=0), strategy.reduce(R.MEAN, x, axis=0)


x = strategy.experimental_distribute_values_from_function(  # replica r: [r + 1, 2r + 2]
    lambda ctx: em.constant([1.0, 2.0]) * float(ctx.replica_id_in_sync_group + 1))
report = {"compiled": [local(v) for v in em.function(reductions)(x)],
          "eager": [local(v) for v in reductions(x)]}

dataset = em.data.Dataset.range(20).batch(4)  # sharded by the workers (AUTO: DATA)
dist_dataset = strategy.experimental_distribute_dataset(dataset)


def sum_all(dist_dataset):
    total = em.constant(0, dtype=em.int64)
    for x in dist_dataset:
        total += strategy.reduce(R.SUM, strategy.run(em.reduce_sum, args=(x,)), axis=None)
    return total


report["loop"] = [int(em.function(sum_all)(dist_dataset)), int(sum_all(dist_dataset))]
with open(os.path.join(sys.argv[1], f"worker-{rank}.json"), "w") as out:
    json.dump(report, out)
