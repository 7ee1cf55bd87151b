"""`em.layers`: the Layer base class and the core layers (`Dense`, `Flatten`, `Dropout`,
`Embedding`) plus `Sequential` (keras.layers, keras.Sequential).

A layer is an `em.Module` that creates its weights on its first call, from the input's shape
(Keras's lazy `build`). Initial values are computed under `em.init_scope()` (eagerly, from
`em.random`), and the Variables are created where the call happens: inside an em.function
that is its first trace, as the guide allows.
"""

from __future__ import annotations

import collections
import functools
import inspect
import re
import threading

from ember.frontend import ops
from ember.frontend import random_composites as random
from ember.frontend.shape import TensorShape
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.tracing import init_scope
from ember.frontend.training import initializers
from ember.frontend.training.module import Module
from ember.frontend.variables import Variable

_names = collections.Counter()
_names_lock = threading.Lock()


def _snake(name: str) -> str:
    """Keras's layer names: `Conv2D` -> `conv2d`, `MaxPool2D` -> `max_pool2d`."""
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
    """

    _ignored_attributes = Module._ignored_attributes | {"_made"}

    def __init__(self, trainable: bool = True, name: str | None = None, dtype=None):
        super().__init__(name or _unique_name(_snake(type(self).__name__)))
        self._made: list = []  # the weights add_weight made, in order
        self.trainable = bool(trainable)
        self.built = False
        self._dtype = initializers.float_dtype(dtype, type(self).__name__)

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
        if not self.built:
            self.build(TensorShape(inputs.shape))
        return self.call(inputs, *args, **kwargs)

    def add_weight(self, name: str, shape, initializer="glorot_uniform",
                   trainable: bool = True, dtype=None) -> Variable:
        """A new weight Variable filled by `initializer` (a Keras name or a callable)."""
        dtype = initializers.float_dtype(dtype or self._dtype, type(self).__name__)
        init = initializers.get(initializer, f"{type(self).__name__} '{self.name}'")
        shape = [int(d) for d in shape]
        with init_scope():
            value = convert_to_tensor(init(shape, dtype))._numpy_array()
        weight = Variable(value, trainable=trainable and self.trainable,
                          name=f"{self.name}/{name}")
        self._made.append(weight)
        return weight

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


def _built_once(build):
    @functools.wraps(build)
    def wrapper(self, input_shape):
        if self.built:
            return
        build(self, TensorShape(input_shape))
        self.built = True
    return wrapper


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
    """None (linear), a callable, or the name of an em.nn / em activation."""
    if activation is None or callable(activation):
        return activation
    from ember.frontend import nn_composites
    table = {"relu": ops.relu, "sigmoid": ops.sigmoid, "tanh": ops.tanh,
             "softmax": ops.softmax, "linear": None, "elu": nn_composites.elu,
             "gelu": nn_composites.gelu, "selu": nn_composites.selu,
             "silu": nn_composites.silu, "swish": nn_composites.swish,
             "softplus": nn_composites.softplus, "relu6": nn_composites.relu6}
    if activation not in table:
        raise ValueError(f"{where}: unknown activation {activation!r}; use one of "
                         f"{sorted(table)} or a callable")
    return table[activation]


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

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        self.units = units
        self.activation = activation_fn(activation, "Dense")
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel = self.bias = None

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.rank is None or input_shape.rank < 2:
            check_min_ndim(self, _Shaped(input_shape), 2)
        n_in = last_dim(input_shape, f"Dense '{self.name}'")
        self.kernel = self.add_weight("kernel", [n_in, self.units], self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], self.bias_initializer)

    def call(self, inputs):
        check_min_ndim(self, inputs, 2)
        inputs = _as(inputs, self.dtype)
        n_in, got = self.kernel.shape[0], inputs.shape[-1]
        if got is not None and got != n_in:  # Keras's message, not the matmul's
            raise ValueError(f"Input 0 of layer '{self.name}' is incompatible with the layer: "
                             f"expected axis -1 of input shape to have value {n_in}, but "
                             f"received input with shape {inputs.shape}")
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

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", **kwargs):
        super().__init__(**kwargs)
        for what, n in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
                raise ValueError(f"Embedding: {what} must be a positive integer, got {n!r}")
        self.input_dim, self.output_dim = input_dim, output_dim
        self.embeddings_initializer = embeddings_initializer
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
        self.layers = []
        for layer in layers or ():
            self.add(layer)

    def add(self, layer) -> None:
        if not callable(layer):
            raise TypeError(f"Sequential.add takes a layer (a callable), got {layer!r}")
        self.layers.append(layer)

    def __call__(self, inputs, training=None):
        return self.call(convert_to_tensor(inputs), training=training)

    def build(self, input_shape):
        """Builds every layer now, by an eager inference pass on zeros of `input_shape`
        (unknown dims taken as 1), as keras.Sequential.build."""
        dims = TensorShape(input_shape).as_list()
        if dims is None:
            raise ValueError(f"Sequential '{self.name}'.build needs an input shape of known "
                             f"rank, got {input_shape}")
        with init_scope():
            self.call(ops.zeros([1 if d is None else d for d in dims], dtype=self.dtype),
                      training=False)

    def call(self, inputs, training=None):
        x = inputs
        for layer in self.layers:
            if isinstance(layer, Layer) and _accepts_training(layer):
                x = layer(x, training=training)
            else:
                x = layer(x)
        return x
