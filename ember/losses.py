"""`em.losses`: Keras's losses, as functions and classes (the code is in
`ember.frontend.training`; this module only re-exports)."""

from ember.frontend.training.losses import (CategoricalCrossentropy, Loss, MeanSquaredError,
                                            SparseCategoricalCrossentropy,
                                            categorical_crossentropy, mean_squared_error,
                                            sparse_categorical_crossentropy)

__all__ = ["CategoricalCrossentropy", "Loss", "MeanSquaredError",
           "SparseCategoricalCrossentropy", "categorical_crossentropy", "mean_squared_error",
           "sparse_categorical_crossentropy"]
from ember.frontend.training.losses import BinaryCrossentropy, binary_crossentropy  # noqa: E402

__all__ += ["BinaryCrossentropy", "binary_crossentropy"]
