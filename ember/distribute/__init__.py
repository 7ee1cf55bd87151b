"""`em.distribute`: tf.distribute's names (the code is in `ember.runtime`); `python -m
ember.distribute.launch -n N script.py` starts N MPI workers (`launch.py`). Parameter-server
training (`experimental.ParameterServerStrategy`, `experimental.coordinator`,
`experimental.partitioners`, `cluster_resolver`) runs on an in-process cluster."""

import types as _types

from ember.runtime.distribute.strategy import (MirroredStrategy, ReplicaContext,
                                               get_replica_context, get_strategy,
                                               has_strategy, in_cross_replica_context)
from ember.runtime.distribute.values import PerReplica, ReduceOp, ValueContext
from ember.runtime.distribute.input import (DistributedDataset, DistributedIterator,
                                            InputContext)
from ember.runtime.distribute.mirrored import MirroredVariable
from ember.runtime.distribute.one_device import OneDeviceStrategy
from ember.runtime.distribute.values import PerReplicaSpec
from ember.runtime.distribute.multiworker import (CommunicationImplementation,
                                                  CommunicationOptions,
                                                  MultiWorkerMirroredStrategy)

experimental = _types.SimpleNamespace(ValueContext=ValueContext)  # TF's spelling of it
experimental.CommunicationOptions = CommunicationOptions
experimental.CommunicationImplementation = CommunicationImplementation

__all__ = ["MirroredStrategy", "PerReplica", "ReduceOp", "ReplicaContext", "ValueContext",
           "experimental", "get_replica_context", "get_strategy", "has_strategy",
           "in_cross_replica_context",
           "MultiWorkerMirroredStrategy", "DistributedDataset", "DistributedIterator",
           "InputContext", "MirroredVariable", "PerReplicaSpec", "OneDeviceStrategy"]

# Parameter-server training (tf.distribute.experimental.ParameterServerStrategy)
from ember.runtime.distribute.cluster import (SimpleClusterResolver,
                                              create_in_process_cluster)
from ember.runtime.distribute.coordinator import (CancelledError, ClusterCoordinator,
                                                  PerWorkerValues, RemoteValue)
from ember.runtime.distribute.partitioners import (FixedShardsPartitioner,
                                                   MaxSizePartitioner, MinSizePartitioner,
                                                   Partitioner)
from ember.runtime.distribute.ps_strategy import ParameterServerStrategy
from ember.runtime.distribute.sharded import ShardedVariable

cluster_resolver = _types.SimpleNamespace(SimpleClusterResolver=SimpleClusterResolver)
experimental.ParameterServerStrategy = ParameterServerStrategy
experimental.create_in_process_cluster = create_in_process_cluster
experimental.coordinator = _types.SimpleNamespace(
    ClusterCoordinator=ClusterCoordinator, RemoteValue=RemoteValue,
    PerWorkerValues=PerWorkerValues, CancelledError=CancelledError)
experimental.partitioners = _types.SimpleNamespace(
    Partitioner=Partitioner, FixedShardsPartitioner=FixedShardsPartitioner,
    MinSizePartitioner=MinSizePartitioner, MaxSizePartitioner=MaxSizePartitioner)
__all__ += ["ShardedVariable", "cluster_resolver"]
