"""Indexing ops: strided_slice (Python `x[...]`), gather, one_hot, pad.

`ember.strided_slice` keeps TensorFlow's encoding (begin/end/strides plus five bit masks) so
that slices of dynamic dims (`x[1:]` on `tensor<?xf32>`) need no runtime shape values.
Upstream equivalents: `tensor.extract_slice` + `tensor.collapse_shape`, `tensor.gather`,
`tensor.pad`.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpError, OpShapeError, Total,
                                       all_static, normalize_axis, register, require_dtype,
                                       same_dtype)
from ember.dialects.ember.types import TensorType

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def slice_index(begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                shrink_axis_mask) -> tuple:
    """The numpy index (ints, slices, None, Ellipsis) that a strided_slice spec denotes."""
    items = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            items.append(Ellipsis)
        elif new_axis_mask & bit:
            items.append(None)
        elif shrink_axis_mask & bit:
            items.append(int(b))
        else:
            items.append(slice(None if begin_mask & bit else int(b),
                               None if end_mask & bit else int(e), int(s)))
    return tuple(items)


@register
class StridedSliceOp(Op):
    """TensorFlow's strided slice: `x[b0:e0:s0, ..., None, i]` encoded with bit masks.

    Bit i of begin_mask/end_mask ignores begin[i]/end[i]; ellipsis_mask marks `...`;
    new_axis_mask inserts a size-1 dim; shrink_axis_mask takes index begin[i] and drops the dim.

    Example:
      %s = "ember.strided_slice"(%x) {begin = array<i64: 1, 0>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 3, 0>, end_mask = 2 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1, 2>} : (tensor<4x6xf32>) -> tensor<2x3xf32>
    """

    name = "ember.strided_slice"
    operands = ("input",)
    attrs = {"begin": Attr("i64_array"), "end": Attr("i64_array"),
             "strides": Attr("i64_array")} | {m: Attr("i64", 0) for m in _MASKS}
    family = "indexing"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, x: TensorType, **spec):
        n = len(spec["begin"])
        if len(spec["end"]) != n or len(spec["strides"]) != n:
            raise OpAttributeError(cls.name, "begin, end and strides must have the same length")
        if any(s == 0 for s in spec["strides"]):
            raise OpAttributeError(cls.name, "strides must be non-zero")
        if bin(spec["ellipsis_mask"]).count("1") > 1:
            raise OpAttributeError(cls.name, "at most one ellipsis is allowed")
        if x.rank is None:  # as TensorFlow: the result's rank is unknown too
            return x
        rank = x.rank
        index = slice_index(**spec)
        consumed = sum(1 for it in index if it is not None and it is not Ellipsis)
        if consumed > rank:
            raise OpShapeError(cls.name, f"too many indices ({consumed}) for {x}")
        out, dim = [], 0
        for it in index:
            if it is Ellipsis:
                span = rank - consumed
                out.extend(x.shape[dim:dim + span])
                dim += span
            elif it is None:
                out.append(1)
            elif isinstance(it, int):
                size = x.shape[dim]
                if size is not None and not -size <= it < size:
                    raise OpShapeError(cls.name, f"index {it} is out of bounds for dim {dim} "
                                       f"of size {size} in {x}")
                dim += 1
            else:
                out.append(cls._slice_len(it, x.shape[dim]))
                dim += 1
        out.extend(x.shape[dim:])
        return x.with_shape(tuple(out))

    @staticmethod
    def _slice_len(s: slice, size):
        if size is not None:
            return len(range(*s.indices(size)))
        if s.start is None and s.stop is None and s.step in (1, -1):
            return None  # the whole dim, whatever its size
        return None

    @staticmethod
    def reference(x, **spec):
        return np.array(x[slice_index(**spec)])


_UNKNOWN = object()  # a bound whose value is not known at compile time


def _bounds(op: type[Op], types, values, names=("begin", "end", "strides")) -> list:
    """Bounds operands (begin, end and strides) as lists of ints and `_UNKNOWN`s (checks
    the operand types)."""
    out = []
    for name, t, known in zip(names, types, values):
        require_dtype(op, t, (dtypes.int32, dtypes.int64), "i32 or i64", name)
        if t.rank != 1 or t.shape[0] is None:
            raise OpShapeError(op.name, f"{name} of type {t} must be a 1-D tensor of static "
                               "size")
        if t.shape[0] != types[0].shape[0]:
            raise OpShapeError(op.name, f"{', '.join(names[:-1])} and {names[-1]} must have the same "
                               f"length, "
                               f"got {', '.join(str(x) for x in types)}")
        if known is None:
            out.append([_UNKNOWN] * t.shape[0])
        else:
            flat = known if isinstance(known, tuple) else np.asarray(known).reshape(-1).tolist()
            out.append([_UNKNOWN if v is None else int(v) for v in flat])
    return out


@register
class DynamicStridedSliceOp(Op):
    """strided_slice whose begin, end and strides are 1-D integer operands (x[i], x[i:i + 2],
    tf.strided_slice and tf.slice with tensor bounds).

    The masks mean what they mean for `ember.strided_slice`. Slice bounds clamp as Python's
    do; an index (shrink_axis_mask) outside [-size, size) is an error. A result dim whose
    length depends on a bound not known at compile time is `?`; an index drops its dim.

    Example:
      %s = "ember.dynamic_strided_slice"(%x, %b, %e, %st) {begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64} : (tensor<4x6xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<6xf32>
    """

    name = "ember.dynamic_strided_slice"
    operands = ("input", "begin", "end", "strides")
    attrs = {m: Attr("i64", 0) for m in _MASKS}
    family = "indexing"
    uses_values = True

    @classmethod
    def infer(cls, x: TensorType, begin, end, strides, *, values, **masks):
        b, e, s = _bounds(cls, (begin, end, strides), values[1:])
        if all(v is not _UNKNOWN for v in b + e + s):
            try:
                return StridedSliceOp.infer(x, begin=b, end=e, strides=s, **masks)
            except OpError as error:  # the same check, named after this op
                raise type(error)(cls.name, error.detail) from None
        if any(v == 0 for v in s if v is not _UNKNOWN):
            raise OpAttributeError(cls.name, "strides must be non-zero")
        if bin(masks["ellipsis_mask"]).count("1") > 1:
            raise OpAttributeError(cls.name, "at most one ellipsis is allowed")
        if x.rank is None:  # as ember.strided_slice: what it takes is known when it runs
            return x.with_shape(None)
        rank = x.rank
        index = slice_index([0] * len(b), [0] * len(b), [1] * len(b), **masks)
        consumed = sum(1 for it in index if it is not None and it is not Ellipsis)
        if consumed > rank:
            raise OpShapeError(cls.name, f"too many indices ({consumed}) for {x}")
        out, dim = [], 0
        for k, it in enumerate(index):
            if it is Ellipsis:
                out.extend(x.shape[dim:dim + rank - consumed])
                dim += rank - consumed
            elif it is None:
                out.append(1)
            else:
                if not isinstance(it, int):
                    out.append(cls._length(it, b[k], e[k], s[k], x.shape[dim]))
                dim += 1
        out.extend(x.shape[dim:])
        return x.with_shape(tuple(out))

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        """Total when constants give every bound (inference checked them), or when there is
        no index and the strides are constants (inference checked them; slices clamp)."""
        def known(v) -> bool:
            return v is not None and not isinstance(v, tuple)
        if operand_types[0].rank is None:
            return False
        if all(known(v) for v in values[1:]):
            return True
        return attrs["shrink_axis_mask"] == 0 and known(values[3])

    @staticmethod
    def _length(it: slice, b, e, s, size):
        """The slice's length when its size and every bound it reads are known."""
        parts = (None if it.start is None else b, None if it.stop is None else e, s)
        if size is None or any(p is _UNKNOWN for p in parts):
            return None
        return len(range(*slice(*parts).indices(size)))

    @staticmethod
    def reference(x, begin, end, strides, **masks):
        index = slice_index(begin.tolist(), end.tolist(), strides.tolist(), **masks)
        return np.array(x[index])


@register
class SliceOp(Op):
    """`size[i]` elements of dim i from `begin[i]` on (tf.slice); a size of -1 takes the
    rest of the dim. Unlike a strided slice nothing clamps: as TensorFlow's Slice kernel,
    `begin[i]` must lie in [0, n] and `size[i]` in [0, n - begin[i]] (or be -1), checked at
    compile time where the values are known and at run time where not. So a known size is
    a static result dim even when `begin` is only known at run time.

    Example:
      %s = "ember.slice"(%x, %b, %n) : (tensor<4x6xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<2x6xf32>
    """

    name = "ember.slice"
    operands = ("input", "begin", "size")
    family = "indexing"
    uses_values = True

    @classmethod
    def infer(cls, x: TensorType, begin, size, *, values):
        b, n = _bounds(cls, (begin, size), values[1:], ("begin", "size"))
        if x.rank is not None and len(b) != x.rank:
            raise OpShapeError(cls.name, f"begin and size must have one element per dim of "
                               f"{x}, got {len(b)}")
        if x.rank is None:
            return x.with_shape(None)
        out = []
        for k, (start, length, dim) in enumerate(zip(b, n, x.shape)):
            if start is not _UNKNOWN and (start < 0 or dim is not None and start > dim):
                raise OpShapeError(cls.name, f"begin[{k}] = {start} is outside [0, "
                                   f"{'n' if dim is None else dim}] for dim {k} of {x}")
            room = None if dim is None or start is _UNKNOWN else dim - start
            if length is not _UNKNOWN and (length < -1 or room is not None and length > room
                                           or dim is not None and length > dim):
                noun = "element" if room == 1 else "elements"
                where = (f"dim {k} of {x} has {room} {noun} from begin[{k}] = {start} on"
                         if room is not None else f"dim {k} of {x}")
                raise OpShapeError(cls.name, f"size[{k}] = {length} is outside [0, "
                                   f"{'n' if dim is None else dim if room is None else room}]: "
                                   f"{where} (a size of -1 takes the rest)")
            out.append(None if length is _UNKNOWN else room if length == -1 else length)
        return x.with_shape(tuple(out))

    @classmethod
    def total(cls, operand_types, attrs, values) -> bool:
        """Total when constants give every bound and every dim is static (inference
        checked them)."""
        return all_static(operand_types[:1]) and all(
            v is not None and not isinstance(v, tuple) for v in values[1:])

    @staticmethod
    def reference(x, begin, size):  # infer checked the bounds against x's shape
        index = tuple(slice(b, None if n == -1 else b + n) for b, n in
                      zip(begin.tolist(), size.tolist()))
        return np.array(x[index])


@register
class GatherOp(Op):
    """Gathers slices of `params` along `axis` at `indices` (tf.gather, batch_dims=0).

    Result shape: params.shape[:axis] + indices.shape + params.shape[axis+1:]. Indices out of
    range are an error.

    Example:
      %g = "ember.gather"(%p, %i) {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
    """

    name = "ember.gather"
    operands = ("params", "indices")
    attrs = {"axis": Attr("i64", 0)}
    family = "indexing"

    @classmethod
    def infer(cls, params: TensorType, indices: TensorType, *, axis):
        require_dtype(cls, indices, (dtypes.int32, dtypes.int64), "i32 or i64", "indices")
        if params.rank is None:  # the axis is checked when the rank is known
            return params
        rank = params.rank
        if rank == 0:
            raise OpShapeError(cls.name, f"params of type {params} must have rank >= 1")
        axis = normalize_axis(cls, axis, rank)
        if indices.rank is None:
            return params.with_shape(None)
        return params.with_shape(params.shape[:axis] + indices.shape + params.shape[axis + 1:])

    @staticmethod
    def reference(params, indices, *, axis):
        axis %= params.ndim
        size = params.shape[axis]
        if indices.size and (indices.min() < 0 or indices.max() >= size):
            bad = indices[(indices < 0) | (indices >= size)].reshape(-1)[0]
            raise IndexError(f"gather index {bad} is out of range [0, {size})")
        return np.take(params, indices, axis=axis)


@register
class OneHotOp(Op):
    """One-hot encoding: on_value where index == position along the new `axis`, else off_value.

    Indices outside [0, depth) give a row of off_value, as tf.one_hot.

    Example:
      %o = "ember.one_hot"(%i, %on, %off) {axis = -1 : i64, depth = 3 : i64} : (tensor<4xi32>, tensor<f32>, tensor<f32>) -> tensor<4x3xf32>
    """

    name = "ember.one_hot"
    operands = ("indices", "on_value", "off_value")
    attrs = {"depth": Attr("i64"), "axis": Attr("i64", -1)}
    family = "indexing"
    total_when = Total.RANKED

    @classmethod
    def infer(cls, indices, on, off, *, depth, axis):
        require_dtype(cls, indices, (dtypes.int8, dtypes.uint8, dtypes.int32, dtypes.int64),
                      "i8, ui8, i32 or i64", "indices")  # tf.one_hot's index types
        dtype = same_dtype(cls, on, off)
        if on.rank not in (0, None) or off.rank not in (0, None):  # unranked: checked later
            raise OpShapeError(cls.name, f"on_value {on} and off_value {off} must be scalars")
        if depth < 0:
            raise OpAttributeError(cls.name, f"depth must be >= 0, got {depth}")
        if indices.rank is None:  # the axis is checked when the rank is known
            return TensorType(dtype, None)
        axis = normalize_axis(cls, axis, indices.rank + 1)
        return TensorType(dtype, indices.shape[:axis] + (depth,) + indices.shape[axis:])

    @staticmethod
    def reference(indices, on, off, *, depth, axis):
        axis %= indices.ndim + 1
        hot = np.expand_dims(indices, axis) == np.arange(depth).reshape(
            (-1,) + (1,) * (indices.ndim - axis))
        return np.where(hot, on, off)


_PAD_MODES = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}


@register
class PadOp(Op):
    """Pads each dim with paddings[2i] before and paddings[2i+1] after (tf.pad).

    `mode` is CONSTANT (with `constant_value`), REFLECT or SYMMETRIC.

    Example:
      %p = "ember.pad"(%x, %v) {mode = "CONSTANT", paddings = array<i64: 1, 1, 0, 2>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x5xf32>
    """

    name = "ember.pad"
    operands = ("input", "constant_value")
    attrs = {"paddings": Attr("i64_array"), "mode": Attr("str", "CONSTANT")}
    family = "indexing"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, x: TensorType, value: TensorType, *, paddings, mode):
        same_dtype(cls, x, value)
        if value.rank not in (0, None):  # unranked: checked when the op runs
            raise OpShapeError(cls.name, f"constant_value {value} must be a scalar")
        if mode not in _PAD_MODES:
            raise OpAttributeError(cls.name, f"mode must be one of {sorted(_PAD_MODES)}, "
                                   f"got {mode!r}")
        if x.rank is None:  # the paddings give the rank, checked when the op runs
            x = x.with_shape((None,) * (len(paddings) // 2))
        rank = x.rank
        if len(paddings) != 2 * rank or any(p < 0 for p in paddings):
            raise OpAttributeError(cls.name, f"paddings must be {2 * rank} non-negative ints "
                                   f"(before, after per dim) for {x}, got {list(paddings)}")
        shape = []
        for i, d in enumerate(x.shape):
            lo, hi = paddings[2 * i], paddings[2 * i + 1]
            limit = None if d is None else (d - 1 if mode == "REFLECT" else d)
            if limit is not None and mode != "CONSTANT" and max(lo, hi) > limit:
                raise OpShapeError(cls.name, f"{mode} padding {lo},{hi} of dim {i} exceeds "
                                   f"{limit} for {x}")
            shape.append(None if d is None else d + lo + hi)
        return x.with_shape(tuple(shape))

    @staticmethod
    def reference(x, value, *, paddings, mode):
        if x.ndim == 0:
            return x.copy()  # nothing to pad (np.pad rejects 0-d arrays)
        pads = [(paddings[2 * i], paddings[2 * i + 1]) for i in range(x.ndim)]
        if mode == "CONSTANT":
            return np.pad(x, pads, mode="constant", constant_values=value)
        return np.pad(x, pads, mode=_PAD_MODES[mode])
