"""`em.layers.BatchNormalization` and `em.layers.LayerNormalization` (keras.layers), on
`em.nn.moments` / `em.nn.batch_normalization`."""

from __future__ import annotations

from ember.frontend import nn_composites as nn
from ember.frontend import ops
from ember.frontend.training import initializers
from ember.frontend.training.layers_core import Layer, _as, _check_training


def _axes(axis, rank: int, where: str) -> list:
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not isinstance(a, int) or isinstance(a, bool) or not -rank <= a < rank:
            raise ValueError(f"{where}: axis {a!r} is out of range for inputs of rank {rank}")
        out.append(a % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: axis {axis!r} repeats an axis")
    return sorted(out)


def _param_shape(input_shape, axes: list, where: str) -> list:
    """The broadcastable weight shape: the input's dims on `axes`, 1 elsewhere."""
    dims = input_shape.as_list()
    if any(dims[a] is None for a in axes):
        raise ValueError(f"{where}: the input's dims on axis {axes} must be known to build "
                         f"the layer's weights, got shape {input_shape}")
    return [dims[a] if a in axes else 1 for a in range(len(dims))]


def _rank(input_shape, where: str) -> int:
    if input_shape.rank is None or input_shape.rank < 1:
        raise ValueError(f"{where}: inputs need a known rank >= 1, got shape {input_shape}")
    return input_shape.rank


class BatchNormalization(Layer):
    """Normalizes each feature on `axis` by the batch's statistics when `training=True`
    (then updating `moving_mean` / `moving_variance` with `momentum`) and by the moving
    statistics otherwise (keras.layers.BatchNormalization).

    Example:
      >>> bn = em.layers.BatchNormalization()
      >>> x = em.constant([[0.0], [2.0]])
      >>> bn(x, training=True).numpy().ravel()  # +-1 / sqrt(1 + 1e-3)
      array([-0.9995..., 0.9995...], dtype=float32)
      >>> bn.moving_mean.numpy()  # 0.99 * 0 + 0.01 * 1
      array([0.01], dtype=float32)
    """

    _config_fields = ("axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
                      "gamma_initializer", "moving_mean_initializer",
                      "moving_variance_initializer")

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError(f"BatchNormalization: momentum must be in [0, 1], got "
                             f"{momentum!r}")
        if not isinstance(epsilon, (int, float)) or epsilon <= 0:
            raise ValueError(f"BatchNormalization: epsilon must be > 0, got {epsilon!r}")
        self.axis, self.momentum, self.epsilon = axis, float(momentum), float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self._initializers = tuple(initializers.get(i, "BatchNormalization") for i in (
            beta_initializer, gamma_initializer, moving_mean_initializer,
            moving_variance_initializer))
        (self.beta_initializer, self.gamma_initializer, self.moving_mean_initializer,
         self.moving_variance_initializer) = self._initializers
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None

    def build(self, input_shape):
        where = f"BatchNormalization '{self.name}'"
        rank = _rank(input_shape, where)
        self._feature_axes = _axes(self.axis, rank, where)
        self._reduce_axes = [a for a in range(rank) if a not in self._feature_axes]
        full = _param_shape(input_shape, self._feature_axes, where)
        shape = [full[a] for a in self._feature_axes]
        self._broadcast_shape = None if self._feature_axes == [rank - 1] else full
        beta, gamma, mean, var = self._initializers
        if self.scale:
            self.gamma = self.add_weight("gamma", shape, gamma)
        if self.center:
            self.beta = self.add_weight("beta", shape, beta)
        self.moving_mean = self.add_weight("moving_mean", shape, mean, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape, var, trainable=False)

    def _broadcast(self, t):
        """A [features] weight or statistic, shaped to broadcast against the inputs."""
        return t if self._broadcast_shape is None else ops.reshape(t, self._broadcast_shape)

    def call(self, inputs, training=None):
        _check_training(training, "BatchNormalization")
        x = _as(inputs, self.dtype)
        if training and self.trainable:
            mean, variance = nn.moments(x, self._reduce_axes)
            m = self.momentum
            for var, stat in ((self.moving_mean, mean), (self.moving_variance, variance)):
                var.assign(ops.add(ops.multiply(var.read_value(), m),
                                   ops.multiply(stat, 1.0 - m)))
        else:
            mean, variance = self.moving_mean.read_value(), self.moving_variance.read_value()
        gamma = self.gamma.read_value() if self.scale else None
        beta = self.beta.read_value() if self.center else None
        b = lambda t: None if t is None else self._broadcast(t)  # noqa: E731
        return nn.batch_normalization(x, b(mean), b(variance), b(beta), b(gamma),
                                      self.epsilon)


class LayerNormalization(Layer):
    """Normalizes each example over `axis` (by default the last) to zero mean and unit
    variance, then scales by `gamma` and shifts by `beta` (keras.layers.LayerNormalization).

    Example:
      >>> ln = em.layers.LayerNormalization()
      >>> ln(em.constant([[1.0, 3.0]])).numpy()
      array([[-0.9995..., 0.9995...]], dtype=float32)
    """

    _config_fields = ("axis", "epsilon", "center", "scale", "beta_initializer",
                      "gamma_initializer")

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", **kwargs):
        super().__init__(**kwargs)
        if not isinstance(epsilon, (int, float)) or epsilon <= 0:
            raise ValueError(f"LayerNormalization: epsilon must be > 0, got {epsilon!r}")
        self.axis, self.epsilon = axis, float(epsilon)
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer = initializers.get(beta_initializer, "LayerNormalization")
        self.gamma_initializer = initializers.get(gamma_initializer, "LayerNormalization")
        self.gamma = self.beta = None

    def build(self, input_shape):
        where = f"LayerNormalization '{self.name}'"
        self._axes = _axes(self.axis, _rank(input_shape, where), where)
        shape = _param_shape(input_shape, self._axes, where)
        if self._axes == [len(shape) - 1]:
            shape = shape[-1:]
        if self.scale:
            self.gamma = self.add_weight("gamma", shape, self.gamma_initializer)
        if self.center:
            self.beta = self.add_weight("beta", shape, self.beta_initializer)

    def call(self, inputs):
        x = _as(inputs, self.dtype)
        mean, variance = nn.moments(x, self._axes, keepdims=True)
        gamma = self.gamma.read_value() if self.scale else None
        beta = self.beta.read_value() if self.center else None
        return nn.batch_normalization(x, mean, variance, beta, gamma, self.epsilon)
