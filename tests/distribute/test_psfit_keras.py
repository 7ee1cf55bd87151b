"""Keras's Model.fit under ParameterServerStrategy, as the distributed input guide's snippet
and TF's parameter-server training guide: the preprocessing layer (a StringLookup of a
vocabulary file) and the model made under `strategy.scope()`, a `DatasetCreator` whose
`dataset_fn` maps the layer, `model.fit(dataset_creator, epochs, steps_per_epoch,
callbacks)` on an in-process cluster of 2 workers and 2 parameter servers, the large weights
sharded by the variable partitioner."""

import numpy as np
import pytest

import ember as em

PS = em.distribute.experimental
VOCAB = ["apple", "banana", "cherry", "date", "elder", "fig", "grape"]
WORDS = VOCAB + ["kiwi"]  # kiwi is out of the vocabulary: index 0
BATCH = len(WORDS)  # every batch is the whole vocabulary, in order


def _strategy(num_workers=2, num_ps=2):
    resolver = PS.create_in_process_cluster(num_workers=num_workers, num_ps=num_ps)
    # weights of more than 32 bytes are split into 2 shards (the embedding table and the
    # Dense kernel), the bias stays whole
    variable_partitioner = PS.partitioners.MinSizePartitioner(min_shard_bytes=32,
                                                              max_shards=2)
    return PS.ParameterServerStrategy(resolver, variable_partitioner=variable_partitioner)


def _model():
    em.random.set_seed(0)
    model = em.keras.Sequential([em.keras.layers.Embedding(len(VOCAB) + 1, 8),
                                 em.keras.layers.Dense(2)])
    model.compile(optimizer=em.optimizers.Adam(0.05),
                  loss=em.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


class Recorder(em.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def on_train_begin(self, logs=None):
        self.calls.append(("train_begin", self.params["steps"]))

    def on_epoch_begin(self, epoch, logs=None):
        self.calls.append(("epoch_begin", epoch))

    def on_epoch_end(self, epoch, logs=None):
        self.calls.append(("epoch_end", epoch, sorted(logs)))

    def on_train_end(self, logs=None):
        self.calls.append(("train_end",))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    file_path = tmp_path_factory.mktemp("vocab") / "vocabulary.txt"
    file_path.write_text("\n".join(VOCAB) + "\n")  # one token per line
    FILE_PATH = str(file_path)
    contexts = []

    # the guide's snippet
    strategy = _strategy()
    with strategy.scope():
        preprocessing_layer = em.keras.layers.StringLookup(vocabulary=FILE_PATH)
        model = _model()

    def dataset_fn(input_context):
        contexts.append((input_context.num_input_pipelines, input_context.input_pipeline_id))
        dataset = em.data.Dataset.from_tensor_slices(WORDS).repeat()
        dataset = dataset.batch(input_context.get_per_replica_batch_size(BATCH))
        dataset = dataset.map(preprocessing_layer)
        return dataset.map(lambda ids: (ids, ids % 2))

    recorder = Recorder()
    callbacks = [recorder]
    dataset_creator = em.keras.utils.experimental.DatasetCreator(dataset_fn)
    history = model.fit(dataset_creator, epochs=5, steps_per_epoch=20, callbacks=callbacks,
                        verbose=0)
    return dict(strategy=strategy, model=model, history=history, recorder=recorder,
                contexts=contexts, creator=dataset_creator, layer=preprocessing_layer)


def test_fit_trains_with_the_dataset_creator_on_the_workers(trained):
    history = trained["history"]
    assert history.epoch == [0, 1, 2, 3, 4]
    losses = history.history["loss"]
    assert len(losses) == 5 and losses[-1] < losses[0] / 4
    assert history.history["accuracy"][-1] == 1.0
    # each worker built its own whole pipeline from the DatasetCreator (TF's)
    assert trained["contexts"] == [(1, 0), (1, 0)]
    # every step updated the optimizer's step counter on the parameter servers
    assert trained["model"].optimizer.iterations.numpy() == 5 * 20


def test_epoch_level_callbacks_are_called(trained):
    keys = ["accuracy", "loss"]
    assert trained["recorder"].calls == [("train_begin", 20)] + [
        call for epoch in range(5)
        for call in (("epoch_begin", epoch), ("epoch_end", epoch, keys))] + [("train_end",)]


def test_the_partitioner_shards_the_large_weights_on_the_parameter_servers(trained):
    model = trained["model"]
    embedding, dense = model.layers
    for sharded in (embedding.embeddings, dense.kernel):  # 256 and 64 bytes
        assert isinstance(sharded, em.distribute.ShardedVariable)
        assert [s.shape.as_list()[0] for s in sharded.variables] == [4, 4]
        assert all(s.device.startswith("/job:ps/") for s in sharded.variables)
    assert not isinstance(dense.bias, em.distribute.ShardedVariable)  # 8 bytes
    assert dense.bias.device.startswith("/job:ps/")
    names = [v.name for v in model.trainable_variables]  # the optimizer updates the shards
    assert f"{embedding.name}/embeddings/part_1:0" in names
    assert f"{dense.name}/kernel/part_0:0" in names


def test_predict_runs_on_the_coordinator_with_the_ps_weights(trained):
    model = trained["model"]
    ids = np.arange(len(VOCAB) + 1)
    table, kernel = (np.concatenate([s.numpy() for s in v.variables])  # the ps copies
                     for v in (model.layers[0].embeddings, model.layers[1].kernel))
    expected = table[ids] @ kernel + model.layers[1].bias.numpy()
    got = model.predict(ids, batch_size=4, verbose=0)  # two batches, in order
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert (got.argmax(-1) == ids % 2).all()


def test_predict_before_compile_builds_the_weights_on_the_parameter_servers(trained):
    with trained["strategy"].scope():
        model = em.keras.Sequential([em.keras.layers.Dense(1)])
    assert model.predict(np.ones([3, 4], np.float32), verbose=0).shape == (3, 1)
    assert model.layers[0].kernel.device.startswith("/job:ps/")


def test_evaluate_schedules_a_dataset_creator_on_the_workers(trained):
    model = trained["model"]
    logits = model.predict(np.arange(len(VOCAB) + 1), batch_size=4, verbose=0)
    logits = logits.astype(np.float64)
    labels = np.arange(len(VOCAB) + 1) % 2
    log_softmax = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -log_softmax[np.arange(len(labels)), labels].mean()
    loss, accuracy = model.evaluate(trained["creator"], steps=6, verbose=0)
    assert loss == pytest.approx(expected, rel=1e-4, abs=1e-6)  # every batch is the same
    assert accuracy == 1.0
    assert model.evaluate(trained["creator"], steps=2, verbose=0,
                          return_dict=True)["loss"] == pytest.approx(loss, rel=1e-5)


def test_fit_takes_a_callable_dataset_fn_and_validation_data(trained):
    model, layer = trained["model"], trained["layer"]

    def dataset_fn(input_context):
        dataset = em.data.Dataset.from_tensor_slices(WORDS).repeat()
        dataset = dataset.batch(input_context.get_per_replica_batch_size(BATCH))
        return dataset.map(lambda words: (layer(words), layer(words) % 2))

    class StopAfterTwo(em.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.model.stop_training = epoch == 1

    history = model.fit(dataset_fn, epochs=4, steps_per_epoch=4, validation_data=dataset_fn,
                        validation_steps=2, callbacks=[StopAfterTwo()], verbose=0)
    assert history.epoch == [0, 1]  # stopped by the callback
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history.history["val_accuracy"] == [1.0, 1.0]


def test_fit_needs_a_dataset_creator_and_steps_per_epoch(trained):
    model, creator = trained["model"], trained["creator"]
    ids = np.arange(len(VOCAB) + 1)
    dataset = em.data.Dataset.from_tensor_slices((ids, ids % 2)).batch(4)
    for x in (dataset, ids):
        with pytest.raises(ValueError, match=r"Model\.fit: with ParameterServerStrategy, "
                           r"the input must be an em\.keras\.utils\.experimental\."
                           r"DatasetCreator .*got (an em\.data\.Dataset|ndarray):"):
            model.fit(x, ids % 2 if x is ids else None, epochs=1, steps_per_epoch=2)
    with pytest.raises(ValueError, match="steps_per_epoch is required with "
                       "ParameterServerStrategy"):
        model.fit(creator, epochs=1)
    with pytest.raises(ValueError, match="validation_data: with ParameterServerStrategy, "
                       "the input must be an em.keras.utils.experimental.DatasetCreator"):
        model.fit(creator, epochs=1, steps_per_epoch=2, validation_data=dataset,
                  validation_steps=2)
    with pytest.raises(ValueError, match="validation_steps is required"):
        model.fit(creator, epochs=1, steps_per_epoch=2, validation_data=creator)
    with pytest.raises(ValueError, match="DatasetCreator"):
        model.evaluate(dataset, steps=2)
    features_only = em.keras.utils.experimental.DatasetCreator(
        lambda input_context: em.data.Dataset.from_tensor_slices(ids).repeat().batch(4))
    with pytest.raises(ValueError, match=r"Model\.fit: each element of the DatasetCreator's "
                       r"dataset must be a \(features, labels\) pair"):
        model.fit(features_only, epochs=1, steps_per_epoch=2)
    with pytest.raises(ValueError, match="steps is required"):
        model.evaluate(creator)


def test_batch_level_callbacks_are_refused_as_tf_does(trained):
    class PerBatch(em.keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            pass

    with pytest.raises(ValueError, match="Batch-level `Callback`s are not supported with "
                       "`ParameterServerStrategy`.*PerBatch"):
        trained["model"].fit(trained["creator"], epochs=1, steps_per_epoch=2,
                             callbacks=[PerBatch()])


def test_a_worker_whose_input_runs_out_raises_out_of_range(trained):
    model = trained["model"]
    ids = np.arange(len(VOCAB) + 1)

    def finite(input_context):  # 2 batches per worker: 6 steps cannot all have data
        return em.data.Dataset.from_tensor_slices((ids, ids % 2)).repeat(2).batch(BATCH)

    creator = em.keras.utils.experimental.DatasetCreator(finite)
    with pytest.raises(em.errors.OutOfRangeError, match="repeat"):
        model.fit(creator, epochs=1, steps_per_epoch=6, verbose=0)
    # the coordinator reported the error once: fit runs again afterwards (2 steps: at most
    # 2 batches of a worker's fresh pipeline)
    assert model.fit(creator, epochs=1, steps_per_epoch=2, verbose=0).epoch == [0]
