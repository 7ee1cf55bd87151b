"""`em.nn` functions that are compositions of other ops, as in TensorFlow's Python layer:
activations, normalisation, moments, `l2_loss` and the cross-entropy losses. Each follows
tf.nn's formula (the numerically stable one where TensorFlow uses one), so eager and
compiled agree and the dtype rules are those of the ops it is made of (floats)."""

from __future__ import annotations

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.effects import assert_same_shape, assert_true
from ember.frontend.tensor import convert_to_tensor

_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def _float(x, what: str):
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise TypeError(f"em.nn.{what} needs a floating-point tensor, got {x!r}")
    return x


def _const(value, like):
    return convert_to_tensor(value, dtype=like.dtype)


def relu6(features, name=None):
    """min(max(x, 0), 6)."""
    x = _float(features, "relu6")
    return ops.minimum(ops.maximum(x, _const(0, x)), _const(6, x))


def leaky_relu(features, alpha=0.2, name=None):
    """x where x > 0, else alpha * x. Integer features are cast to float32 first, as
    TensorFlow does.

    Example:
      >>> import ember as em
      >>> em.nn.leaky_relu(em.constant([-1.0, 2.0]))
      <ember.Tensor: shape=(2,), dtype=float32, numpy=array([-0.2,  2. ], dtype=float32)>
    """
    x = convert_to_tensor(features)
    if x.dtype.is_integer:
        x = ops.cast(x, dtypes.float32)
    x = _float(x, "leaky_relu")
    return ops.where(x > _const(0, x), x, x * _const(alpha, x))


def elu(features, name=None):
    """x where x > 0, else exp(x) - 1."""
    x = _float(features, "elu")
    return ops.where(x > _const(0, x), x, ops.expm1(x))


def selu(features, name=None):
    """scale * (x where x > 0, else alpha * (exp(x) - 1)), TensorFlow's constants."""
    x = _float(features, "selu")
    negative = _const(_SELU_ALPHA, x) * ops.expm1(x)
    return _const(_SELU_SCALE, x) * ops.where(x > _const(0, x), x, negative)


def silu(features, beta=1.0, name=None):
    """x * sigmoid(beta * x) (swish)."""
    x = _float(features, "silu")
    return x * ops.sigmoid(x * _const(beta, x))


swish = silu


def softplus(features, name=None):
    """log(exp(x) + 1), computed as max(x, 0) + log1p(exp(-|x|)) (no overflow)."""
    x = _float(features, "softplus")
    return ops.maximum(x, _const(0, x)) + ops.log1p(ops.exp(-ops.abs(x)))


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), without overflow or log(0) (tf.math.log_sigmoid)."""
    return -softplus(-_float(x, "log_sigmoid"))


def softsign(features, name=None):
    """x / (|x| + 1)."""
    x = _float(features, "softsign")
    return x / (ops.abs(x) + _const(1, x))


def gelu(features, approximate=False, name=None):
    """x * P(X <= x) for standard normal X: 0.5 * x * (1 + erf(x / sqrt(2))), or with
    `approximate` the tanh form 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x**3)))."""
    x = _float(features, "gelu")
    if approximate:
        inner = _const(0.7978845608028654, x) * (x + _const(0.044715, x) * x * x * x)
        return _const(0.5, x) * x * (_const(1, x) + ops.tanh(inner))
    return _const(0.5, x) * x * (_const(1, x) + ops.erf(x * _const(0.7071067811865476, x)))


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the channel dim: the last (N...C, the default: None, "NHWC", ...)
    or dim 1 (NC...: "NCHW", ...). As TensorFlow: `value` has rank >= 2, `bias` is 1-D with
    the channel dim's size and `value`'s dtype."""
    value = convert_to_tensor(value)
    bias = convert_to_tensor(bias, dtype=value.dtype)
    if bias.shape.rank != 1:
        raise ValueError(f"em.nn.bias_add: bias must be 1-D, got shape {bias.shape}")
    first = False
    if data_format is not None:  # TensorFlow's reading of the format
        text = str(data_format)
        first = text.startswith("NC")
        if not first and not (text.startswith("N") and text.endswith("C")):
            raise ValueError("em.nn.bias_add: data_format must be of the form 'N...C' (NHWC, "
                             f"...) or 'NC...' (NCHW, ...), got {data_format!r}")
    rank = value.shape.rank
    if rank is None:
        if first:
            raise ValueError("em.nn.bias_add with data_format NC... needs `value` of known rank")
        return value + bias
    if rank < 2:
        raise ValueError(f"em.nn.bias_add: value must have rank >= 2, got shape {value.shape}")
    channels = value.shape[1 if first else -1]
    if None not in (channels, bias.shape[0]) and channels != bias.shape[0]:
        raise ValueError(f"em.nn.bias_add: bias of size {bias.shape[0]} does not match the "
                         f"channel dim ({channels}) of value of shape {value.shape} "
                         f"(data_format {data_format or 'N...C'})")
    if None in (channels, bias.shape[0]):
        assert_true(ops.equal(ops.shape(value)[1 if first else -1], ops.shape(bias)[0]),
                    "em.nn.bias_add: bias's size differs from the channel dim of value "
                    f"(data_format {data_format or 'N...C'})")
    if first:
        return value + ops.reshape(bias, [-1] + [1] * (rank - 2))
    return value + bias


def l2_normalize(x, axis=None, epsilon=1e-12, name=None):
    """x / sqrt(max(sum(x**2, axis), epsilon)), computed as TensorFlow:
    x * rsqrt(max(sum(x**2, axis, keepdims), epsilon)); axis None is every dim."""
    x = _float(x, "l2_normalize")
    squared = ops.reduce_sum(ops.square(x), axis=axis, keepdims=True)
    return x * ops.rsqrt(ops.maximum(squared, _const(epsilon, x)))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """(mean, variance) of x over `axes`; half floats compute in float32 and round once,
    as TensorFlow does (`shift` is unused, as in TensorFlow 2)."""
    del shift
    x = _float(x, "moments")
    dtype = x.dtype
    if dtype in (dtypes.float16, dtypes.bfloat16):
        x = ops.cast(x, dtypes.float32)
    mean = ops.reduce_mean(x, axis=axes, keepdims=True)
    variance = ops.reduce_mean(ops.square(x - mean), axis=axes, keepdims=True)
    if not keepdims:
        mean = ops.squeeze(mean, axes)
        variance = ops.squeeze(variance, axes)
    if dtype in (dtypes.float16, dtypes.bfloat16):
        mean, variance = ops.cast(mean, dtype), ops.cast(variance, dtype)
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + epsilon) + offset (offset, scale may be None),
    computed as TensorFlow: inv = rsqrt(variance + epsilon) * scale, then
    x * inv + (offset - mean * inv)."""
    x = _float(x, "batch_normalization")
    mean, variance = (convert_to_tensor(v, dtype=x.dtype) for v in (mean, variance))
    inv = ops.rsqrt(variance + _const(variance_epsilon, x))
    if scale is not None:
        inv = inv * convert_to_tensor(scale, dtype=x.dtype)
    shifted = -mean * inv if offset is None else \
        convert_to_tensor(offset, dtype=x.dtype) - mean * inv
    return x * inv + shifted


def l2_loss(t, name=None):
    """sum(t ** 2) / 2 over all of `t`: a scalar of t's dtype (tf.nn.l2_loss; no square
    root). Summed as TensorFlow's kernel sums it, each square halved first.

    Example:
      >>> import ember as em
      >>> em.nn.l2_loss(em.constant([[1.0, 2.0], [3.0, 4.0]]))
      <ember.Tensor: shape=(), dtype=float32, numpy=15.0>
    """
    del name
    x = _float(t, "l2_loss")
    return ops.reduce_sum(ops.square(x) * _const(0.5, x))


def _same_shape(labels, logits, what: str):
    """TensorFlow's check: labels and logits of one shape (unknown dims match anything)."""
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"em.nn.{what}: logits and labels must have the same shape, got "
                         f"{logits.shape} and {labels.shape}")
    assert_same_shape(labels, logits, f"em.nn.{what}: logits and labels must have the same "
                                      f"shape")


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """max(x, 0) - x * z + log1p(exp(-|x|)) for logits x and labels z."""
    x = _float(logits, "sigmoid_cross_entropy_with_logits")
    z = convert_to_tensor(labels, dtype=x.dtype)
    _same_shape(z, x, "sigmoid_cross_entropy_with_logits")
    return ops.maximum(x, _const(0, x)) - x * z + ops.log1p(ops.exp(-ops.abs(x)))


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """-sum(labels * log_softmax(logits), axis)."""
    x = _float(logits, "softmax_cross_entropy_with_logits")
    z = convert_to_tensor(labels, dtype=x.dtype)
    _same_shape(z, x, "softmax_cross_entropy_with_logits")
    return -ops.reduce_sum(z * ops.log_softmax(x, axis), axis=axis)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """-log_softmax(logits)[..., label] for integer labels of one dim fewer."""
    x = _float(logits, "sparse_softmax_cross_entropy_with_logits")
    labels = convert_to_tensor(labels)
    if not labels.dtype.is_integer:
        raise TypeError(f"labels must be integers, got {labels!r}")
    if None not in (labels.shape.rank, x.shape.rank) and labels.shape.rank != x.shape.rank - 1:
        raise ValueError("em.nn.sparse_softmax_cross_entropy_with_logits: labels must have "
                         f"one dim fewer than logits (shape {x.shape}), got shape "
                         f"{labels.shape}")
    depth = ops.cast(ops.shape(x)[-1], labels.dtype)  # a constant when the dim is known
    from ember.frontend.effects import assert_true
    assert_true(ops.reduce_all(ops.logical_and(labels >= 0, labels < depth)),
                "sparse_softmax_cross_entropy_with_logits: a label is outside [0, classes)")
    hot = ops.equal(ops.expand_dims(labels, -1), ops.range(depth))
    picked = ops.cast(hot, x.dtype) * ops.log_softmax(x, -1)
    return -ops.reduce_sum(picked, axis=-1)


def embedding_lookup(params, ids, max_norm=None, name=None):
    """The rows of `params` at `ids` (tf.nn.embedding_lookup): shape ids.shape +
    params.shape[1:]. `params` may be a list of tensors, the rows of one table split in
    order along its first dimension (TensorFlow's "div" sharding). With `max_norm`, each
    row found is scaled down to that L2 norm where it is longer.

    Example:
      >>> import ember as em
      >>> em.nn.embedding_lookup(em.constant([[0.0, 1.0], [2.0, 3.0]]), [1, 1, 0])
      <ember.Tensor: shape=(3, 2), dtype=float32, numpy=
      array([[2., 3.],
             [2., 3.],
             [0., 1.]], dtype=float32)>
    """
    del name
    if isinstance(params, (list, tuple)):
        if not params:
            raise ValueError("em.nn.embedding_lookup: params is an empty list")
        params = params[0] if len(params) == 1 else ops.concat(list(params), 0)
    params, ids = convert_to_tensor(params), convert_to_tensor(ids)
    if not ids.dtype.is_integer:
        raise TypeError(f"em.nn.embedding_lookup: ids must be integers, got {ids.dtype.name}")
    found = ops.gather(params, ids)
    if max_norm is None:
        return found
    from ember.frontend.math_composites import clip_by_norm
    axes = list(range(ids.shape.rank, found.shape.rank))
    return clip_by_norm(found, max_norm, axes=axes) if axes else found

