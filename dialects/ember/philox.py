"""Philox-4x32-10 random numbers as TensorFlow's random kernels make them.

Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11; the
Random123 library) maps a 128-bit counter and a 64-bit key to four 32-bit words in ten
rounds of 32x32->64 multiplies. TensorFlow's stateful (`tf.random.Generator`) and
stateless (`tf.random.stateless_*`) ops draw from it; these ops take the generator state in
TensorFlow's layout, an int64 tensor of shape [3]: `[counter low 64 bits, counter high 64
bits, key]`, each word's low 32 bits first.

The outputs are filled in groups as TensorFlow's CPU kernels (`FillPhiloxRandom`) fill them:
output group g takes the words of Philox block `counter + g` (a group is 4 outputs for
32-bit results, 2 for 64-bit ones), converted as `tensorflow/core/lib/random/
random_distributions.h` converts them. Truncated normal groups start at block
`counter + g * 256 * group / 4` and draw blocks until the group is filled (values at or
beyond 2 are redrawn). Callers advance the state themselves (`frontend/random_state.py`).
Upstream has no equivalent (`tf.random` kernels, `jax.random` in JAX).
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError,
                                       OpTypeError, Trait, all_static, register,
                                       require_dtype)
from ember.dialects.ember.creation import shape_operand, static_or_none
from ember.dialects.ember.types import TensorType

# Philox-4x32 constants (Random123 / tensorflow/core/lib/random/philox_random.h)
ROUND_A, ROUND_B = 0xD2511F53, 0xCD9E8D57
WEYL_A, WEYL_B = 0x9E3779B9, 0xBB67AE85
ROUNDS = 10
TRUNCATE = 2.0  # truncated normal keeps |z| < 2 (TensorFlow's kTruncateValue)
RESERVED = 256  # TensorFlow reserves 256 samples per output (kReservedSamplesPerOutput)
DISTRIBUTIONS = ("bits", "uniform", "normal", "truncated_normal")
_M32 = np.uint64(0xFFFFFFFF)


def philox_blocks(state: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The four 32-bit words (uint64 array [4, n]) of Philox-4x32-10 at counters
    `state counter + offsets` (uint64, with the carry into the high 64 bits)."""
    s = np.asarray(state).astype(np.int64).view(np.uint64).reshape(-1)
    offsets = np.asarray(offsets, np.uint64)
    low = s[0] + offsets
    high = s[1] + (low < offsets).astype(np.uint64)
    c = [low & _M32, low >> np.uint64(32), high & _M32, high >> np.uint64(32)]
    k = [s[2] & _M32, s[2] >> np.uint64(32)]
    for _ in range(ROUNDS):
        p0 = np.uint64(ROUND_A) * c[0]
        p1 = np.uint64(ROUND_B) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & _M32,
             (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & _M32]
        k = [(k[0] + np.uint64(WEYL_A)) & _M32, (k[1] + np.uint64(WEYL_B)) & _M32]
    return np.stack(c)


def group_size(dtype: dtypes.DType) -> int:
    """Outputs per Philox block: 4 for 32-bit and narrower results, 2 for 64-bit ones."""
    return 2 if dtype.bits == 64 else 4


def _unit32(w: np.ndarray) -> np.ndarray:
    """Uint32ToFloat: [0, 1) from the low 23 bits (exponent 127, minus 1)."""
    return ((w & np.uint64(0x7FFFFF)) | np.uint64(0x3F800000)).astype(np.uint32) \
        .view(np.float32) - np.float32(1.0)


def _unit64(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Uint64ToDouble: [0, 1) from 20 bits of `hi` over the 32 of `lo`."""
    bits = ((hi & np.uint64(0xFFFFF)) << np.uint64(32)) | lo | np.uint64(1023 << 52)
    return bits.view(np.float64) - 1.0


def _f32(fn, x: np.ndarray) -> np.ndarray:
    """A float32 libm function as the correctly rounded result (f64, rounded once), what
    glibc's logf/sinf/cosf give in all but rare cases."""
    return fn(x.astype(np.float64)).astype(np.float32)


def _box_muller32(x0, x1):
    u1 = np.maximum(_unit32(x0), np.float32(1e-7))
    v1 = (2.0 * np.pi * _unit32(x1).astype(np.float64)).astype(np.float32)
    r = _f32(np.sqrt, np.float32(-2.0) * _f32(np.log, u1))
    return _f32(np.sin, v1) * r, _f32(np.cos, v1) * r


def _box_muller64(x0, x1, x2, x3):
    u1 = np.maximum(_unit64(x0, x1), 1e-7)
    v1 = 2.0 * np.pi * _unit64(x2, x3)
    r = np.sqrt(-2.0 * np.log(u1))
    return np.sin(v1) * r, np.cos(v1) * r


def convert(words: np.ndarray, distribution: str, dtype: dtypes.DType) -> np.ndarray:
    """One group of outputs (shape [n, group]) per block of `words` ([4, n])."""
    w = words
    wide = dtype.bits == 64
    if distribution == "bits":
        if wide:
            return np.stack([w[0] | w[1] << np.uint64(32), w[2] | w[3] << np.uint64(32)],
                            1).view(np.int64)
        return w.T.astype(np.uint32).view(np.int32)
    if distribution == "uniform":
        if wide:
            return np.stack([_unit64(w[0], w[1]), _unit64(w[2], w[3])], 1)
        if dtype in (dtypes.float16, dtypes.bfloat16):
            bits = 10 if dtype is dtypes.float16 else 7
            man = (w.T & np.uint64((1 << bits) - 1)) << np.uint64(23 - bits)
            return ((man | np.uint64(0x3F800000)).astype(np.uint32).view(np.float32)
                    - np.float32(1.0))
        return _unit32(w.T)
    if wide:
        return np.stack(_box_muller64(*w), 1)
    a, b = _box_muller32(w[0], w[1])
    c, d = _box_muller32(w[2], w[3])
    return np.stack([a, b, c, d], 1)


def philox_values(state, count: int, distribution: str, dtype: dtypes.DType) -> np.ndarray:
    """The first `count` outputs of `distribution`, flat, before the cast to `dtype`."""
    g = group_size(dtype)
    groups = -(-count // g)
    if distribution != "truncated_normal":
        out = convert(philox_blocks(state, np.arange(groups, dtype=np.uint64)),
                      distribution, dtype)
        return out.reshape(-1)[:count]
    stride = RESERVED * g // 4
    per_block = 2 if dtype.bits == 64 else 4
    out = np.zeros((groups, g), np.float64 if dtype.bits == 64 else np.float32)
    filled = np.zeros(groups, np.int64)
    base = np.arange(groups, dtype=np.uint64) * np.uint64(stride)
    block = 0
    while (filled < g).any():
        todo = np.nonzero(filled < g)[0]
        values = convert(philox_blocks(state, base[todo] + np.uint64(block)), "normal", dtype)
        for j in range(per_block):
            keep = np.abs(values[:, j]) < TRUNCATE
            rows = todo[keep & (filled[todo] < g)]
            out[rows, filled[rows]] = values[keep & (filled[todo] < g), j]
            filled[rows] += 1
        block += 1
    return out.reshape(-1)[:count]


def _state_type(op: type[Op], state: TensorType) -> None:
    require_dtype(op, state, (dtypes.int64,), "i64", "state")
    if state.shape is not None and state.shape != (3,):
        raise op.error(f"state of type {state} must have shape [3] (counter low, counter "
                       "high, key: TensorFlow's Philox state)")


def _dims(op: type[Op], shape: TensorType, value) -> tuple | None:
    dims = shape_operand(op, shape, value, "shape")
    return None if dims is None else static_or_none(dims)


@register
class PhiloxRandomOp(Op):
    """Philox-4x32-10 numbers of `shape` from a TensorFlow Philox `state` ([3] i64):
    raw bits (i32 words, or i64 from word pairs), uniform floats in [0, 1), standard normal
    floats (Box-Muller), or normal floats redrawn until |z| < 2 (truncated_normal).

    Example:
      %r = "ember.philox_random"(%state, %shape) {distribution = "uniform", dtype = f32} : (tensor<3xi64>, tensor<2xi64>) -> tensor<?x?xf32>
    """

    name = "ember.philox_random"
    operands = ("state", "shape")
    attrs = {"distribution": Attr("str", doc="bits, uniform, normal or truncated_normal"),
             "dtype": Attr("dtype", dtypes.float32)}
    traits = frozenset({Trait.PURE, Trait.RANDOM})
    family = "random"
    uses_values = True

    @classmethod
    def infer(cls, state: TensorType, shape: TensorType, *, values, distribution, dtype):
        _state_type(cls, state)
        if distribution not in DISTRIBUTIONS:
            raise OpAttributeError(cls.name, f"distribution {distribution!r} is not one of "
                                   f"{', '.join(DISTRIBUTIONS)}")
        if distribution == "bits" and dtype not in (dtypes.int32, dtypes.int64):
            raise OpAttributeError(cls.name, f"bits have dtype i32 or i64, got {dtype.mlir}")
        if distribution != "bits" and not dtype.is_floating:
            raise OpAttributeError(cls.name, f"{distribution} numbers have a floating-point "
                                   f"dtype, got {dtype.mlir}")
        return TensorType(dtype, _dims(cls, shape, values[1]))

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        """Total when a constant gives the shape (inference checked it)."""
        return values[1] is not None and not isinstance(values[1], tuple) \
            and all_static(operand_types)

    @staticmethod
    def reference(state, shape, *, distribution, dtype):
        dims = tuple(int(d) for d in shape)
        count = int(np.prod(dims, dtype=np.int64))
        flat = philox_values(state, count, distribution, dtype)
        return flat.reshape(dims).astype(dtype.np_dtype)


@register
class PhiloxUniformIntOp(Op):
    """Uniform integers in [minval, maxval) of `shape` from a TensorFlow Philox `state`:
    `minval + bits % (maxval - minval)` (unsigned, wrapping), bits one word (i32) or two
    (i64) per output. Callers check minval < maxval first, as TensorFlow's kernel does
    (`em.random` raises); the op itself is total: equal bounds give minval.

    Example:
      %r = "ember.philox_uniform_int"(%state, %shape, %lo, %hi) : (tensor<3xi64>, tensor<1xi64>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
    """

    name = "ember.philox_uniform_int"
    operands = ("state", "shape", "minval", "maxval")
    traits = frozenset({Trait.PURE, Trait.RANDOM})
    family = "random"
    uses_values = True

    @classmethod
    def infer(cls, state, shape, minval, maxval, *, values):
        _state_type(cls, state)
        for t in (minval, maxval):
            if t.rank not in (0, None):
                raise cls.error(f"minval and maxval must be scalars, got {t}")
        require_dtype(cls, minval, (dtypes.int32, dtypes.int64), "i32 or i64", "minval")
        if maxval.dtype is not minval.dtype:
            raise OpTypeError(cls.name, f"minval {minval} and maxval {maxval} must have the "
                              "same element type")
        return TensorType(minval.dtype, _dims(cls, shape, values[1]))

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        """Total when a constant gives the shape (inference checked it)."""
        return values[1] is not None and not isinstance(values[1], tuple) \
            and all_static(operand_types)

    @staticmethod
    def reference(state, shape, minval, maxval):
        dims = tuple(int(d) for d in shape)
        count = int(np.prod(dims, dtype=np.int64))
        dt = dtypes.as_dtype(minval.dtype)
        unsigned = np.uint64 if dt.bits == 64 else np.uint32
        bits = philox_values(state, count, "bits", dt).view(unsigned).astype(np.uint64)
        mod = 1 << dt.bits
        span = (int(maxval) - int(minval)) % mod or 1
        low = np.uint64(int(minval) % mod)
        # wraps, as TensorFlow's SignedAdd
        out = ((low + bits % np.uint64(span)) & np.uint64(mod - 1)).astype(unsigned)
        return out.view(dt.np_dtype).reshape(dims)
