"""Weight initializers by Keras name ("glorot_uniform", "zeros", ...), drawing from
`em.random` (the global generator, or an operation `seed`), so `em.random.set_seed(s)` makes
a model's initial weights repeat.

An initializer is a callable `(shape, dtype) -> Tensor`; a layer calls it under
`em.init_scope()`, so initial values are computed eagerly even while a function is traced.
"""

from __future__ import annotations

import math

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend import random_composites as random


def compute_fans(shape) -> tuple:
    """Keras's (fan_in, fan_out): a kernel [..., in, out] has receptive field prod(...)."""
    shape = list(shape)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    field = math.prod(shape[:-2])
    return shape[-2] * field, shape[-1] * field


def _glorot_uniform(shape, dtype, seed=None):
    fan_in, fan_out = compute_fans(shape)
    limit = math.sqrt(6.0 / max(1.0, fan_in + fan_out))
    return random.uniform(shape, -limit, limit, dtype=dtype, seed=seed)


def _glorot_normal(shape, dtype, seed=None):
    fan_in, fan_out = compute_fans(shape)
    # Keras's VarianceScaling: a normal truncated at 2 stddev, widened to keep the variance
    stddev = math.sqrt(2.0 / max(1.0, fan_in + fan_out)) / 0.87962566103423978
    return random.truncated_normal(shape, 0.0, stddev, dtype=dtype, seed=seed)


def _he_uniform(shape, dtype, seed=None):
    limit = math.sqrt(6.0 / max(1.0, compute_fans(shape)[0]))
    return random.uniform(shape, -limit, limit, dtype=dtype, seed=seed)


def _he_normal(shape, dtype, seed=None):
    stddev = math.sqrt(2.0 / max(1.0, compute_fans(shape)[0])) / 0.87962566103423978
    return random.truncated_normal(shape, 0.0, stddev, dtype=dtype, seed=seed)


def _random_uniform(shape, dtype, seed=None):
    return random.uniform(shape, -0.05, 0.05, dtype=dtype, seed=seed)


def _random_normal(shape, dtype, seed=None):
    return random.normal(shape, 0.0, 0.05, dtype=dtype, seed=seed)


def _zeros(shape, dtype, seed=None):
    return ops.zeros(shape, dtype=dtype)


def _ones(shape, dtype, seed=None):
    return ops.ones(shape, dtype=dtype)


INITIALIZERS = {
    "glorot_uniform": _glorot_uniform, "glorot_normal": _glorot_normal,
    "he_uniform": _he_uniform, "he_normal": _he_normal,
    "random_uniform": _random_uniform, "uniform": _random_uniform,
    "random_normal": _random_normal, "normal": _random_normal,
    "zeros": _zeros, "ones": _ones,
}


def get(identifier, where: str):
    """The initializer named `identifier`, or `identifier` itself if it is a callable
    `(shape, dtype) -> tensor`."""
    if isinstance(identifier, str):
        key = identifier.lower()
        if key not in INITIALIZERS:
            raise ValueError(f"{where}: unknown initializer {identifier!r}; use one of "
                             f"{sorted(INITIALIZERS)} or a callable (shape, dtype)")
        return INITIALIZERS[key]
    if callable(identifier):
        return identifier
    raise TypeError(f"{where}: an initializer is a name or a callable (shape, dtype), got "
                    f"{identifier!r}")


def float_dtype(dtype, where: str):
    dtype = dtypes.as_dtype(dtype if dtype is not None else dtypes.float32)
    if not dtype.is_floating:
        raise TypeError(f"{where}: weights must be floating-point, got dtype {dtype.name}")
    return dtype
