"""`em.distribute`: tf.distribute's in-process names (the code is in `ember.runtime`)."""

from ember.runtime.distribute.strategy import (MirroredStrategy, ReplicaContext,
                                               get_replica_context, get_strategy,
                                               has_strategy)
from ember.runtime.distribute.values import PerReplica, ReduceOp, ValueContext

__all__ = ["MirroredStrategy", "PerReplica", "ReduceOp", "ReplicaContext", "ValueContext",
           "get_replica_context", "get_strategy", "has_strategy"]
