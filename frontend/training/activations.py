"""`em.keras.activations`: Keras's activation functions by name (`get`, `serialize`,
`deserialize`) and as functions (keras/activations.py, Keras 2), composed of em's ops so
eager and compiled agree.

A layer's `activation=` takes a name, a callable, or None (linear); `get` resolves it and
`serialize` gives back the name `get_config` stores.

Example:
  >>> import ember as em
  >>> em.keras.activations.get("relu")(em.constant([-1.0, 2.0])).numpy().tolist()
  [0.0, 2.0]
  >>> em.keras.activations.serialize(em.keras.activations.gelu)
  'gelu'
"""

from __future__ import annotations

from ember.frontend import nn_composites, nn_ops, ops
from ember.frontend.math_ops import cast
from ember.frontend.tensor import convert_to_tensor


def _float(x, what: str):
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise TypeError(f"em.keras.activations.{what} needs a floating-point tensor, got "
                        f"dtype {x.dtype.name}; cast the input first (em.cast(x, 'float32'))")
    return x


def _c(value, like):
    return convert_to_tensor(value, dtype=like.dtype)


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """max(x, 0) by default; with `alpha` a slope of alpha below `threshold`
    (alpha * (x - threshold)), with `max_value` clipped above, and 0 (not x) for
    0 <= x <= threshold (keras.activations.relu)."""
    x = _float(x, "relu")
    if threshold != 0:
        out = x * cast(ops.greater(x, _c(threshold, x)), x.dtype)
    else:
        out = ops.relu(x)
    if max_value is not None:
        out = ops.minimum(out, _c(max_value, x))
    if alpha != 0:
        out = out - _c(alpha, x) * ops.relu(_c(threshold, x) - x)
    return out


def leaky_relu(x, alpha=0.3):
    """x for x > 0, else alpha * x (keras.layers.LeakyReLU's default slope: 0.3)."""
    return nn_composites.leaky_relu(_float(x, "leaky_relu"), alpha=alpha)


def relu6(x):
    """min(max(x, 0), 6)."""
    return nn_composites.relu6(_float(x, "relu6"))


def elu(x, alpha=1.0):
    """x for x > 0, else alpha * (exp(x) - 1)."""
    x = _float(x, "elu")
    return ops.where(ops.greater(x, _c(0, x)), x, _c(alpha, x) * ops.expm1(x))


def selu(x):
    """scale * elu(x, alpha), with Keras's (self-normalising) scale and alpha."""
    return nn_composites.selu(_float(x, "selu"))


def gelu(x, approximate=False):
    """x * P(X <= x), X standard normal; `approximate`: the tanh form."""
    return nn_composites.gelu(_float(x, "gelu"), approximate=approximate)


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return ops.sigmoid(_float(x, "sigmoid"))


def hard_sigmoid(x):
    """clip(0.2 * x + 0.5, 0, 1) (tf.keras 2's piecewise-linear sigmoid)."""
    x = _float(x, "hard_sigmoid")
    return ops.minimum(ops.maximum(x * _c(0.2, x) + _c(0.5, x), _c(0, x)), _c(1, x))


def tanh(x):
    return ops.tanh(_float(x, "tanh"))


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`; Keras refuses a 1-D input (no batch dim)."""
    x = _float(x, "softmax")
    if x.shape.rank is not None and x.shape.rank <= 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D (shape {x.shape}): "
                         "give it a batch dimension (x[None]) or use em.nn.softmax")
    return nn_ops.softmax(x, axis=axis)


def swish(x):
    """x * sigmoid(x) (also named silu)."""
    return nn_composites.silu(_float(x, "swish"))


def silu(x):
    """x * sigmoid(x) (also named swish)."""
    return nn_composites.silu(_float(x, "silu"))


def softplus(x):
    """log(exp(x) + 1)."""
    return nn_composites.softplus(_float(x, "softplus"))


def softsign(x):
    """x / (|x| + 1)."""
    return nn_composites.softsign(_float(x, "softsign"))


def mish(x):
    """x * tanh(softplus(x))."""
    return x * ops.tanh(softplus(x))


def exponential(x):
    return ops.exp(_float(x, "exponential"))


def linear(x):
    """The identity (what `activation=None` means)."""
    return x


_ALL = {f.__name__: f for f in (relu, leaky_relu, relu6, elu, selu, gelu, sigmoid,
                                hard_sigmoid, tanh, softmax, swish, silu, softplus, softsign,
                                mish, exponential, linear)}


def get(identifier, where: str = "em.keras.activations.get"):
    """The activation `identifier` names (a name, `{"class_name": name}`), a callable as it
    is, or `linear` for None (keras.activations.get).

    Raises:
      ValueError: an unknown name. TypeError: neither a name nor a callable.
    """
    if identifier is None:
        return linear
    if isinstance(identifier, dict) and isinstance(identifier.get("class_name"), str):
        identifier = identifier["class_name"]
    if isinstance(identifier, str):
        if identifier not in _ALL:
            raise ValueError(f"{where}: unknown activation {identifier!r}; use one of "
                             f"{sorted(_ALL)} or a callable")
        return _ALL[identifier]
    if callable(identifier):
        return identifier
    raise TypeError(f"{where}: an activation is a name, a callable or None, got "
                    f"{identifier!r}")


deserialize = get


def serialize(activation):
    """The name `get` resolves back to `activation` (a custom function: its `__name__`,
    which `from_config` then needs in `custom_objects`)."""
    if isinstance(activation, str):
        return activation
    if activation is None:
        return "linear"
    for name, fn in _ALL.items():
        if fn is activation:
            return name
    if hasattr(activation, "get_config"):
        return {"class_name": type(activation).__name__, "config": activation.get_config()}
    name = getattr(activation, "__name__", None)
    if name is None or name == "<lambda>":
        raise ValueError(f"em.keras.activations.serialize: cannot name {activation!r}; use a "
                         "named function (def) so from_config can find it in custom_objects")
    return name


__all__ = sorted(_ALL) + ["deserialize", "get", "serialize"]
