"""The distributed input guide's examples with em. (strategy.experimental_distribute_dataset,
distribute_datasets_from_function, DistributedIterator): the same batches on the same replicas.

Several replicas need the CPU split into logical CPUs, fixed once per process, so the guide's
examples run in one subprocess (distribute_input_guide.py, 5 logical CPUs; the guide's four
GPUs are CPU:0..3) and each test checks its lines. The one-replica cases run here."""

import ast
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import ember as em
from ember.runtime.data.autoshard import auto_shard

GUIDE = pathlib.Path(__file__).with_name("distribute_input_guide.py")


@pytest.fixture(scope="module")
def guide() -> dict:
    done = subprocess.run([sys.executable, str(GUIDE)], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    lines = [line.split(": ", 1) for line in done.stdout.splitlines()]
    return {name: ast.literal_eval(value) for name, value in lines}


def test_the_guide_runs_on_five_logical_cpus(guide):
    assert guide["devices"] == [f"device:CPU:{i}" for i in range(5)]


def test_the_non_distributed_loop(guide):
    assert guide["non_distributed"] == [((16, 1), [pytest.approx(0.7)])] * 6 + \
        [((4, 1), [pytest.approx(0.7)])]


def test_the_first_element_is_a_per_replica_batch_for_each_replica(guide):
    ones = [[1.0]] * 4
    assert guide["first_element"] == [[ones] * 4, [ones] * 4]  # (features, labels)
    assert guide["first_element_2"] == [[(8, 1), (8, 1)], [(8, 1), (8, 1)]]  # 16 / 2


def test_the_rebatching_tables(guide):
    assert guide["table_6_by_4_on_2"] == [[[0, 1], [2, 3]], [[4], [5]]]
    assert guide["table_4_by_4_on_5"] == [[[0], [1], [2], [3], []]]
    assert guide["table_8_by_4_on_3"] == [[[0, 1], [2, 3], []], [[4, 5], [6, 7], []]]
    # the empty batches keep the dtype: int64 of shape (0,)
    assert guide["empty_batch"] == ["em.int64(1,)"] * 4 + ["em.int64(0,)"]


def test_the_sharding_options_example(guide):
    assert guide["shard_options"] == [[[(8, 1), (8, 1)], [(8, 1), (8, 1)]]] * 4


def test_a_prefetch_of_num_replicas_is_appended(guide):
    assert guide["prefetched"] == (True, True)  # ahead of the step taken, not everything


def test_distribute_datasets_from_function(guide):
    assert guide["input_context"] == (
        "tf.distribute.InputContext(input pipeline id 0, total: 1)", 4)
    # the function's dataset has one element (4, 16, 1): replica 0 takes it, the others get
    # empty batches of the same element shape
    assert guide["from_function"] == [[[(4, 16, 1)] + [(0, 16, 1)] * 3] * 2]


def test_a_for_loop_over_the_distributed_dataset(guide):
    step = [[(4, 1)] * 4, [0.7]]
    assert [list(x) for x in guide["for_loop"]] == [step] * 6 + [[[(1, 1)] * 4, [0.7]]]


def test_iter_next_and_get_next(guide):
    assert guide["iter_next"] == (50, [((4, 1),) * 4])
    assert guide["out_of_range"] == "OutOfRangeError"
    assert guide["next_at_end"] == "StopIteration"


def test_get_next_as_optional_ends_the_loop(guide):
    assert guide["get_next_as_optional"] == [
        ([0], [1], [2], [3]), ([4], [5], [6], [7]), ([8], [], [], [])]
    # printed by em.print inside the em.function, as the guide's tf.print output
    assert guide["get_next_as_optional_printed"] == \
        "([0], [1], [2], [3])\n([4], [5], [6], [7])\n([8], [], [], [])\n"


def test_a_host_training_loop_runs_past_the_end_into_out_of_range(guide):
    assert guide["host_loop_out_of_range"] == "OutOfRangeError"


def test_element_spec(guide):
    spec = "TensorSpec(shape=(None, 1), dtype=em.float32, name=None)"
    per_replica = f"PerReplicaSpec({', '.join([spec] * 4)})"
    assert guide["element_spec"] == f"({per_replica}, {per_replica})"
    assert guide["iterator_element_spec"] is True
    count, first = guide["element_spec_steps"]
    assert count == 25 and first == [[[[1.0]] * 4] * 4] * 4  # `2 * (features, labels)`
    assert guide["element_spec_traces"] == 1  # input_signature=[dist_dataset.element_spec]


def test_preprocessing_under_the_scope(guide):
    # em.keras.layers.StringLookup made under the scope, applied by Dataset.map in dataset_fn
    assert guide["kpl"] == [[[1], [3], [0], [1]], [[3], [0], [1], [3]], [[0], [1], [3], [0]]]
    assert guide["kpl_dtypes"] == ["int64"]
    first = guide["kpl_printed"].split(" } ")[0]
    assert first == "PerReplica:{ " + ", ".join(
        f"{i}: <ember.Tensor: shape=(1,), dtype=int64, numpy=array([{v}])>"
        for i, v in enumerate([1, 3, 0, 1]))


def test_preprocessing_with_model_fit(guide):
    # IntegerLookup(vocabulary=FILE_PATH) under MirroredStrategy's scope (5 logical CPUs), the
    # dataset mapped by it and given to fit as is: fit distributes it
    replicas, epochs, learnt, accuracy, variable = guide["kpl_fit"]
    assert (replicas, epochs, learnt, variable) == (5, [0, 1, 2, 3, 4], True,
                                                    "MirroredVariable")
    assert accuracy == 1.0
    # StringLookup in a DatasetCreator's dataset_fn, fit(epochs=5, steps_per_epoch=20)
    assert guide["kpl_fit_creator"] == ([0, 1, 2, 3, 4], True)


def test_reordering_outputs_by_index(guide):
    assert guide["reorder"] == {i: 2 * i for i in range(24)}


def test_input_from_a_generator(guide):
    # unbatched elements of shape (4,) split between the 4 replicas: shape (1,) each
    assert guide["from_generator"] == [[((1,), "em.float32", True)] * 4] * 4


def test_values_from_function(guide):
    assert guide["values_from_function"] == [[0, 1, 2, 3]] * 4


# -- one replica, in this process ------------------------------------------------------------

def test_one_replica_gives_plain_tensors():
    strategy = em.distribute.MirroredStrategy(["cpu:0"])
    dataset = em.data.Dataset.range(6).batch(4)
    dist = strategy.experimental_distribute_dataset(dataset)
    assert dist.element_spec == em.TensorSpec([None], em.int64)
    assert [x.numpy().tolist() for x in dist] == [[0, 1, 2, 3], [4, 5]]
    iterator = iter(dist)
    assert isinstance(iterator, em.distribute.DistributedIterator)
    assert iterator.get_next().numpy().tolist() == [0, 1, 2, 3]
    optional = iterator.get_next_as_optional()
    assert bool(optional.has_value()) and optional.get_value().numpy().tolist() == [4, 5]
    assert not bool(iterator.get_next_as_optional().has_value())
    with pytest.raises(em.errors.OutOfRangeError):
        iterator.get_next()
    assert "DistributedDataset" in repr(dist) and not isinstance(dist, em.data.Dataset)


def test_one_replica_keeps_the_datasets_element_spec():
    strategy = em.distribute.MirroredStrategy(["cpu:0"])
    dataset = em.data.Dataset.range(8).batch(4, drop_remainder=True)
    assert strategy.experimental_distribute_dataset(dataset).element_spec == \
        em.TensorSpec([4], em.int64)


def test_input_context():
    context = em.distribute.InputContext(2, 1, 4)
    assert (context.num_input_pipelines, context.input_pipeline_id,
            context.num_replicas_in_sync) == (2, 1, 4)
    assert context.get_per_replica_batch_size(16) == 4
    assert str(context) == "tf.distribute.InputContext(input pipeline id 1, total: 2)"
    with pytest.raises(ValueError, match=r"The `global_batch_size` 10 is not divisible by "
                                         r"`num_replicas_in_sync` 4"):
        context.get_per_replica_batch_size(10)
    with pytest.raises(ValueError, match="input_pipeline_id 2 is out of range"):
        em.distribute.InputContext(2, 2, 1)
    with pytest.raises(ValueError, match="num_replicas_in_sync must be an integer >= 1"):
        em.distribute.InputContext(1, 0, 0)


def test_bad_inputs_are_refused():
    strategy = em.distribute.MirroredStrategy(["cpu:0"])
    with pytest.raises(ValueError, match=r"Call the `batch` method on the input Dataset in "
                       r"order to be able to split your input across 2 replicas(.|\n)*"
                       "component 0 of an element is a scalar"):
        _TwoWorkers(0).experimental_distribute_dataset(em.data.Dataset.range(3))
    with pytest.raises(ValueError, match=r"`num_replicas_in_sync` \(2\) that cannot be "
                                         r"divided by `num_workers` \(3\)"):
        _TwoWorkers(0, workers=3).experimental_distribute_dataset(em.data.Dataset.range(3))
    # one replica takes the dataset as it is, as TF does: unbatched elements too
    assert [int(x) for x in strategy.experimental_distribute_dataset(
        em.data.Dataset.range(3))] == [0, 1, 2]
    iterator = iter(strategy.experimental_distribute_dataset(em.data.Dataset.range(3)))
    with pytest.raises(ValueError, match=r"next\(iterator\) should be called from outside "
                                         "of replica_fn"):
        strategy.run(lambda: next(iterator))
    # strategy.run inside an em.function traces fn per replica (test_distfn_compiled.py)
    assert float(em.function(lambda x: strategy.run(lambda y: y, args=(x,)))(
        em.constant(1.0))) == 1.0
    with pytest.raises(TypeError, match="expected an em.data.Dataset, got list"):
        strategy.experimental_distribute_dataset([1, 2])
    with pytest.raises(TypeError, match="dataset_fn must return an em.data.Dataset"):
        strategy.distribute_datasets_from_function(lambda ctx: [1])
    with pytest.raises(TypeError, match="dataset_fn must be callable"):
        strategy.distribute_datasets_from_function(3)


def test_gather_and_local_results_of_nested_values():
    strategy = em.distribute.MirroredStrategy(["cpu:0"])
    values = em.distribute.PerReplica([em.constant([[1.0, 2.0]])])
    assert strategy.gather(values, axis=0).numpy().tolist() == [[1.0, 2.0]]
    results = strategy.experimental_local_results({"a": values, "b": 3})
    assert len(results) == 1 and results[0]["b"] == 3
    np.testing.assert_array_equal(results[0]["a"].numpy(), [[1.0, 2.0]])
    with pytest.raises(ValueError, match="cannot concatenate"):
        strategy.gather(values, axis=4)


class _TwoWorkers(em.distribute.MirroredStrategy):
    """One replica of a 2-worker strategy, overriding the input hooks as
    MultiWorkerMirroredStrategy does: em.data's auto_shard of the per-replica batches (by
    the dataset's AutoShardPolicy), then this worker's replica."""

    def __init__(self, worker, others_have=0, workers=2):
        super().__init__(["cpu:0"])
        self.worker, self.others_have, self.workers = worker, others_have, workers

    @property
    def num_replicas_in_sync(self):
        return 2

    def _input_workers(self):
        return self.workers, self.worker

    def _auto_shard(self, dataset, num_workers, worker_index):
        return auto_shard(dataset, num_workers, worker_index, self.num_replicas_in_sync)

    def _sync_has_data(self, local_has_data):
        if local_has_data:
            return True
        self.others_have -= 1
        return self.others_have >= 0


def _with_policy(dataset, policy):
    options = em.data.Options()
    options.experimental_distribute.auto_shard_policy = getattr(
        em.data.experimental.AutoShardPolicy, policy)
    return dataset.with_options(options)


@pytest.mark.parametrize("policy, tables", [
    ("FILE", [[["0", "1"], ["2", "3"], ["4"], ["5"]],  # the guide's worker tables
              [["6", "7"], ["8", "9"], ["10"], ["11"]]]),
    ("DATA", [[["0", "1"], ["4", "5"], ["8", "9"]], [["2", "3"], ["6", "7"], ["10", "11"]]]),
    ("OFF", [[["0", "1"], ["2", "3"], ["4", "5"], ["6", "7"], ["8", "9"], ["10", "11"]]] * 2)])
def test_the_multi_worker_hooks_give_the_guides_worker_tables(tmp_path, policy, tables):
    files = [range(6), range(6, 12)] if policy == "FILE" else [range(12)]
    for k, lines in enumerate(files):
        (tmp_path / f"file{k}.txt").write_text("".join(f"{i}\n" for i in lines))
    names = em.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
    dataset = _with_policy(em.data.TextLineDataset(names).batch(4), policy)
    for worker, table in enumerate(tables):
        dist = _TwoWorkers(worker).experimental_distribute_dataset(dataset)
        assert [[b.decode() for b in x.numpy().tolist()] for x in dist] == table


def test_a_worker_out_of_data_gets_empty_batches_while_another_has_some():
    strategy = _TwoWorkers(1, others_have=2)
    dataset = em.data.Dataset.range(6).batch(4)  # pieces [0 1] [2 3] [4] [5]: worker 1's odd
    dataset = _with_policy(dataset, "DATA")
    got = [x.numpy().tolist() for x in strategy.experimental_distribute_dataset(dataset)]
    assert got == [[2, 3], [5], [], []]  # then empty while the other worker has data


def test_dict_elements_keep_their_dtypes_when_split():
    strategy = _TwoWorkers(0)  # 2 replicas in all: each batch in 2 pieces
    dataset = _with_policy(em.data.Dataset.from_tensor_slices(
        {"x": np.arange(12.0).reshape(6, 2), "ok": np.arange(6) % 2 == 0}).batch(3), "OFF")
    dist = strategy.experimental_distribute_dataset(dataset)
    assert dist.element_spec == {"ok": em.TensorSpec([None], em.bool_),
                                 "x": em.TensorSpec([None, 2], em.float64)}
    pieces = list(dist)
    assert [p["x"].numpy()[:, 0].tolist() for p in pieces] == [[0, 2], [4], [6, 8], [10]]
    assert [p["ok"].numpy().tolist() for p in pieces] == [[True, False], [True],
                                                         [False, True], [False]]
    assert {p["x"].dtype for p in pieces} == {em.float64}


def test_preprocessing_with_model_fit_under_parameter_server_strategy(guide):
    # the guide's ParameterServerStrategy snippet: 5 epochs of 20 steps on 2 workers, the
    # embedding table sharded on the parameter server
    assert guide["kpl_fit_ps"] == ([0, 1, 2, 3, 4], True, "ShardedVariable", 100)
