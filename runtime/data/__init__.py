"""`em.data`: tf.data-shaped input pipelines (`Dataset`), run eagerly."""

from ember.runtime.data.dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY,
                                        Dataset)
from ember.runtime.data.iterator import Iterator, Optional, OutOfRangeError

__all__ = ["AUTOTUNE", "Dataset", "INFINITE_CARDINALITY", "Iterator", "Optional",
           "OutOfRangeError", "UNKNOWN_CARDINALITY"]
