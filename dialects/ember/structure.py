"""Structural ops: matmul, transpose, reshape, broadcast_to, expand_dims, squeeze, concat,
strided_slice, gather, one_hot, pad.

Concatenation is upstream `tensor.concat` (its operands may differ in type, which IRDL cannot
declare); its spec lives here so inference, the reference kernel and lowering are found the
same way as for ember ops. `stack` is expand_dims + concat in the frontend. Upstream
equivalents: `linalg.matmul`/`batch_matmul`, `linalg.transpose`, `tensor.reshape`,
`tensor.extract_slice`, `tensor.pad`.
"""

from __future__ import annotations

import math

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpShapeError,
                                       Total, all_static, normalize_axis, register,
                                       require_dtype, require_rank, same_dtype)
from ember.dialects.ember.creation import shape_operand
from ember.dialects.ember.types import TensorType, broadcast_dims, broadcast_shapes


def _f32_if_half(fn):
    def kernel(*arrays, **attrs):
        half = arrays[0].dtype.kind == "f" and arrays[0].dtype.itemsize == 2
        if half:
            arrays = tuple(a.astype(np.float32) for a in arrays)
        out = fn(*arrays, **attrs)
        return out
    return kernel


@register
class MatmulOp(Op):
    """Batched matrix product of the last two dims; batch dims broadcast.

    Example:
      %c = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = true} : (tensor<8x4x3xf32>, tensor<5x3xf32>) -> tensor<8x4x5xf32>
    """

    name = "ember.matmul"
    operands = ("a", "b")
    attrs = {"transpose_a": Attr("bool", False), "transpose_b": Attr("bool", False)}
    family = "structure"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, a: TensorType, b: TensorType, *, transpose_a, transpose_b):
        dtype = same_dtype(cls, a, b)
        require_dtype(cls, a, dtypes.NUMERIC + dtypes.COMPLEX, "numeric or complex", "operands")
        if a.rank is None or b.rank is None:
            return TensorType(dtype, None)
        if a.rank < 2 or b.rank < 2:
            raise OpShapeError(cls.name, f"operands {a} and {b} must have rank >= 2")
        m, ka = a.shape[-2:][::-1] if transpose_a else a.shape[-2:]
        kb, n = b.shape[-2:][::-1] if transpose_b else b.shape[-2:]
        if ka is not None and kb is not None and ka != kb:
            raise OpShapeError(cls.name, f"contraction dims differ: {a} has {ka}, {b} has {kb}")
        ok, batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        if not ok:
            raise OpShapeError(cls.name, f"batch dims of {a} and {b} are not broadcast-compatible")
        return TensorType(dtype, batch + (m, n))

    @staticmethod
    @_f32_if_half
    def reference(a, b, *, transpose_a, transpose_b):
        a = np.swapaxes(a, -1, -2) if transpose_a else a
        b = np.swapaxes(b, -1, -2) if transpose_b else b
        return np.matmul(a, b)


@register
class TransposeOp(Op):
    """Permutes dims: result dim i is input dim perm[i].

    Example:
      %t = "ember.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    """

    name = "ember.transpose"
    operands = ("input",)
    attrs = {"perm": Attr("i64_array")}
    family = "structure"
    total_when = Total.RANKED

    @classmethod
    def infer(cls, x: TensorType, *, perm):
        rank = len(perm) if x.rank is None else x.rank  # unranked: perm gives the rank
        if sorted(perm) != list(range(rank)):
            raise OpAttributeError(cls.name, f"perm {list(perm)} is not a permutation of "
                                   f"0..{rank - 1} for {x}")
        return x.with_shape(tuple(None if x.shape is None else x.shape[p] for p in perm))

    @staticmethod
    def reference(x, *, perm):
        return np.transpose(x, perm)


@register
class ReshapeOp(Op):
    """Reinterprets the elements in row-major order with a new shape (one dim may be -1).

    Example:
      %r = "ember.reshape"(%x) {shape = array<i64: -1, 2>} : (tensor<2x3x2xf32>) -> tensor<6x2xf32>
    """

    name = "ember.reshape"
    operands = ("input",)
    attrs = {"shape": Attr("i64_array")}
    family = "structure"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, x: TensorType, *, shape):
        if sum(d == -1 for d in shape) > 1 or any(d < -1 for d in shape):
            raise OpAttributeError(cls.name, f"shape {list(shape)} may hold at most one -1 "
                                   "and no other negative dims")
        known = math.prod(d for d in shape if d != -1)  # Python ints: no int64 wrap-around
        total = x.num_elements
        if -1 not in shape:
            if total is not None and total != known:
                raise OpShapeError(cls.name, f"cannot reshape {x} ({total} elements) to "
                                   f"{list(shape)} ({known} elements)")
            return x.with_shape(shape)
        if total is None:
            return x.with_shape(tuple(None if d == -1 else d for d in shape))
        if known == 0 or total % known:
            raise OpShapeError(cls.name, f"cannot reshape {x} ({total} elements) to "
                               f"{list(shape)}")
        return x.with_shape(tuple(total // known if d == -1 else d for d in shape))

    @staticmethod
    def reference(x, *, shape):
        return np.reshape(x, shape)


@register
class BroadcastToOp(Op):
    """Broadcasts to `shape` with numpy rules (tf.broadcast_to).

    Example:
      %b = "ember.broadcast_to"(%x) {shape = array<i64: 4, 3>} : (tensor<3xf32>) -> tensor<4x3xf32>
    """

    name = "ember.broadcast_to"
    operands = ("input",)
    attrs = {"shape": Attr("i64_array")}
    family = "structure"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, x: TensorType, *, shape):
        if any(d < 0 for d in shape):
            raise OpAttributeError(cls.name, f"shape {list(shape)} has a negative dimension")
        if x.rank is not None:
            if x.rank > len(shape):
                raise OpShapeError(cls.name, f"cannot broadcast {x} to lower rank {list(shape)}")
            for d, t in zip(x.shape[::-1], shape[::-1]):
                ok, res = broadcast_dims(d, t)
                if not ok or (d not in (1, None) and res != t):
                    raise OpShapeError(cls.name, f"cannot broadcast {x} to {list(shape)}")
        return x.with_shape(shape)

    @staticmethod
    def reference(x, *, shape):
        return np.broadcast_to(x, shape).copy()


def _attribute_form(op: type[Op], static: type[Op], x: TensorType, shape: TensorType, known):
    """With the shape operand known in full, the attribute form's inference, errors and
    all (eager, which knows the shape, runs the attribute form), else None."""
    if known is None or isinstance(known, tuple):
        return None
    shape_operand(op, shape, None, "shape")  # its dtype and rank
    return static.infer(x, shape=tuple(int(d) for d in np.reshape(known, -1)))


def _constant_shape_total(operand_types, values) -> bool:
    """Total when a constant gives the shape and every type is static: inference checked."""
    return values[-1] is not None and not isinstance(values[-1], tuple) \
        and all_static(operand_types)


@register
class DynamicReshapeOp(Op):
    """Reshape to a shape given as a 1-D integer operand (tf.reshape of a tensor shape); one
    dim may be -1.

    A `?` dim of the input that the shape operand names (`em.shape(x)[0]`) cancels against
    itself: `reshape(x, [shape(x)[0], -1])` of a `tensor<?x4x2xf32>` is `tensor<?x8xf32>`.

    Example:
      %r = "ember.dynamic_reshape"(%x, %s) : (tensor<2x2xf32>, tensor<3xi32>) -> tensor<?x?x?xf32>
    """

    name = "ember.dynamic_reshape"
    operands = ("input", "shape")
    family = "structure"
    uses_values = True
    uses_dims = True

    @classmethod
    def infer(cls, x: TensorType, shape: TensorType, *, values):
        if (full := _attribute_form(cls, ReshapeOp, x, shape, values[1])) is not None:
            return full
        dims = shape_operand(cls, shape, values[1], "shape", inferred_dim=True)
        if dims is None:  # a shape of unknown length: an unranked result
            return x.with_shape(None)
        if all(isinstance(d, int) for d in dims):
            return ReshapeOp.infer(x, shape=dims)
        fill = None
        if x.rank is not None and -1 in dims:
            source = values[0] if isinstance(values[0], tuple) else x.shape
            inputs = [d for d in source if not isinstance(d, int)]
            outputs = [d for d in dims if not isinstance(d, int)]
            for d in list(outputs):  # the same run-time dim on both sides cancels
                if d is not None and d in inputs:
                    inputs.remove(d)
                    outputs.remove(d)
            if not inputs and not outputs:
                known_in = math.prod(d for d in source if isinstance(d, int))
                known_out = math.prod(d for d in dims if isinstance(d, int) and d != -1)
                if known_out == 0 or known_in % known_out:
                    raise OpShapeError(cls.name, f"cannot reshape {x} to a shape of "
                                       f"{known_out} known elements per row")
                fill = known_in // known_out
        return x.with_shape(tuple(fill if isinstance(d, int) and d == -1 else
                                  d if isinstance(d, int) else None for d in dims))

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        return _constant_shape_total(operand_types, values)

    @staticmethod
    def reference(x, shape):
        return np.reshape(x, tuple(int(d) for d in shape))


@register
class DynamicBroadcastToOp(Op):
    """Broadcasts to a shape given as a 1-D integer operand (tf.broadcast_to of a tensor
    shape), with numpy rules.

    Example:
      %b = "ember.dynamic_broadcast_to"(%x, %s) : (tensor<1xf32>, tensor<2xi32>) -> tensor<?x?xf32>
    """

    name = "ember.dynamic_broadcast_to"
    operands = ("input", "shape")
    family = "structure"
    uses_values = True

    @classmethod
    def infer(cls, x: TensorType, shape: TensorType, *, values):
        if (full := _attribute_form(cls, BroadcastToOp, x, shape, values[1])) is not None:
            return full
        dims = shape_operand(cls, shape, values[1], "shape")
        if dims is None:  # a shape of unknown length: an unranked result
            return x.with_shape(None)
        if all(isinstance(d, int) for d in dims):
            return BroadcastToOp.infer(x, shape=dims)
        if x.rank is None:
            return x.with_shape(dims)
        if x.rank > len(dims):
            raise OpShapeError(cls.name, f"cannot broadcast {x} to lower rank {len(dims)}")
        out = list(dims[:len(dims) - x.rank])
        for d, t in zip(x.shape, dims[len(dims) - x.rank:]):
            if t is None:  # unknown target: x's dim unless it may broadcast
                out.append(None if d in (1, None) else d)
            elif d not in (1, None, t):
                raise OpShapeError(cls.name, f"cannot broadcast {x} to a shape with {t} "
                                   f"where it has {d}")
            else:
                out.append(t)
        return x.with_shape(tuple(out))

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        return _constant_shape_total(operand_types, values)

    @staticmethod
    def reference(x, shape):
        return np.broadcast_to(x, tuple(int(d) for d in shape)).copy()


@register
class ExpandDimsOp(Op):
    """Inserts a dim of size 1 at `axis` (in [-rank-1, rank]).

    Example:
      %e = "ember.expand_dims"(%x) {axis = 0 : i64} : (tensor<3xf32>) -> tensor<1x3xf32>
    """

    name = "ember.expand_dims"
    operands = ("input",)
    attrs = {"axis": Attr("i64")}
    family = "structure"
    total_when = Total.RANKED

    @classmethod
    def infer(cls, x: TensorType, *, axis):
        if x.rank is None:  # the axis is checked when the rank is known
            return x
        axis = normalize_axis(cls, axis, x.rank + 1)
        return x.with_shape(x.shape[:axis] + (1,) + x.shape[axis:])

    @staticmethod
    def reference(x, *, axis):
        return np.expand_dims(x, axis)


@register
class SqueezeOp(Op):
    """Removes the size-1 dims listed in `axes` (all static size-1 dims when empty).

    Example:
      %s = "ember.squeeze"(%x) {axes = array<i64: 0>} : (tensor<1x3xf32>) -> tensor<3xf32>
    """

    name = "ember.squeeze"
    operands = ("input",)
    attrs = {"axes": Attr("i64_array", ())}
    family = "structure"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, x: TensorType, *, axes):
        if x.rank is None:  # the axes are checked when the rank is known
            return x
        rank = x.rank
        if not axes:
            return x.with_shape(tuple(d for d in x.shape if d != 1))
        norm = {normalize_axis(cls, a, rank) for a in axes}
        for a in norm:
            if x.shape[a] not in (1, None):
                raise OpShapeError(cls.name, f"cannot squeeze dim {a} of size {x.shape[a]} "
                                   f"in {x}")
        return x.with_shape(tuple(d for i, d in enumerate(x.shape) if i not in norm))

    @staticmethod
    def reference(x, *, axes):
        if not axes:
            return np.squeeze(x, axis=tuple(i for i, d in enumerate(x.shape) if d == 1))
        return np.squeeze(x, axis=tuple(axes))


@register
class ConcatOp(Op):
    """Upstream `tensor.concat`: joins tensors along `dim` (others must agree).

    Example:
      %c = "tensor.concat"(%a, %b) <{dim = 0 : i64}> : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    """

    name = "tensor.concat"
    operands = ("inputs",)
    variadic = True
    upstream = True
    attrs = {"dim": Attr("i64")}
    family = "structure"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, *xs: TensorType, dim):
        if not xs:
            raise OpShapeError(cls.name, "needs at least one operand")
        dtype = same_dtype(cls, *xs)
        ranks = {require_rank(cls, x) for x in xs}
        if len(ranks) != 1:
            raise OpShapeError(cls.name, "operands must have the same rank, got "
                               + ", ".join(str(x) for x in xs))
        rank = ranks.pop()
        if not 0 <= dim < rank:
            raise OpAttributeError(cls.name, f"dim {dim} is out of range for rank {rank}")
        shape = []
        for i in range(rank):
            dims = [x.shape[i] for x in xs]
            if i == dim:
                shape.append(None if None in dims else sum(dims))
                continue
            static = {d for d in dims if d is not None}
            if len(static) > 1:
                raise OpShapeError(cls.name, f"operands differ in dim {i}: "
                                   + ", ".join(str(x) for x in xs)
                                   + f"; only dim {dim}, the one joined along, may differ")
            shape.append(static.pop() if static else None)
        return TensorType(dtype, tuple(shape))

    @staticmethod
    def reference(*xs, dim):
        return np.concatenate(xs, axis=dim)
