"""A worker of test_mwfix_multiworker: each of 2 workers splits its CPU into 2 logical
devices (4 replicas), creates variables from rank-dependent initial values (under the scope,
a layer built under it, an optimizer's slots, and lazily inside strategy.run), gathers
values of different sizes, and makes mismatched collectives on purpose. Writes what it saw
as JSON to OUT_DIR/worker-RANK.json.

Run: python -m ember.distribute.launch -n 2 tests/distribute/mw_mwfix_init_worker.py OUT_DIR
"""

import json
import os
import sys

import numpy as np

import ember as em

cpu = em.config.list_physical_devices("CPU")[0]
em.config.set_logical_device_configuration(cpu, [em.config.LogicalDeviceConfiguration()] * 2)
strategy = em.distribute.MultiWorkerMirroredStrategy()
rank = strategy.cluster_resolver.task_id
em.random.set_seed(rank)  # every initializer differs between the workers
report = {}


def copies(variable) -> list:
    return [v.numpy().tolist() for v in strategy.experimental_local_results(variable)]


with strategy.scope():
    v = em.Variable(np.full((2,), float(rank) + 1.0, np.float32), name="v")
    flag = em.Variable(rank == 1, name="flag")  # a bool: broadcast as bytes
    layer = em.layers.Dense(3)
    layer.build((None, 2))
    optimizer = em.optimizers.Adam(0.1)
    optimizer.build(layer.trainable_variables)
    extra = optimizer.add_slot(layer.kernel, "extra", float(rank))  # a slot from its value
report["v"] = copies(v)
report["flag"] = copies(flag)
report["kernel"] = copies(layer.kernel)
report["slot"] = copies(extra)

lazy = em.layers.Dense(2)
with strategy.scope():
    lazy_model = em.Sequential([lazy])


def first_call(x):
    return lazy_model(x)


strategy.run(first_call, args=(em.ones((1, 3)),))  # builds the layer in the replicas
report["lazy_kernel"] = copies(lazy.kernel)

# replica r of the 4 holds r + 1 rows of [r, r]: gathered in global replica order
per_replica = strategy.experimental_distribute_values_from_function(
    lambda ctx: em.fill([ctx.replica_id_in_sync_group + 1, 2],
                        float(ctx.replica_id_in_sync_group)))
report["gather0"] = strategy.gather(per_replica, axis=0).numpy().tolist()
report["gather1"] = strategy.gather(
    strategy.experimental_distribute_values_from_function(
        lambda ctx: em.fill([1, ctx.replica_id_in_sync_group + 1],
                            float(ctx.replica_id_in_sync_group))), axis=1).numpy().tolist()
try:  # the workers' values differ in a dimension other than the gathered one
    strategy.gather(em.zeros((1, 2 + rank)), axis=0)
except ValueError as err:
    report["gather_mismatch"] = str(err)

try:  # the workers create variables of different shapes
    with strategy.scope():
        em.Variable(np.zeros(2 + rank, np.float32), name="odd")
except ValueError as err:
    report["shape_mismatch"] = str(err)

try:  # worker 0 creates a variable where worker 1 reduces
    if rank == 0:
        with strategy.scope():
            em.Variable(np.zeros(2, np.float32), name="stray")
    else:
        strategy.reduce("SUM", strategy.experimental_distribute_values_from_function(
            lambda ctx: em.zeros(2)), axis=None)
except ValueError as err:
    report["kind_mismatch"] = str(err)

made = []


@em.function
def traced_init():
    if not made:
        made.append(em.Variable(em.random.normal([2]), name="traced"))
    return made[0].read_value()


try:  # an initial value computed by the trace: each worker's own, so an error
    strategy.run(traced_init)
except ValueError as err:
    report["traced_init"] = str(err)

ones = strategy.experimental_distribute_values_from_function(lambda ctx: em.constant(1.0))
report["after"] = float(strategy.reduce("SUM", ones, axis=None))  # the workers still agree
out = os.path.join(sys.argv[1], f"worker-{rank}.json")
with open(out, "w") as f:
    json.dump(report, f)
