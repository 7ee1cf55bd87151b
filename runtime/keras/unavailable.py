"""What em.keras leaves out, as errors that say what to use instead: the functional API
(`em.keras.Input`, `em.keras.layers.Input` / `InputLayer`) and Keras's model files
(`model.save`, `model.save_weights`, `model.load_weights`).

Each is a `KerasAPIUnavailableError` (em.errors), an EmberError and an AttributeError (so
`hasattr(model, "save")` stays False, as for any missing attribute) whose message names the
replacement.
"""

from __future__ import annotations

from ember.dialects.ember.errors import EmberError

_FUNCTIONAL = ("the functional API (em.keras.Input with em.keras.Model(inputs, outputs)) is "
               "not available in Ember: use em.keras.Sequential([...]) (a first layer's "
               "input_shape=... builds it), or subclass em.keras.Model and define call()")
_FILES = ("Keras's model files (SavedModel / HDF5) are not available in Ember: save the "
          "weights with em.train.Checkpoint(model=model).write(path) and load them into a "
          "model built the same way with em.train.Checkpoint(model=model).read(path) (or "
          "use model.get_weights() / model.set_weights(arrays))")

MESSAGES = {"Input": _FUNCTIONAL, "InputLayer": _FUNCTIONAL, "save": _FILES,
            "save_weights": _FILES, "load_weights": _FILES, "load_model": _FILES}


class KerasAPIUnavailableError(EmberError, AttributeError):
    """A Keras name Ember does not provide; the message says what to use instead."""


def unavailable(where: str, name: str) -> KerasAPIUnavailableError:
    return KerasAPIUnavailableError(f"{where}{name}: {MESSAGES[name]}")


def _model_attribute(name: str) -> property:
    def get(self):
        raise unavailable(f"{type(self).__name__}.", name)
    return property(get, doc=f"Not available: raises KerasAPIUnavailableError ({name}).")


class UnavailableModelAPI:
    """A mixin of em.keras.Model and Sequential: `save`, `save_weights` and `load_weights`
    raise KerasAPIUnavailableError naming em.train.Checkpoint (a subclass may still define
    them)."""

    save = _model_attribute("save")
    save_weights = _model_attribute("save_weights")
    load_weights = _model_attribute("load_weights")
