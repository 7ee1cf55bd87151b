"""The examples of the distributed input guide (../shared/guides/tf-distributed-input-guide)
with `em.` for `tf.` (its `@tf.function`s as `@em.function`s), run by test_distribute_input.py
and test_distfn_guide.py in a subprocess whose CPU is split into 5 logical CPUs (the guide's
4 GPUs are CPU:0..3 here). Each example prints one line,
`name: value` (the value a Python literal), which the tests compare with the guide's output.
"""

import ast
import io
import time

import numpy as np

import ember as em

em.config.set_fallback("error")  # the em.function examples run compiled, or fail

N_VIRTUAL_DEVICES = 5
physical_devices = em.config.list_physical_devices("CPU")
em.config.set_logical_device_configuration(
    physical_devices[0],
    [em.config.LogicalDeviceConfiguration() for _ in range(N_VIRTUAL_DEVICES)])

FOUR = ["cpu:0", "cpu:1", "cpu:2", "cpu:3"]  # the guide's four GPUs


def report(name, value):
    print(f"{name}: {value!r}", flush=True)


def local(strategy, value):
    """The replicas' values of a PerReplica (or a tensor), as lists."""
    return [v.numpy().tolist() for v in strategy.experimental_local_results(value)]


def shapes(strategy, value):
    return [tuple(v.shape) for v in strategy.experimental_local_results(value)]


def split(strategy, dataset):
    """Every step of the distributed dataset: the replicas' batches."""
    return [local(strategy, x) for x in strategy.experimental_distribute_dataset(dataset)]


# -- tf.distribute.Strategy.experimental_distribute_dataset -----------------------------------
report("devices", [d.name.rsplit("/", 1)[1] for d in em.config.list_logical_devices()])

global_batch_size = 16
dataset = em.data.Dataset.from_tensors(([1.], [1.])).repeat(100).batch(global_batch_size)


@em.function
def train_step(inputs):
    features, labels = inputs
    return labels - 0.3 * features


report("non_distributed", [(tuple(r.shape), np.unique(np.round(r.numpy(), 5)).tolist())
                           for r in (train_step(inputs) for inputs in dataset)])

mirrored_strategy = em.distribute.MirroredStrategy(FOUR)
dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)
first = next(iter(dist_dataset))  # 1 global batch of data fed to the model in 1 step
report("first_element", [local(mirrored_strategy, part) for part in first])
two = em.distribute.MirroredStrategy(["cpu:0", "cpu:1"])
report("first_element_2", [shapes(two, part) for part in next(iter(
    two.experimental_distribute_dataset(dataset)))])

# -- the rebatching tables ---------------------------------------------------------------
three = em.distribute.MirroredStrategy(["cpu:0", "cpu:1", "cpu:2"])
five = em.distribute.MirroredStrategy()
report("table_6_by_4_on_2", split(two, em.data.Dataset.range(6).batch(4, drop_remainder=False)))
report("table_4_by_4_on_5", split(five, em.data.Dataset.range(4).batch(4)))
report("table_8_by_4_on_3", split(three, em.data.Dataset.range(8).batch(4)))
empty = next(iter(five.experimental_distribute_dataset(em.data.Dataset.range(4).batch(4))))
report("empty_batch", [str(v.dtype) + str(tuple(v.shape)) for v in empty.values])

# -- sharding options (one worker here: the policy changes nothing) ------------------------
dataset = em.data.Dataset.from_tensors(([1.], [1.])).repeat(64).batch(16)
options = em.data.Options()
options.experimental_distribute.auto_shard_policy = em.data.experimental.AutoShardPolicy.DATA
dataset = dataset.with_options(options)
report("shard_options", [[shapes(two, part) for part in x]
                         for x in two.experimental_distribute_dataset(dataset)])

# -- prefetching: num_replicas_in_sync per-replica batches ahead ---------------------------
pulled = []


def count():
    for i in range(40):
        pulled.append(i)
        yield i


counted = em.data.Dataset.from_generator(
    count, output_signature=em.TensorSpec([], em.int64)).batch(4)
iterator = iter(two.experimental_distribute_dataset(counted))
next(iterator)
deadline = time.monotonic() + 10
while len(pulled) < 12 and time.monotonic() < deadline:  # 1 step taken + 2 pieces buffered
    time.sleep(0.01)
time.sleep(0.2)
report("prefetched", (len(pulled) >= 12, len(pulled) < 40))
del iterator

# -- tf.distribute.Strategy.distribute_datasets_from_function -----------------------------


def dataset_fn(input_context):
    batch_size = input_context.get_per_replica_batch_size(global_batch_size)
    dataset = em.data.Dataset.from_tensors(([1.], [1.])).repeat(64).batch(16)
    dataset = dataset.shard(
        input_context.num_input_pipelines, input_context.input_pipeline_id)
    dataset = dataset.batch(batch_size)
    dataset = dataset.prefetch(2)  # This prefetches 2 batches per device.
    report("input_context", (str(input_context), input_context.num_replicas_in_sync))
    return dataset


dist_dataset_fn = mirrored_strategy.distribute_datasets_from_function(dataset_fn)
report("from_function", [[shapes(mirrored_strategy, part) for part in x]
                         for x in dist_dataset_fn])

# -- iterating: for, iter / next / get_next -----------------------------------------------
losses = []
for x in dist_dataset:
    # train_step trains the model using the dataset elements
    loss = mirrored_strategy.run(train_step, args=(x,))
    losses.append((shapes(mirrored_strategy, loss),
                   np.unique(np.round(local(mirrored_strategy, loss), 5)).tolist()))
report("for_loop", losses)

num_epochs = 10
steps_per_epoch = 5
losses = []
for epoch in range(num_epochs):
    dist_iterator = iter(dist_dataset)
    for step in range(steps_per_epoch):
        # train_step trains the model using the dataset elements
        if epoch % 2 == 0:
            loss = mirrored_strategy.run(train_step, args=(next(dist_iterator),))
        else:  # which is the same as
            loss = mirrored_strategy.run(train_step, args=(dist_iterator.get_next(),))
        losses.append(shapes(mirrored_strategy, loss))
report("iter_next", (len(losses), sorted(set(map(tuple, losses)))))

dist_iterator = iter(dist_dataset)
for _ in range(7):
    dist_iterator.get_next()
try:
    dist_iterator.get_next()
except em.errors.OutOfRangeError as err:
    report("out_of_range", type(err).__name__)
report("next_at_end", next(dist_iterator, "StopIteration"))

# -- a host training loop: next(iterator) in em.range, OutOfRangeError past the end -------------
steps_per_loop = 5
strategy = mirrored_strategy


def step_fn(x):
    return x * 2


@em.function
def train_fn(iterator):
    for _ in em.range(steps_per_loop):
        strategy.run(step_fn, args=(next(iterator),))


host_iterator = iter(strategy.experimental_distribute_dataset(
    em.data.Dataset.range(32).batch(4)))
train_fn(host_iterator)  # steps 1-5 of 8
try:
    train_fn(host_iterator)  # steps 6-8, then the end of the input
except em.errors.OutOfRangeError as err:
    report("host_loop_out_of_range", type(err).__name__)

# -- get_next_as_optional -------------------------------------------------------------------
global_batch_size_9 = 4
dataset_9 = em.data.Dataset.range(9).batch(global_batch_size_9)
distributed_iterator = iter(strategy.experimental_distribute_dataset(dataset_9))
printed = io.StringIO()  # tf.print's output, here to read it back


@em.function
def train_fn(distributed_iterator):
    for _ in em.range(steps_per_loop):
        optional_data = distributed_iterator.get_next_as_optional()
        if not optional_data.has_value():
            break
        per_replica_results = strategy.run(lambda x: x, args=(optional_data.get_value(),))
        em.print(strategy.experimental_local_results(per_replica_results),
                 output_stream=printed)


train_fn(distributed_iterator)
report("get_next_as_optional", [ast.literal_eval(line)
                                for line in printed.getvalue().splitlines()])
report("get_next_as_optional_printed", printed.getvalue())

# -- element_spec -------------------------------------------------------------------------
report("element_spec", repr(dist_dataset.element_spec))
report("iterator_element_spec", iter(dist_dataset).element_spec == dist_dataset.element_spec)


@em.function(input_signature=[dist_dataset.element_spec])
def spec_train_step(per_replica_inputs):
    def step_fn(inputs):
        return 2 * inputs
    return mirrored_strategy.run(step_fn, args=(per_replica_inputs,))


outputs = []
for _ in range(5):
    iterator = iter(dist_dataset)
    for _ in range(5):
        output = spec_train_step(next(iterator))
        outputs.append([local(mirrored_strategy, part) for part in output])
report("element_spec_steps", (len(outputs), outputs[0]))
report("element_spec_traces", spec_train_step.experimental_get_tracing_count())

# -- preprocessing under strategy.scope() with distribute_datasets_from_function -------------
vocab = ["a", "b", "c", "d", "f"]
with strategy.scope():
    # Create the layer(s) under scope.
    layer = em.keras.layers.StringLookup(vocabulary=vocab)


def kpl_dataset_fn(input_context):
    # a em.data.Dataset
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


distributed_dataset = strategy.distribute_datasets_from_function(kpl_dataset_fn)
# Print out a few example batches.
distributed_dataset_iterator = iter(distributed_dataset)
printed = io.StringIO()
batches = []
for _ in range(3):
    batch = next(distributed_dataset_iterator)
    print(batch, file=printed)
    batches.append(batch)
report("kpl", [local(strategy, b) for b in batches])
report("kpl_dtypes", sorted({v.dtype.name for b in batches for v in b.values}))
report("kpl_printed", " ".join(printed.getvalue().split()))

# -- reordering outputs by index ------------------------------------------------------------
dataset_size = 24
batch_size = 6
dataset = em.data.Dataset.range(dataset_size).enumerate().batch(batch_size)
dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)


def predict(index, inputs):
    outputs = 2 * inputs
    return index, outputs


result = {}
for index, inputs in dist_dataset:
    output_index, outputs = mirrored_strategy.run(predict, args=(index, inputs))
    indices = list(mirrored_strategy.experimental_local_results(output_index))
    rindices = []
    for a in indices:
        rindices.extend(a.numpy())
    outputs = list(mirrored_strategy.experimental_local_results(outputs))
    routputs = []
    for a in outputs:
        routputs.extend(a.numpy())
    for i, value in zip(rindices, routputs):
        result[int(i)] = int(value)
report("reorder", result)

# -- experimental_distribute_values_from_function ------------------------------------------


def value_fn(ctx):
    return em.constant(ctx.replica_id_in_sync_group)


distributed_values = mirrored_strategy.experimental_distribute_values_from_function(value_fn)
report("values_from_function", [local(mirrored_strategy, mirrored_strategy.run(
    lambda x: x, args=(distributed_values,))) for _ in range(4)])

# -- input from a generator: Dataset.from_generator -----------------------------------------


def input_gen():
    while True:
        yield np.random.rand(4)


# use Dataset.from_generator
dataset = em.data.Dataset.from_generator(
    input_gen, output_types=(em.float32), output_shapes=em.TensorShape([4]))
dist_dataset = mirrored_strategy.experimental_distribute_dataset(dataset)
iterator = iter(dist_dataset)
results = []
for _ in range(4):
    result = mirrored_strategy.run(lambda x: x, args=(next(iterator),))
    results.append([(tuple(v.shape), str(v.dtype), 0.0 <= float(v.numpy()[0]) < 1.0)
                    for v in mirrored_strategy.experimental_local_results(result)])
report("from_generator", results)

# -- preprocessing with Model.fit: the layers made under the scope, fit distributes the data --
import os  # noqa: E402
import tempfile  # noqa: E402

FILE_PATH = os.path.join(tempfile.mkdtemp(prefix="ember-guide-"), "vocabulary.txt")
with open(FILE_PATH, "w") as f:  # one token per line
    f.write("\n".join(str(token) for token in [10, 20, 30, 40, 50, 60]) + "\n")
tokens = np.array([10, 20, 30, 40, 50, 60, 70, 10] * 12, dtype=np.int64)[:, None]
labels = (tokens[:, 0] >= 40).astype(np.int64)  # 70 is out of the vocabulary (OOV index 0)
dataset = em.data.Dataset.from_tensor_slices((tokens, labels)).batch(16)

strategy = em.distribute.MirroredStrategy()
with strategy.scope():
    # Create the layer(s) under scope.
    integer_preprocessing_layer = em.keras.layers.IntegerLookup(vocabulary=FILE_PATH)
    em.random.set_seed(0)
    model = em.keras.Sequential([em.keras.layers.Embedding(7, 4), em.keras.layers.Flatten(),
                                 em.keras.layers.Dense(2)])
    model.compile(optimizer=em.optimizers.Adam(0.05),
                  loss=em.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
dataset = dataset.map(lambda x, y: (integer_preprocessing_layer(x), y))
history = model.fit(dataset, epochs=5, verbose=0)
report("kpl_fit", (strategy.num_replicas_in_sync, history.epoch,
                   history.history["loss"][-1] < history.history["loss"][0] / 4,
                   history.history["accuracy"][-1], type(model.variables[0]).__name__))

# the DatasetCreator form (the guide shows it with ParameterServerStrategy)
WORDS_PATH = os.path.join(os.path.dirname(FILE_PATH), "words.txt")
with open(WORDS_PATH, "w") as f:
    f.write("a\nb\nc\nd\n")
with strategy.scope():
    preprocessing_layer = em.keras.layers.StringLookup(vocabulary=WORDS_PATH)
    em.random.set_seed(0)
    model = em.keras.Sequential([em.keras.layers.Embedding(5, 4), em.keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss=em.losses.SparseCategoricalCrossentropy(True))


def creator_dataset_fn(input_context):
    words = em.data.Dataset.from_tensor_slices(["a", "b", "c", "d", "e"] * 4).repeat()
    word_labels = em.data.Dataset.from_tensor_slices([0, 0, 1, 1, 0] * 4).repeat()
    dataset = words.map(preprocessing_layer)
    dataset = em.data.Dataset.zip((dataset, word_labels))
    return dataset.batch(input_context.get_per_replica_batch_size(10))


seen = []


class Steps(em.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        seen.append(epoch)


callbacks = [Steps()]
dataset_creator = em.keras.utils.experimental.DatasetCreator(creator_dataset_fn)
history = model.fit(dataset_creator, epochs=5, steps_per_epoch=20, callbacks=callbacks,
                    verbose=0)
report("kpl_fit_creator", (seen, history.history["loss"][-1] < history.history["loss"][0]))

# -- the same snippet with ParameterServerStrategy, as the guide shows it: an in-process
# cluster of 2 workers and 1 parameter server; fit schedules the steps on the workers
seen.clear()
cluster_resolver = em.distribute.experimental.create_in_process_cluster(num_workers=2,
                                                                        num_ps=1)
variable_partitioner = em.distribute.experimental.partitioners.MinSizePartitioner(
    min_shard_bytes=32, max_shards=2)  # the 5 x 4 embedding table: 2 shards
strategy = em.distribute.experimental.ParameterServerStrategy(
    cluster_resolver,
    variable_partitioner=variable_partitioner)
with strategy.scope():
    preprocessing_layer = em.keras.layers.StringLookup(vocabulary=WORDS_PATH)
    em.random.set_seed(0)
    model = em.keras.Sequential([em.keras.layers.Embedding(5, 4), em.keras.layers.Dense(2)])
    model.compile(optimizer=em.optimizers.Adam(0.05),
                  loss=em.losses.SparseCategoricalCrossentropy(True))


def dataset_fn(input_context):
    words = em.data.Dataset.from_tensor_slices(["a", "b", "c", "d", "e"] * 4).repeat()
    word_labels = em.data.Dataset.from_tensor_slices([0, 0, 1, 1, 0] * 4).repeat()
    dataset = words.map(preprocessing_layer)
    dataset = em.data.Dataset.zip((dataset, word_labels))
    return dataset.batch(input_context.get_per_replica_batch_size(10))


dataset_creator = em.keras.utils.experimental.DatasetCreator(dataset_fn)
history = model.fit(dataset_creator, epochs=5, steps_per_epoch=20, callbacks=callbacks,
                    verbose=0)
report("kpl_fit_ps", (seen, history.history["loss"][-1] < history.history["loss"][0] / 4,
                      type(model.layers[0].embeddings).__name__,
                      int(model.optimizer.iterations.numpy())))
