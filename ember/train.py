"""`em.train`: checkpoints of Variables, models and optimizers as numpy `.npz` files (the
code is in `ember.frontend.training`; this module only re-exports), and `ClusterSpec` (the
cluster of parameter-server training, ember.runtime.distribute.cluster)."""

from ember.frontend.training.checkpoint import Checkpoint, CheckpointManager, latest_checkpoint
from ember.runtime.distribute.cluster import ClusterSpec

__all__ = ["Checkpoint", "CheckpointManager", "latest_checkpoint", "ClusterSpec"]
