"""A worker of test_mwfix_multiworker: TensorFlow's multi-worker custom training loop as
written for TF. The model and optimizer are created under strategy.scope() (MODE "built":
built there; "lazy": built by the first call of the step, inside strategy.run), the data
comes from experimental_distribute_dataset, and strategy.run runs an em.function step that
calls optimizer.apply_gradients. Every worker seeds its initializers differently: only the
broadcast of worker 0's initial values makes them train one model. Worker 0 prints the
losses and final weights as JSON.

Run: python -m ember.distribute.launch -n N tests/distribute/mw_mwfix_train_worker.py MODE
"""

import json
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import ember as em  # noqa: E402

GLOBAL_BATCH = 16
strategy = em.distribute.MultiWorkerMirroredStrategy()
em.random.set_seed(strategy.cluster_resolver.task_id)

rng = np.random.default_rng(0)
x = rng.standard_normal((64, 4)).astype(np.float32)
y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)).astype(np.float32)
options = em.data.Options()
options.experimental_distribute.auto_shard_policy = em.data.experimental.AutoShardPolicy.DATA
dataset = em.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH).with_options(options)
distributed = strategy.experimental_distribute_dataset(dataset)

with strategy.scope():
    model = em.Sequential([em.layers.Dense(8, activation="relu"), em.layers.Dense(1)])
    if sys.argv[1] == "built":
        model.build((None, 4))
    optimizer = em.optimizers.SGD(0.05)


@em.function
def train_step(features, labels):
    with em.GradientTape() as tape:
        loss = em.reduce_sum(em.square(model(features) - labels)) / GLOBAL_BATCH
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


losses = []
for epoch in range(2):
    for features, labels in distributed:
        per_replica = strategy.run(train_step, args=(features, labels))
        losses.append(float(strategy.reduce(em.distribute.ReduceOp.SUM, per_replica,
                                            axis=None)))
# every worker's weights, gathered: they must be one model
weights = [strategy.gather(em.reshape(v, [1, -1]), axis=0).numpy().tolist()
           for v in model.trainable_variables]
if strategy.extended.should_checkpoint:
    print(json.dumps({"workers": strategy.cluster_resolver.num_workers, "losses": losses,
                      "weights": weights}))
