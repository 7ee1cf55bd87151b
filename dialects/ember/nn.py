"""Neural-network ops: conv2d, depthwise_conv2d, max_pool2d, avg_pool2d (NHWC), softmax,
log_softmax.

Windows follow TensorFlow: `VALID` keeps only full windows; `SAME` gives ceil(size / stride)
outputs, padding the total shortfall with the smaller half before. avg_pool2d divides by the
number of real (unpadded) elements in each window. Upstream equivalents:
`linalg.conv_2d_nhwc_hwcf`, `linalg.depthwise_conv_2d_nhwc_hwcm`, `linalg.pooling_nhwc_max`/
`_sum`, `linalg.softmax`.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.base import (Attr, Op, OpAttributeError, OpShapeError, Total,
                                       normalize_axis, register, require_dtype, same_dtype)
from ember.dialects.ember.elementwise import maximum
from ember.dialects.ember.types import TensorType


def window_geometry(size, k: int, stride: int, dilation: int, padding: str):
    """Returns (output size, pad before, pad after) for one spatial dim (None if dynamic).

    VALID's size is TensorFlow's `(size - window + stride) / stride` in C++'s division
    (toward zero): a window up to a stride longer than the input gives an empty output, a
    longer one is a ValueError with TensorFlow's message (kernel_shape_util.cc)."""
    eff = (k - 1) * dilation + 1
    if size is None:
        return None, None, None
    if padding == "VALID":
        top = size - eff + stride
        out = top // stride if top >= 0 else -(-top // stride)
        if out < 0:
            raise ValueError(f"Computed output size would be negative: {out} [input_size: "
                             f"{size}, effective_filter_size: {eff}, stride: {stride}]: the "
                             f"window is larger than the input; use padding=\"SAME\" or a "
                             f"smaller window")
        return out, 0, 0
    out = -(-size // stride)
    total = max((out - 1) * stride + eff - size, 0)
    return out, total // 2, total - total // 2


_MAX_WINDOW = 2**31 - 1  # TensorFlow's window attributes are int32; padding stays in int64


def _check_window(op, name: str, values):
    if len(values) != 2 or any(v <= 0 or v > _MAX_WINDOW for v in values):
        raise OpAttributeError(op.name, f"{name} must be two positive ints (height, width) "
                               f"below 2**31, got {list(values)}")


def _check_padding(op, padding):
    if padding not in ("SAME", "VALID"):
        raise OpAttributeError(op.name, f"padding must be \"SAME\" or \"VALID\", got {padding!r}")


def _nhwc(op, x: TensorType) -> tuple:
    """The dims of an NHWC input; unknown rank: four unknown dims (checked when it runs)."""
    if x.rank is None:
        return (None,) * 4
    if x.rank != 4:
        raise OpShapeError(op.name, f"input {x} must be rank 4 (NHWC)")
    return x.shape


def _spatial_out(op, x: TensorType, ksize, strides, dilations, padding, channels):
    n, h, w, _ = _nhwc(op, x)
    try:
        oh = window_geometry(h, ksize[0], strides[0], dilations[0], padding)[0]
        ow = window_geometry(w, ksize[1], strides[1], dilations[1], padding)[0]
    except ValueError as e:
        raise OpShapeError(op.name, f"input of shape {tuple(x.shape)}: {e}") from None
    return (n, oh, ow, channels)


def _is_float(x) -> bool:
    """Whether an array holds floats (bfloat16's numpy kind is "V", not "f")."""
    return dtypes.as_dtype(x.dtype).is_floating


def _windows(x, ksize, strides, dilations, padding, fill):
    """Yields (kh, kw, window) views of the padded input, each of output spatial size."""
    _, h, w, _ = x.shape
    oh, th, bh = window_geometry(h, ksize[0], strides[0], dilations[0], padding)
    ow, tw, bw = window_geometry(w, ksize[1], strides[1], dilations[1], padding)
    xp = np.pad(x, [(0, 0), (th, bh), (tw, bw), (0, 0)], constant_values=fill)
    for i in range(ksize[0]):
        for j in range(ksize[1]):
            r0, c0 = i * dilations[0], j * dilations[1]
            yield i, j, xp[:, r0:r0 + (oh - 1) * strides[0] + 1:strides[0],
                           c0:c0 + (ow - 1) * strides[1] + 1:strides[1], :][:, :oh, :ow]


_CONV_ATTRS = {"strides": Attr("i64_array", (1, 1)), "dilations": Attr("i64_array", (1, 1)),
               "padding": Attr("str", "VALID")}


def _check_conv(cls, x: TensorType, f: TensorType, strides, dilations, padding):
    """The checks every convolution makes of its operands and window; their dtype."""
    dtype = same_dtype(cls, x, f)
    require_dtype(cls, x, dtypes.FLOATS, "floating-point", "operands")
    _check_window(cls, "strides", strides)
    _check_window(cls, "dilations", dilations)
    _check_padding(cls, padding)
    return dtype


@register
class Conv2DOp(Op):
    """2-D convolution, input NHWC, filter HWIO (height, width, in, out channels).

    Example:
      %y = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x5x5x8xf32>
    """

    name = "ember.conv2d"
    operands = ("input", "filter")
    attrs = _CONV_ATTRS
    family = "nn"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, x: TensorType, f: TensorType, *, strides, dilations, padding):
        dtype = _check_conv(cls, x, f, strides, dilations, padding)
        if f.rank is None:  # the window is known when the op runs
            return TensorType(dtype, (_nhwc(cls, x)[0], None, None, None))
        if f.rank != 4 or None in f.shape[:2]:
            raise OpShapeError(cls.name, f"filter {f} must be rank 4 (HWIO) with static H, W")
        if x.rank == 4 and None not in (x.shape[3], f.shape[2]) and x.shape[3] != f.shape[2]:
            raise OpShapeError(cls.name, f"input channels of {x} ({x.shape[3]}) differ from "
                               f"filter input channels of {f} ({f.shape[2]})")
        shape = _spatial_out(cls, x, f.shape[:2], strides, dilations, padding, f.shape[3])
        return TensorType(dtype, shape)

    @staticmethod
    def reference(x, f, *, strides, dilations, padding):
        compute = np.float32 if x.dtype.itemsize == 2 else x.dtype
        x, f = x.astype(compute), f.astype(compute)
        out = None
        for i, j, win in _windows(x, f.shape[:2], strides, dilations, padding, 0):
            term = np.tensordot(win, f[i, j], axes=([3], [0]))
            out = term if out is None else out + term
        return out


@register
class DepthwiseConv2DOp(Op):
    """Depthwise 2-D convolution (tf.nn.depthwise_conv2d): input NHWC, filter HWCM (height,
    width, in channels, channel multiplier); output channel c * M + m is input channel c
    convolved with filter[:, :, c, m].

    Example:
      %y = "ember.depthwise_conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x5x5x6xf32>
    """

    name = "ember.depthwise_conv2d"
    operands = ("input", "filter")
    attrs = _CONV_ATTRS
    family = "nn"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, x: TensorType, f: TensorType, *, strides, dilations, padding):
        dtype = _check_conv(cls, x, f, strides, dilations, padding)
        if f.rank is None:  # the window is known when the op runs
            return TensorType(dtype, (_nhwc(cls, x)[0], None, None, None))
        if f.rank != 4 or None in f.shape[:2] or 0 in f.shape[:2]:
            raise OpShapeError(cls.name, f"filter {f} must be rank 4 (HWCM) with static, "
                               "non-zero H, W")
        channels = _nhwc(cls, x)[3]
        if None not in (channels, f.shape[2]) and channels != f.shape[2]:
            raise OpShapeError(cls.name, f"input channels of {x} ({channels}) differ from "
                               f"filter channels of {f} ({f.shape[2]})")
        channels = channels if channels is not None else f.shape[2]
        out = None if None in (channels, f.shape[3]) else channels * f.shape[3]
        return TensorType(dtype, _spatial_out(cls, x, f.shape[:2], strides, dilations, padding,
                                              out))

    @staticmethod
    def reference(x, f, *, strides, dilations, padding):
        compute = np.float32 if x.dtype.itemsize == 2 else x.dtype
        x, f = x.astype(compute), f.astype(compute)
        n, _, _, c = x.shape
        out = None
        for i, j, win in _windows(x, f.shape[:2], strides, dilations, padding, 0):
            term = win[..., :, None] * f[i, j]
            out = term if out is None else out + term
        return out.reshape(out.shape[:3] + (c * f.shape[3],))


class PoolOp(Op):
    operands = ("input",)
    attrs = {"ksize": Attr("i64_array"), "strides": Attr("i64_array"),
             "padding": Attr("str", "VALID")}
    family = "nn"
    total_when = Total.STATIC

    @classmethod
    def infer(cls, x: TensorType, *, ksize, strides, padding):
        require_dtype(cls, x, dtypes.NUMERIC, "numeric")
        _check_window(cls, "ksize", ksize)
        _check_window(cls, "strides", strides)
        _check_padding(cls, padding)
        channels = x.shape[3] if x.rank == 4 else None
        return x.with_shape(_spatial_out(cls, x, ksize, strides, (1, 1), padding, channels))


@register
class MaxPool2DOp(PoolOp):
    """Max over ksize windows of an NHWC tensor (IEEE maximum, as `ember.maximum`).

    Example:
      %y = "ember.max_pool2d"(%x) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
    """

    name = "ember.max_pool2d"

    @staticmethod
    def reference(x, *, ksize, strides, padding):
        lowest = -np.inf if _is_float(x) else np.iinfo(x.dtype).min
        out = None
        for _, _, win in _windows(x, ksize, strides, (1, 1), padding, lowest):
            out = win.copy() if out is None else maximum(out, win)
        return out


@register
class AvgPool2DOp(PoolOp):
    """Mean over ksize windows of an NHWC tensor, counting only real (unpadded) elements.

    Example:
      %y = "ember.avg_pool2d"(%x) {ksize = array<i64: 3, 3>, padding = "SAME", strides = array<i64: 1, 1>} : (tensor<1x4x4x3xf32>) -> tensor<1x4x4x3xf32>
    """

    name = "ember.avg_pool2d"

    @staticmethod
    def reference(x, *, ksize, strides, padding):
        compute = np.promote_types(x.dtype, np.float32) if _is_float(x) else np.float64
        xs = x.astype(compute)
        ones = np.ones(x.shape[:3] + (1,), dtype=compute)
        total = count = None
        for (_, _, win), (_, _, cnt) in zip(_windows(xs, ksize, strides, (1, 1), padding, 0),
                                            _windows(ones, ksize, strides, (1, 1), padding, 0)):
            total = win.copy() if total is None else total + win
            count = cnt.copy() if count is None else count + cnt
        out = total / count
        return out if _is_float(x) else np.trunc(out)


class SoftmaxBase(Op):
    operands = ("input",)
    attrs = {"axis": Attr("i64", -1)}
    family = "nn"
    total_when = Total.RANKED

    @classmethod
    def infer(cls, x: TensorType, *, axis):
        require_dtype(cls, x, dtypes.FLOATS, "floating-point")
        if x.rank is not None:
            if x.rank == 0:
                raise OpShapeError(cls.name, f"operand {x} must have rank >= 1")
            normalize_axis(cls, axis, x.rank)
        return x


def _shifted(x, axis):
    compute = np.float32 if x.dtype.itemsize == 2 else x.dtype
    x = x.astype(compute)
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    return x - np.where(np.isfinite(m), m, 0)


@register
class SoftmaxOp(SoftmaxBase):
    """exp(x) / sum(exp(x)) along `axis`, computed stably.

    Example:
      %y = "ember.softmax"(%x) {axis = -1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
    """

    name = "ember.softmax"

    @staticmethod
    def reference(x, *, axis):
        e = np.exp(_shifted(x, axis))
        return e / np.sum(e, axis=axis, keepdims=True)


@register
class LogSoftmaxOp(SoftmaxBase):
    """x - log(sum(exp(x))) along `axis`, computed stably.

    Example:
      %y = "ember.log_softmax"(%x) {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
    """

    name = "ember.log_softmax"

    @staticmethod
    def reference(x, *, axis):
        s = _shifted(x, axis)
        return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))
