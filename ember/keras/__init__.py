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

__all__ = ["Model", "Sequential", "activations", "callbacks", "initializers", "layers",
           "losses", "metrics", "optimizers", "regularizers", "utils"]
