"""`em.keras`: tf.keras's names on ember — `em.keras.layers` (the em.layers and the
preprocessing layers `StringLookup`, `IntegerLookup`, `Normalization`, `Rescaling`),
`em.keras.Model` / `em.keras.Sequential` with `compile` / `fit` / `evaluate` / `predict`,
`em.keras.activations`, `em.keras.initializers`, `em.keras.regularizers`,
`em.keras.losses`, `em.keras.optimizers`, `em.keras.callbacks`, `em.keras.metrics` (`Mean`,
the accuracies, `Precision`, `Recall`, `AUC`, ...) and
`em.keras.utils.experimental.DatasetCreator` (the code is in `ember.frontend.training` and
`ember.runtime.keras`; this package only re-exports).

Example:
  >>> import ember as em
  >>> em.keras.layers.StringLookup(vocabulary=["a", "b"])(em.constant(["b", "z"])).numpy()
  array([2, 0])
"""

from ember import losses, optimizers
from ember.keras import (activations, callbacks, initializers, layers, metrics,
                         regularizers, utils)
from ember.runtime.keras.model import Model, Sequential
from ember.runtime.keras.unavailable import MESSAGES as _UNAVAILABLE
from ember.runtime.keras.unavailable import unavailable as _unavailable

__all__ = ["Model", "Sequential", "activations", "callbacks", "initializers", "layers",
           "losses", "metrics", "optimizers", "regularizers", "utils"]


def __getattr__(name: str):
    if name in _UNAVAILABLE:  # em.keras.Input: a message naming what to use instead
        raise _unavailable("em.keras.", name)
    raise AttributeError(f"module 'ember.keras' has no attribute {name!r}")
