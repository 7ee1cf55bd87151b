"""`Callback` (the hooks Model.fit, evaluate and predict call, keras.callbacks.Callback),
`History` (what fit returns), and how the loops call them (`with_history`, `call_hooks`).

The hooks and their logs are Keras 2's (keras/engine/training.py):

- fit: `on_train_begin`, `on_epoch_begin(epoch)`, `on_train_batch_begin(batch)`,
  `on_train_batch_end(batch, logs)`, `on_epoch_end(epoch, logs)` (with the `val_` logs),
  `on_train_end`; the validation after each epoch calls the test hooks below on fit's
  callbacks. `on_batch_begin` / `on_batch_end` are the old names of the train-batch hooks:
  the base class's train-batch hooks call them.
- evaluate: `on_test_begin`, `on_test_batch_begin(batch)`, `on_test_batch_end(batch, logs)`
  (the running loss and metrics), `on_test_end(logs)`.
- predict: `on_predict_begin`, `on_predict_batch_begin(batch)`,
  `on_predict_batch_end(batch, {"outputs": the batch's outputs})`, `on_predict_end`.
"""

from __future__ import annotations


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

    def on_batch_begin(self, batch, logs=None):
        """The old name of `on_train_batch_begin` (Keras 2 still calls it)."""
        del batch, logs

    def on_batch_end(self, batch, logs=None):
        """The old name of `on_train_batch_end` (Keras 2 still calls it)."""
        del batch, logs

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_begin(self, logs=None):
        del logs

    def on_test_end(self, logs=None):
        del logs

    def on_test_batch_begin(self, batch, logs=None):
        del batch, logs

    def on_test_batch_end(self, batch, logs=None):
        del batch, logs

    def on_predict_begin(self, logs=None):
        del logs

    def on_predict_end(self, logs=None):
        del logs

    def on_predict_batch_begin(self, batch, logs=None):
        del batch, logs

    def on_predict_batch_end(self, batch, logs=None):
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


def prepared(model, callbacks, params: dict) -> list:
    """`callbacks` as a list, each told the model and the loop's parameters."""
    callbacks = list(callbacks or [])
    for cb in callbacks:
        if hasattr(cb, "set_model"):
            cb.set_model(model)
        if hasattr(cb, "set_params"):
            cb.set_params(dict(params))
    return callbacks


def with_history(model, callbacks, epochs: int, steps, verbose):
    """`callbacks` with a new History last (as Keras: it logs what the others add, e.g.
    LearningRateScheduler's learning_rate), each told the model and fit's parameters;
    returns (the callbacks, the History)."""
    history = History()
    callbacks = prepared(model, list(callbacks or []) + [history],
                         {"epochs": epochs, "steps": steps, "verbose": verbose})
    return callbacks, history


def call_hooks(callbacks, hook: str, *args) -> None:
    """Calls `hook(*args)` on each callback that has it (duck-typed ones may not)."""
    for cb in callbacks:
        method = getattr(cb, hook, None)
        if method is not None:
            method(*args)
