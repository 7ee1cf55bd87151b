"""`em.distribute`: tf.distribute's names (the code is in `ember.runtime`); `python -m
ember.distribute.launch -n N script.py` starts N MPI workers (`launch.py`)."""

import types as _types

from ember.runtime.distribute.strategy import (MirroredStrategy, ReplicaContext,
                                               get_replica_context, get_strategy,
                                               has_strategy)
from ember.runtime.distribute.values import PerReplica, ReduceOp, ValueContext
from ember.runtime.distribute.input import (DistributedDataset, DistributedIterator,
                                            InputContext)
from ember.runtime.distribute.mirrored import MirroredVariable
from ember.runtime.distribute.values import PerReplicaSpec
from ember.runtime.distribute.multiworker import (CommunicationImplementation,
                                                  CommunicationOptions,
                                                  MultiWorkerMirroredStrategy)

experimental = _types.SimpleNamespace(ValueContext=ValueContext)  # TF's spelling of it
experimental.CommunicationOptions = CommunicationOptions
experimental.CommunicationImplementation = CommunicationImplementation

__all__ = ["MirroredStrategy", "PerReplica", "ReduceOp", "ReplicaContext", "ValueContext",
           "experimental", "get_replica_context", "get_strategy", "has_strategy",
           "MultiWorkerMirroredStrategy", "DistributedDataset", "DistributedIterator",
           "InputContext", "MirroredVariable", "PerReplicaSpec"]
