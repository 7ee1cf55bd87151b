"""A worker of test_multiworker_training: trains the digits MLP (examples/train_digits.py,
without dropout) with MultiWorkerMirroredStrategy as TensorFlow's custom training loop does:
each worker takes its slice of every global batch by rank, each replica's loss is scaled by
the global batch size, the gradients are all-reduced with SUM (in the replica) and applied
(outside it: the variables are the worker's own, not mirrored). Worker 0 prints the global
losses as JSON. Data: scikit-learn's handwritten digits (8x8, scaled to [0, 1]), in order.

Run: python -m ember.distribute.launch -n N tests/distribute/mw_digits_worker.py STEPS
"""

import json
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import ember as em  # noqa: E402

GLOBAL_BATCH = 32


def digits(n: int):
    """The first n of scikit-learn's 1,797 handwritten digits: 8x8x1 images in [0, 1]."""
    from sklearn.datasets import load_digits
    data = load_digits()
    images = (data.images[:n] / 16.0).reshape(-1, 8, 8, 1).astype(np.float32)
    return images, data.target[:n].astype(np.int32)


def main(steps: int) -> None:
    strategy = em.distribute.MultiWorkerMirroredStrategy()
    rank = strategy.cluster_resolver.task_id
    workers = strategy.cluster_resolver.num_workers
    R = em.distribute.ReduceOp
    model = em.Sequential([em.layers.Flatten(), em.layers.Dense(256, activation="relu"),
                           em.layers.Dense(10)], name="mlp")
    model.build((None, 8, 8, 1))
    rng = np.random.default_rng(1)  # the same initial weights on every worker
    for v in model.trainable_variables:
        v.assign((0.1 * rng.standard_normal(v.shape)).astype(np.float32))
    loss_fn = em.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    optimizer = em.optimizers.Adam(1e-2)

    @em.function
    def gradients(x, y):
        with em.GradientTape() as tape:
            loss = em.reduce_sum(loss_fn(y, model(x))) / GLOBAL_BATCH
        return loss, tape.gradient(loss, model.trainable_variables)

    @em.function
    def apply(grads):
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    def replica_step(x, y):
        loss, grads = gradients(x, y)
        ctx = em.distribute.get_replica_context()
        return loss, [ctx.all_reduce(R.SUM, g) for g in grads]

    images, labels = digits(GLOBAL_BATCH * steps)
    share = GLOBAL_BATCH // workers
    losses = []
    for step in range(steps):
        batch = slice(step * GLOBAL_BATCH + rank * share, step * GLOBAL_BATCH + (rank + 1) * share)
        per_replica, grads = strategy.run(replica_step, args=(images[batch], labels[batch]))
        apply(grads)  # one replica per worker: the all-reduced gradients, applied here
        losses.append(float(strategy.reduce(R.SUM, per_replica, axis=None)))
    if strategy.extended.should_checkpoint:
        print(json.dumps({"workers": workers, "losses": losses}), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
