"""`em.keras.layers.Normalization` and `Rescaling`: Keras's numeric preprocessing layers.

`Normalization` computes `(x - mean) / sqrt(variance)` per feature (the `axis` kept, the
others reduced), with `mean` and `variance` given or learnt by `adapt(data)`; they are
non-trainable weights of the layer (so a layer made under `strategy.scope()` holds mirrored
copies). `Rescaling` computes `x * scale + offset`.
"""

from __future__ import annotations

import numpy as np

from ember.frontend import ops
from ember.frontend.math_ops import cast
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tracing import init_scope
from ember.frontend.training.layers_core import Layer
from ember.frontend.variables import Variable

EPSILON = 1e-7  # Keras's backend.epsilon(): the floor of the standard deviation


class Normalization(Layer):
    """Feature-wise normalization (keras.layers.Normalization).

    Args:
      axis: the axis (or axes) with a separate mean and variance each (default -1, the
        features); None: one mean and variance over everything.
      mean, variance: the statistics, if known (else call `adapt`).
      invert: compute `x * sqrt(variance) + mean` instead.

    Example:
      >>> layer = em.keras.layers.Normalization()
      >>> layer.adapt([[0.0, 7.0], [2.0, 7.0], [0.0, 7.0], [2.0, 7.0]])
      >>> layer(em.constant([[1.0, 7.0], [3.0, 7.0]])).numpy().tolist()
      [[0.0, 0.0], [2.0, 0.0]]
    """

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        elif not (isinstance(axis, (tuple, list)) and all(isinstance(a, int) for a in axis)):
            raise TypeError(f"Normalization: axis must be an int, a tuple of ints or None, "
                            f"got {axis!r}")
        if (mean is None) != (variance is None):
            raise ValueError("Normalization: pass both mean and variance, or neither (and "
                             "call adapt)")
        self.axis, self.invert = tuple(axis), bool(invert)
        self._given = None if mean is None else (np.asarray(mean, np.float32),
                                                 np.asarray(variance, np.float32))
        self.mean = self.variance = None

    def _kept(self, rank: int, where: str) -> tuple:
        kept = []
        for a in self.axis:
            if not -rank <= a < rank:
                raise ValueError(f"{where}: axis {a} is out of range for inputs of rank "
                                 f"{rank}")
            kept.append(a % rank)
        return tuple(sorted(set(kept)))

    def _stat_shape(self, shape: list, where: str) -> list:
        kept = self._kept(len(shape), where)
        if any(shape[a] is None for a in kept):
            raise ValueError(f"{where}: the kept axes {list(self.axis)} of the inputs must "
                             f"have known sizes, got shape {shape}")
        return [shape[a] if a in kept else 1 for a in range(len(shape))]

    def _weights(self, shape: list, mean, variance) -> None:
        with init_scope():
            if self.mean is None:
                self.mean = Variable(np.broadcast_to(mean, shape).astype(np.float32),
                                     trainable=False, name=f"{self.name}/mean")
                self.variance = Variable(np.broadcast_to(variance, shape).astype(np.float32),
                                         trainable=False, name=f"{self.name}/variance")
                self._made += [self.mean, self.variance]
            else:
                if list(self.mean.shape) != list(shape):
                    raise ValueError(f"Normalization '{self.name}': adapted on inputs with "
                                     f"statistics of shape {list(self.mean.shape)}; these "
                                     f"need {shape}")
                self.mean.assign(np.broadcast_to(mean, shape).astype(np.float32))
                self.variance.assign(np.broadcast_to(variance, shape).astype(np.float32))

    def build(self, input_shape):
        if self._given is None or self.mean is not None:
            return
        dims = input_shape.as_list()
        if dims is None:
            raise ValueError(f"Normalization '{self.name}': inputs need a known rank")
        shape = self._stat_shape(dims, f"Normalization '{self.name}'")
        self._weights(shape, *self._given)

    def adapt(self, data, steps=None) -> None:
        """Sets mean and variance (population variance) from `data`: an array, a tensor or
        an em.data.Dataset of batches."""
        where = f"Normalization '{self.name}'.adapt"
        if hasattr(data, "element_spec") and hasattr(data, "__iter__"):
            parts = []
            for i, element in enumerate(data):
                if steps is not None and i >= steps:
                    break
                if isinstance(element, tuple):
                    raise ValueError(f"{where}: the dataset's elements must be single "
                                     "tensors (map it to the features first)")
                parts.append(np.asarray(element.numpy(), np.float64))
            if not parts:
                raise ValueError(f"{where}: the dataset is empty")
            values = np.concatenate([p.reshape((-1,) + p.shape[1:]) for p in parts])
        else:
            values = np.asarray(data._numpy_array() if isinstance(data, Tensor) else data)
            if values.dtype.kind not in "fiub":
                raise TypeError(f"{where}: data must be numeric, got dtype {values.dtype}")
            values = values.astype(np.float64)
        if values.ndim == 0 or values.size == 0:
            raise ValueError(f"{where}: data must be a non-empty batch of examples, got shape "
                             f"{list(values.shape)}")
        if values.ndim == 1 and self.axis == (-1,):
            values = values[:, None]  # a batch of scalar features
        kept = self._kept(values.ndim, where)
        shape = [values.shape[a] if a in kept else 1 for a in range(values.ndim)]
        reduce = tuple(a for a in range(values.ndim) if a not in kept)
        mean = values.mean(axis=reduce, keepdims=True)
        variance = values.var(axis=reduce, keepdims=True)
        self._weights(shape, mean, variance)
        self.built = True

    def call(self, inputs):
        if self.mean is None:
            raise ValueError(f"Normalization '{self.name}': no mean and variance yet: pass "
                             "them to the constructor or call adapt(data) first")
        x = inputs if inputs.dtype.is_floating else cast(inputs, "float32")
        mean = cast(self.mean.read_value(), x.dtype)
        variance = cast(self.variance.read_value(), x.dtype)
        if len(self.mean.shape) > 1 and x.shape.rank == len(self.mean.shape) - 1:
            mean, variance = ops.squeeze(mean, [0]), ops.squeeze(variance, [0])
        std = ops.maximum(ops.sqrt(variance), EPSILON)
        if self.invert:
            return ops.add(ops.multiply(x, std), mean)
        return ops.divide(ops.subtract(x, mean), std)


class Rescaling(Layer):
    """`inputs * scale + offset`, in float32 (keras.layers.Rescaling), e.g. pixels in
    [0, 255] to [0, 1] with `scale=1/255`.

    Example:
      >>> em.keras.layers.Rescaling(1 / 127.5, offset=-1)(em.constant([0, 255])).numpy()
      array([-1.,  1.], dtype=float32)
    """

    def __init__(self, scale, offset=0.0, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        for what, value in (("scale", scale), ("offset", offset)):
            if isinstance(value, bool) or not isinstance(value, (int, float, list, tuple,
                                                                 np.ndarray)):
                raise TypeError(f"Rescaling: {what} must be a number (or a list of them per "
                                f"feature), got {value!r}")
        self.scale, self.offset = scale, offset

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}

    def call(self, inputs):
        x = inputs if inputs.dtype.is_floating else cast(inputs, self.dtype)
        scale = convert_to_tensor(np.asarray(self.scale, x.dtype.np_dtype))
        offset = convert_to_tensor(np.asarray(self.offset, x.dtype.np_dtype))
        return ops.add(ops.multiply(x, scale), offset)
