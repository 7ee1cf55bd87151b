"""`em.layers.Conv2D` and `em.layers.MaxPool2D` over NHWC images, and keras's `Conv1D` and
`AveragePooling2D` (layers_extra.py) on the same bases (keras.layers), on em.nn's
convolutions and pools."""

from __future__ import annotations

from ember.frontend import nn_conv, nn_ops, ops
from ember.frontend.training import initializers, regularizers
from ember.frontend.training.layers_core import Layer, _as, activation_fn, last_dim


def _sizes(value, n: int, what: str, where: str) -> tuple:
    """An int or `n` positive ints, as Keras's kernel_size / strides / pool_size."""
    sizes = (value,) * n if isinstance(value, int) else tuple(value) \
        if isinstance(value, (list, tuple)) else None
    if sizes is None or len(sizes) != n or any(
            not isinstance(v, int) or isinstance(v, bool) or v <= 0 for v in sizes):
        many = "a pair of them" if n == 2 else f"{n} of them"
        raise ValueError(f"{where}: {what} must be a positive int or {many}, got {value!r}")
    return sizes


def _pair(value, what: str, where: str) -> tuple:
    return _sizes(value, 2, what, where)


def _padding(padding, where: str) -> str:
    if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
        raise ValueError(f"{where}: padding must be 'valid' or 'same', got {padding!r}")
    return padding.upper()


def _check_images(inputs, where: str):
    if inputs.shape.rank != 4:
        raise ValueError(f"{where}: inputs must be NHWC images of rank 4, got shape "
                         f"{inputs.shape}")


class Conv(Layer):
    """A convolution of channels-last inputs of `_rank` spatial dims with a
    `[*kernel_size, in, filters]` kernel, plus bias and activation (keras.layers.ConvND);
    `_convolve(inputs, kernel)` is em.nn's convolution of that rank."""

    _rank = 2
    _inputs = "NHWC images of rank 4"
    _config_fields = ("filters", "kernel_size", "strides", "padding", "dilation_rate",
                      "activation", "use_bias", "kernel_initializer", "bias_initializer",
                      "kernel_regularizer", "bias_regularizer", "activity_regularizer")

    def __init__(self, filters, kernel_size, strides=1, padding="valid", activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 dilation_rate=1, kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        where, n = type(self).__name__, self._rank
        if not isinstance(filters, int) or isinstance(filters, bool) or filters <= 0:
            raise ValueError(f"{where}: filters must be a positive integer, got {filters!r}")
        self.filters = filters
        self.kernel_size = _sizes(kernel_size, n, "kernel_size", where)
        self.strides = _sizes(strides, n, "strides", where)
        self.dilation_rate = _sizes(dilation_rate, n, "dilation_rate", where)
        self.padding = _padding(padding, where)
        self.activation = activation_fn(activation, where)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer, where)
        self.bias_initializer = initializers.get(bias_initializer, where)
        self.kernel_regularizer = regularizers.get(kernel_regularizer, where)
        self.bias_regularizer = regularizers.get(bias_regularizer, where)
        self.kernel = self.bias = None

    def build(self, input_shape):
        where = f"{type(self).__name__} '{self.name}'"
        if input_shape.rank != self._rank + 2:
            raise ValueError(f"{where}: inputs must be {self._inputs}, got shape "
                             f"{input_shape}")
        channels = last_dim(input_shape, where, min_rank=self._rank + 2)
        self.kernel = self.add_weight(
            "kernel", [*self.kernel_size, channels, self.filters], self.kernel_initializer,
            regularizer=self.kernel_regularizer)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.filters], self.bias_initializer,
                                        regularizer=self.bias_regularizer)

    def call(self, inputs):
        out = self._convolve(_as(inputs, self.dtype), self.kernel.read_value())
        if self.use_bias:
            out = ops.add(out, self.bias.read_value())
        return self.activation(out) if self.activation is not None else out


class Conv2D(Conv):
    """A 2-D convolution of NHWC inputs with a `[kh, kw, in, filters]` kernel, plus bias and
    activation (keras.layers.Conv2D, data_format "channels_last").

    Example:
      >>> layer = em.layers.Conv2D(8, 3, padding="same", activation="relu")
      >>> layer(em.ones([2, 8, 8, 1])).shape
      TensorShape([2, 8, 8, 8])
      >>> layer.kernel.shape
      TensorShape([3, 3, 1, 8])
    """

    def _convolve(self, inputs, kernel):
        _check_images(inputs, f"Conv2D '{self.name}'")
        return nn_ops.conv2d(inputs, kernel, strides=list(self.strides), padding=self.padding,
                             dilations=list(self.dilation_rate))


class Conv1D(Conv):
    """A 1-D convolution of `[batch, steps, channels]` inputs with a `[k, in, filters]`
    kernel, plus bias and activation (keras.layers.Conv1D, "channels_last").

    Example:
      >>> em.keras.layers.Conv1D(4, 3, padding="same")(em.ones([2, 10, 3])).shape
      TensorShape([2, 10, 4])
    """

    _rank = 1
    _inputs = "[batch, steps, channels]"

    def _convolve(self, inputs, kernel):
        return nn_conv.conv1d(inputs, kernel, stride=self.strides[0], padding=self.padding,
                              dilations=self.dilation_rate[0])


class Pool2D(Layer):
    """A pool (`_pool`: em.nn's max_pool2d or avg_pool2d) over `pool_size` windows of NHWC
    inputs, moved by `strides` (default: `pool_size`)."""

    _pool = None
    _config_fields = ("pool_size", "strides", "padding")

    def __init__(self, pool_size=2, strides=None, padding="valid", **kwargs):
        super().__init__(**kwargs)
        where = type(self).__name__
        self.pool_size = _pair(pool_size, "pool_size", where)
        self.strides = self.pool_size if strides is None else _pair(strides, "strides", where)
        self.padding = _padding(padding, where)

    def call(self, inputs):
        _check_images(inputs, f"{type(self).__name__} '{self.name}'")
        return type(self)._pool(inputs, list(self.pool_size), list(self.strides),
                                padding=self.padding)


class MaxPooling2D(Pool2D):
    """The maximum over `pool_size` windows of NHWC inputs, moved by `strides` (default:
    `pool_size`) (keras.layers.MaxPooling2D, also named MaxPool2D; named `max_pooling2d`
    by default, as Keras's).

    Example:
      >>> em.layers.MaxPool2D()(em.ones([1, 4, 4, 3])).shape
      TensorShape([1, 2, 2, 3])
    """

    _pool = staticmethod(nn_ops.max_pool2d)


MaxPool2D = MaxPooling2D
