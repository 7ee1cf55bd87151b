"""`em.data`: tf.data's input pipelines. `em.data.Dataset` builds them (`from_tensor_slices`,
`range`, `from_generator`, `list_files`, `map`, `batch`, `interleave`, `shuffle`,
`prefetch`, `reduce`, `scan`, `flat_map`, `sample_from_datasets`, ...); file readers
`TextLineDataset` and `RecordDataset` (with `RecordWriter`); `Options` with
`experimental.AutoShardPolicy`. The pipeline runs in Python and yields `em.Tensor`s; `map`'s
function is traced and compiled (the code is in `ember.runtime.data`; this module only
re-exports).

Example:
  >>> import ember as em
  >>> [b.numpy().tolist() for b in em.data.Dataset.range(5).batch(2)]
  [[0, 1], [2, 3], [4]]
"""

from ember.runtime.data import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset,
                                DatasetSpec, Iterator, Options, RecordDataset, RecordWriter,
                                TextLineDataset, experimental)
from ember.runtime.data import Optional  # noqa: A004 - tf.experimental.Optional's shape

__all__ = ["AUTOTUNE", "Dataset", "DatasetSpec", "INFINITE_CARDINALITY", "Iterator", "Optional",
           "Options", "RecordDataset", "RecordWriter", "TextLineDataset", "UNKNOWN_CARDINALITY",
           "experimental"]
