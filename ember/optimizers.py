"""`em.optimizers`: Keras 3's optimizers (`SGD`, `Adam`, `AdamW`, `RMSprop`, `Adagrad`) and
learning-rate `schedules` (the code is in `ember.frontend.training`; this module only
re-exports)."""

from ember.frontend.training import schedules
from ember.frontend.training.optimizer_base import Optimizer
from ember.frontend.training.optimizers import SGD, Adagrad, Adam, AdamW, RMSprop

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "schedules"]
