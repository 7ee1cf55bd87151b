"""`em.keras.regularizers`: `L1`, `L2`, `L1L2` (and `l1`, `l2`, `l1_l2`), `Regularizer` and
`get` / `serialize` / `deserialize` (the code is in `ember.frontend.training.regularizers`;
this module only re-exports)."""

from ember.frontend.training.regularizers import (L1, L1L2, L2, Regularizer, deserialize,
                                                  get, l1, l1_l2, l2, serialize)

__all__ = ["L1", "L1L2", "L2", "Regularizer", "deserialize", "get", "l1", "l1_l2", "l2",
           "serialize"]
