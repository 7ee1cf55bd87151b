"""strategy.run and distributed input inside em.function, each case next to the same
computation run eagerly, in a subprocess whose CPU is split into 5 logical CPUs (run by
test_distfn_compiled.py). Each case prints one line `name: value` (a Python literal).
Nothing falls back to the interpreter: em.config.set_fallback("error")."""

import gc

import numpy as np

import ember as em

physical = em.config.list_physical_devices("CPU")
em.config.set_logical_device_configuration(
    physical[0], [em.config.LogicalDeviceConfiguration() for _ in range(5)])
em.config.set_fallback("error")

FOUR = ["cpu:0", "cpu:1", "cpu:2", "cpu:3"]
SUM, MEAN = em.distribute.ReduceOp.SUM, em.distribute.ReduceOp.MEAN
strategy = em.distribute.MirroredStrategy(FOUR)
three = em.distribute.MirroredStrategy(["cpu:0", "cpu:1", "cpu:2"])


def report(name, value):
    print(f"{name}: {value!r}", flush=True)


def local(s, value):
    return [np.asarray(v.numpy()).tolist() for v in s.experimental_local_results(value)]


# -- a for loop over a distributed dataset inside em.function (the guide's train_step) ------
dataset = em.data.Dataset.from_tensors(([1.], [1.])).repeat(100).batch(16)
dist_dataset = strategy.experimental_distribute_dataset(dataset)


@em.function
def train_step(inputs):
    features, labels = inputs
    return labels - 0.3 * features


@em.function
def loop(dist_dataset):
    total = em.constant(0.0)
    steps = em.constant(0)
    for x in dist_dataset:
        loss = strategy.run(train_step, args=(x,))
        total += strategy.reduce(SUM, loss, axis=0)[0]
        steps += 1
    return total, steps


eager_total = 0.0
for x in dist_dataset:
    eager_total += strategy.reduce(SUM, strategy.run(train_step, args=(x,)), axis=0).numpy()[0]
total, steps = loop(dist_dataset)
report("for_in_function", (round(float(total), 4), int(steps), round(float(eager_total), 4)))
traced = loop.get_concrete_function(dist_dataset).mlir("traced")
report("one_loop_in_ir", (traced.count("scf.while"), traced.count("call @__dist_next_")))
other = strategy.experimental_distribute_dataset(
    em.data.Dataset.from_tensors(([2.], [2.])).repeat(8).batch(4))
report("same_spec_one_trace", (round(float(loop(other)[0]), 4),
                               loop.experimental_get_tracing_count()))
wider = strategy.experimental_distribute_dataset(
    em.data.Dataset.from_tensors(([1., 1.], [1., 1.])).repeat(8).batch(4))
report("new_spec_new_trace", (round(float(loop(wider)[0]), 4),
                              loop.experimental_get_tracing_count()))


@em.function
def captured_loop():
    total = em.constant(0.0)
    for features, labels in dist_dataset:  # a distributed dataset the function captures
        total += strategy.reduce(SUM, features, axis=0)[0]
    return total


report("captured_dataset", (float(captured_loop()), float(captured_loop())))


@em.function
def first_two_steps():
    iterator = iter(dist_dataset)  # a fresh iterator at each call, as the function runs
    features, _ = next(iterator)
    more, _ = next(iterator)
    return strategy.reduce(SUM, features, axis=0)[0] + strategy.reduce(SUM, more, axis=0)[0]


report("iter_in_function", (float(first_two_steps()), float(first_two_steps())))


from_function = strategy.distribute_datasets_from_function(
    lambda ctx: em.data.Dataset.range(10).batch(2))  # the replicas take the batches in turn


def sum_of(dist_dataset):
    total = em.constant(0, dtype=em.int64)
    for x in dist_dataset:
        total += strategy.reduce(SUM, strategy.run(em.reduce_sum, args=(x,)), axis=None)
    return total


report("from_function_in_function", (int(em.function(sum_of)(from_function)),
                                     int(sum_of(from_function))))


@em.function
def returns_steps(iterator):
    return next(iterator)


step = returns_steps(iter(strategy.experimental_distribute_dataset(
    em.data.Dataset.range(6).batch(6))))
report("returned_per_replica", (type(step).__name__, local(strategy, step)))

# -- all_reduce and reduce as ops of the trace, against the eager replicas ------------------


def reducer(x):
    ctx = em.distribute.get_replica_context()
    rid = em.cast(ctx.replica_id_in_sync_group, em.float32)
    value = em.reduce_sum(em.cast(x, em.float32)) + rid
    return (ctx.all_reduce(SUM, value), ctx.all_reduce(MEAN, value * 2.0),
            ctx.all_reduce(MEAN, em.cast(x, em.int64)[:1] * 0 + 7))


def reductions(per_replica):
    out = strategy.run(reducer, args=(per_replica,))
    return out + (strategy.reduce(MEAN, per_replica, axis=0),
                  strategy.reduce(SUM, per_replica, axis=None))


pieces = strategy.experimental_distribute_values_from_function(
    lambda ctx: em.constant([ctx.replica_id_in_sync_group * 10 + 1,
                             ctx.replica_id_in_sync_group * 10 + 2]))
compiled = em.function(reductions)(pieces)
eager = reductions(pieces)
report("reductions", [(local(strategy, c), local(strategy, e))
                      for c, e in zip(compiled, eager)])

# -- a host training loop: next(iterator) in em.range keeps the position across calls ------


def sum_step(x):
    return em.distribute.get_replica_context().all_reduce(SUM, em.reduce_sum(x))


@em.function
def host_loop(iterator):
    total = em.constant(0, dtype=em.int64)
    for _ in em.range(3):
        result = strategy.run(sum_step, args=(next(iterator),))
        total += strategy.experimental_local_results(result)[1]
    return total


iterator = iter(strategy.experimental_distribute_dataset(em.data.Dataset.range(26).batch(4)))
sums = [int(host_loop(iterator)), int(host_loop(iterator))]
try:
    host_loop(iterator)
except em.errors.OutOfRangeError as err:
    sums.append(type(err).__name__)
report("host_loop", sums)


@em.function
def optional_loop(iterator):
    seen = em.constant(0)
    for _ in em.range(10):
        optional = iterator.get_next_as_optional()
        if not optional.has_value():
            break
        seen += three.reduce(SUM, three.run(em.size, args=(optional.get_value(),)))
    return seen


report("optional_partial", int(optional_loop(iter(three.experimental_distribute_dataset(
    em.data.Dataset.range(10).batch(4))))))

# -- training with MirroredVariables: compiled agrees with eager ----------------------------
rng = np.random.RandomState(0)
X = rng.rand(22, 3).astype(np.float32)
Y = X @ np.array([[1.], [-2.], [.5]], np.float32) + 0.3
GLOBAL = 8
train_data = three.experimental_distribute_dataset(
    em.data.Dataset.from_tensor_slices((X, Y)).batch(GLOBAL))  # 8, 8, 6: partial steps


def model():
    with three.scope():
        w = em.Variable(np.zeros((3, 1), np.float32), name="w")
        b = em.Variable(np.zeros((1,), np.float32), name="b")
        optimizer = em.optimizers.SGD(0.5, momentum=0.5)
        optimizer.build([w, b])

    def step_fn(inputs):
        features, labels = inputs
        with em.GradientTape() as tape:
            loss = em.reduce_sum((em.matmul(features, w) + b - labels) ** 2) / GLOBAL
        grads = tape.gradient(loss, [w, b])
        optimizer.apply_gradients(zip(grads, [w, b]))
        return loss
    return w, b, optimizer, step_fn


w, b, optimizer, step_fn = model()
eager_losses = []
for epoch in range(3):
    for x in train_data:
        eager_losses.append(float(three.reduce(SUM, three.run(step_fn, args=(x,)))))
w2, b2, optimizer2, step_fn2 = model()


@em.function
def train_epoch(dist_dataset):
    total = em.constant(0.0)
    for x in dist_dataset:
        total += three.reduce(SUM, three.run(step_fn2, args=(x,)))
    return total


compiled_totals = [float(train_epoch(train_data)) for _ in range(3)]
eager_totals = [sum(eager_losses[i:i + 3]) for i in range(0, 9, 3)]
report("training", (
    bool(np.allclose(compiled_totals, eager_totals, rtol=1e-5)),
    bool(np.allclose(local(three, w2), local(three, w), rtol=1e-5, atol=1e-6)),
    bool(np.allclose(local(three, b2), local(three, b), rtol=1e-5, atol=1e-6)),
    len({str(c) for c in local(three, w2)}),  # the copies stay identical
    int(optimizer2.iterations.numpy()), train_epoch.experimental_get_tracing_count()))

# -- an em.function given to strategy.run inside an em.function runs in the same trace -------
with three.scope():
    u = em.Variable([1.0, 2.0], name="u")
    sgd = em.optimizers.SGD(0.1)


@em.function
def inner_train_step(x):
    with em.GradientTape() as tape:
        loss = em.reduce_sum(u * x) / 6.0
    sgd.apply_gradients(zip(tape.gradient(loss, [u]), [u]))  # all-reduces the gradients
    return loss


@em.function
def outer_train(iterator):
    for _ in em.range(2):
        three.run(inner_train_step, args=(next(iterator),))


outer_train(iter(three.experimental_distribute_dataset(
    em.data.Dataset.from_tensors([1.0, 1.0]).repeat(12).batch(6))))
report("nested_train_step", [[round(x, 5) for x in c] for c in local(three, u)])


@em.function
def inner_reduce(x):
    return em.distribute.get_replica_context().all_reduce(SUM, x)


try:
    em.function(lambda x: three.run(lambda y: inner_reduce(y) + 1.0, args=(x,)))(
        em.constant(1.0))
except ValueError as err:
    report("all_reduce_in_a_nested_function", str(err)[:70])

# -- per-replica copies inside the trace ----------------------------------------------------
with strategy.scope():
    v = em.Variable([1.0, 2.0], name="v")


def replica_writes():
    rid = em.cast(em.distribute.get_replica_context().replica_id_in_sync_group, em.float32)
    v.assign_add(em.ones([2]) * rid)
    return v.read_value() * 2.0


doubled = em.function(lambda: strategy.run(replica_writes))()
report("copies", (local(strategy, v), local(strategy, doubled)))

# -- errors -----------------------------------------------------------------------------------


callers = []


def uneven():
    callers.append(1)
    if len(callers) == 1:  # a Python branch: the first replica only
        return em.distribute.get_replica_context().all_reduce(SUM, em.constant(1.0))
    return em.constant(0.0)


try:
    em.function(lambda: strategy.run(uneven))()
except ValueError as err:
    report("uneven_all_reduce", (str(err).split(":")[0], err.__notes__[0][:30]))


def reduces_in_a_loop(x):
    for _ in em.range(2):
        x = em.distribute.get_replica_context().all_reduce(SUM, x)
    return x


try:
    em.function(lambda x: strategy.run(reduces_in_a_loop, args=(x,)))(em.constant(1.0))
except ValueError as err:
    report("all_reduce_in_a_loop", str(err)[:70])


def raises(x):
    em.distribute.get_replica_context().all_reduce(SUM, x)
    for _ in em.range(2):  # raised inside a region of the trace
        x += 1.0
        raise KeyError("in the replica function")
    return x


try:
    em.function(lambda x: strategy.run(raises, args=(x,)))(em.constant(1.0))
except KeyError as err:
    report("replica_raises", (err.args[0], err.__notes__[0][:30]))

gc.collect()  # the failed traces' MLIR modules go cleanly (never an abort)
report("collected", True)
