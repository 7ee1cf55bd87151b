"""The callbacks users reach for first: `EarlyStopping` and `LearningRateScheduler`
(keras.callbacks'), run by Model.fit's hooks (callback_base.py's `Callback`)."""

from __future__ import annotations

import warnings

import numpy as np

from ember.frontend.user_code import user_stacklevel
from ember.frontend.variables import Variable
from ember.runtime.keras.callback_base import Callback

_MAX_METRICS = ("acc", "accuracy", "auc", "precision", "recall")


class EarlyStopping(Callback):
    """Stops training when `monitor` has not improved for `patience` epochs
    (keras.callbacks.EarlyStopping).

    Args:
      monitor: the logged value watched ('val_loss', 'loss', 'val_accuracy', ...).
      min_delta: a smaller change is no improvement.
      patience: epochs without improvement before training stops.
      verbose: 1 prints the epoch it stopped at (and the restore).
      mode: 'min', 'max' or 'auto' ('max' for accuracies, 'min' otherwise).
      baseline: training also stops if `monitor` does not beat this value in `patience`
        epochs.
      restore_best_weights: at the end of training, set the weights of the best epoch.
      start_from_epoch: epochs to wait before watching.

    Example:
      >>> stop = em.keras.callbacks.EarlyStopping(monitor="loss", patience=2)
      >>> stop.monitor, stop.patience
      ('loss', 2)
    """

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            raise ValueError(f"EarlyStopping: mode must be 'auto', 'min' or 'max', got "
                             f"{mode!r}")
        for what, value in (("patience", patience), ("start_from_epoch", start_from_epoch)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"EarlyStopping: {what} must be an integer >= 0, got "
                                 f"{value!r}")
        if mode == "auto":
            name = monitor.removeprefix("val_")
            mode = "max" if any(name == m or name.endswith("_" + m) for m in _MAX_METRICS) \
                else "min"
        self.monitor, self.mode, self.patience, self.verbose = monitor, mode, patience, verbose
        self.min_delta = abs(float(min_delta))
        self.baseline, self.restore_best_weights = baseline, bool(restore_best_weights)
        self.start_from_epoch = start_from_epoch
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best, self.best_weights = None, None

    def _better(self, value, reference) -> bool:
        if reference is None:
            return True
        if self.mode == "max":
            return value - self.min_delta > reference
        return value + self.min_delta < reference

    def on_train_begin(self, logs=None):
        self.wait = self.stopped_epoch = self.best_epoch = 0
        self.best, self.best_weights = None, None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"EarlyStopping conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(logs)}",
                          stacklevel=user_stacklevel())
            return
        if epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights, self.best_epoch = self.model.get_weights(), epoch
        self.wait += 1
        if self._better(current, self.best):
            self.best, self.best_epoch = current, epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._better(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping", flush=True)
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose:
                print("Restoring model weights from the end of the best epoch: "
                      f"{self.best_epoch + 1}.", flush=True)
            self.model.set_weights(self.best_weights)


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate to `schedule(epoch, lr)` (or `schedule(epoch)`)
    at the start of each epoch, and logs it as 'learning_rate'
    (keras.callbacks.LearningRateScheduler).

    Example:
      >>> cb = em.keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr * 0.5)
      >>> cb.schedule(0, 0.1)
      0.05
    """

    def __init__(self, schedule, verbose=0):
        super().__init__()
        if not callable(schedule):
            raise TypeError(f"LearningRateScheduler: schedule must be a callable (epoch, lr) "
                            f"-> lr, got {schedule!r}")
        self.schedule, self.verbose = schedule, verbose

    def _optimizer(self):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is None:
            raise RuntimeError("LearningRateScheduler: the model has no optimizer (call "
                               "model.compile first)")
        return optimizer

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self._optimizer()
        if not isinstance(optimizer.learning_rate, Variable):  # as Keras: not settable
            raise TypeError("LearningRateScheduler: the optimizer was made with a "
                            "LearningRateSchedule (or a callable) as its learning_rate, so "
                            "its learning rate is not settable; give it a float instead")
        lr = float(np.asarray(optimizer.learning_rate.numpy()))
        try:
            new = self.schedule(epoch, lr)
        except TypeError:  # Keras's old form: schedule(epoch)
            new = self.schedule(epoch)
        if isinstance(new, (np.floating, np.integer)) or (
                isinstance(new, (int, float)) and not isinstance(new, bool)):
            new = float(new)
        else:
            raise ValueError(f"LearningRateScheduler: the schedule must return a float, got "
                             f"{new!r}")
        optimizer.learning_rate = new
        if self.verbose:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                  f"{new}.", flush=True)

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(np.asarray(self._optimizer().learning_rate.numpy()))
