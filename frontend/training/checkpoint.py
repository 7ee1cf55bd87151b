"""`em.train.Checkpoint`: the values of a model's and an optimizer's Variables, saved to and
restored from a numpy `.npz` file (tf.train.Checkpoint's role, without pickle).

Keys are object paths: the keyword a Checkpoint was given, then the attribute path inside it
(`model/layers/0/kernel`); an optimizer contributes `optimizer/iterations`, its own learning
rate (`optimizer/learning_rate`) and one key per slot, named by the path of the variable the
slot belongs to (`optimizer/momentum/model/layers/0/kernel`). Restoring is strict for the
objects a Checkpoint is given: a missing or unexpected key of theirs and a shape or dtype
mismatch raise before any Variable is written. The file's values of other objects (the
optimizer's, when only the model is restored) are left alone, as TensorFlow's
`restore(...).expect_partial()` does; `assert_consumed()` raises for them.
"""

from __future__ import annotations

import os

import numpy as np

from ember.frontend.training.module import Module
from ember.frontend.training.optimizer_base import Optimizer
from ember.frontend.variables import Variable

SUFFIX = ".npz"


def _object_variables(key: str, obj) -> list:
    """(path, Variable) pairs of a Variable, Module, or list/tuple/dict of them."""
    if isinstance(obj, Variable):
        return [(key, obj)]
    if isinstance(obj, Module):
        return [("/".join([key, *map(str, path)]), v)
                for path, v in obj._flatten(lambda x: isinstance(x, Variable), with_path=True)]
    if isinstance(obj, dict):
        return [pair for k in sorted(obj) for pair in _object_variables(f"{key}/{k}", obj[k])]
    if isinstance(obj, (list, tuple)):
        return [pair for i, v in enumerate(obj) for pair in _object_variables(f"{key}/{i}", v)]
    raise TypeError(f"em.train.Checkpoint: cannot save {key}={obj!r}; a checkpoint holds "
                    "em.Variables, em.Modules (layers, models), optimizers and lists or dicts "
                    "of them")


def _check_name(name: str) -> None:
    if "/" in name:
        raise ValueError(f"em.train.Checkpoint: the name {name!r} contains '/', which "
                         "separates path parts")


class Checkpoint:
    """Saves and restores the Variables of the objects it is given (tf.train.Checkpoint).

    Args:
      **objects: what to save, by name: Variables, Modules (layers, models), optimizers,
        and lists or dicts of them.

    Example:
      >>> import tempfile, os
      >>> v = em.Variable([1.0, 2.0])
      >>> ckpt = em.train.Checkpoint(weights=v)
      >>> path = ckpt.save(os.path.join(tempfile.mkdtemp(), "ckpt"))
      >>> os.path.basename(path)
      'ckpt-1.npz'
      >>> _ = v.assign([0.0, 0.0])
      >>> ckpt.restore(path).assert_consumed()
      <CheckpointLoadStatus: 1 value restored>
      >>> v.numpy()
      array([1., 2.], dtype=float32)
    """

    def __init__(self, **objects):
        for name in objects:
            _check_name(name)
        object.__setattr__(self, "_objects", objects)
        self.save_counter = 0

    def __getattr__(self, name: str):
        """The object given under `name` (`ckpt.step.assign_add(1)`, as TensorFlow's)."""
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(f"em.train.Checkpoint has no object {name!r}; it was given "
                             f"{sorted(objects) or 'none'}")

    def __setattr__(self, name: str, value) -> None:
        """`ckpt.name = obj` saves `obj` under `name` too, as TensorFlow's Checkpoint tracks
        attributes set after it is made."""
        if name.startswith("_") or name == "save_counter":
            object.__setattr__(self, name, value)
        else:
            _check_name(name)
            self._objects[name] = value

    def _variables(self, saved_keys=()) -> dict:
        """Path -> Variable for every saved value (optimizer slots keyed by the path of
        their variable); slots named in `saved_keys` that do not exist yet are created, as
        restoring into a fresh optimizer needs."""
        out, optimizers = {}, []
        for name in sorted(self._objects):
            obj = self._objects[name]
            if isinstance(obj, Optimizer):
                optimizers.append((name, obj))
                continue
            for path, var in _object_variables(name, obj):
                out.setdefault(path, var)
        path_of = {}
        for path, var in out.items():
            path_of.setdefault(id(var), path)
        for name, opt in optimizers:
            out[f"{name}/iterations"] = opt.iterations
            if opt._owns_learning_rate:
                out[f"{name}/learning_rate"] = opt._learning_rate
            _create_slots(name, opt, out, saved_keys)
            out.update(self._slot_paths(name, opt, path_of))
        return out

    @staticmethod
    def _slot_paths(name: str, opt: Optimizer, path_of: dict) -> dict:
        out = {}
        for var in opt._slot_owners:
            if id(var) not in path_of:
                raise ValueError(
                    f"em.train.Checkpoint: optimizer '{name}' has slots for {var.name}, which "
                    "no other object of this checkpoint holds, so the slots have no path; "
                    "add the model (or the variable) to the Checkpoint")
            for slot_name, slot in opt._slots[id(var)].items():
                out[f"{name}/{slot_name}/{path_of[id(var)]}"] = slot
        return out

    # -- writing ------------------------------------------------------------------------------

    def write(self, file_prefix) -> str:
        """Writes every value to `file_prefix` (`.npz` added if missing); returns the path."""
        path = os.fspath(file_prefix)
        if not path.endswith(SUFFIX):
            path += SUFFIX
        arrays = {}
        for key, var in self._variables().items():
            if var.handle.value is None:
                raise ValueError(f"em.train.Checkpoint: {key} ({var.name}) has no value yet "
                                 "(it is initialised by the em.function that created it)")
            arrays[key] = np.asarray(var._numpy_array())
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)  # a reader never sees half a checkpoint
        return path

    def save(self, file_prefix) -> str:
        """Writes `{file_prefix}-{n}.npz`, n counting this checkpoint's saves from 1
        (tf.train.Checkpoint.save); returns the path."""
        self.save_counter += 1
        return self.write(f"{os.fspath(file_prefix)}-{self.save_counter}")

    # -- reading ------------------------------------------------------------------------------

    def read(self, save_path) -> "CheckpointLoadStatus":
        """Assigns every saved value back to its Variable. Optimizer slots that do not exist
        yet are created first (as Keras's `optimizer.build`). Returns the status whose
        `assert_consumed()` / `expect_partial()` TensorFlow code chains (a restore that
        returns matched every value both ways).

        Raises:
          FileNotFoundError: no such file.
          ValueError: keys missing from the file or not in this checkpoint, or a value whose
            shape or dtype differs from its Variable's; nothing is assigned then.
        """
        path = os.fspath(save_path)
        if not os.path.exists(path) and os.path.exists(path + SUFFIX):
            path += SUFFIX
        if not os.path.exists(path):
            raise FileNotFoundError(f"em.train.Checkpoint: no checkpoint at {path!r}")
        with np.load(path, allow_pickle=False) as data:
            saved = {key: data[key] for key in data.files}
        targets = self._variables(saved_keys=saved)
        for key, var in targets.items():
            if key in saved:
                saved[key] = _as_extension_dtype(saved[key], var)
        missing = sorted(set(targets) - set(saved))
        extra = sorted(set(saved) - set(targets))
        # values of objects this checkpoint was not given (an optimizer's, restoring a model
        # for inference): left alone, as TensorFlow does; the status's assert_consumed names
        # them. A value of a given object that matches nothing stays an error (below).
        unused = [key for key in extra if key.split("/", 1)[0] not in self._objects]
        extra = [key for key in extra if key.split("/", 1)[0] in self._objects]
        if missing or extra:
            raise ValueError(
                f"em.train.Checkpoint: {path} does not match the checkpointed objects: "
                + "; ".join(part for part in (
                    f"missing from the file: {missing}" if missing else "",
                    f"in the file but not in the checkpoint: {extra}" if extra else "") if part)
                + ("; a layer's or model's variables exist once it is built: call it once, or "
                   "model.build(input_shape), before restoring" if extra and not missing
                   else ""))
        for key, var in targets.items():
            _check_value(key, var, saved[key], path)
        for key, var in targets.items():
            var.assign(saved[key])
        return CheckpointLoadStatus(len(targets), unused, path)

    restore = read


class CheckpointLoadStatus:
    """What `Checkpoint.restore` returns (tf.train.Checkpoint's load status). Every object
    the Checkpoint was given has been restored whole once restore returns; `unused` are the
    file's values of objects it was not given, which `assert_consumed` reports. Each check
    returns the status, as TensorFlow's do, so `ckpt.restore(path).expect_partial()` ports
    unchanged."""

    def __init__(self, restored: int, unused=(), path: str = ""):
        self.restored = restored
        self.unused = list(unused)
        self._path = path

    def assert_consumed(self) -> "CheckpointLoadStatus":
        if self.unused:
            raise AssertionError(
                f"em.train.Checkpoint: {self._path} holds values of objects this checkpoint "
                f"was not given, left unrestored: {self.unused}; give those objects to the "
                f"Checkpoint, or call expect_partial() instead where that is intended")
        return self

    def assert_existing_objects_matched(self) -> "CheckpointLoadStatus":
        return self

    def assert_nontrivial_match(self) -> "CheckpointLoadStatus":
        if not self.restored:
            raise AssertionError("em.train.Checkpoint: the restore matched no value (the "
                                 "checkpoint and the file were both empty)")
        return self

    def expect_partial(self) -> "CheckpointLoadStatus":
        return self

    def __repr__(self) -> str:
        return f"<CheckpointLoadStatus: {self.restored} value{'s' * (self.restored != 1)} " \
            "restored>"


def _create_slots(name: str, opt: Optimizer, variables: dict, saved_keys) -> None:
    """Creates the slots `{name}/{slot}/{variable path}` of `saved_keys` that `opt` lacks
    (a slot name the optimizer does not use is left for the mismatch error)."""
    initial = dict(opt._slot_names_for())
    for key in saved_keys:
        slot_name, _, var_path = key[len(name) + 1:].partition("/")
        if key.startswith(name + "/") and slot_name in initial and var_path in variables:
            opt.add_slot(variables[var_path], slot_name, initial[slot_name])


def _as_extension_dtype(value: np.ndarray, var: Variable) -> np.ndarray:
    """npz files keep bfloat16 (an ml_dtypes type) as raw 2-byte records: view them back."""
    want = var.dtype.np_dtype
    if value.dtype.kind == "V" and want.kind == "V" and value.dtype.itemsize == want.itemsize:
        return value.view(want)
    return value


def _check_value(key: str, var: Variable, value: np.ndarray, path: str) -> None:
    want = var.shape.as_list()
    if want is not None and (len(want) != value.ndim or any(
            w is not None and w != d for w, d in zip(want, value.shape))):
        raise ValueError(f"em.train.Checkpoint: {key} in {path} has shape {list(value.shape)}, "
                         f"but {var.name} has shape {var.shape}")
    if value.dtype != var.dtype.np_dtype:
        raise ValueError(f"em.train.Checkpoint: {key} in {path} has dtype {value.dtype}, but "
                         f"{var.name} has dtype {var.dtype.name}")


class CheckpointManager:
    """Numbered checkpoints in one directory, keeping the newest `max_to_keep`
    (tf.train.CheckpointManager); checkpoints already in the directory are picked up.

    Example:
      >>> import tempfile
      >>> v = em.Variable(1.0)
      >>> manager = em.train.CheckpointManager(em.train.Checkpoint(v=v), tempfile.mkdtemp(),
      ...                                      max_to_keep=2)
      >>> paths = [manager.save() for _ in range(3)]
      >>> [os.path.basename(p) for p in manager.checkpoints]
      ['ckpt-2.npz', 'ckpt-3.npz']
      >>> manager.latest_checkpoint == paths[-1]
      True
    """

    def __init__(self, checkpoint: Checkpoint, directory, max_to_keep=5,
                 checkpoint_name: str = "ckpt"):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"em.train.CheckpointManager needs an em.train.Checkpoint, got "
                            f"{checkpoint!r}")
        if max_to_keep is not None and (not isinstance(max_to_keep, int) or max_to_keep < 1):
            raise ValueError(f"em.train.CheckpointManager: max_to_keep must be a positive "
                             f"int or None (keep all), got {max_to_keep!r}")
        self._checkpoint = checkpoint
        self.directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._name = checkpoint_name

    def _numbered(self) -> list:
        return _numbered(self.directory, self._name)

    @property
    def checkpoints(self) -> list:
        """The paths of the kept checkpoints, oldest first."""
        return [path for _, path in self._numbered()]

    @property
    def latest_checkpoint(self):
        """The newest checkpoint's path, or None."""
        found = self._numbered()
        return found[-1][1] if found else None

    def save(self, checkpoint_number=None) -> str:
        """Writes `{directory}/{checkpoint_name}-{n}.npz` (n one more than the newest, or
        `checkpoint_number`), deletes the oldest beyond `max_to_keep`; returns the path."""
        found = self._numbered()
        number = checkpoint_number if checkpoint_number is not None else \
            (found[-1][0] + 1 if found else 1)
        path = self._checkpoint.write(os.path.join(self.directory, f"{self._name}-{number}"))
        if self._max_to_keep is not None:
            for _, old in self._numbered()[:-self._max_to_keep]:
                os.remove(old)
        return path

    def restore_or_initialize(self):
        """Restores the newest checkpoint and returns its path; with none, returns None and
        leaves the Variables at their initial values (tf.train.CheckpointManager's)."""
        path = self.latest_checkpoint
        if path is not None:
            self._checkpoint.restore(path)
        return path


def latest_checkpoint(checkpoint_dir, checkpoint_name: str = "ckpt"):
    """The newest `{checkpoint_name}-{n}.npz` in `checkpoint_dir`, or None
    (tf.train.latest_checkpoint)."""
    found = _numbered(os.fspath(checkpoint_dir), checkpoint_name)
    return found[-1][1] if found else None


def _numbered(directory: str, name: str) -> list:
    """(number, path) of the checkpoints `{name}-{n}.npz` in `directory`, oldest first."""
    if not os.path.isdir(directory):
        return []
    found, prefix = [], f"{name}-"
    for entry in os.listdir(directory):
        stem = entry[:-len(SUFFIX)] if entry.endswith(SUFFIX) else ""
        if stem.startswith(prefix) and stem[len(prefix):].isdigit():
            found.append((int(stem[len(prefix):]), os.path.join(directory, entry)))
    return sorted(found)
