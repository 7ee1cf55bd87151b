"""Gradient rules of conv2d, depthwise_conv2d, max_pool2d and avg_pool2d (dialects/ember/nn.py).

The input gradients are transposed convolutions: the result's cotangent, dilated by the
strides and padded, convolved (VALID, stride 1) with the flipped window. conv2d's filter
gradient is a convolution too (of the input, batch and channels swapped, by the
cotangent), so both compile to GEMMs; depthwise_conv2d's sums, per window tap, the input
window times the cotangent. max_pool2d routes each window's cotangent to its first
maximal element (TensorFlow's MaxPoolGrad), through the element positions and a scatter;
avg_pool2d's SAME windows divide by their count of real elements, as the forward does.
All need static spatial dims (the window geometry, and so the padding, is fixed when the
op is traced); the batch may be dynamic.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import nn as N
from ember.dialects.ember.nn import window_geometry
from ember.frontend.autodiff.registry import vjp
from ember.frontend.autodiff.rule_helpers import ops


def _hw(x, what: str) -> tuple[int, int]:
    dims = x.shape.dims
    if dims is None or len(dims) != 4 or None in dims[1:3]:
        raise ValueError(f"the gradient of {what} needs the input's height and width known "
                         f"while tracing, got {x}; give them in the input_signature")
    return dims[1], dims[2]


def _window(f, what: str) -> list[int]:
    dims = f.shape.dims
    if dims is None or None in dims:
        raise ValueError(f"the gradient of {what} needs the filter's shape known while "
                         f"tracing, got {f}; give it in the input_signature")
    return list(dims)


def _geometry(hw, k, strides, dilations, padding):
    """[(out, pad before, pad after)] for height and width."""
    return [window_geometry(hw[i], k[i], strides[i], dilations[i], padding) for i in range(2)]


def _batch(x):
    n = x.shape.dims[0]
    return n if n is not None else ops().shape(x)[0]


def _padded(x, geo, value=0):
    o = ops()
    if all(b == 0 and a == 0 for _, b, a in geo):
        return x
    return o.pad(x, [[0, 0], [geo[0][1], geo[0][2]], [geo[1][1], geo[1][2]], [0, 0]],
                 constant_values=value)


def _taps(xp, k, strides, dilations, geo):
    """(i, j, window of the padded input read by tap (i, j)), each [N, out h, out w, C]."""
    (oh, _, _), (ow, _, _) = geo
    for i in range(k[0]):
        for j in range(k[1]):
            r0, c0 = i * dilations[0], j * dilations[1]
            yield i, j, xp[:, r0:r0 + (oh - 1) * strides[0] + 1:strides[0],
                           c0:c0 + (ow - 1) * strides[1] + 1:strides[1], :]


def _dilate(ct, strides):
    """ct [N, oh, ow, C] with (stride - 1) zeros between its elements in H and W."""
    o = ops()
    for axis, s in ((1, strides[0]), (2, strides[1])):
        if s == 1:
            continue
        dims = ct.shape.dims
        pads = [[0, 0]] * 5
        pads[axis + 1] = [0, s - 1]
        shape = [_batch(ct)] + list(dims[1:])
        shape[axis] = dims[axis] * s
        y = o.reshape(o.pad(o.expand_dims(ct, axis + 1), pads), shape)
        end = (dims[axis] - 1) * s + 1  # drop the zeros after the last element
        ct = y[:, :end] if axis == 1 else y[:, :, :end]
    return ct


def _transposed(ct, hw, k, strides, dilations, geo):
    """y such that a VALID, stride-1 convolution of y with the flipped window (dilated by
    `dilations`) is the gradient of the input of the strided, padded convolution."""
    pads = [[0, 0]]
    for i in range(2):
        out, before, _ = geo[i]
        lead = (k[i] - 1) * dilations[i]
        pads.append([lead - before, hw[i] + before - (out - 1) * strides[i] - 1])
    pads.append([0, 0])
    return ops().pad(_dilate(ct, strides), pads)


def _empty(geo) -> bool:
    return geo[0][0] == 0 or geo[1][0] == 0


@vjp(N.Conv2DOp)
def _conv2d(ct, x, f, *, out, strides, dilations, padding):
    from ember.frontend.dispatch import execute
    o = ops()
    hw, (kh, kw, _, _) = _hw(x, "conv2d"), _window(f, "conv2d")
    k = (kh, kw)
    geo = _geometry(hw, k, strides, dilations, padding)
    if _empty(geo):
        return o.zeros_like(x), o.zeros_like(f)
    flipped = o.transpose(f[::-1, ::-1], [0, 1, 3, 2])
    dx = execute(N.Conv2DOp, [_transposed(ct, hw, k, strides, dilations, geo), flipped],
                 {"strides": [1, 1], "dilations": list(dilations), "padding": "VALID"})
    # df[i, j, c, f] = sum over (n, oh, ow) of xp[n, oh * s + i * d, ow * s + j * d, c] *
    # ct[n, oh, ow, f]: a VALID conv2d of the padded input with batch and channels swapped
    # ([C, Hp, Wp, N]) by the cotangent as its window ([OH, OW, N, F]), strided by the
    # dilations and dilated by the strides; its first (KH, KW) outputs. Compiled it is one
    # GEMM (K = N * OH * OW); per-tap matmuls of reshaped windows were not (the fusion pass
    # splits their reduction into (n, oh, ow), which no GEMM call takes).
    dw = execute(N.Conv2DOp, [o.transpose(_padded(x, geo), [3, 1, 2, 0]),
                              o.transpose(ct, [1, 2, 0, 3])],
                 {"strides": list(dilations), "dilations": list(strides), "padding": "VALID"})
    return dx, o.transpose(dw[:, :kh, :kw, :], [1, 2, 0, 3])


@vjp(N.DepthwiseConv2DOp)
def _depthwise_conv2d(ct, x, f, *, out, strides, dilations, padding):
    from ember.frontend.dispatch import execute
    o = ops()
    hw, (kh, kw, c, m) = _hw(x, "depthwise_conv2d"), _window(f, "depthwise_conv2d")
    k = (kh, kw)
    geo = _geometry(hw, k, strides, dilations, padding)
    if _empty(geo):
        return o.zeros_like(x), o.zeros_like(f)
    flipped = o.reshape(f[::-1, ::-1], [k[0], k[1], c * m, 1])
    dy = execute(N.DepthwiseConv2DOp, [_transposed(ct, hw, k, strides, dilations, geo), flipped],
                 {"strides": [1, 1], "dilations": list(dilations), "padding": "VALID"})
    n = _batch(x)
    dx = o.reduce_sum(o.reshape(dy, [n, hw[0], hw[1], c, m]), axis=-1)
    per_channel = o.reshape(ct, [n, geo[0][0], geo[1][0], c, m])
    taps = [o.reduce_sum(o.expand_dims(win, -1) * per_channel, axis=[0, 1, 2])
            for _, _, win in _taps(_padded(x, geo), k, strides, dilations, geo)]
    return dx, o.reshape(o.stack(taps), list(f.shape.dims))


@vjp(N.MaxPool2DOp)
def _max_pool2d(ct, x, *, out, ksize, strides, padding):
    from ember.frontend.scatter_ops import scatter_nd
    o = ops()
    hw = _hw(x, "max_pool2d")
    geo = _geometry(hw, ksize, strides, (1, 1), padding)
    if _empty(geo):
        return o.zeros_like(x)
    size = o.size(x)
    # 1-based positions, 0 in the padding: slot 0 of the scatter collects what is dropped
    positions = o.reshape(o.range(1, size + 1), o.shape(x))
    wins = _taps(_padded(x, geo, -np.inf), ksize, strides, (1, 1), geo)
    places = _taps(_padded(positions, geo), ksize, strides, (1, 1), geo)
    picked = taken = None
    for (_, _, win), (_, _, place) in zip(wins, places):
        hit = o.equal(win, out)
        if picked is None:
            picked, taken = o.where(hit, place, o.zeros_like(place)), hit
            continue
        first = o.logical_and(hit, o.logical_not(taken))
        picked, taken = o.where(first, place, picked), o.logical_or(taken, hit)
    flat = scatter_nd(o.reshape(picked, [-1, 1]), o.reshape(ct, [-1]),
                      o.reshape(size + 1, [1]))
    return o.reshape(flat[1:], o.shape(x))


def _window_counts(hw, ksize, strides, geo) -> np.ndarray:
    """[1, out h, out w, 1]: how many real (unpadded) elements each SAME window holds."""
    counts = []
    for i in range(2):
        out, before, _ = geo[i]
        starts = np.arange(out) * strides[i] - before
        counts.append(np.minimum(starts + ksize[i], hw[i]) - np.maximum(starts, 0))
    return np.outer(counts[0], counts[1])[None, :, :, None]


@vjp(N.AvgPool2DOp)
def _avg_pool2d(ct, x, *, out, ksize, strides, padding):
    from ember.frontend.dispatch import execute
    o = ops()
    hw = _hw(x, "avg_pool2d")
    geo = _geometry(hw, ksize, strides, (1, 1), padding)
    if _empty(geo):
        return o.zeros_like(x)
    counts = _window_counts(hw, ksize, strides, geo)
    scaled = ct / o.cast(counts, x.dtype)
    y = _transposed(scaled, hw, ksize, strides, (1, 1), geo)
    window_sum = execute(N.AvgPool2DOp, [y], {"ksize": list(ksize), "strides": [1, 1],
                                              "padding": "VALID"})
    return window_sum * float(ksize[0] * ksize[1])
