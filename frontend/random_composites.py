"""`em.random` functions built from Philox draws and other ops: the module-level
`uniform`/`normal`/`truncated_normal` (a generator chosen by seed: random_seed.py), `categorical`,
`shuffle`, their stateless forms, and `em.nn.dropout` / `stateless_dropout`.

`categorical` samples by the Gumbel-max trick (argmax of logits + Gumbel noise, one
uniform per sample and class): the distribution of TensorFlow's `tf.random.categorical`, not
its number stream (TensorFlow inverts the CDF with its own counter layout). `shuffle` ranks
random 64-bit keys by pairwise comparison (ties broken by position): O(n^2) work and memory
in the first dim, a composition until a sort op exists; TensorFlow's stream is not matched.
"""

from __future__ import annotations

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend import random_ops as R
from ember.frontend import random_seed as seeds
from ember.frontend.math_ops import cast
from ember.frontend.tensor import convert_to_tensor


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform numbers in [minval, maxval) from the global generator, or from the
    generator of operation seed `seed` (tf.random.uniform). Integer dtypes need maxval."""
    del name
    return seeds.generator_for(seed).uniform(shape, minval, maxval, dtype)


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal numbers (tf.random.normal)."""
    del name
    return seeds.generator_for(seed).normal(shape, mean, stddev, dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None,
                     name=None):
    """Normal numbers within 2 stddev of `mean` (tf.random.truncated_normal)."""
    del name
    return seeds.generator_for(seed).truncated_normal(shape, mean, stddev, dtype)


def _logits(logits, where: str):
    logits = convert_to_tensor(logits)
    if not logits.dtype.is_floating:
        raise TypeError(f"{where}: logits must be floating-point, got {logits!r}")
    if logits.shape.rank is not None and logits.shape.rank != 2:
        raise ValueError(f"{where}: logits must have shape [batch_size, num_classes], got "
                         f"{logits.shape}")
    return logits


def _categorical(logits, num_samples, dtype, uniform_fn, where: str):
    """argmax over classes of logits + Gumbel noise, num_samples draws per batch row."""
    logits = _logits(logits, where)
    dtype = R.check_dtype(dtypes.int64 if dtype is None else dtype, R.INTS, where)
    dims = ops.shape(logits, out_type=dtypes.int64)
    samples = convert_to_tensor(num_samples, dtype=dtypes.int64)
    u = uniform_fn(ops.stack([dims[0], samples, dims[1]]), logits.dtype)
    gumbel = ops.negative(ops.log(ops.negative(ops.log(u))))
    return ops.argmax(ops.add(ops.expand_dims(logits, 1), gumbel), axis=2, output_type=dtype)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """Class indices drawn from the categorical distributions of each row of `logits`
    ([batch, classes]): an int64 [batch, num_samples] tensor (tf.random.categorical)."""
    del name
    gen = seeds.generator_for(seed)
    return _categorical(logits, num_samples, dtype, lambda s, dt: gen.uniform(s, dtype=dt),
                        "em.random.categorical")


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """`categorical` determined by the [2] `seed` (tf.random.stateless_categorical)."""
    del name
    return _categorical(logits, num_samples, dtype,
                        lambda s, dt: R.stateless_uniform(s, seed, dtype=dt),
                        "em.random.stateless_categorical")


def _shuffle(value, keys_fn, where: str):
    """`value` permuted along dim 0 by the ranks of random int64 keys."""
    value = convert_to_tensor(value)
    if value.shape.rank == 0:
        raise ValueError(f"{where}: value must have rank >= 1 to shuffle along its first "
                         f"dim, got a scalar {value!r}")
    n = ops.shape(value, out_type=dtypes.int64)[0]
    keys = keys_fn(ops.stack([n]))
    idx = ops.range(n, dtype=dtypes.int64)
    ki, kj = ops.expand_dims(keys, 1), ops.expand_dims(keys, 0)
    ii, jj = ops.expand_dims(idx, 1), ops.expand_dims(idx, 0)
    before = ops.logical_or(ops.less(kj, ki),
                            ops.logical_and(ops.equal(kj, ki), ops.less(jj, ii)))
    rank = ops.reduce_sum(cast(before, dtypes.int64), axis=1)  # where element i goes
    lands = cast(ops.equal(ops.expand_dims(rank, 0), ii), dtypes.int64)  # [p, i]
    source = ops.reduce_sum(ops.multiply(lands, jj), axis=1)  # the i landing at p
    return ops.gather(value, source)


def shuffle(value, seed=None, name=None):
    """`value` randomly permuted along its first dim (tf.random.shuffle)."""
    del name
    gen = seeds.generator_for(seed)
    return _shuffle(value, lambda s: gen.uniform_full_int(s, dtypes.int64),
                    "em.random.shuffle")


def stateless_shuffle(value, seed, alg="auto_select", name=None):
    """`shuffle` determined by the [2] `seed` (tf.random.experimental.stateless_shuffle)."""
    del alg, name
    where = "em.random.experimental.stateless_shuffle"
    return _shuffle(value, lambda s: R.stateless_uniform(
        s, seed, minval=None, maxval=None, dtype=dtypes.int64), where)


def _dropout(x, rate, noise_shape, uniform_fn, where: str):
    """x / (1 - rate) where uniform noise >= rate, else 0 (TensorFlow's formula)."""
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise TypeError(f"{where}: x must be floating-point, got {x!r}")
    if isinstance(rate, (int, float)) and not isinstance(rate, bool):
        if not 0 <= rate < 1:
            raise ValueError(f"{where}: rate must be a scalar tensor or a float in the range "
                             f"[0, 1), got {rate}")
    rate = convert_to_tensor(rate, dtype=x.dtype)
    if rate.shape.rank not in (0, None):
        raise ValueError(f"{where}: rate must be a scalar, got shape {rate.shape}")
    shape = ops.shape(x) if noise_shape is None else noise_shape
    keep = ops.greater_equal(uniform_fn(shape, x.dtype), rate)
    one = convert_to_tensor(1, dtype=x.dtype)
    scale = ops.divide(one, ops.subtract(one, rate))
    return ops.multiply(ops.multiply(x, scale), cast(keep, x.dtype))


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeroes each element of `x` with probability `rate` and scales the rest by
    1 / (1 - rate) (tf.nn.dropout). `noise_shape` must broadcast to x's shape.

    Raises:
      ValueError: a Python `rate` outside [0, 1), or a non-scalar rate.
      TypeError: `x` is not floating-point.

    Example:
      >>> em.random.set_seed(0)
      >>> y = em.nn.dropout(em.ones([1000]), rate=0.5).numpy()
      >>> sorted(set(y.tolist()))
      [0.0, 2.0]
    """
    del name
    gen = seeds.generator_for(seed)
    return _dropout(x, rate, noise_shape, lambda s, dt: gen.uniform(s, dtype=dt),
                    "em.nn.dropout")


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """`dropout` determined by the [2] `seed` (tf.nn.experimental.stateless_dropout)."""
    del rng_alg, name
    return _dropout(x, rate, noise_shape,
                    lambda s, dt: R.stateless_uniform(s, seed, dtype=dt),
                    "em.nn.experimental.stateless_dropout")
