"""`em.layers`: the core layers (`Dense`, `Flatten`, `Dropout`, `Embedding`) plus
`Sequential` (keras.layers, keras.Sequential); the Layer base class is in layer_base.py.

A layer is an `em.Module` that creates its weights on its first call, from the input's shape
(Keras's lazy `build`). Initial values are computed under `em.init_scope()` (eagerly, from
`em.random`), and the Variables are created where the call happens: inside an em.function
that is its first trace, as the guide allows.
"""

from __future__ import annotations

import inspect

from ember.frontend import ops
from ember.frontend import random_composites as random
from ember.frontend.effects import assert_true
from ember.frontend.shape import TensorShape
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.tracing import init_scope
from ember.frontend.training import initializers, regularizers
from ember.frontend.training.layer_base import Layer, call_context, layer_class

__all__ = ["Dense", "Dropout", "Embedding", "Flatten", "Layer", "Sequential"]


def last_dim(input_shape: TensorShape, where: str, min_rank: int = 2) -> int:
    """The known last dimension a layer builds its weights from."""
    dims = input_shape.as_list()
    if dims is None or len(dims) < min_rank or dims[-1] is None:
        raise ValueError(f"{where}: the input's last dimension must be known to build the "
                         f"layer's weights (inputs of rank >= {min_rank}), got shape "
                         f"{input_shape}")
    return dims[-1]


def check_min_ndim(layer, inputs, min_ndim: int) -> None:
    """Keras's InputSpec(min_ndim=...) check: a clear error for inputs of too low a rank
    (an unbatched dataset given to fit, say) or of a rank unknown when traced."""
    rank = inputs.shape.rank
    if rank is None:
        raise ValueError(f'Input 0 of layer "{layer.name}" has an unknown rank at trace '
                         f"time, expected min_ndim={min_ndim}: the function was traced "
                         "with inputs of different ranks (e.g. fit on a batched dataset, "
                         "then on an unbatched one); batch the dataset (dataset.batch(n)) "
                         "so every input has a batch dimension")
    if rank < min_ndim:
        raise ValueError(f'Input 0 of layer "{layer.name}" is incompatible with the layer: '
                         f"expected min_ndim={min_ndim}, found ndim={rank}. Full shape "
                         f"received: {inputs.shape}. Inputs need a batch dimension (rank >= "
                         f"{min_ndim}): batch "
                         "the dataset (dataset.batch(n)) or add one (x[None])")


def activation_fn(activation, where: str):
    """The activation a layer applies: None (linear), a callable, or a name of
    em.keras.activations (keras.activations.get)."""
    from ember.frontend.training import activations
    return activations.get(activation, where)


class Dense(Layer):
    """`activation(inputs @ kernel + bias)` over the last axis (keras.layers.Dense).

    Example:
      >>> em.random.set_seed(0)
      >>> layer = em.layers.Dense(3)
      >>> layer(em.ones([2, 4])).shape
      TensorShape([2, 3])
      >>> [v.name.split("/")[-1] for v in layer.trainable_variables]  # built on first call
      ['kernel:0', 'bias:0']
    """

    _config_fields = ("units", "activation", "use_bias", "kernel_initializer",
                      "bias_initializer", "kernel_regularizer", "bias_regularizer",
                      "activity_regularizer")

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        self.units = units
        self.activation = activation_fn(activation, "Dense")
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer, "Dense")
        self.bias_initializer = initializers.get(bias_initializer, "Dense")
        self.kernel_regularizer = regularizers.get(kernel_regularizer, "Dense")
        self.bias_regularizer = regularizers.get(bias_regularizer, "Dense")
        self.kernel = self.bias = None

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.rank is None or input_shape.rank < 2:
            check_min_ndim(self, _Shaped(input_shape), 2)
        n_in = last_dim(input_shape, f"Dense '{self.name}'")
        self.kernel = self.add_weight("kernel", [n_in, self.units], self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], self.bias_initializer,
                                        regularizer=self.bias_regularizer)

    def call(self, inputs):
        check_min_ndim(self, inputs, 2)
        inputs = _as(inputs, self.dtype)
        n_in, got = self.kernel.shape[0], inputs.shape[-1]
        expected = (f"Input 0 of layer '{self.name}' is incompatible with the layer: "
                    f"expected axis -1 of input shape to have value {n_in}")
        if got is not None and got != n_in:  # Keras's message, not the matmul's
            raise ValueError(f"{expected}, but received input with shape {inputs.shape}")
        if got is None:  # (a trace relaxed to `?`: checked when it runs, with this message)
            assert_true(ops.equal(ops.shape(inputs)[-1], n_in), expected)
        if inputs.shape.rank == 2:
            out = ops.matmul(inputs, self.kernel.read_value())
        else:
            from ember.frontend.einsum import tensordot
            out = tensordot(inputs, self.kernel.read_value(), [[inputs.shape.rank - 1], [0]])
        if self.use_bias:
            out = ops.add(out, self.bias.read_value())
        return self.activation(out) if self.activation is not None else out


class Flatten(Layer):
    """Reshapes `[batch, d1, d2, ...]` to `[batch, d1 * d2 * ...]` (keras.layers.Flatten).

    Example:
      >>> em.layers.Flatten()(em.zeros([2, 3, 4])).shape
      TensorShape([2, 12])
    """

    def call(self, inputs):
        check_min_ndim(self, inputs, 1)
        dims = inputs.shape.as_list()
        if len(dims) == 1:
            return ops.expand_dims(inputs, 1)
        if None not in dims[1:]:
            size = 1
            for d in dims[1:]:
                size *= d
            return ops.reshape(inputs, [-1, size])
        batch = ops.shape(inputs)[:1]
        return ops.reshape(inputs, ops.concat([batch, convert_to_tensor([-1], dtype=batch.dtype)],
                                              0))


class Dropout(Layer):
    """Zeroes each input with probability `rate` and scales the rest by 1 / (1 - rate) when
    called with `training=True`; the identity otherwise (keras.layers.Dropout).

    Example:
      >>> x = em.ones([4])
      >>> em.layers.Dropout(0.5)(x).numpy()  # training defaults to False
      array([1., 1., 1., 1.], dtype=float32)
    """

    _config_fields = ("rate", "noise_shape", "seed")

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate <= 1:
            raise ValueError(f"Dropout: rate must be a float in [0, 1], got {rate!r}")
        self.rate = float(rate)
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs, training=None):
        _check_training(training, "Dropout")
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return ops.zeros_like(inputs)
        return random.dropout(inputs, self.rate, noise_shape=self.noise_shape, seed=self.seed)


class Embedding(Layer):
    """Looks up rows of an `[input_dim, output_dim]` table by integer ids
    (keras.layers.Embedding).

    Example:
      >>> layer = em.layers.Embedding(10, 3)
      >>> layer(em.constant([[1, 2], [3, 4]])).shape
      TensorShape([2, 2, 3])
    """

    _config_fields = ("input_dim", "output_dim", "embeddings_initializer")

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", **kwargs):
        super().__init__(**kwargs)
        for what, n in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
                raise ValueError(f"Embedding: {what} must be a positive integer, got {n!r}")
        self.input_dim, self.output_dim = input_dim, output_dim
        self.embeddings_initializer = initializers.get(embeddings_initializer, "Embedding")
        self.embeddings = None

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", [self.input_dim, self.output_dim],
                                          self.embeddings_initializer)

    def call(self, inputs):
        if not inputs.dtype.is_integer:
            raise TypeError(f"Embedding '{self.name}': inputs must be integer ids, got dtype "
                            f"{inputs.dtype.name}")
        return ops.gather(self.embeddings.read_value(), inputs)


def _check_training(training, where: str):
    if training is not None and not isinstance(training, (bool, int)):
        raise TypeError(f"{where}: `training` must be a Python bool (or None), got "
                        f"{training!r}; choose the branch in Python, e.g. call the model "
                        "with training=True inside the train step")


class _Shaped:
    """A stand-in with a `.shape`, for check_min_ndim on a shape given to build."""

    def __init__(self, shape):
        self.shape = shape


def _as(x, dtype):
    from ember.frontend.math_ops import cast
    return x if x.dtype is dtype else cast(x, dtype)


def _accepts_training(layer) -> bool:
    try:
        return "training" in inspect.signature(layer.call).parameters
    except (TypeError, ValueError):
        return False


class Sequential(Layer):
    """A stack of layers, each called on the previous one's output (keras.Sequential);
    `training=` reaches the layers that take it.

    Example:
      >>> model = em.Sequential([em.layers.Dense(4, activation="relu"), em.layers.Dense(2)])
      >>> model(em.ones([3, 5])).shape
      TensorShape([3, 2])
      >>> len(model.trainable_variables)
      4
    """

    def __init__(self, layers=None, name=None, trainable=True):
        super().__init__(trainable=trainable, name=name)
        self._build_input_shape = None
        self._input_shape_given = False  # a first layer's input_shape: built on each add
        self._output_shapes = {}  # {layer index: TensorShape or "multiple"}, for summary
        self.layers = []
        for layer in layers or ():
            self.add(layer)

    def add(self, layer) -> None:
        """Appends `layer`. A first layer given an input shape (`input_shape=`, ...) builds
        the model now, and every later add builds the new layer, as Keras 2's Sequential
        does with its Input, so `summary()` works before any call."""
        if not callable(layer):
            raise TypeError(f"Sequential.add takes a layer (a callable), got {layer!r}")
        shape = getattr(layer, "_batch_input_shape", None)
        if not self.layers and shape is not None:
            self._input_shape_given = True
            self._build_input_shape = list(shape)
        self.layers.append(layer)
        if self._input_shape_given:
            self._build_from(self._build_input_shape)
            self.built = True

    def __call__(self, inputs, training=None):
        inputs = convert_to_tensor(inputs)
        if self._build_input_shape is None and inputs.shape.rank is not None:
            self._build_input_shape = [None, *inputs.shape.as_list()[1:]]
        with call_context(self):
            return self.call(inputs, training=training)

    def build(self, input_shape):
        """Builds every layer now, by an eager inference pass on zeros of `input_shape`
        (unknown dims taken as 1), as keras.Sequential.build."""
        self._build_from(input_shape)

    def _build_from(self, input_shape) -> None:
        dims = TensorShape(input_shape).as_list()
        if dims is None:
            raise ValueError(f"Sequential '{self.name}'.build needs an input shape of known "
                             f"rank, got {input_shape}")
        self._build_input_shape = dims
        with init_scope():
            self.call(ops.zeros([1 if d is None else d for d in dims], dtype=self.dtype),
                      training=False)

    def call(self, inputs, training=None):
        x = inputs
        for index, layer in enumerate(self.layers):
            if isinstance(layer, Layer) and _accepts_training(layer):
                x = layer(x, training=training)
            else:
                x = layer(x)
            self._note_shape(index, x)
        return x

    def _note_shape(self, index: int, output) -> None:
        """Keeps the output shape of layer `index` for summary (Keras's
        `layer.output_shape`), its batch dim the model's (None unless an input shape gave
        one); a layer seen with incompatible shapes, or with several outputs, is
        "multiple"."""
        shape = getattr(output, "shape", None)
        new = "multiple"
        if isinstance(shape, TensorShape) and shape.rank:
            batch = self._build_input_shape[0] if self._build_input_shape else None
            new = TensorShape([batch, *shape.as_list()[1:]])
        old = self._output_shapes.get(index)
        if old is None:
            self._output_shapes[index] = new
        elif isinstance(old, str) or isinstance(new, str) or not old.is_compatible_with(new):
            self._output_shapes[index] = "multiple"

    def output_shapes(self) -> list:
        """Each layer's output shape as Keras's summary prints it: "(None, 2)", or
        "multiple" (unknown, or incompatible shapes seen)."""
        out = []
        for index in range(len(self.layers)):
            shape = self._output_shapes.get(index, "multiple")
            out.append(shape if isinstance(shape, str) else str(tuple(shape.as_list())))
        return out

    def get_config(self) -> dict:
        """{"name", "layers": [{"class_name", "config"}, ...]} and, once built or called,
        "build_input_shape" (keras.Sequential.get_config)."""
        for layer in self.layers:
            if not isinstance(layer, Layer):
                raise TypeError(f"Sequential '{self.name}'.get_config: {layer!r} is not a "
                                "Layer (a plain callable has no config); wrap it in "
                                "em.keras.layers.Lambda or a Layer subclass")
        config = {"name": self.name, "trainable": self.trainable,
                  "layers": [{"class_name": type(layer).__name__,
                              "config": layer.get_config()} for layer in self.layers]}
        if self._build_input_shape is not None:
            config["build_input_shape"] = list(self._build_input_shape)
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        """A new Sequential of `config`'s layers (each found by class name among the Layer
        classes, or in `custom_objects`), built if the config has a build_input_shape."""
        config = dict(config)
        layers = config.pop("layers", None)
        shape = config.pop("build_input_shape", None)
        if not isinstance(layers, list):
            raise ValueError(f"{cls.__name__}.from_config: the config has no list of "
                             f"'layers', got {sorted(config)}")
        model = cls(name=config.get("name"), trainable=config.get("trainable", True))
        for entry in layers:
            layer_cls = layer_class(entry.get("class_name"), custom_objects)
            if issubclass(layer_cls, Sequential):
                model.add(layer_cls.from_config(entry.get("config", {}), custom_objects))
            else:
                model.add(layer_cls.from_config(entry.get("config", {})))
        if shape is not None:
            model.build(shape)
        return model
