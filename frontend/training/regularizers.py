"""`em.keras.regularizers`: weight penalties a layer adds to its `losses` — `L1`, `L2`,
`L1L2` and `get` / `serialize` (keras/regularizers.py, Keras 2).

A layer's `kernel_regularizer` / `bias_regularizer` are applied to the weight on every
read of `layer.losses` (Keras's callable losses); `activity_regularizer` is applied to the
layer's output on each call and divided by the batch size. fit adds them to the loss.

Example:
  >>> import ember as em
  >>> float(em.keras.regularizers.L2(0.5)(em.constant([1.0, -2.0])))
  2.5
"""

from __future__ import annotations

from ember.frontend import ops
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.training import keras_objects
from ember.frontend.training.keras_objects import Configurable, resolve


def _factor(value, what: str, where: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0 or \
            value != value:
        raise ValueError(f"{where}: {what} must be a float >= 0, got {value!r}")
    return float(value)


def _as_float(x):
    x = convert_to_tensor(getattr(x, "read_value", lambda: x)())
    if not x.dtype.is_floating:
        raise TypeError(f"a regularizer needs floating-point weights, got dtype "
                        f"{x.dtype.name}")
    return x


class Regularizer(Configurable):
    """A callable `weights -> scalar penalty` with `get_config` / `from_config`."""

    def __call__(self, x):
        return convert_to_tensor(0.0)


class L1L2(Regularizer):
    """`l1 * sum(|x|) + l2 * sum(x ** 2)` (both 0 by default)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _factor(l1, "l1", type(self).__name__)
        self.l2 = _factor(l2, "l2", type(self).__name__)

    def __call__(self, x):
        x = _as_float(x)
        out = convert_to_tensor(0.0, dtype=x.dtype)
        if self.l1:
            out = out + convert_to_tensor(self.l1, dtype=x.dtype) * ops.reduce_sum(ops.abs(x))
        if self.l2:
            out = out + convert_to_tensor(self.l2, dtype=x.dtype) * \
                ops.reduce_sum(ops.square(x))
        return out

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """`l1 * sum(|x|)` (l1 = 0.01 by default)."""

    def __init__(self, l1=0.01):
        super().__init__(l1=l1)

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    """`l2 * sum(x ** 2)` (l2 = 0.01 by default)."""

    def __init__(self, l2=0.01):
        super().__init__(l2=l2)

    def get_config(self):
        return {"l2": self.l2}


def l1_l2(l1=0.01, l2=0.01):
    """L1L2 with both factors 0.01 by default (Keras's function)."""
    return L1L2(l1=l1, l2=l2)


l1, l2 = L1, L2
_CLASSES = {"L1": L1, "L2": L2, "L1L2": L1L2, "l1": L1, "l2": L2, "l1_l2": l1_l2}


def get(identifier, where: str = "em.keras.regularizers.get"):
    """The regularizer of a name ("l1", "l2", "l1_l2", "L1", ...), of a serialized
    `{"class_name": ..., "config": {...}}`, or a callable as it is; None stays None."""
    return resolve(identifier, where, _lookup, "a regularizer is a name, a callable "
                   "(weights -> scalar) or None")


deserialize = get


def _lookup(name: str, where: str):
    if name not in _CLASSES:
        raise ValueError(f"{where}: unknown regularizer {name!r}; use one of "
                         f"{sorted(_CLASSES)} or a callable (weights -> scalar)")
    return _CLASSES[name]


def serialize(regularizer):
    """`{"class_name": ..., "config": ...}` of a Regularizer; a function's `__name__`."""
    return keras_objects.serialize(
        regularizer, Regularizer, "em.keras.regularizers.serialize",
        "subclass em.keras.regularizers.Regularizer or use a named function")


__all__ = ["L1", "L1L2", "L2", "Regularizer", "deserialize", "get", "l1", "l1_l2", "l2",
           "serialize"]
