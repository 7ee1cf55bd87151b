"""`em.keras.utils`: `to_categorical` (class ids to one-hot rows, in numpy),
`unpack_x_y_sample_weight` (a train_step's data as (x, y, sample_weight)) and
`experimental.DatasetCreator`, fit's input made by a dataset function."""

import types as _types

import numpy as _np

from ember.runtime.keras.fit import DatasetCreator
from ember.runtime.keras.steps import unpack_x_y_sample_weight

experimental = _types.SimpleNamespace(DatasetCreator=DatasetCreator)


def to_categorical(y, num_classes=None, dtype="float32"):
    """Class ids `y` (integers in [0, num_classes)) as one-hot rows, a numpy array, as
    keras.utils.to_categorical: a trailing dim of 1 is dropped, `num_classes` defaults to
    the largest id + 1.

    Example:
      >>> em.keras.utils.to_categorical([0, 2, 1])
      array([[1., 0., 0.],
             [0., 0., 1.],
             [0., 1., 0.]], dtype=float32)
    """
    y = _np.asarray(y)
    if y.dtype.kind not in "iub" and not (y.dtype.kind == "f" and (y == _np.trunc(y)).all()):
        raise ValueError(f"to_categorical: y must hold integer class ids, got dtype {y.dtype}")
    y = y.astype(_np.int64)
    if y.ndim and y.shape[-1] == 1 and y.ndim > 1:
        y = y[..., 0]
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"to_categorical: class ids must be in [0, {num_classes}), got "
                         f"values from {y.min()} to {y.max()}")
    return _np.eye(num_classes, dtype=dtype)[y]


__all__ = ["experimental", "to_categorical", "unpack_x_y_sample_weight"]
