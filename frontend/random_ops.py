"""Philox random numbers from TensorFlow's state layout: the building blocks of
`em.random` (stateless functions here; `em.random.Generator` in random_generator.py).

A Philox state is an int64 tensor `[counter low, counter high, key]`
(dialects/ember/philox.py). The stateless functions derive it from their [2] seed as
TensorFlow's `StatelessRandomGetKeyCounter` does (one Philox block of the seed under a fixed
key), then draw from it: `em.random.stateless_uniform(shape, seed)` gives TensorFlow's
`tf.random.stateless_uniform` numbers (Philox algorithm, CPU), bit for bit for uniform and
integer results and up to the last bits of libm for normal ones.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember import philox as P
from ember.frontend import ops
from ember.frontend.creation_ops import _shape_tensor
from ember.frontend.dispatch import execute
from ember.frontend.effects import assert_true
from ember.frontend.math_ops import cast
from ember.frontend.tensor import Tensor, convert_to_tensor

# TensorFlow's key for scrambling a stateless seed: 0x02461e29 (high), 0x3ec8f720 (low)
SEED_KEY = 0x02461E293EC8F720
FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
INTS = (dtypes.int32, dtypes.int64)
_MIN64 = -(1 << 63)


def shape_operand(shape, where: str) -> Tensor:
    """`shape` (ints, scalar integer tensors, a 1-D integer tensor or a TensorShape) as the
    1-D integer tensor the Philox ops take."""
    if hasattr(shape, "as_list") and not isinstance(shape, Tensor):
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)):
        bad = [d for d in shape if isinstance(d, (int, np.integer)) and d < 0]
        if bad:
            raise ValueError(f"{where}: shape {list(shape)} has a negative dimension {bad[0]}")
    return _shape_tensor(shape, where)


def draw(state, shape: Tensor, distribution: str, dtype) -> Tensor:
    """Philox numbers of `distribution` and `dtype` for the [3] int64 `state`."""
    return execute(P.PhiloxRandomOp, [state, shape],
                   {"distribution": distribution, "dtype": dtypes.as_dtype(dtype)})


def draw_int(state, shape: Tensor, minval, maxval, dtype, where: str) -> Tensor:
    """Uniform integers in [minval, maxval) for the [3] int64 `state`, after checking
    minval < maxval (eagerly at once, compiled when it runs), as TensorFlow's kernel."""
    low, high = (convert_to_tensor(v, dtype=dtype) for v in (minval, maxval))
    for t in (low, high):
        if t.shape.rank not in (0, None):
            raise ValueError(f"{where}: minval and maxval must be scalars, got shape "
                             f"{t.shape}")
    assert_true(ops.less(low, high), f"{where}: needs minval < maxval")
    return execute(P.PhiloxUniformIntOp, [state, shape, low, high])


def advance(state, count) -> Tensor:
    """`state` with its 128-bit counter advanced by `count` (an int64 scalar), the key kept.

    The low word's unsigned overflow carries into the high word: low + count wraps below
    count exactly when it overflows, compared unsigned as signed after flipping the sign
    bits (adding -2**63)."""
    state = convert_to_tensor(state, dtype=dtypes.int64)
    count = convert_to_tensor(count, dtype=dtypes.int64)
    low, high, key = state[0], state[1], state[2]
    flip = convert_to_tensor(_MIN64, dtype=dtypes.int64)
    new_low = ops.add(low, count)
    carry = ops.less(ops.add(new_low, flip), ops.add(count, flip))
    return ops.stack([new_low, ops.add(high, cast(carry, dtypes.int64)), key])


def seed_state(seed, where: str = "em.random") -> Tensor:
    """The Philox state TensorFlow derives from a stateless [2] seed: Philox of counter
    (seed[0], seed[1]) under SEED_KEY gives the key (words 0, 1) and the counter's high
    half (words 2, 3); the low half is 0."""
    seed = convert_to_tensor(seed, dtype_hint=dtypes.int64)
    if seed.dtype not in INTS:
        raise TypeError(f"{where}: seed must be an int32 or int64 tensor of shape [2], got "
                        f"{seed!r}")
    if seed.shape.rank is not None and seed.shape.as_list() not in ([2], [None]):
        raise ValueError(f"{where}: seed must have shape [2], got {seed.shape}")
    seed = cast(seed, dtypes.int64)
    key = convert_to_tensor(_signed(SEED_KEY), dtype=dtypes.int64)
    mix = draw(ops.stack([seed[0], seed[1], key]),
               Tensor(np.array([2], np.int64)), "bits", dtypes.int64)
    zero = convert_to_tensor(0, dtype=dtypes.int64)
    return ops.stack([zero, mix[1], mix[0]])


def _signed(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def check_dtype(dtype, allowed, where: str):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in allowed:
        raise TypeError(f"{where}: dtype {dtype.name} is not supported; use one of "
                        f"{', '.join(d.name for d in allowed)}")
    return dtype


def check_uniform_args(minval, maxval, dtype, where: str):
    """The dtype of a uniform draw, after TensorFlow's argument checks."""
    dtype = check_dtype(dtype, FLOATS + INTS, where)
    if dtype.is_integer and (minval is None) != (maxval is None):
        raise ValueError(f"{where}: for integer dtype {dtype.name}, minval and maxval must be "
                         f"both None (the full range) or both given; got minval={minval!r}, "
                         f"maxval={maxval!r}: pass maxval")
    return dtype


def uniform_from(state, shape, minval, maxval, dtype, where: str) -> Tensor:
    """TensorFlow's uniform: floats `u * (maxval - minval) + minval` (in `dtype`), integers
    in [minval, maxval), or full-range integers when both bounds are None."""
    dtype = check_uniform_args(minval, maxval, dtype, where)
    shape = shape_operand(shape, where)
    if dtype.is_integer:
        if minval is None:
            return draw(state, shape, "bits", dtype)
        return draw_int(state, shape, minval, maxval, dtype, where)
    minval = 0 if minval is None else minval
    maxval = 1 if maxval is None else maxval
    rnd = draw(state, shape, "uniform", dtype)
    if _is_number(minval, 0) and _is_number(maxval, 1):
        return rnd  # rnd * 1 + 0 is rnd: skip two passes over it
    low, high = (convert_to_tensor(v, dtype=dtype) for v in (minval, maxval))
    return ops.add(ops.multiply(rnd, ops.subtract(high, low)), low)


def _is_number(value, number) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == number


def normal_from(state, shape, mean, stddev, dtype, where: str,
                distribution: str = "normal") -> Tensor:
    """TensorFlow's `rnd * stddev + mean` over standard (or truncated) normal `rnd`."""
    dtype = check_dtype(dtype, FLOATS, where)
    rnd = draw(state, shape_operand(shape, where), distribution, dtype)
    mean, stddev = (convert_to_tensor(v, dtype=dtype) for v in (mean, stddev))
    return ops.add(ops.multiply(rnd, stddev), mean)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None,
                      alg="auto_select"):
    """Uniform numbers in [minval, maxval) determined by the [2] `seed`
    (tf.random.stateless_uniform; Philox). Integer dtypes need `maxval` (both bounds None:
    the full range).

    Raises:
      ValueError: an integer dtype with only one bound, or a bad shape or seed.
      InvalidArgumentError: integer bounds with minval >= maxval (when it runs, compiled).

    Example:
      >>> em.random.stateless_uniform([3], seed=[1, 2]).numpy()
      array([0.8440604 , 0.19204533, 0.9962232 ], dtype=float32)
      >>> em.random.stateless_uniform([4], seed=[1, 2], minval=0, maxval=10, dtype=em.int32)
      <ember.Tensor: shape=(4,), dtype=int32, numpy=array([0, 9, 4, 9], dtype=int32)>
    """
    del name, alg
    return uniform_from(seed_state(seed, "em.random.stateless_uniform"), shape, minval,
                        maxval, dtype, "em.random.stateless_uniform")


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None,
                     alg="auto_select"):
    """Normal numbers determined by the [2] `seed` (tf.random.stateless_normal): the
    numbers TensorFlow prints in its random-numbers guide, to an ulp or two.

    Example:
      >>> em.random.stateless_normal([2, 3], seed=[1, 2]).numpy()
      array([[ 0.5441101 ,  0.20738031,  0.07356432],
             [ 0.04643455, -1.3015898 , -0.9538565 ]], dtype=float32)
    """
    del name, alg
    return normal_from(seed_state(seed, "em.random.stateless_normal"), shape, mean, stddev,
                       dtype, "em.random.stateless_normal")


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                               name=None, alg="auto_select"):
    """Normal numbers within 2 stddev of `mean` (values beyond are redrawn), determined by
    the [2] `seed` (tf.random.stateless_truncated_normal)."""
    del name, alg
    where = "em.random.stateless_truncated_normal"
    return normal_from(seed_state(seed, where), shape, mean, stddev, dtype, where,
                       "truncated_normal")
