"""`em.data.experimental`: tf.data.experimental's names for distributing datasets."""

from ember.runtime.data.combine import SHARD_HINT
from ember.runtime.data.options import AutoShardPolicy, DistributeOptions

__all__ = ["AutoShardPolicy", "DistributeOptions", "SHARD_HINT"]
