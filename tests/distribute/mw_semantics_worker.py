"""A worker of test_multiworker_training's semantics test: each of 2 workers splits its CPU
into 2 logical devices (4 replicas in sync), then prints what the strategy reports and
computes as JSON, to OUT_DIR/worker-RANK.json (the workers' stdout lines could interleave).

Run: python -m ember.distribute.launch -n 2 tests/distribute/mw_semantics_worker.py OUT_DIR
"""

import json
import os
import sys

import numpy as np

import ember as em
from ember.runtime.data.autoshard import rebatch_for_replicas

cpu = em.config.list_physical_devices("CPU")[0]
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * 2)
strategy = em.distribute.MultiWorkerMirroredStrategy()
R = em.distribute.ReduceOp
report = {"task_id": strategy.cluster_resolver.task_id,
          "num_workers": strategy.cluster_resolver.num_workers,
          "replicas": strategy.num_replicas_in_sync,
          "chief": strategy.extended.should_checkpoint,
          "devices": list(strategy.extended.worker_devices)}


def step(x):
    ctx = em.distribute.get_replica_context()
    return ctx.replica_id_in_sync_group, ctx.all_reduce(R.SUM, x), ctx.all_reduce("mean", x)


def local(value):
    return [v.numpy().tolist() for v in strategy.experimental_local_results(value)]


x = strategy.experimental_distribute_values_from_function(
    lambda ctx: em.constant([1.0, 2.0]) * float(ctx.replica_id_in_sync_group + 1))
report["run"] = [local(v) for v in strategy.run(step, args=(x,))]
report["reduce_mean"] = strategy.reduce(R.MEAN, x).numpy().tolist()
report["reduce_sum_axis0"] = float(strategy.reduce(R.SUM, x, axis=0))
report["reduce_mean_axis0"] = float(strategy.reduce(R.MEAN, x, axis=0))

# A large result is held while another all-reduce of its shape runs: it must not change.
big = [strategy.reduce(R.SUM, strategy.experimental_distribute_values_from_function(
    lambda ctx, k=k: em.constant(np.full(1 << 19, k, np.float32)))) for k in (1.0, 2.0)]
report["held_results"] = [float(b.numpy()[0]) for b in big]

try:  # the workers pass different shapes: every worker is told, none hangs
    strategy.reduce(R.SUM, strategy.experimental_distribute_values_from_function(
        lambda ctx: em.constant(np.zeros(2 + report["task_id"], np.float32))))
except ValueError as err:
    report["mismatch"] = str(err)
# The group's list form: several values in one all_reduce (ReplicaContext's newer call)
def pair(x):
    ctx = em.distribute.get_replica_context()
    return tuple(ctx._group.all_reduce(ctx._id, R.SUM, [x.numpy(), 2 * x.numpy()]))


report["pair"] = [local(v) for v in strategy.run(pair, args=(x,))]

# dtypes MPI does not sum itself: bools (SUM is OR), float16 (summed in float32); strings fail
def values_of(dtype, value):
    return strategy.experimental_distribute_values_from_function(
        lambda ctx: em.constant(np.full(2, value, dtype)))


report["bool"] = strategy.reduce(R.SUM, values_of(np.bool_, report["task_id"] == 1)).numpy()\
    .tolist()
report["float16"] = strategy.reduce(R.MEAN, values_of(np.float16, 1.5)).numpy().tolist()
try:
    strategy.reduce(R.SUM, values_of(np.str_, "a"))
except TypeError as err:
    report["string"] = str(err)

# The distributed input's hooks: who this worker is; whether any worker still has data.
report["input_workers"] = list(strategy._input_workers())
batches = em.data.Dataset.range(12).batch(4)  # global batches of 4; 4 replicas in sync
for policy in ("DATA", "OFF"):
    options = em.data.Options()
    options.experimental_distribute.auto_shard_policy = \
        getattr(em.data.experimental.AutoShardPolicy, policy)
    per_replica = rebatch_for_replicas(batches.with_options(options), 4)
    shard = strategy._auto_shard(per_replica, *strategy._input_workers())
    report[policy] = [b.numpy().tolist() for b in shard]
report["has_data"] = [strategy._sync_has_data(report["task_id"] == 1),
                      strategy._sync_has_data(False)]
report["after"] = strategy.reduce(R.SUM, x).numpy().tolist()  # the workers still agree
with open(os.path.join(sys.argv[1], f"worker-{report['task_id']}.json"), "w") as out:
    json.dump(report, out)
