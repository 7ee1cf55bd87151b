"""A worker of test_multiworker_input.py: the distributed input guide's sharding section on
real MPI workers. Worker 0 writes the guide's files into argv[1]; every worker writes, per
AutoShardPolicy, the batches `experimental_distribute_dataset` gives it to rank<N>.json there
(not to stdout, where mpiexec may interleave the workers' lines)."""

import json
import pathlib
import sys

import ember as em

strategy = em.distribute.MultiWorkerMirroredStrategy()
rank = strategy.cluster_resolver.task_id
folder = pathlib.Path(sys.argv[1])
GLOBAL_BATCH = 4  # 2 workers, 1 replica each: per-replica batches of 2


def write(name, values):
    (folder / name).write_text("".join(f"{v}\n" for v in values))


if rank == 0:  # file 1 [0..5] and file 2 [6..11] for FILE; one file [0..11] for DATA/OFF
    (folder / "two").mkdir()
    (folder / "one").mkdir()
    write("two/file1.txt", range(6))
    write("two/file2.txt", range(6, 12))
    write("one/file1.txt", range(12))
strategy.reduce(em.distribute.ReduceOp.SUM, em.constant(0), axis=None)  # files written

tables = {}
for policy, files in (("FILE", "two"), ("DATA", "one"), ("OFF", "one")):
    dataset = em.data.TextLineDataset(em.data.Dataset.list_files(
        str(folder / files / "*.txt"), shuffle=False)).batch(GLOBAL_BATCH)
    options = em.data.Options()
    options.experimental_distribute.auto_shard_policy = getattr(
        em.data.experimental.AutoShardPolicy, policy)
    dist = strategy.experimental_distribute_dataset(dataset.with_options(options))
    tables[policy] = [[int(v) for v in batch.numpy().tolist()] for batch in dist]

try:  # FILE with fewer files than workers: the guide's InvalidArgumentError
    dataset = em.data.TextLineDataset(em.data.Dataset.list_files(
        str(folder / "one" / "*.txt"), shuffle=False)).batch(GLOBAL_BATCH)
    options = em.data.Options()
    options.experimental_distribute.auto_shard_policy = em.data.experimental.AutoShardPolicy.FILE
    list(strategy.experimental_distribute_dataset(dataset.with_options(options)))
    tables["FILE, 1 file"] = "no error"
except em.errors.InvalidArgumentError as e:
    tables["FILE, 1 file"] = str(e)
(folder / f"rank{rank}.json").write_text(json.dumps(tables))
