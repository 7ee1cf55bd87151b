"""The loops of `Model.fit`, `evaluate` and `predict`, their inputs (numpy arrays,
em.data.Dataset, `DatasetCreator`) and callbacks (`Callback`, `History`)."""

from __future__ import annotations

import numpy as np

from ember.frontend.tensor import Tensor
from ember.runtime.data import Dataset


class DatasetCreator:
    """keras.utils.experimental.DatasetCreator: `dataset_fn(input_context)` makes the
    dataset of one input pipeline (batched with
    `input_context.get_per_replica_batch_size(global_batch_size)`); fit calls it with an
    `em.distribute.InputContext` (through `distribute_datasets_from_function` under a
    strategy). fit needs `steps_per_epoch` with it."""

    def __init__(self, dataset_fn, input_options=None):
        if not callable(dataset_fn):
            raise TypeError(f"DatasetCreator: dataset_fn must be a callable taking an "
                            f"InputContext, got {dataset_fn!r}")
        self.dataset_fn, self.input_options = dataset_fn, input_options

    def __call__(self, input_context):
        dataset = self.dataset_fn(input_context)
        if not isinstance(dataset, Dataset):
            raise TypeError(f"DatasetCreator: dataset_fn must return an em.data.Dataset, got "
                            f"{type(dataset).__name__}")
        return dataset


class Callback:
    """keras.callbacks.Callback: override the hooks; `self.model` is the model trained."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        del logs

    def on_train_end(self, logs=None):
        del logs

    def on_epoch_begin(self, epoch, logs=None):
        del epoch, logs

    def on_epoch_end(self, epoch, logs=None):
        del epoch, logs

    def on_train_batch_begin(self, batch, logs=None):
        del batch, logs

    def on_train_batch_end(self, batch, logs=None):
        del batch, logs


class History(Callback):
    """What fit returns: `history` maps each logged name ('loss', 'accuracy', 'val_loss',
    ...) to its value at the end of each epoch; `epoch` lists the epochs run."""

    def __init__(self):
        super().__init__()
        self.history, self.epoch = {}, []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


def _is_array(x) -> bool:
    return isinstance(x, (np.ndarray, Tensor, list)) or np.isscalar(x)


def _array(x, what: str) -> np.ndarray:
    arr = np.asarray(x.numpy() if isinstance(x, Tensor) else x)
    if arr.ndim == 0:
        raise ValueError(f"{what} must have a batch dimension, got a scalar")
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)  # Keras casts float inputs to the model's floatx
    return arr


def make_input(x, y, batch_size, shuffle, where: str, labelled: bool = True):
    """An em.data.Dataset of batches (or a DatasetCreator) for fit / evaluate / predict."""
    if isinstance(x, (Dataset, DatasetCreator)):
        if y is not None:
            raise ValueError(f"{where}: y must not be given when x is a dataset (its "
                             "elements carry (features, labels))")
        if batch_size is not None:
            raise ValueError(f"{where}: batch_size must not be given when x is a dataset "
                             "(batch the dataset itself)")
        return x
    if not _is_array(x):
        raise TypeError(f"{where}: x must be a numpy array, an em.Tensor, an em.data.Dataset "
                        f"or a DatasetCreator, got {type(x).__name__}")
    batch_size = 32 if batch_size is None else batch_size
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
        raise ValueError(f"{where}: batch_size must be a positive integer, got {batch_size!r}")
    x = _array(x, f"{where}: x")
    if not labelled:
        return Dataset.from_tensor_slices(x).batch(batch_size)
    if y is None:
        raise ValueError(f"{where}: y (the labels) is required when x is an array")
    y = _array(y, f"{where}: y")
    if len(x) != len(y):
        raise ValueError(f"{where}: x and y must have the same number of examples, got "
                         f"{len(x)} and {len(y)}")
    if shuffle:
        order = np.random.permutation(len(x))
        x, y = x[order], y[order]
    return Dataset.from_tensor_slices((x, y)).batch(batch_size)


def check_steps(steps, what: str):
    if steps is not None and (not isinstance(steps, int) or isinstance(steps, bool)
                              or steps <= 0):
        raise ValueError(f"{what} must be None or a positive integer, got {steps!r}")


def pairs(element, where: str):
    """(x, y) of a dataset element."""
    if isinstance(element, (tuple, list)) and len(element) == 2:
        return tuple(element)
    raise ValueError(f"{where}: each element of the dataset must be a (features, labels) "
                     f"pair, got {type(element).__name__}"
                     + (f" of {len(element)}" if isinstance(element, (tuple, list)) else ""))


def logs_of(names: list, sums: np.ndarray) -> dict:
    """{'loss': mean loss, metric: mean value} from summed [loss, count, metric...]."""
    count = max(float(sums[1]), 1.0)
    out = {"loss": float(sums[0]) / count}
    for name, value in zip(names, sums[2:]):
        out[name] = float(value) / count
    return out


def print_epoch(epoch: int, epochs: int, steps: int, logs: dict) -> None:
    shown = " - ".join(f"{k}: {v:.4f}" for k, v in logs.items())
    print(f"Epoch {epoch + 1}/{epochs}\n{steps}/{steps} - {shown}", flush=True)
