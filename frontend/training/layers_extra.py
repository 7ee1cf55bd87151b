"""More of keras.layers, on Ember's ops: `Conv1D`, `AveragePooling2D`, the global pools,
`Reshape`, `Activation`, `Concatenate` and `Add`."""

from __future__ import annotations

from ember.frontend import nn_ops, ops
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.training.layers_conv import Conv1D, Pool2D, _check_images
from ember.frontend.training.layer_base import call_context
from ember.frontend.training.layers_core import Layer, activation_fn

__all__ = ["Activation", "Add", "AveragePooling2D", "AvgPool2D", "Concatenate", "Conv1D",
           "GlobalAveragePooling2D", "GlobalAvgPool2D", "GlobalMaxPool2D",
           "GlobalMaxPooling2D", "Reshape"]


class AveragePooling2D(Pool2D):
    """The mean over `pool_size` windows of NHWC inputs, moved by `strides` (default:
    `pool_size`) (keras.layers.AveragePooling2D).

    Example:
      >>> em.keras.layers.AveragePooling2D()(em.ones([1, 4, 4, 3])).shape
      TensorShape([1, 2, 2, 3])
    """

    _pool = staticmethod(nn_ops.avg_pool2d)


AvgPool2D = AveragePooling2D


class _GlobalPooling2D(Layer):
    _reduce = None
    _config_fields = ("keepdims",)

    def __init__(self, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        _check_images(inputs, f"{type(self).__name__} '{self.name}'")
        return type(self)._reduce(inputs, axis=[1, 2], keepdims=self.keepdims)


class GlobalAveragePooling2D(_GlobalPooling2D):
    """The mean over each image's height and width: `[batch, channels]` (keras's).

    Example:
      >>> em.keras.layers.GlobalAveragePooling2D()(em.ones([2, 4, 4, 3])).shape
      TensorShape([2, 3])
    """

    _reduce = staticmethod(ops.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling2D):
    """The maximum over each image's height and width: `[batch, channels]` (keras's)."""

    _reduce = staticmethod(ops.reduce_max)


GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D


class Reshape(Layer):
    """Reshapes each example to `target_shape` (one entry may be -1), keeping the batch dim
    (keras.layers.Reshape).

    Example:
      >>> em.keras.layers.Reshape((3, -1))(em.ones([2, 12])).shape
      TensorShape([2, 3, 4])
    """

    _config_fields = ("target_shape",)

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        shape = list(target_shape)
        if sum(d == -1 for d in shape) > 1 or any(
                not isinstance(d, int) or isinstance(d, bool) or (d <= 0 and d != -1)
                for d in shape):
            raise ValueError(f"Reshape: target_shape must hold positive ints and at most one "
                             f"-1, got {target_shape!r}")
        self.target_shape = tuple(shape)

    def call(self, inputs):
        batch = inputs.shape[0]
        if batch is not None and -1 not in self.target_shape:
            return ops.reshape(inputs, [batch, *self.target_shape])
        lead = ops.shape(inputs)[:1]
        return ops.reshape(inputs, ops.concat(
            [lead, convert_to_tensor(list(self.target_shape), dtype=lead.dtype)], 0))


class Activation(Layer):
    """Applies an activation (a name such as "relu", or a callable) (keras.layers.Activation).

    Example:
      >>> em.keras.layers.Activation("relu")(em.constant([-1.0, 2.0])).numpy().tolist()
      [0.0, 2.0]
    """

    _config_fields = ("activation",)

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activation_fn(activation, "Activation")

    def call(self, inputs):
        return inputs if self.activation is None else self.activation(inputs)


class _Merge(Layer):
    """A layer of a list of inputs (no weights)."""

    def __call__(self, inputs, *args, **kwargs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"{type(self).__name__} '{self.name}' takes a list of at least 2 "
                             f"inputs, got {inputs!r}")
        with call_context(self):
            return self.call(list(inputs))


class Concatenate(_Merge):
    """Joins a list of inputs along `axis` (keras.layers.Concatenate).

    Example:
      >>> em.keras.layers.Concatenate()([em.ones([2, 3]), em.zeros([2, 1])]).shape
      TensorShape([2, 4])
    """

    _config_fields = ("axis",)

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return ops.concat(inputs, self.axis)


class Add(_Merge):
    """Adds a list of same-shaped inputs (keras.layers.Add)."""

    def call(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = ops.add(out, x)
        return out
