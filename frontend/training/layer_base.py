"""`em.layers.Layer`: the base of Keras's layers (keras.layers.Layer) — a Module that
builds its weights on its first call, and Keras's losses and configs:

- `add_loss(value)`: inside `call`, a tensor (an activity loss: kept until the outermost
  layer's next call, as Keras's); anywhere, a zero-argument callable (evaluated on every
  read of `losses`, which is how weight regularizers are added). `layer.losses` collects
  them over the layer and its sublayers; Model.fit adds them to the loss it differentiates.
- `get_config()` / `from_config(config)`: the constructor's arguments, serialized as
  tf.keras does (initializers and regularizers as {"class_name", "config"}, activations by
  name); `from_config(layer.get_config())` makes an equal, unbuilt layer.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import inspect
import re
import threading
import weakref

from ember.frontend.shape import TensorShape
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.tracing import init_scope
from ember.frontend.training import activations, initializers, regularizers
from ember.frontend.training.module import Module
from ember.frontend.variables import Variable

_names = collections.Counter()
_names_lock = threading.Lock()
# per thread: the depth of nested layer calls, and {layer: activity losses of its last call}
# (a replica's thread has its own, as Keras's thread-local eager losses)
_calls = threading.local()


def _activity(layer) -> list:
    table = getattr(_calls, "losses", None)
    if table is None:
        table = _calls.losses = weakref.WeakKeyDictionary()
    return table.setdefault(layer, [])


@contextlib.contextmanager
def call_context(layer):
    """Runs a layer's call: the outermost call (not one nested in another layer's) first
    clears the activity losses of the layer and its sublayers, as Keras's `__call__`."""
    depth = getattr(_calls, "depth", 0)
    if depth == 0:
        for sub in layer._flatten_layers():
            _activity(sub).clear()
    _calls.depth = depth + 1
    try:
        yield
    finally:
        _calls.depth = depth


def _snake(name: str) -> str:
    """Keras's layer names: `Conv2D` -> `conv2d`, `MaxPooling2D` -> `max_pooling2d`."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _unique_name(base: str) -> str:
    """`dense`, then `dense_1`, `dense_2`, ... (Keras's automatic layer names)."""
    with _names_lock:
        n = _names[base]
        _names[base] += 1
    return base if n == 0 else f"{base}_{n}"


class Layer(Module):
    """A Module called on tensors, which builds its weights on the first call
    (keras.layers.Layer): subclasses define `build(input_shape)` and `call(inputs, ...)`.

    Args:
      trainable: whether the layer's weights are trainable.
      name: the layer's name (default: the class name in snake case, made unique).
      dtype: the dtype of its weights (float32 by default).
      activity_regularizer: a regularizer of the layer's output (see regularizers.py),
        added to `losses` on each call, divided by the batch size.
      input_shape, batch_size, batch_input_shape, input_dim: Keras 2's input shape of a
        model's first layer (`input_shape` without the batch dim, `batch_size` its batch,
        `input_dim=n` for `input_shape=(n,)`): a Sequential builds itself from it when the
        layer is added, and get_config keeps it as "batch_input_shape".
    """

    _ignored_attributes = Module._ignored_attributes | {"_made", "_callable_losses",
                                                       "_batch_input_shape",
                                                       "_output_shapes"}
    # the constructor arguments get_config stores, each read from the attribute of its name
    _config_fields: tuple = ()

    def __init__(self, trainable: bool = True, name: str | None = None, dtype=None,
                 activity_regularizer=None, **kwargs):
        super().__init__(name or _unique_name(_snake(type(self).__name__)))
        self._batch_input_shape = batch_input_shape_of(type(self).__name__, kwargs)
        self._made: list = []  # the weights add_weight made, in order
        self._callable_losses: list = []
        self.trainable = bool(trainable)
        self.built = False
        self._dtype = initializers.float_dtype(dtype, type(self).__name__)
        self.activity_regularizer = regularizers.get(
            activity_regularizer, f"{type(self).__name__}: activity_regularizer")

    @property
    def dtype(self):
        return self._dtype

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        """Keras's freeze, set on this layer and every sublayer: a frozen layer's weights
        leave `trainable_variables` (fit and the optimizers skip them), the Variables as
        they are (a tape still watches them, as TensorFlow's)."""
        for layer in (self, *(m for m in self.submodules if isinstance(m, Layer))):
            layer.__dict__["_trainable"] = bool(value)

    def _frozen(self) -> set:
        return {id(v) for layer in (self, *self.submodules)
                if isinstance(layer, Layer) and not layer._trainable for v in layer.variables}

    @property
    def trainable_variables(self) -> tuple:
        frozen = self._frozen()
        return tuple(v for v in super().trainable_variables if id(v) not in frozen)

    @property
    def non_trainable_variables(self) -> tuple:
        frozen = self._frozen()
        return tuple(v for v in self.variables if not v.trainable or id(v) in frozen)

    def __init_subclass__(cls, **kwargs):
        """Wraps a subclass's `build` so a direct `layer.build(shape)` call (as the guide
        advises before training several models with one function) marks the layer built and
        the first call does not build it again (Keras's build wrapper)."""
        super().__init_subclass__(**kwargs)
        if "build" in cls.__dict__:
            cls.build = _built_once(cls.__dict__["build"])

    def build(self, input_shape: TensorShape) -> None:
        """Creates the weights for inputs of `input_shape` (a layer without any: nothing)."""
        self.built = True

    def call(self, inputs, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} subclasses Layer without defining "
                        "call(self, inputs)")

    def __call__(self, inputs, *args, **kwargs):
        inputs = convert_to_tensor(inputs)
        with call_context(self):
            if not self.built:
                self.build(TensorShape(inputs.shape))
            outputs = self.call(inputs, *args, **kwargs)
            if self.activity_regularizer is not None:
                self._regularize_activity(outputs)
        return outputs

    def _regularize_activity(self, outputs) -> None:
        """Keras's activity loss: regularizer(output) / batch size, for each output."""
        from ember.frontend import ops
        for out in outputs if isinstance(outputs, (list, tuple)) else [outputs]:
            loss = convert_to_tensor(self.activity_regularizer(out))
            batch = ops.cast(ops.shape(out)[0], loss.dtype)
            self.add_loss(ops.divide(loss, batch))

    def add_weight(self, name: str, shape, initializer="glorot_uniform",
                   trainable: bool = True, dtype=None, regularizer=None) -> Variable:
        """A new weight Variable filled by `initializer` (a Keras name or a callable);
        `regularizer(weight)` joins `losses` (re-evaluated on every read)."""
        dtype = initializers.float_dtype(dtype or self._dtype, type(self).__name__)
        where = f"{type(self).__name__} '{self.name}'"
        init = initializers.get(initializer, where)
        regularizer = regularizers.get(regularizer, where)
        shape = [int(d) for d in shape]
        with init_scope():
            value = convert_to_tensor(init(shape, dtype))._numpy_array()
        weight = Variable(value, trainable=trainable and self.trainable,
                          name=f"{self.name}/{name}")
        self._made.append(weight)
        if regularizer is not None:
            self.add_loss(functools.partial(regularizer, weight))
        return weight

    # -- losses ------------------------------------------------------------------------------

    def add_loss(self, losses, **kwargs) -> None:
        """Adds `losses` (a value or a list) to `self.losses` (keras.layers.Layer.add_loss):
        a tensor inside `call` (kept until the next outermost call), or a zero-argument
        callable anywhere (evaluated on each read of `losses`).

        Raises:
          ValueError: a tensor added outside a layer's call.
        """
        kwargs.pop("inputs", None)
        if kwargs:
            raise TypeError(f"add_loss: unknown keyword arguments {sorted(kwargs)}")
        values = list(losses) if isinstance(losses, (list, tuple)) else [losses]
        tensors = []
        for loss in values:
            if callable(loss):
                self._callable_losses.append(loss)
            elif loss is not None:
                tensors.append(_as_loss(loss))
        if tensors and getattr(_calls, "depth", 0) == 0:
            raise ValueError(f"Layer '{self.name}'.add_loss: a tensor loss can only be added "
                             "inside the layer's call(); outside it, wrap the computation "
                             "in a zero-argument lambda (layer.add_loss(lambda: ...)), "
                             "which is evaluated each time `losses` is read")
        _activity(self).extend(tensors)

    @property
    def losses(self) -> list:
        """The losses of this layer and its sublayers: the tensors `call`s added during the
        last outermost call, and the values of the callables (weight regularizers)."""
        out = []
        for layer in self._flatten_layers():
            out += _activity(layer)
            for fn in layer._callable_losses:
                value = fn()
                if value is not None:
                    out.append(_as_loss(value))
        return out

    def _flatten_layers(self) -> list:
        """This layer, then every Layer reachable from it, each once."""
        return [self, *(m for m in self.submodules if isinstance(m, Layer))]

    # -- configs -----------------------------------------------------------------------------

    def get_config(self) -> dict:
        """The constructor's arguments (keras.layers.Layer.get_config): `name`,
        `trainable`, `dtype` and the layer's own, initializers and regularizers as
        {"class_name", "config"} dicts and activations by name.

        Raises:
          TypeError: a subclass whose `__init__` takes arguments that get_config does not
            know (override get_config, or list them in `_config_fields`).
        """
        config = {"name": self.name, "trainable": self.trainable}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        config["dtype"] = self.dtype.name
        for key in self._config_fields:
            config[key] = _serialize(key, getattr(self, key))
        if type(self).get_config is Layer.get_config:
            params = inspect.signature(type(self).__init__).parameters.values()
            missing = [p.name for p in params if p.name != "self" and p.name not in config
                       and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                       and p.name != "activity_regularizer"]
            if missing:
                raise TypeError(f"Layer {type(self).__name__} has arguments {missing} in "
                                "`__init__` and therefore must override `get_config()` "
                                "(return {**super().get_config(), 'arg': self.arg, ...})")
        return config

    @classmethod
    def from_config(cls, config: dict):
        """A new (unbuilt) layer of `config`: `cls(**config)`."""
        return cls(**config)

    def _walk_order(self) -> list:
        """A layer's weights in the order it made them, then its other attributes in the
        order they were first set, as Keras tracks them (kernel before bias, an encoder
        made before its decoder before it), not sorted as tf.Module's."""
        made = {id(w): i for i, w in enumerate(self._made)}
        own = vars(self)
        weights = sorted((k for k in own if id(own[k]) in made), key=lambda k: made[id(own[k])])
        return weights + [k for k in own if k not in weights]

    # Keras's names for the variables, as lists
    weights = property(lambda self: list(self.variables))
    trainable_weights = property(lambda self: list(self.trainable_variables))
    non_trainable_weights = property(lambda self: list(self.non_trainable_variables))


_INPUT_KWARGS = ("input_shape", "batch_input_shape", "batch_size", "input_dim")


def batch_input_shape_of(where: str, kwargs: dict):
    """Keras 2's `batch_input_shape` from a layer's keyword arguments (base_layer.py:
    `input_dim=n` aliases `input_shape=(n,)`; `batch_input_shape` wins over `input_shape`
    and `batch_size`), or None; any other keyword is a TypeError, as Keras's."""
    unknown = sorted(set(kwargs) - set(_INPUT_KWARGS))
    if unknown:
        raise TypeError(f"{where}: keyword argument not understood: {unknown[0]!r}")
    if "input_dim" in kwargs and "input_shape" not in kwargs:
        kwargs = {**kwargs, "input_shape": (kwargs["input_dim"],)}
    if kwargs.get("batch_input_shape") is not None:
        shape = tuple(kwargs["batch_input_shape"])
    elif kwargs.get("input_shape") is not None:
        shape = (kwargs.get("batch_size"), *tuple(kwargs["input_shape"]))
    else:
        return None
    if any(d is not None and (not isinstance(d, int) or isinstance(d, bool) or d < 0)
           for d in shape):
        raise ValueError(f"{where}: the input shape must hold non-negative ints or None, got "
                         f"batch_input_shape={shape}")
    return shape


def _built_once(build):
    @functools.wraps(build)
    def wrapper(self, input_shape):
        if self.built:
            return
        build(self, TensorShape(input_shape))
        self.built = True
    return wrapper


def _as_loss(value):
    from ember.frontend import ops
    value = convert_to_tensor(value)
    return value if value.dtype.is_floating else ops.cast(value, "float32")


def _serialize(key: str, value):
    if key == "activation":
        return activations.serialize(value)
    if key.endswith("_initializer"):
        return initializers.serialize(value)
    if key.endswith("_regularizer"):
        return regularizers.serialize(value)
    if key == "padding" and isinstance(value, str):
        return value.lower()
    return value


_CLASS_ALIASES = {"MaxPool2D": "MaxPooling2D", "AvgPool2D": "AveragePooling2D",
                  "GlobalAvgPool2D": "GlobalAveragePooling2D",
                  "GlobalMaxPool2D": "GlobalMaxPooling2D"}


def layer_class(name, custom_objects=None):
    """The Layer class a config's "class_name" names: from `custom_objects`, else among
    the Layer subclasses (Ember's own first, the most derived of same-named ones)."""
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    name = _CLASS_ALIASES.get(name, name)
    found, todo = [], [Layer]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__name__ == name and cls not in found:
            found.append(cls)
    ours = [c for c in found if c.__module__.startswith("ember.")]
    found = ours or found
    leaves = [c for c in found if not any(o is not c and issubclass(o, c) for o in found)]
    if len(leaves) != 1:
        raise ValueError(f"Unknown layer class {name!r} in a config"
                         + (f" (several classes have that name: {leaves})" if leaves else "")
                         + "; pass it to from_config as custom_objects={name: cls}")
    return leaves[0]
