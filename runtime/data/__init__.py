"""`em.data`: tf.data-shaped input pipelines (`Dataset`): the pipeline runs in Python, the
mapped functions are compiled. Iterating a pipeline optimises it as tf.data's static optimiser
does, never changing a batch (optimize.py): `batch` over `from_tensor_slices`/`range` (through
`take`/`skip`/`shard`) slices each batch at once, and `map(f).batch(n)` with an elementwise f
runs f once per batch; `Options().experimental_optimization` switches them off and
`ds._optimizations()` shows what applies."""

from ember.runtime.data.dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY,
                                        Dataset)
from ember.runtime.data.iterator import Iterator, Optional, OutOfRangeError
from ember.runtime.data.errors import DataLossError, NotFoundError
from ember.runtime.data.options import Options
from ember.runtime.data.readers import RecordDataset, RecordWriter, TextLineDataset
from ember.runtime.data import experimental
from ember.runtime.data import errors as _errors, folds as _folds, selection as _selection
from ember.runtime.data.windows import DatasetSpec

# reduce, scan, get_single_element (folds.py), flat_map, choose_from_datasets,
# sample_from_datasets (selection.py) and window (windows.py) attach themselves to Dataset;
# a missing attribute names 'Dataset' and the closest method (errors.py)
Dataset.__getattr__ = _errors.missing_attribute
del _folds, _selection

__all__ = ["AUTOTUNE", "DataLossError", "Dataset", "DatasetSpec", "INFINITE_CARDINALITY",
           "Iterator", "NotFoundError", "Optional", "Options", "OutOfRangeError", "RecordDataset",
           "RecordWriter", "TextLineDataset", "UNKNOWN_CARDINALITY", "experimental"]
