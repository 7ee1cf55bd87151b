"""`em.train`: checkpoints of Variables, models and optimizers as numpy `.npz` files (the
code is in `ember.frontend.training`; this module only re-exports), and `ClusterSpec` (the
cluster of parameter-server training, ember.runtime.distribute.cluster, imported on first
use: `import ember` loads no distribution code)."""

from ember.frontend.training.checkpoint import Checkpoint, CheckpointManager, latest_checkpoint

__all__ = ["Checkpoint", "CheckpointManager", "latest_checkpoint", "ClusterSpec"]


def __getattr__(name: str):
    if name == "ClusterSpec":
        from ember.runtime.distribute.cluster import ClusterSpec
        return ClusterSpec
    raise AttributeError(f"module 'ember.train' has no attribute {name!r}")
