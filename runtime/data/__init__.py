"""`em.data`: tf.data-shaped input pipelines (`Dataset`): the pipeline runs in Python, the
mapped functions are compiled."""

from ember.runtime.data.dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY,
                                        Dataset)
from ember.runtime.data.iterator import Iterator, Optional, OutOfRangeError
from ember.runtime.data.errors import DataLossError, NotFoundError
from ember.runtime.data.options import Options
from ember.runtime.data.readers import RecordDataset, RecordWriter, TextLineDataset
from ember.runtime.data import experimental

__all__ = ["AUTOTUNE", "DataLossError", "Dataset", "INFINITE_CARDINALITY", "Iterator",
           "NotFoundError", "Optional", "Options", "OutOfRangeError", "RecordDataset",
           "RecordWriter", "TextLineDataset", "UNKNOWN_CARDINALITY", "experimental"]
