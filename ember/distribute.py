"""`em.distribute`: tf.distribute's in-process names (the code is in `ember.runtime`)."""

import types as _types

from ember.runtime.distribute.strategy import (MirroredStrategy, ReplicaContext,
                                               get_replica_context, get_strategy,
                                               has_strategy)
from ember.runtime.distribute.values import PerReplica, ReduceOp, ValueContext
from ember.runtime.distribute.input import (DistributedDataset, DistributedIterator,
                                            InputContext)
from ember.runtime.distribute.mirrored import MirroredVariable
from ember.runtime.distribute.values import PerReplicaSpec

experimental = _types.SimpleNamespace(ValueContext=ValueContext)  # TF's spelling of it

__all__ = ["MirroredStrategy", "PerReplica", "ReduceOp", "ReplicaContext", "ValueContext",
           "experimental", "get_replica_context", "get_strategy", "has_strategy",
           "DistributedDataset", "DistributedIterator", "InputContext", "MirroredVariable",
           "PerReplicaSpec"]
