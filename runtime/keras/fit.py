"""The loops of `Model.fit`, `evaluate` and `predict`, their inputs (numpy arrays,
em.data.Dataset, `DatasetCreator`); the callbacks are callback_base.py's."""

from __future__ import annotations

import numpy as np

from ember.frontend import nest
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.runtime.data import Dataset
from ember.runtime.distribute.values import PerReplica


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


def _is_array(x) -> bool:
    return isinstance(x, (np.ndarray, Tensor, list)) or np.isscalar(x)


def _is_structure(x) -> bool:
    """Several inputs, as Keras takes them: a dict, a tuple, or a list of arrays."""
    if isinstance(x, dict):
        return True
    if isinstance(x, tuple):
        return len(x) > 0
    return isinstance(x, list) and len(x) > 0 and all(
        isinstance(v, (np.ndarray, Tensor, dict, tuple)) for v in x)


def _arrays(x, what: str):
    """x as numpy arrays (a nested structure of them for several inputs), and its length."""
    if not _is_structure(x):
        arr = _array(x, what)
        return arr, len(arr)
    leaves = nest.flatten(x)
    for leaf in leaves:
        if not _is_array(leaf):
            raise TypeError(f"{what}: every input of a nested x must be an array or an "
                            f"em.Tensor, got {type(leaf).__name__}")
    arrays = [_array(leaf, what) for leaf in leaves]
    lengths = sorted({len(a) for a in arrays})
    if len(lengths) > 1:
        raise ValueError(f"{what}: the inputs must have the same number of examples, got "
                         f"lengths {lengths}")
    return nest.pack_sequence_as(_tuples(x), arrays), lengths[0]


def _tuples(x):
    """Lists of inputs as tuples (em.data takes a list for one tensor, as tf.data)."""
    if isinstance(x, dict):
        return {k: _tuples(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and _is_structure(x):
        return tuple(_tuples(v) for v in x)
    return x


def _array(x, what: str) -> np.ndarray:
    arr = np.asarray(x._numpy_array() if isinstance(x, Tensor) else x)
    if arr.ndim == 0:
        raise ValueError(f"{what} must have a batch dimension, got a scalar")
    if arr.dtype == np.float64:
        arr = arr.astype(np.float32)  # Keras casts float inputs to the model's floatx
    return arr


def shuffler() -> np.random.Generator:
    """The generator of one `fit`'s orders of the examples, seeded as em.data's `shuffle`
    (TF's fit shuffles with an op of its own): after the same `em.random.set_seed` every
    run trains on the same orders, one per epoch; without a global seed they differ."""
    from ember.runtime.data.transforms import seeds_of
    return np.random.default_rng(seeds_of(None, "Model.fit"))


def make_input(x, y, batch_size, shuffle, where: str, labelled: bool = True,
               sample_weight=None):
    """An em.data.Dataset of batches (or a DatasetCreator) for fit / evaluate / predict:
    of (x, y) pairs, of (x, y, sample_weight) with `sample_weight`, of (x,) unlabelled;
    array inputs in an order `shuffle` draws (a numpy Generator, `shuffler()`), if given."""
    if isinstance(x, (Dataset, DatasetCreator)):
        if sample_weight is not None:
            raise ValueError(f"{where}: `sample_weight` argument is not supported when x is "
                             "a dataset; make its elements (x, y, sample_weight) instead")
        if y is not None:
            raise ValueError(f"{where}: y must not be given when x is a dataset (its "
                             "elements carry (features, labels))")
        if batch_size is not None:
            raise ValueError(f"{where}: batch_size must not be given when x is a dataset "
                             "(batch the dataset itself)")
        return x
    if not _is_array(x) and not _is_structure(x):
        raise TypeError(f"{where}: x must be a numpy array, an em.Tensor, a dict / tuple / "
                        f"list of them (several inputs), an em.data.Dataset or a "
                        f"DatasetCreator, got {type(x).__name__}")
    batch_size = 32 if batch_size is None else batch_size
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
        raise ValueError(f"{where}: batch_size must be a positive integer, got {batch_size!r}")
    x, n = _arrays(x, f"{where}: x")
    if not labelled:  # (x,): predict takes element[0], x itself when x is a structure
        return Dataset.from_tensor_slices((x,)).batch(batch_size)
    if y is None:
        raise ValueError(f"{where}: y (the labels) is required when x is an array")
    y = _array(y, f"{where}: y")
    if n != len(y):
        raise ValueError(f"{where}: x and y must have the same number of examples, got "
                         f"{n} and {len(y)}")
    columns = (x, y)
    if sample_weight is not None:
        columns += (weights_of(sample_weight, n, where),)
    if shuffle is not None:
        order = shuffle.permutation(n)
        columns = nest.map_structure(lambda a: a[order], columns)
    return Dataset.from_tensor_slices(columns).batch(batch_size)


def weights_of(sample_weight, n: int, where: str) -> np.ndarray:
    """`sample_weight` as a float32 array of one weight per example (or per label value)."""
    weights = np.asarray(sample_weight.numpy() if isinstance(sample_weight, Tensor)
                         else sample_weight, np.float32)
    if weights.ndim == 0 or len(weights) != n:
        raise ValueError(f"{where}: sample_weight must hold one weight per example ({n}), "
                         f"got shape {list(weights.shape)}")
    return weights


def class_weights(y, class_weight: dict, where: str) -> np.ndarray:
    """One weight per example from `class_weight` {class index: weight} and the labels
    (integer ids, or one-hot rows: their argmax), as Keras's fit(class_weight=...)."""
    if not isinstance(class_weight, dict) or not class_weight:
        raise ValueError(f"{where}: class_weight must be a non-empty dict {{class index: "
                         f"weight}}, got {class_weight!r}")
    y = np.asarray(y.numpy() if isinstance(y, Tensor) else y)
    labels = y.argmax(-1) if y.ndim > 1 and y.shape[-1] > 1 else y.reshape(len(y), -1)[:, 0]
    labels = labels.astype(np.int64)
    keys = sorted(class_weight)
    if keys != list(range(len(keys))):
        raise ValueError(f"{where}: expected `class_weight` to be a dict with keys from 0 to "
                         f"one less than the number of classes, found {class_weight}")
    if labels.size and (labels.min() < 0 or labels.max() >= len(keys)):
        raise ValueError(f"{where}: a label ({int(labels.max())}) has no class_weight "
                         f"(keys 0..{len(keys) - 1})")
    table = np.asarray([class_weight[k] for k in keys], np.float32)
    return table[labels]


def split_validation(x, y, fraction, where: str, sample_weight=None):
    """((x, y) to train on, (x, y) to validate on): the last `fraction` of the examples,
    taken before any shuffling (Keras's validation_split); with `sample_weight`,
    ((x, y, weights), (x, y, weights))."""
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or \
            not 0 <= fraction < 1:
        raise ValueError(f"{where}: validation_split must be a float in [0, 1), got "
                         f"{fraction!r}")
    if isinstance(x, (Dataset, DatasetCreator)) or callable(x):
        raise ValueError(f"{where}: validation_split is only supported for numpy arrays or "
                         "tensors; with a dataset pass validation_data (a second dataset)")
    x, n = _arrays(x, f"{where}: x")
    if y is None:
        raise ValueError(f"{where}: y (the labels) is required when x is an array")
    y = _array(y, f"{where}: y")
    at = int(np.floor(n * (1.0 - fraction)))
    if at == 0 or at == n:
        raise ValueError(f"{where}: validation_split={fraction} of {n} examples leaves "
                         f"{at} to train on and {n - at} to validate on; both need at "
                         "least one")
    columns = (x, y) if sample_weight is None else \
        (x, y, weights_of(sample_weight, n, where))
    return (nest.map_structure(lambda a: a[:at], columns),
            nest.map_structure(lambda a: a[at:], columns))


# Keras arguments about feeding a generator in worker threads or processes: they do not
# change what arrays and datasets train on, so they are accepted and ignored
_QUEUE_ARGUMENTS = ("max_queue_size", "workers", "use_multiprocessing")


def check_extra(kwargs: dict, where: str) -> None:
    """TypeError for keyword arguments `where` (e.g. "Model.fit") does not take, naming it
    (not the internal class defining it)."""
    unknown = sorted(k for k in kwargs if k not in _QUEUE_ARGUMENTS)
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}: "
                        f"em.keras's {where} does not take it; see help({where}) for the "
                        "arguments it takes")


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


def to_logs(outputs, where: str) -> dict:
    """The logs of a step's returned dict: each value a float (an array if not a scalar)."""
    if not isinstance(outputs, dict):
        raise TypeError(f"Model.{where} must return a dict of metric names to values (e.g. "
                        f"{{'loss': loss}}), got {type(outputs).__name__}")
    out = {}
    for key, value in outputs.items():
        array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        out[key] = float(array) if array.size == 1 else array
    return out


def format_logs(logs: dict) -> str:
    return " - ".join(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}"
                      for k, v in logs.items())


def print_epoch(epoch: int, epochs: int, steps: int, logs: dict) -> None:
    shown = format_logs(logs)
    print(f"Epoch {epoch + 1}/{epochs}\n{steps}/{steps} - {shown}", flush=True)


def first_replica(value):
    """`value` with each PerReplica (a leaf here, a container to em.nest) replaced by its
    first replica's value."""
    if isinstance(value, PerReplica):
        return value.values[0]
    if isinstance(value, dict):
        return {k: first_replica(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)) and not hasattr(value, "_fields"):
        return type(value)(first_replica(v) for v in value)
    return value


def to_tensors(inputs, name: str):
    """The model's inputs as em.Tensors: one, or a nested structure (dict / tuple / list)
    of them, which call() receives as it is (Keras's several inputs)."""
    leaves = nest.flatten(inputs)
    if len(leaves) == 1 and leaves[0] is inputs:
        return convert_to_tensor(inputs)
    try:
        return nest.map_structure(convert_to_tensor, inputs)
    except (TypeError, ValueError) as e:
        kinds = sorted({type(v).__name__ for v in leaves})
        raise TypeError(f"Model '{name}': the inputs must be tensors or arrays, or a dict / "
                        f"tuple / list of them; got a {type(inputs).__name__} holding "
                        f"{kinds}") from e
