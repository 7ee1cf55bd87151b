"""Weight initializers by Keras name ("glorot_uniform", "zeros", ...). An unseeded random
initializer draws from `em.random`'s global generator, so `em.random.set_seed(s)` makes a
model's initial weights repeat; a seeded one (`seed=7`) draws stateless numbers from the seed
`[seed, 0]`, so every call gives the same values, as Keras 2 (TF >= 2.7) does.

An initializer is a callable `(shape, dtype) -> Tensor`: an `Initializer` (Keras's
classes, `em.keras.initializers`, with `get_config`) or any function; a layer calls it under
`em.init_scope()`, so initial values are computed eagerly even while a function is traced.
"""

from __future__ import annotations

import math

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend import random_composites as random
from ember.frontend import random_ops
from ember.frontend.tensor import convert_to_tensor
from ember.frontend.training import keras_objects
from ember.frontend.training.keras_objects import Configurable, resolve


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


class Initializer(Configurable):
    """A callable `(shape, dtype=None) -> Tensor` with Keras's `get_config` / `from_config`
    (keras.initializers.Initializer)."""

    def __call__(self, shape, dtype=None, **kwargs):
        raise TypeError(f"{type(self).__name__} subclasses Initializer without defining "
                        "__call__(self, shape, dtype=None)")


def _dtype(dtype):
    return float_dtype(dtype, "initializer")


class Zeros(Initializer):
    """All zeros."""

    def __call__(self, shape, dtype=None, **kwargs):
        return ops.zeros(list(shape), dtype=_dtype(dtype))


class Ones(Initializer):
    """All ones."""

    def __call__(self, shape, dtype=None, **kwargs):
        return ops.ones(list(shape), dtype=_dtype(dtype))


class Constant(Initializer):
    """Every entry `value` (a scalar)."""

    def __init__(self, value=0):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError(f"Constant: value must be a Python scalar, got {value!r}")
        self.value = value

    def __call__(self, shape, dtype=None, **kwargs):
        return ops.fill(list(shape), convert_to_tensor(self.value, dtype=_dtype(dtype)))

    def get_config(self):
        return {"value": self.value}


class _Seeded(Initializer):
    """A random initializer. `seed` None: each call draws new numbers from the global
    generator. `seed` an int: each call gives the same numbers, stateless from the seed
    `[seed, 0]` (Keras's `RandomGenerator(seed, rng_type="stateless")`)."""

    def __init__(self, seed=None):
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise TypeError(f"{type(self).__name__}: seed must be an int or None, got "
                            f"{seed!r}")
        self.seed = seed

    def _random(self, distribution: str, shape, a, b, dtype):
        """`distribution` ("uniform", "normal", "truncated_normal") of parameters a, b."""
        if self.seed is None:
            return getattr(random, distribution)(shape, a, b, dtype=dtype)
        stateless = getattr(random_ops, "stateless_" + distribution)
        return stateless(shape, [self.seed, 0], a, b, dtype=dtype)


class RandomNormal(_Seeded):
    """Normal values of `mean` and `stddev` (keras.initializers.RandomNormal).

    Args:
      mean, stddev: Python scalars.
      seed: an int makes the initializer deterministic: every call returns the same values.
        None draws new values from the global generator (`em.random.set_seed`) each call.
    """

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None, **kwargs):
        return self._random("normal", list(shape), self.mean, self.stddev, _dtype(dtype))

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    """Normal values of `mean` and `stddev`, redrawn beyond 2 stddev from the mean
    (keras.initializers.TruncatedNormal); `seed` as RandomNormal's."""

    def __call__(self, shape, dtype=None, **kwargs):
        return self._random("truncated_normal", list(shape), self.mean, self.stddev,
                            _dtype(dtype))


class RandomUniform(_Seeded):
    """Uniform values in [minval, maxval) (keras.initializers.RandomUniform).

    Args:
      minval, maxval: Python scalars.
      seed: an int makes the initializer deterministic: every call returns the same values.
        None draws new values from the global generator (`em.random.set_seed`) each call.
    """

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None, **kwargs):
        return self._random("uniform", list(shape), self.minval, self.maxval, _dtype(dtype))

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class VarianceScaling(_Seeded):
    """Values of variance `scale / n`, n the kernel's fan_in, fan_out or their mean
    (`mode`), from a truncated normal, an untruncated normal or a uniform (`distribution`)
    (keras.initializers.VarianceScaling).

    Args:
      scale: a positive float. mode: "fan_in", "fan_out" or "fan_avg".
      distribution: "truncated_normal" ("normal"), "untruncated_normal" or "uniform".
      seed: an int makes the initializer deterministic: every call returns the same values.
        None draws new values from the global generator (`em.random.set_seed`) each call.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        super().__init__(seed)
        where = type(self).__name__
        if not isinstance(scale, (int, float)) or scale <= 0:
            raise ValueError(f"{where}: scale must be a positive float, got {scale!r}")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"{where}: mode must be 'fan_in', 'fan_out' or 'fan_avg', got "
                             f"{mode!r}")
        distribution = "truncated_normal" if distribution == "normal" else distribution
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError(f"{where}: distribution must be 'truncated_normal', "
                             f"'untruncated_normal' or 'uniform', got {distribution!r}")
        self.scale, self.mode, self.distribution = float(scale), mode, distribution

    def __call__(self, shape, dtype=None, **kwargs):
        shape, dtype = list(shape), _dtype(dtype)
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        variance = self.scale / max(1.0, n[self.mode])
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * variance)
            return self._random("uniform", shape, -limit, limit, dtype)
        if self.distribution == "untruncated_normal":
            return self._random("normal", shape, 0.0, math.sqrt(variance), dtype)
        # the stddev of a unit normal truncated at 2 stddev: widened to keep the variance
        stddev = math.sqrt(variance) / 0.87962566103423978
        return self._random("truncated_normal", shape, 0.0, stddev, dtype)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution,
                "seed": self.seed}


class _FixedScaling(VarianceScaling):
    """A VarianceScaling whose scale, mode and distribution are fixed by the class; only
    `seed` is configurable (and serialized), as in Keras."""

    ARGS: tuple = ()

    def __init__(self, seed=None):
        super().__init__(*self.ARGS, seed=seed)

    def get_config(self):
        return {"seed": self.seed}


class GlorotUniform(_FixedScaling):
    """Uniform in +-sqrt(6 / (fan_in + fan_out)) (Xavier; keras.initializers.GlorotUniform).
    `seed`: an int gives the same values every call; None draws from the global generator
    each call."""

    ARGS = (1.0, "fan_avg", "uniform")


class GlorotNormal(_FixedScaling):
    """Truncated normal of stddev sqrt(2 / (fan_in + fan_out))
    (keras.initializers.GlorotNormal). `seed`: an int gives the same values every call; None
    draws from the global generator each call."""

    ARGS = (1.0, "fan_avg", "truncated_normal")


class HeUniform(_FixedScaling):
    """Uniform in +-sqrt(6 / fan_in) (keras.initializers.HeUniform). `seed`: an int gives
    the same values every call; None draws from the global generator each call."""

    ARGS = (2.0, "fan_in", "uniform")


class HeNormal(_FixedScaling):
    """Truncated normal of stddev sqrt(2 / fan_in) (keras.initializers.HeNormal). `seed`: an
    int gives the same values every call; None draws from the global generator each call."""

    ARGS = (2.0, "fan_in", "truncated_normal")


class LecunUniform(_FixedScaling):
    """Uniform in +-sqrt(3 / fan_in) (keras.initializers.LecunUniform). `seed`: an int gives
    the same values every call; None draws from the global generator each call."""

    ARGS = (1.0, "fan_in", "uniform")


class LecunNormal(_FixedScaling):
    """Truncated normal of stddev sqrt(1 / fan_in) (keras.initializers.LecunNormal). `seed`:
    an int gives the same values every call; None draws from the global generator each call."""

    ARGS = (1.0, "fan_in", "truncated_normal")


class Orthogonal(_Seeded):
    """`gain` times an orthogonal matrix (rows or columns orthonormal, whichever are fewer),
    reshaped to the kernel's shape: Q of the QR decomposition of a normal sample, signs
    fixed by R's diagonal (keras.initializers.Orthogonal). `seed`: an int gives the same
    matrix every call; None draws from the global generator each call."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs):
        shape, dtype = list(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError(f"Orthogonal: the shape must have rank >= 2, got {shape}")
        rows, cols = math.prod(shape[:-1]), shape[-1]
        sample = self._random("normal", [max(rows, cols), min(rows, cols)], 0.0, 1.0, dtype)
        q, r = np.linalg.qr(np.asarray(sample, np.float64))  # (eager: under init_scope)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return convert_to_tensor((self.gain * q).reshape(shape), dtype=dtype)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed}


class Identity(Initializer):
    """`gain` times the identity matrix (2-D shapes only)."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None, **kwargs):
        shape = list(shape)
        if len(shape) != 2:
            raise ValueError(f"Identity: the shape must be 2-D, got {shape}")
        return convert_to_tensor(self.gain * np.eye(*shape), dtype=_dtype(dtype))

    def get_config(self):
        return {"gain": self.gain}


_CLASSES = {c.__name__: c for c in (
    Zeros, Ones, Constant, RandomNormal, RandomUniform, TruncatedNormal, VarianceScaling,
    GlorotUniform, GlorotNormal, HeUniform, HeNormal, LecunUniform, LecunNormal, Orthogonal,
    Identity)}
_ALIASES = {"zeros": Zeros, "zero": Zeros, "ones": Ones, "one": Ones, "constant": Constant,
            "random_normal": RandomNormal, "normal": RandomNormal,
            "random_uniform": RandomUniform, "uniform": RandomUniform,
            "truncated_normal": TruncatedNormal, "variance_scaling": VarianceScaling,
            "glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal,
            "he_uniform": HeUniform, "he_normal": HeNormal, "lecun_uniform": LecunUniform,
            "lecun_normal": LecunNormal, "orthogonal": Orthogonal, "identity": Identity}


def get(identifier, where: str = "em.keras.initializers.get"):
    """An initializer of a Keras name ("glorot_uniform", "GlorotUniform", "zeros", ...), of
    a serialized `{"class_name": ..., "config": {...}}`, or `identifier` itself if it is a
    callable `(shape, dtype) -> tensor` (keras.initializers.get); None stays None."""
    return resolve(identifier, where, _lookup, "an initializer is a name or a callable "
                   "(shape, dtype)")


deserialize = get


def _lookup(name: str, where: str):
    cls = _CLASSES.get(name) or _ALIASES.get(name.lower())
    if cls is None:
        raise ValueError(f"{where}: unknown initializer {name!r}; use one of "
                         f"{sorted(_ALIASES)}, a class name such as 'GlorotUniform', or a "
                         "callable (shape, dtype)")
    return cls


def serialize(initializer):
    """`{"class_name": ..., "config": ...}` of an Initializer (a name is resolved first); a
    plain function's `__name__`."""
    if isinstance(initializer, str):
        initializer = get(initializer)
    return keras_objects.serialize(
        initializer, Initializer, "em.keras.initializers.serialize",
        "subclass em.keras.initializers.Initializer (with get_config) or use a named function")


def float_dtype(dtype, where: str):
    dtype = dtypes.as_dtype(dtype if dtype is not None else dtypes.float32)
    if not dtype.is_floating:
        raise TypeError(f"{where}: weights must be floating-point, got dtype {dtype.name}")
    return dtype
