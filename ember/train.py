"""`em.train`: checkpoints of Variables, models and optimizers as numpy `.npz` files (the
code is in `ember.frontend.training`; this module only re-exports)."""

from ember.frontend.training.checkpoint import Checkpoint, CheckpointManager, latest_checkpoint

__all__ = ["Checkpoint", "CheckpointManager", "latest_checkpoint"]
