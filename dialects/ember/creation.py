"""Ops that make tensors or change their dtype: constant, fill, range, shape, cast, random.

Upstream equivalents: `arith.constant`, `tensor.splat`/`linalg.fill`, `tensor.dim`,
`arith.*` casts. Random ops are stateless and counter-based (as tf.random.stateless_*): the
same seed, shape and dtype give the same numbers eagerly, interpreted and compiled.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpError, OpShapeError,
                                       OpTypeError, Total, Trait, all_static, register,
                                       require_dtype)
from ember.dialects.ember.types import TensorType


@register
class ConstantOp(Op):
    """A tensor whose value is a dense elements attribute.

    Example:
      %c = "ember.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
    """

    name = "ember.constant"
    attrs = {"value": Attr("elements", doc="the value, with its tensor type")}
    family = "creation"
    total_when = Total.ALWAYS

    @classmethod
    def infer(cls, *, value):
        return TensorType(dtypes.as_dtype(value.dtype), value.shape)

    @staticmethod
    def reference(*, value):
        return value


def shape_operand(op: type[Op], dims: TensorType, known, what: str = "shape operand",
                  inferred_dim: bool = False) -> tuple | None:
    """The result shape a 1-D integer shape operand gives: ints where `known` (its value or
    the tuple known of it) fixes them, None (or a `partial.Dim`) where not; None (unranked)
    while the operand's own size is unknown (em.shape of a tensor of unknown rank).
    `inferred_dim` allows one -1 (reshape)."""
    require_dtype(op, dims, (dtypes.int32, dtypes.int64), "i32 or i64", what)
    if dims.rank is not None and dims.rank != 1:
        raise OpShapeError(op.name, f"{what} {dims} must be a 1-D tensor")
    if known is None and (dims.rank is None or dims.shape[0] is None):
        return None
    if known is None:
        return (None,) * dims.shape[0]
    if isinstance(known, tuple):  # known in part (partial.known_operand)
        shape = tuple(int(d) if isinstance(d, (int, np.integer)) else d for d in known)
    else:
        shape = tuple(int(d) for d in np.asarray(known).reshape(-1))
    ints = [d for d in shape if isinstance(d, int)]
    if inferred_dim:
        if ints.count(-1) > 1 or any(d < -1 for d in ints):
            raise OpAttributeError(op.name, f"shape {_listed(shape)} may hold at most one -1 "
                                   "and no other negative dims")  # as reshape's attribute
    elif any(d < 0 for d in ints):
        raise OpShapeError(op.name, NEGATIVE_DIM.format(next(d for d in ints if d < 0)))
    return shape


# The message names one dim, not the whole shape: compiled code raises it too (checks.py
# formats one value), when the shape operand is known only at run time.
NEGATIVE_DIM = "shape operand has a negative dimension {}"


def _listed(shape: tuple) -> str:
    return "[" + ", ".join(str(d) if isinstance(d, int) else "?" for d in shape) + "]"


def static_or_none(shape: tuple) -> tuple:
    """`shape` with every unknown dim (a `partial.Dim`) as None."""
    return tuple(d if isinstance(d, int) or d is None else None for d in shape)


@register
class FillOp(Op):
    """A tensor of shape `dims` filled with the scalar `value` (tf.fill; zeros and ones).

    Example:
      %z = "ember.fill"(%dims, %v) : (tensor<2xi64>, tensor<f32>) -> tensor<3x4xf32>
    """

    name = "ember.fill"
    operands = ("dims", "value")
    uses_values = True
    family = "creation"

    @classmethod
    def infer(cls, dims: TensorType, value: TensorType, *, values):
        if value.rank not in (0, None):  # unranked: checked when the op runs
            raise OpShapeError(cls.name, f"value of type {value} must be a scalar (rank 0)")
        return TensorType(value.dtype, shape_operand(cls, dims, values[0]))

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        """Total when a constant gives `dims`: inference has checked them then."""
        return values[0] is not None

    @staticmethod
    def reference(dims, value):
        return np.full(tuple(int(d) for d in dims), value, dtype=value.dtype)


@register
class RangeOp(Op):
    """The 1-D sequence start, start + delta, ... up to (not including) limit (tf.range).

    Example:
      %r = "ember.range"(%start, %limit, %delta) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
    """

    name = "ember.range"
    operands = ("start", "limit", "delta")
    uses_values = True
    family = "creation"

    @classmethod
    def infer(cls, start, limit, delta, *, values):
        for t in (start, limit, delta):
            if t.rank not in (0, None):  # unranked: checked when the op runs
                raise OpShapeError(cls.name, f"operands must be scalars, got {t}")
            if t.dtype is not start.dtype:
                raise OpTypeError(cls.name, f"operands {start}, {limit}, {delta} "
                                  "must have the same element type")
        require_dtype(cls, start, dtypes.NUMERIC, "numeric")
        if any(v is None for v in values):
            return TensorType(start.dtype, (None,))
        return TensorType(start.dtype, (cls.size(*(v.item() for v in map(np.asarray, values))),))

    @classmethod
    def size(cls, start, limit, delta) -> int:
        if delta == 0:
            raise OpAttributeError(cls.name, "delta must not be zero")
        if all(isinstance(v, (int, np.integer)) for v in (start, limit, delta)):
            # exact: a float quotient rounds 2**63-wide spans (4 elements where 5 fit)
            return max(0, -(-(int(limit) - int(start)) // int(delta)))
        length = np.ceil((limit - start) / delta)
        if not np.isfinite(length):
            raise OpShapeError(cls.name, f"range({start}, {limit}, {delta}) has no finite "
                               "length")
        return max(0, int(length))

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        """Total when constants give all three: inference has checked delta and length."""
        return all(v is not None for v in values)

    @staticmethod
    def reference(start, limit, delta):
        n = RangeOp.size(start.item(), limit.item(), delta.item())
        if start.dtype.kind in "iu":  # wrapping int64 products: the values lie in range
            with np.errstate(over="ignore"):
                return (np.arange(n, dtype=np.int64) * np.int64(delta.item())
                        + np.int64(start.item())).astype(start.dtype)
        return (start + delta * np.arange(n)).astype(start.dtype)


@register
class ShapeOp(Op):
    """The shape of a tensor as a 1-D integer tensor (tf.shape).

    Example:
      %s = "ember.shape"(%x) {dtype = i32} : (tensor<?x4xf32>) -> tensor<2xi32>
    """

    name = "ember.shape"
    operands = ("input",)
    attrs = {"dtype": Attr("dtype", dtypes.int32, "i32 or i64")}
    family = "creation"
    total_when = Total.ALWAYS
    reads_shapes_only = True  # known once the operand's shape is static

    @classmethod
    def infer(cls, x: TensorType, *, dtype):
        if dtype not in (dtypes.int32, dtypes.int64):
            raise OpAttributeError(cls.name, f"dtype must be i32 or i64, got {dtype.mlir}")
        return TensorType(dtype, (x.rank,))

    @staticmethod
    def reference(x, *, dtype):
        return np.array(x.shape, dtype=dtype.np_dtype)


@register
class CastOp(Op):
    """Elementwise conversion to `dtype` (floats truncate toward zero; to i1 means != 0).
    As TensorFlow's cast, complex to a real dtype converts the real part (the imaginary
    part is dropped) and a real to complex has imaginary part 0.

    Example:
      %y = "ember.cast"(%x) {dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
    """

    name = "ember.cast"
    operands = ("input",)
    attrs = {"dtype": Attr("dtype", doc="the result element type")}
    traits = frozenset({Trait.PURE, Trait.ELEMENTWISE})
    family = "creation"
    total_when = Total.ALWAYS

    @classmethod
    def infer(cls, x: TensorType, *, dtype):
        if x.dtype.is_string != dtype.is_string:
            raise OpTypeError(cls.name, f"cannot cast {x} to {dtype.mlir}: strings only cast "
                              "to strings")
        return x.with_dtype(dtype)

    @staticmethod
    def reference(x, *, dtype):
        if x.dtype.kind == "c" and not dtype.is_complex:  # TF drops the imaginary part
            x = np.real(x)
        if dtype.is_bool:
            return x != 0
        if dtype.is_integer and dtypes.as_dtype(x.dtype).is_floating:  # bfloat16 is kind "V"
            x = np.trunc(x.astype(np.float64))
            info = np.iinfo(dtype.np_dtype)
            # saturate: compare before converting (float(2**63 - 1) is 2**63, which
            # would wrap to the minimum)
            high, low = x >= float(info.max), x <= float(info.min)
            out = np.where(np.isnan(x) | high | low, 0, x).astype(dtype.np_dtype)
            out[high] = info.max
            out[low] = info.min
            return out
        return x.astype(dtype.np_dtype)


# -- stateless random -------------------------------------------------------------------

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a bijective 64-bit hash (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def random_bits(seed: np.ndarray, count: int) -> np.ndarray:
    """`count` uint64 random words for a 2-element seed; element i depends only on (seed, i)."""
    s = np.asarray(seed).astype(np.int64).view(np.uint64).reshape(-1)
    with np.errstate(over="ignore"):
        key = _mix(_mix(s[0] + _GOLDEN) ^ s[1])
        return _mix(key + (np.arange(count, dtype=np.uint64) + np.uint64(1)) * _GOLDEN)


def _unit(bits: np.ndarray) -> np.ndarray:
    """Uniform doubles in [0, 1) from the top 53 bits."""
    return (bits >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


class RandomOp(Op):
    operands = ("seed",)
    traits = frozenset({Trait.PURE, Trait.RANDOM})
    family = "random"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, seed: TensorType, *, shape, dtype, **_):
        require_dtype(cls, seed, (dtypes.int32, dtypes.int64), "i32 or i64", "seed")
        if seed.shape not in ((2,), None) or (seed.shape and None in seed.shape):
            raise OpShapeError(cls.name, f"seed of type {seed} must have shape [2]")
        if not dtype.is_floating:
            raise OpAttributeError(cls.name, f"dtype must be floating-point, got {dtype.mlir}")
        if any(d < 0 for d in shape):
            raise OpAttributeError(cls.name, f"shape {list(shape)} has a negative dimension")
        return TensorType(dtype, shape)


_RANDOM_ATTRS = {"shape": Attr("i64_array"), "dtype": Attr("dtype", dtypes.float32)}


@register
class RandomUniformOp(RandomOp):
    """Stateless uniform random numbers in [minval, maxval) for a [2] seed.

    Example:
      %r = "ember.random_uniform"(%seed) {dtype = f32, maxval = 1.0 : f64, minval = 0.0 : f64, shape = array<i64: 2, 3>} : (tensor<2xi64>) -> tensor<2x3xf32>
    """

    name = "ember.random_uniform"
    attrs = _RANDOM_ATTRS | {"minval": Attr("f64", 0.0), "maxval": Attr("f64", 1.0)}

    @staticmethod
    def reference(seed, *, shape, dtype, minval, maxval):
        n = int(np.prod(shape))
        u = _unit(random_bits(seed, n)).reshape(shape)
        return (minval + u * (maxval - minval)).astype(dtype.np_dtype)


@register
class RandomNormalOp(RandomOp):
    """Stateless normal random numbers (Box-Muller over the counter stream) for a [2] seed.

    Example:
      %r = "ember.random_normal"(%seed) {dtype = f32, mean = 0.0 : f64, shape = array<i64: 4>, stddev = 1.0 : f64} : (tensor<2xi64>) -> tensor<4xf32>
    """

    name = "ember.random_normal"
    attrs = _RANDOM_ATTRS | {"mean": Attr("f64", 0.0), "stddev": Attr("f64", 1.0)}

    @staticmethod
    def reference(seed, *, shape, dtype, mean, stddev):
        n = int(np.prod(shape))
        bits = random_bits(seed, 2 * n)
        u1 = 1.0 - _unit(bits[0::2])  # (0, 1]: log stays finite
        u2 = _unit(bits[1::2])
        z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
        return (mean + stddev * z).reshape(shape).astype(dtype.np_dtype)


class DynamicRandomOp(Op):
    """A random op whose shape is a 1-D integer operand: `static` with the shape it holds."""

    operands = ("seed", "shape")
    traits = frozenset({Trait.PURE, Trait.RANDOM})
    family = "random"
    uses_values = True
    static: type[RandomOp]

    @classmethod
    def infer(cls, seed: TensorType, shape: TensorType, *, values, **attrs):
        dims = shape_operand(cls, shape, values[1], "shape")
        if dims is None:  # a shape of unknown length: an unranked result
            return TensorType(attrs["dtype"], None)
        dims = static_or_none(dims)
        try:  # checks the seed and dtype as the static form does
            cls.static.infer(seed, shape=tuple(d or 0 for d in dims), **attrs)
        except OpError as error:
            raise type(error)(cls.name, error.detail) from None
        return TensorType(attrs["dtype"], dims)

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        """Total when a constant gives the shape (inference checked it)."""
        return values[1] is not None and not isinstance(values[1], tuple) \
            and all_static(operand_types)


@register
class DynamicRandomUniformOp(DynamicRandomOp):
    """`ember.random_uniform` whose shape is a 1-D integer operand (tf.random.stateless_uniform
    of a tensor shape): the same numbers for the same seed and shape.

    Example:
      %r = "ember.dynamic_random_uniform"(%seed, %s) {dtype = f32, maxval = 1.0 : f64, minval = 0.0 : f64} : (tensor<2xi64>, tensor<2xi32>) -> tensor<?x?xf32>
    """

    name = "ember.dynamic_random_uniform"
    attrs = {k: v for k, v in RandomUniformOp.attrs.items() if k != "shape"}
    static = RandomUniformOp

    @staticmethod
    def reference(seed, shape, **attrs):
        return RandomUniformOp.reference(seed, shape=tuple(int(d) for d in shape), **attrs)


@register
class DynamicRandomNormalOp(DynamicRandomOp):
    """`ember.random_normal` whose shape is a 1-D integer operand (tf.random.stateless_normal
    of a tensor shape): the same numbers for the same seed and shape.

    Example:
      %r = "ember.dynamic_random_normal"(%seed, %s) {dtype = f32, mean = 0.0 : f64, stddev = 1.0 : f64} : (tensor<2xi64>, tensor<1xi32>) -> tensor<?xf32>
    """

    name = "ember.dynamic_random_normal"
    attrs = {k: v for k, v in RandomNormalOp.attrs.items() if k != "shape"}
    static = RandomNormalOp

    @staticmethod
    def reference(seed, shape, **attrs):
        return RandomNormalOp.reference(seed, shape=tuple(int(d) for d in shape), **attrs)
