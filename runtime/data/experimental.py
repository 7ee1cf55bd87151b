"""`em.data.experimental`: tf.data.experimental's names for distributing datasets, and its
older spellings of em.data's constants (`AUTOTUNE`, the cardinalities)."""

from ember.runtime.data.combine import SHARD_HINT
from ember.runtime.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from ember.runtime.data.options import AutoShardPolicy, DistributeOptions, OptimizationOptions

__all__ = ["AUTOTUNE", "AutoShardPolicy", "DistributeOptions", "INFINITE_CARDINALITY",
           "OptimizationOptions", "SHARD_HINT", "UNKNOWN_CARDINALITY"]
