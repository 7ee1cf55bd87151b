"""In-process data parallelism as tf.distribute: `MirroredStrategy` runs a function once per
replica (one logical device each, each on its own thread), with `PerReplica` values,
`ReduceOp` reductions and a `ReplicaContext` for cross-replica `all_reduce`."""
