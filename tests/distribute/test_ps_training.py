"""Parameter-server training as TF's tutorial and the distributed input guide: a custom
training loop scheduled by a ClusterCoordinator on 2 in-process workers, with variables on
the parameter servers (an embedding-like table sharded by FixedShardsPartitioner), and
`create_per_worker_dataset` of the guide's `per_worker_dataset_fn` (with its StringLookup
preprocessing of "a", "c", "e": 1, 3, 0)."""

import threading

import numpy as np
import ember as em

PS = em.distribute.experimental
VOCAB, DIM = 20, 4


def _cluster(num_workers=2, num_ps=2, partitioner=None):
    resolver = PS.create_in_process_cluster(num_workers=num_workers, num_ps=num_ps)
    strategy = PS.ParameterServerStrategy(resolver, variable_partitioner=partitioner)
    return strategy, PS.coordinator.ClusterCoordinator(strategy)


def test_tutorial_training_loop_converges_on_two_workers():
    strategy, coordinator = _cluster(partitioner=PS.partitioners.FixedShardsPartitioner(2))
    rng = np.random.default_rng(0)

    class Model(em.Module):  # an embedding-like table and a logistic layer
        def __init__(self):
            super().__init__()
            self.embedding = em.Variable(rng.normal(0, 0.1, (VOCAB, DIM)).astype(np.float32),
                                         name="embedding")
            self.w = em.Variable(rng.normal(0, 0.1, (DIM, 1)).astype(np.float32), name="w")
            self.b = em.Variable(np.zeros(1, np.float32), name="b")

        def __call__(self, ids):
            return em.gather(self.embedding, ids) @ self.w + self.b

    with strategy.scope():
        model = Model()
        optimizer = em.optimizers.SGD(learning_rate=0.5)
        correct = em.Variable(np.int64(0), trainable=False, name="correct")
    embedding, w, b = model.embedding, model.w, model.b
    assert isinstance(embedding, em.distribute.ShardedVariable)
    assert [s.shape.as_list() for s in embedding.variables] == [[10, DIM], [10, DIM]]
    trainable = model.trainable_variables  # the shards of each sharded variable
    assert [v.name for v in trainable] == ["b:0", "embedding/part_0:0", "embedding/part_1:0",
                                           "w/part_0:0", "w/part_1:0"]

    def dataset_fn(input_context):
        ids = np.arange(VOCAB, dtype=np.int32)
        labels = (ids % 2).astype(np.float32)[:, None]  # odd ids are positive
        dataset = em.data.Dataset.from_tensor_slices((ids, labels)).shuffle(VOCAB, seed=1)
        return dataset.repeat().batch(input_context.get_per_replica_batch_size(8))

    @em.function
    def per_worker_dataset_fn():
        return strategy.distribute_datasets_from_function(dataset_fn)

    @em.function
    def step_fn(iterator):
        def replica_fn(ids, labels):
            with em.GradientTape() as tape:
                logits = model(ids)
                loss = em.reduce_mean(em.nn.sigmoid_cross_entropy_with_logits(
                    labels=labels, logits=logits))
            grads = tape.gradient(loss, trainable)
            optimizer.apply_gradients(zip(grads, trainable))
            hits = em.cast(em.equal(em.cast(logits > 0.0, em.float32), labels), em.int64)
            correct.assign_add(em.reduce_sum(hits))
            return loss

        ids, labels = next(iterator)
        losses = strategy.run(replica_fn, args=(ids, labels))
        return strategy.reduce(em.distribute.ReduceOp.SUM, losses, axis=None)

    per_worker_iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))
    steps = 25
    for _ in range(4):
        correct.assign(np.int64(0))
        for _ in range(steps):
            coordinator.schedule(step_fn, args=(per_worker_iterator,))
        coordinator.join()
    assert correct.numpy() == steps * 8  # the last epoch classifies every example
    assert optimizer.iterations.numpy() == 4 * steps  # every worker's step counted on the ps
    final = coordinator.schedule(step_fn, args=(per_worker_iterator,)).fetch()
    assert isinstance(final, np.float32) and final < 0.2  # fetch gives numpy(): a scalar
    # the model on the ps agrees with the loss of the (whole) data computed here
    ids = np.arange(VOCAB)
    logits = embedding.numpy()[ids] @ w.numpy() + b.numpy()
    assert np.all((logits[:, 0] > 0) == (ids % 2 == 1))


def test_per_worker_dataset_fn_of_the_guide_gives_each_worker_its_pipeline():
    # the guide's custom-training-loop preprocessing snippet, under ParameterServerStrategy
    strategy, coordinator = _cluster(num_workers=2, num_ps=1)
    vocab = ["a", "b", "c", "d", "f"]
    with strategy.scope():
        # Create the layer(s) under scope.
        layer = em.keras.layers.StringLookup(vocabulary=vocab)
    contexts = []

    def dataset_fn(input_context):
        contexts.append((input_context.num_input_pipelines, input_context.input_pipeline_id,
                         input_context.num_replicas_in_sync))
        # an em.data.Dataset
        dataset = em.data.Dataset.from_tensor_slices(["a", "c", "e"]).repeat()
        # Custom your batching, sharding, prefetching, etc.
        global_batch_size = 4
        batch_size = input_context.get_per_replica_batch_size(global_batch_size)
        dataset = dataset.batch(batch_size)
        dataset = dataset.shard(
            input_context.num_input_pipelines,
            input_context.input_pipeline_id)

        # Apply the preprocessing layer(s) to the em.data.Dataset
        def preprocess_with_kpl(input):
            return layer(input)

        processed_ds = dataset.map(preprocess_with_kpl)
        return processed_ds

    @em.function
    def per_worker_dataset_fn():
        return strategy.distribute_datasets_from_function(dataset_fn)

    per_worker_dataset = coordinator.create_per_worker_dataset(per_worker_dataset_fn)
    per_worker_iterator = iter(per_worker_dataset)
    assert contexts == [(1, 0, 1), (1, 0, 1)]  # one whole pipeline per worker (TF's)
    both_busy = threading.Barrier(2, timeout=20)

    def first_batch(iterator):  # both workers at once: each reads its own iterator
        batch = next(iterator)
        both_busy.wait()
        return batch

    first = [coordinator.schedule(first_batch, args=(per_worker_iterator,)) for _ in range(2)]
    coordinator.join()
    assert [r.fetch().tolist() for r in first] == [[1, 3, 0, 1]] * 2

    @em.function
    def next_batch(iterator):
        return next(iterator)

    rest = [coordinator.schedule(next_batch, args=(per_worker_iterator,)) for _ in range(4)]
    coordinator.join()
    got = sorted(r.fetch().tolist() for r in rest)
    assert got in ([[0, 1, 3, 0], [0, 1, 3, 0], [3, 0, 1, 3], [3, 0, 1, 3]],  # 2 + 2
                   [[0, 1, 3, 0], [1, 3, 0, 1], [3, 0, 1, 3], [3, 0, 1, 3]])  # 3 + 1
