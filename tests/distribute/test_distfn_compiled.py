"""strategy.run, all_reduce, reduce, MirroredVariables and distributed input inside
em.function (runtime/distribute/traced_run.py, staged.py): the compiled results agree with
the eager ones. The several-replica cases run in one subprocess (distfn_cases.py, 5 logical
CPUs: logical devices are fixed once per process); the one-replica ones here."""

import ast
import io
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import ember as em

CASES = pathlib.Path(__file__).with_name("distfn_cases.py")


@pytest.fixture(scope="module")
def cases() -> dict:
    done = subprocess.run([sys.executable, str(CASES)], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    lines = [line.split(": ", 1) for line in done.stdout.splitlines()]
    return {name: ast.literal_eval(value) for name, value in lines}


def test_a_for_loop_over_a_distributed_dataset_is_one_loop_in_the_function(cases):
    # 100 elements of 0.7 in 7 steps (the last one partial), as the eager loop
    assert cases["for_in_function"] == (70.0, 7, 70.0)
    assert cases["one_loop_in_ir"] == (1, 1)  # one scf.while, one pull per iteration
    assert cases["captured_dataset"] == (100.0, 100.0)  # a fresh iterator per call
    assert cases["iter_in_function"] == (32.0, 32.0)  # iter(dist_dataset): fresh per call


def test_the_same_element_spec_shares_a_trace(cases):
    assert cases["same_spec_one_trace"] == (11.2, 1)  # 8 elements of 1.4, no retrace
    assert cases["new_spec_new_trace"] == (5.6, 2)  # features of 2 columns: a new trace


def test_distribute_datasets_from_function_inside_a_function(cases):
    assert cases["from_function_in_function"] == (45, 45)  # a second step of empty batches


def test_a_step_returned_by_a_function_is_a_per_replica(cases):
    assert cases["returned_per_replica"] == ("PerReplica", [[0, 1], [2, 3], [4, 5], []])


def test_all_reduce_and_reduce_in_the_trace_agree_with_eager(cases):
    for compiled, eager in cases["reductions"]:
        assert compiled == eager
    total, mean, ints, reduced_mean, reduced_sum = [c for c, _ in cases["reductions"]]
    # replica r holds [10r + 1, 10r + 2]: sums 3, 23, 43, 63 plus the replica id
    assert total == [138.0] * 4 and mean == [69.0] * 4 and ints == [[7]] * 4
    assert reduced_mean == [16] and reduced_sum == [[64, 68]]  # int64: 132 // 8


def test_next_in_a_host_loop_keeps_the_position_and_ends_with_out_of_range(cases):
    # steps of 4 elements: 0..11 in the first call, 12..23 in the second, then only 2 left
    assert cases["host_loop"] == [66, 210, "OutOfRangeError"]
    assert cases["optional_partial"] == 10  # 10 elements in 3 steps, partial ones included


def test_training_with_mirrored_variables_compiled_agrees_with_eager(cases):
    # losses, weights and biases agree; every copy identical; 3 epochs of 3 steps; 1 trace
    assert cases["training"] == (True, True, True, 1, 9, 1)


def test_an_em_function_run_by_the_replicas_joins_the_trace(cases):
    # 2 steps of 3 replicas x 2 rows of ones: each step's summed gradient is 1 per entry
    assert cases["nested_train_step"] == [[0.8, 1.8]] * 3
    # an all_reduce further down, in an em.function of its own: a clear error
    assert cases["all_reduce_in_a_nested_function"] == (
        "ReplicaContext.all_reduce (replica 0): called inside an em.function th")


def test_each_replica_writes_its_own_copy_in_the_trace(cases):
    assert cases["copies"] == ([[1.0, 2.0], [2.0, 3.0], [3.0, 4.0], [4.0, 5.0]],
                               [[2.0, 4.0], [4.0, 6.0], [6.0, 8.0], [8.0, 10.0]])


def test_replicas_that_disagree_raise_instead_of_hanging(cases):
    assert cases["uneven_all_reduce"] == ("strategy.run inside an em.function",
                                          "(raised in replica 1 of 4 whil")
    assert cases["replica_raises"] == ("in the replica function",
                                       "(raised in replica 0 of 4 whil")
    # the replicas meet only outside their own loops and branches on tensors
    assert cases["all_reduce_in_a_loop"] == (
        "ReplicaContext.all_reduce (replica 0): called inside a loop or branch ")
    assert cases["collected"] is True


def test_one_replica_inside_a_function():
    strategy = em.distribute.MirroredStrategy(["cpu:0"])
    dataset = strategy.experimental_distribute_dataset(em.data.Dataset.range(10).batch(4))

    def step(x):
        ctx = em.distribute.get_replica_context()
        return ctx.all_reduce(em.distribute.ReduceOp.SUM, em.reduce_sum(x))

    @em.function
    def total(dist_dataset):
        out = em.constant(0, dtype=em.int64)
        for x in dist_dataset:
            out += strategy.run(step, args=(x,))
        return out

    assert int(total(dataset)) == 45 == sum(int(strategy.run(step, args=(x,)))
                                            for x in dataset)


def test_a_per_replica_spec_input_signature_refuses_plain_tensors():
    from ember.runtime.distribute.values import PerReplica, PerReplicaSpec
    signature = PerReplicaSpec(em.TensorSpec([None], em.float32),
                               em.TensorSpec([None], em.float32))

    @em.function(input_signature=[signature])
    def first(values):
        return values.values[0] + values.values[1]

    value = PerReplica([em.constant([1.0, 2.0]), em.constant([3.0, 4.0])])
    np.testing.assert_array_equal(first(value).numpy(), [4.0, 6.0])
    assert first.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match="PerReplicaSpec"):
        first(em.constant([1.0]))


def test_em_print_shows_structures_as_tf_print():
    # the guide's tf.print(strategy.experimental_local_results(...)): a tuple of tensors
    stream = io.StringIO()

    def show(x):
        em.print((x, [x[:1]], {"k": 2}), "end", output_stream=stream)

    show(em.constant([1, 2]))
    em.function(show)(em.constant([1, 2]))
    assert stream.getvalue() == "([1 2], [[1]], {'k': 2}) end\n" * 2


class _TwoWorkers(em.distribute.MirroredStrategy):
    """One replica here and, as far as the trace knows, a second worker holding the same
    values: its cross-worker sum (the hook a multi-worker strategy overrides) doubles."""

    def __init__(self):
        super().__init__(["cpu:0"])
        self.sums = []

    @property
    def num_replicas_in_sync(self) -> int:
        return 2

    def _input_workers(self) -> tuple:
        return 2, 0

    def _cross_worker_sum_arrays(self, arrays, where):
        self.sums.append(where)
        return [a * 2 for a in arrays]


def test_the_cross_worker_step_is_a_host_call_of_the_strategy():
    strategy = _TwoWorkers()
    SUM, MEAN = em.distribute.ReduceOp.SUM, em.distribute.ReduceOp.MEAN

    def step(x):
        ctx = em.distribute.get_replica_context()
        return ctx.all_reduce(SUM, x), ctx.all_reduce(MEAN, x)

    @em.function
    def reductions(x):
        total, mean = strategy.run(step, args=(x,))
        values = em.distribute.PerReplica([x])
        return (total, mean, strategy.reduce(SUM, values, axis=0),
                strategy.reduce(MEAN, values, axis=0), strategy.reduce(SUM, x))

    out = [o.numpy().tolist() for o in reductions(em.constant([1.0, 2.0, 3.0]))]
    # a plain value on a one-replica worker is that replica's value (as eagerly)
    assert out == [[2.0, 4.0, 6.0], [1.0, 2.0, 3.0], 12.0, 2.0, [2.0, 4.0, 6.0]]
    assert strategy.sums == ["ReplicaContext.all_reduce"] * 2 + ["MirroredStrategy.reduce"] * 3


def test_a_plain_value_on_several_local_replicas_reduces_as_eagerly():
    strategy = em.distribute.MirroredStrategy(["cpu:0"])
    strategy._devices = strategy._devices * 2  # as if 2 local replicas (only traced here)
    SUM, MEAN = em.distribute.ReduceOp.SUM, em.distribute.ReduceOp.MEAN
    assert float(em.function(lambda x: strategy.reduce(MEAN, x))(em.constant(3.0))) == 3.0
    with pytest.raises(ValueError, match="cannot be reduced"):
        em.function(lambda x: strategy.reduce(SUM, x))(em.constant(1.0))
