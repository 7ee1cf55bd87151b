"""More of keras.layers on Ember's ops: the activation layers `ReLU`, `Softmax`,
`LeakyReLU`, `ELU`, and the reshaping layers `Permute`, `RepeatVector`, `ZeroPadding2D`
and `UpSampling2D` (nearest neighbour), channels-last as Keras's defaults."""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.math_ops import cast
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.array_composites import repeat
from ember.frontend.training import activations
from ember.frontend.training.layers_conv import _check_images, _pair
from ember.frontend.training.layers_core import Layer

__all__ = ["ELU", "LeakyReLU", "Permute", "ReLU", "RepeatVector", "Softmax", "UpSampling2D",
           "ZeroPadding2D"]


def _number(value, what: str, where: str, low=None) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or \
            (low is not None and value < low):
        bound = "" if low is None else f" >= {low}"
        raise ValueError(f"{where}: {what} must be a number{bound}, got {value!r}")
    return float(value)


class ReLU(Layer):
    """keras.layers.ReLU: `max_value` if x >= max_value, x if threshold < x, else
    negative_slope * (x - threshold).

    Example:
      >>> em.keras.layers.ReLU(max_value=1.0)(em.constant([-1.0, 0.5, 3.0])).numpy().tolist()
      [0.0, 0.5, 1.0]
    """

    _config_fields = ("max_value", "negative_slope", "threshold")

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value = None if max_value is None else \
            _number(max_value, "max_value", "ReLU", 0)
        self.negative_slope = _number(negative_slope, "negative_slope", "ReLU", 0)
        self.threshold = _number(threshold, "threshold", "ReLU")

    def call(self, inputs):
        return activations.relu(inputs, alpha=self.negative_slope, max_value=self.max_value,
                                threshold=self.threshold)


class Softmax(Layer):
    """keras.layers.Softmax along `axis` (default: the last). `mask` (true or 1 where a
    position counts, broadcast against the inputs) adds Keras 2's large negative, -1e9
    (half float16's lowest for float16), to the masked positions before the softmax.

    Example:
      >>> x = np.asarray([[1., 2., 1.]], np.float32)
      >>> em.keras.layers.Softmax()(x, mask=np.asarray([[True, False, True]])).numpy()
      array([[0.5, 0. , 0.5]], dtype=float32)
    """

    _config_fields = ("axis",)

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs, mask=None):
        if mask is not None:
            lowest = -1e9 if inputs.dtype != dtypes.float16 else \
                float(np.finfo(np.float16).min) / 2.0
            keep = cast(convert_to_tensor(mask), inputs.dtype)
            inputs = ops.add(inputs, ops.multiply(ops.subtract(1.0, keep), lowest))
        return activations.softmax(inputs, axis=self.axis)


class LeakyReLU(Layer):
    """keras.layers.LeakyReLU: x for x > 0, else alpha * x (alpha = 0.3 by default)."""

    _config_fields = ("alpha",)

    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(**kwargs)
        self.alpha = _number(alpha, "alpha", "LeakyReLU")

    def call(self, inputs):
        return activations.leaky_relu(inputs, alpha=self.alpha)


class ELU(Layer):
    """keras.layers.ELU: x for x > 0, else alpha * (exp(x) - 1)."""

    _config_fields = ("alpha",)

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        self.alpha = _number(alpha, "alpha", "ELU")

    def call(self, inputs):
        return activations.elu(inputs, alpha=self.alpha)


class Permute(Layer):
    """keras.layers.Permute: reorders the non-batch dims by `dims` (a permutation of
    1..rank-1, the batch dim staying first).

    Example:
      >>> em.keras.layers.Permute((2, 1))(em.zeros([4, 3, 5])).shape
      TensorShape([4, 5, 3])
    """

    _config_fields = ("dims",)

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError(f"Permute: dims must be a permutation of 1..{len(dims)} (the "
                             f"batch dim, 0, is not permuted), got {dims}")
        self.dims = dims

    def call(self, inputs):
        if inputs.shape.rank != len(self.dims) + 1:
            raise ValueError(f"Permute '{self.name}': dims {self.dims} need inputs of rank "
                             f"{len(self.dims) + 1}, got shape {inputs.shape}")
        return ops.transpose(inputs, [0, *self.dims])


class RepeatVector(Layer):
    """keras.layers.RepeatVector: `[batch, features]` to `[batch, n, features]`."""

    _config_fields = ("n",)

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise ValueError(f"RepeatVector: n must be a positive integer, got {n!r}")
        self.n = n

    def call(self, inputs):
        if inputs.shape.rank != 2:
            raise ValueError(f"RepeatVector '{self.name}': inputs must be [batch, features] "
                             f"(rank 2), got shape {inputs.shape}")
        return repeat(ops.expand_dims(inputs, 1), self.n, axis=1)


class ZeroPadding2D(Layer):
    """keras.layers.ZeroPadding2D: zeros around NHWC images; `padding` an int, a pair
    (rows, cols) or ((top, bottom), (left, right))."""

    _config_fields = ("padding",)

    def __init__(self, padding=(1, 1), **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, int) or (isinstance(padding, (list, tuple)) and all(
                isinstance(p, int) for p in padding)):
            rows, cols = (padding, padding) if isinstance(padding, int) else tuple(padding) \
                if len(padding) == 2 else (None, None)
            padding = ((rows, rows), (cols, cols))
        pads = tuple(tuple(p) for p in padding) if isinstance(padding, (list, tuple)) and \
            all(isinstance(p, (list, tuple)) for p in padding) else None
        if pads is None or len(pads) != 2 or any(
                len(p) != 2 or not all(isinstance(v, int) and v >= 0 for v in p) for p in pads):
            raise ValueError(f"ZeroPadding2D: padding must be an int >= 0, a pair of them or "
                             f"((top, bottom), (left, right)), got {padding!r}")
        self.padding = pads

    def call(self, inputs):
        _check_images(inputs, f"ZeroPadding2D '{self.name}'")
        return ops.pad(inputs, [[0, 0], list(self.padding[0]), list(self.padding[1]), [0, 0]])


class UpSampling2D(Layer):
    """keras.layers.UpSampling2D with interpolation="nearest": each row repeated
    `size[0]` times and each column `size[1]` times (NHWC)."""

    _config_fields = ("size", "interpolation")

    def __init__(self, size=(2, 2), interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        if interpolation != "nearest":
            raise ValueError(f"UpSampling2D: only interpolation='nearest' is available, got "
                             f"{interpolation!r}")
        self.size = _pair(size, "size", "UpSampling2D")
        self.interpolation = interpolation

    def call(self, inputs):
        _check_images(inputs, f"UpSampling2D '{self.name}'")
        return repeat(repeat(inputs, self.size[0], axis=1), self.size[1], axis=2)
