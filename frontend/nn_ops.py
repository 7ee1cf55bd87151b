"""The neural-network op functions: `em.nn.conv2d`, the 2-D pools, softmax and log_softmax,
with TensorFlow's spelling of strides, sizes and padding.
"""

from __future__ import annotations

from ember.dialects.ember import nn as N
from ember.frontend.dispatch import execute
from ember.frontend.math_ops import group
from ember.frontend.tensor import convert_to_tensor


def _pair(v, what: str) -> list[int]:
    v = [v] if isinstance(v, int) else list(v)
    if len(v) == 1:
        return v * 2
    if len(v) == 4:  # TensorFlow's NHWC form [1, h, w, 1]
        return v[1:3]
    if len(v) != 2:
        raise ValueError(f"{what} must be an int, a pair or NHWC 4-tuple, got {v}")
    return v


def conv2d(input, filters, strides=1, padding="VALID", dilations=1, name=None):  # noqa: A002
    """2-D convolution: input NHWC, filters HWIO."""
    del name
    attrs = {"strides": _pair(strides, "strides"), "dilations": _pair(dilations, "dilations"),
             "padding": padding.upper()}
    return execute(N.Conv2DOp, group(input, filters), attrs)


def max_pool2d(input, ksize, strides, padding="VALID", name=None):  # noqa: A002
    """Max pooling over NHWC windows."""
    del name
    attrs = {"ksize": _pair(ksize, "ksize"), "strides": _pair(strides, "strides"),
             "padding": padding.upper()}
    return execute(N.MaxPool2DOp, [convert_to_tensor(input)], attrs)


def avg_pool2d(input, ksize, strides, padding="VALID", name=None):  # noqa: A002
    """Average pooling over NHWC windows (padding not counted)."""
    del name
    attrs = {"ksize": _pair(ksize, "ksize"), "strides": _pair(strides, "strides"),
             "padding": padding.upper()}
    return execute(N.AvgPool2DOp, [convert_to_tensor(input)], attrs)


def softmax(logits, axis=-1, name=None):
    """Softmax along `axis` (None means the last, as tf.nn.softmax)."""
    del name
    axis = -1 if axis is None else int(axis)
    return execute(N.SoftmaxOp, [convert_to_tensor(logits)], {"axis": axis})


def log_softmax(logits, axis=-1, name=None):
    """Log-softmax along `axis` (None means the last, as tf.nn.log_softmax)."""
    del name
    axis = -1 if axis is None else int(axis)
    return execute(N.LogSoftmaxOp, [convert_to_tensor(logits)], {"axis": axis})
