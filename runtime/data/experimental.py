"""`em.data.experimental`: tf.data.experimental's names for distributing datasets."""

from ember.runtime.data.combine import SHARD_HINT
from ember.runtime.data.options import AutoShardPolicy, DistributeOptions, OptimizationOptions

__all__ = ["AutoShardPolicy", "DistributeOptions", "OptimizationOptions", "SHARD_HINT"]
