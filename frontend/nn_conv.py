"""`em.nn` convolutions and pools that are compositions of the 2-D ops (as TensorFlow's
Python layer builds them): `conv1d`, `conv2d_transpose`, `max_pool`/`avg_pool` (1-, 2- and
3-D), `max_pool1d`/`avg_pool1d`.

- conv1d and the 1-D pools are the 2-D op on an inserted unit height (TensorFlow does the
  same), then that dim squeezed away.
- conv2d_transpose (the gradient of conv2d with respect to its input) is a VALID, stride-1
  conv2d of the input dilated by the strides (zeros inserted between elements: a pad of an
  inserted unit dim, then a reshape) and padded by (window - 1 - forward pad before) before,
  with the filter flipped in H and W and its channels swapped.
- 3-D pools are separable: a 2-D pool over (H, W) of the N*D images, then a 2-D pool over D.
  Max of maxes is the max; for averages, every (H, W) window of one output counts the same
  number of real elements, so the mean of means is the mean. Integer averages run in f64 and
  truncate once, as the 2-D op does.
Channels-first formats (NCW, NCHW, NCDHW) transpose to channels-last and back.
"""

from __future__ import annotations

import numpy as np

from ember.dialects.ember import dtypes
from ember.dialects.ember.nn import window_geometry
from ember.frontend import ops
from ember.frontend.nn_ops import (avg_pool2d, channels_first, conv2d, max_pool2d, padding_arg,
                                   to_first, to_last, window_arg)
from ember.frontend.tensor import Tensor, convert_to_tensor


def _describe(x) -> str:
    """A tensor in an error message: its shape and dtype (not its values)."""
    return f"a {x.dtype.name} tensor of shape {x.shape}"


def _rank(x, rank: int, layout: str, what: str):
    if x.shape.rank != rank:
        raise ValueError(f"em.nn.{what} needs a rank-{rank} input ({layout}), "
                         f"got {_describe(x)}")
    return x


def _positive(values: list[int], name: str, what: str) -> list[int]:
    """Checked here, before a unit dim is added: the 2-D op would name the wrong dims."""
    if any(v <= 0 for v in values):
        raise ValueError(f"em.nn.{what}: {name} must be positive, got {values}")
    return values


def _static(x, dims, what: str) -> list[int]:
    sizes = [x.shape[d] for d in dims]
    if None in sizes:
        raise ValueError(f"em.nn.{what} needs the spatial and channel dims of {_describe(x)} "
                         "known while tracing (give them static sizes in the input_signature)")
    return sizes


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None,  # noqa: A002
           name=None):
    """1-D convolution: input NWC (or NCW), filters [width, in, out]; the 2-D convolution on
    an inserted unit height, as TensorFlow computes it. `padding` is "SAME", "VALID" or
    explicit [[0, 0], [before, after], [0, 0]]."""
    del name
    first = channels_first(data_format, 1, "conv1d")
    x = _rank(to_last(convert_to_tensor(input), first), 3, "NWC", "conv1d")
    f = convert_to_tensor(filters)
    if f.shape.rank != 3:
        raise ValueError("em.nn.conv1d: filters must be rank 3 [width, in, out], "
                         f"got {_describe(f)}")
    mode, pairs = padding_arg(padding, 1, "conv1d", first)
    pad2 = mode if pairs is None else [[0, 0], [0, 0], pairs[0], [0, 0]]
    y = conv2d(ops.expand_dims(x, 1), ops.expand_dims(f, 0),
               strides=[1] + _positive(window_arg(stride, 1, "stride", first), "stride",
                                       "conv1d"), padding=pad2,
               dilations=[1] + _positive(window_arg(dilations, 1, "dilations", first),
                                         "dilations", "conv1d"))
    return to_first(ops.squeeze(y, [1]), first)


def _output_shape(output_shape, what: str) -> list:
    """The 4 entries of `output_shape`: ints, except that the batch entry may be a scalar
    tensor (`em.shape(x)[0]` for a dynamic batch; the batch comes from the input)."""
    if isinstance(output_shape, Tensor):
        if output_shape._value is None:
            raise ValueError(f"em.nn.{what}: output_shape must be known while tracing: a list "
                             "of ints (the batch entry may be a scalar tensor), got the "
                             f"symbolic {output_shape!r}")
        output_shape = output_shape.numpy().tolist()
    if not isinstance(output_shape, (list, tuple)) or len(output_shape) != 4:
        raise ValueError(f"em.nn.{what}: output_shape must have 4 entries, got {output_shape!r}")
    out = []
    for i, d in enumerate(output_shape):
        if isinstance(d, Tensor) and d._value is None and i == 0:
            out.append(None)
            continue
        try:
            out.append(int(d))
        except (TypeError, ValueError):
            raise ValueError(f"em.nn.{what}: output_shape entry {i} must be an int known while "
                             f"tracing, got {d!r}") from None
    return out


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NHWC", dilations=None, name=None):
    """The transpose (gradient) of conv2d: input NHWC (or NCHW) with `in` channels, filters
    [height, width, out, in] (TensorFlow's order), `output_shape` the 4 ints of the result,
    which conv2d with the same strides/padding/dilations maps back to the input's shape."""
    del name
    what = "conv2d_transpose"
    first = channels_first(data_format, 2, what)
    x = _rank(to_last(convert_to_tensor(input), first), 4, "NHWC", what)
    f = convert_to_tensor(filters)
    if f.shape.rank != 4 or None in f.shape.as_list():
        raise ValueError(f"em.nn.{what}: filters must be a static rank-4 [height, width, out, "
                         f"in] tensor, got {_describe(f)}")
    kh, kw, out_c, in_c = f.shape.as_list()
    out = _output_shape(output_shape, what)
    if first:
        out = [out[0], out[2], out[3], out[1]]
    h, w, c = _static(x, [1, 2, 3], what)
    if c != in_c or out[3] != out_c or None not in (x.shape[0], out[0]) and x.shape[0] != out[0]:
        raise ValueError(f"em.nn.{what}: input {_describe(x)} (channels last) must have "
                         f"{in_c} channels (the filter's last dim), and output_shape {out} "
                         f"(channels last) {out_c} channels and the input's batch size")
    strides = window_arg(strides, 2, "strides", first)
    dilations = window_arg(dilations, 2, "dilations", first)
    mode, pairs = padding_arg(padding, 2, what, first)
    _positive(strides, "strides", what)
    _positive(dilations, "dilations", what)
    if mode not in ("SAME", "VALID", "EXPLICIT"):
        raise ValueError(f"em.nn.{what}: padding must be 'SAME', 'VALID' or explicit pairs, "
                         f"got {padding!r}")
    pads = []
    for i, (size, k) in enumerate(zip((h, w), (kh, kw))):
        eff = (k - 1) * dilations[i] + 1
        if pairs is None:
            fwd, before, _ = window_geometry(out[1 + i], k, strides[i], dilations[i], mode)
        else:
            before, total = pairs[i][0], out[1 + i] + sum(pairs[i])
            fwd = (total - eff) // strides[i] + 1 if total >= eff else 0
        if fwd != size:
            raise ValueError(f"em.nn.{what}: output_shape {out} does not match the input "
                             f"{_describe(x)}: conv2d of that shape gives size {fwd}, not "
                             f"{size}, in spatial dim {i}")
        pads.append((eff - 1 - before, out[1 + i] + before - (size - 1) * strides[i] - 1))
    y = _dilated(x, strides, [h, w, c])
    # y holds the stride-dilated input plus (stride - 1) trailing zeros in each spatial dim;
    # an explicit pad larger than the window makes a pad negative: that part is cut off
    extra = [strides[i] - 1 for i in range(2)]
    y = ops.pad(y, [[0, 0]] + [[max(b, 0), max(a - e, 0)] for (b, a), e in zip(pads, extra)]
                + [[0, 0]])
    if any(b < 0 or a < e for (b, a), e in zip(pads, extra)):
        starts = [max(-b, 0) for b, _ in pads]
        lengths = [out[1 + i] + (k - 1) * dilations[i] for i, k in enumerate((kh, kw))]
        y = y[:, starts[0]:starts[0] + lengths[0], starts[1]:starts[1] + lengths[1], :]
    flipped = ops.transpose(f[::-1, ::-1], [0, 1, 3, 2])
    return to_first(conv2d(y, flipped, 1, "VALID", dilations=dilations), first)


def _batch(x, times: int = 1):
    """x's batch size (times `times`) for a reshape: an int when known while tracing, else a
    scalar tensor (not -1, which cannot be solved when another dim is 0)."""
    n = x.shape[0]
    return n * times if n is not None else ops.shape(x)[0] * times


def _dilated(x, strides, hwc):
    """x [N, H, W, C] with (stride - 1) zeros after every element of H and W."""
    h, w, c = hwc
    if strides[0] > 1:
        x = ops.pad(ops.expand_dims(x, 2), [[0, 0], [0, 0], [0, strides[0] - 1], [0, 0],
                                            [0, 0]])
        x = ops.reshape(x, [_batch(x), h * strides[0], w, c])
    if strides[1] > 1:
        x = ops.pad(ops.expand_dims(x, 3), [[0, 0], [0, 0], [0, 0], [0, strides[1] - 1],
                                            [0, 0]])
        x = ops.reshape(x, [_batch(x), h * strides[0], w * strides[1], c])
    return x


def _pool(kind: str, input, ksize, strides, padding, data_format, what):  # noqa: A002
    x = convert_to_tensor(input)
    rank = x.shape.rank
    if rank not in (3, 4, 5):
        raise ValueError(f"em.nn.{what} needs an input of rank 3, 4 or 5 (N, 1 to 3 spatial "
                         f"dims, C), got {_describe(x)}")
    spatial = rank - 2
    first = channels_first(data_format, spatial, what)
    ksize = _positive(window_arg(ksize, spatial, "ksize", first), "ksize", what)
    strides = _positive(window_arg(strides, spatial, "strides", first), "strides", what)
    pool2d = max_pool2d if kind == "max" else avg_pool2d
    x = _rank(to_last(x, first), rank, "channels last", what)
    if spatial == 1:
        y = ops.squeeze(pool2d(ops.expand_dims(x, 1), [1] + ksize, [1] + strides, padding), [1])
    elif spatial == 2:
        y = pool2d(x, ksize, strides, padding)
    else:
        y = _pool3d(pool2d, x, ksize, strides, padding, what)
    return to_first(y, first)


def _pool3d(pool2d, x, ksize, strides, padding, what):
    d, h, w, c = _static(x, [1, 2, 3, 4], what)
    dtype = x.dtype
    if pool2d is avg_pool2d and dtype.is_integer:
        x = ops.cast(x, dtypes.float64)
    planes = pool2d(ops.reshape(x, [_batch(x, d), h, w, c]), ksize[1:], strides[1:], padding)
    oh, ow = planes.shape[1], planes.shape[2]
    y = pool2d(ops.reshape(planes, [_batch(x), d, oh * ow, c]), [ksize[0], 1],
               [strides[0], 1], padding)
    y = ops.reshape(y, [_batch(x), y.shape[1], oh, ow, c])
    return ops.cast(y, dtype) if y.dtype is not dtype else y


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """Max pooling over 1-, 2- or 3-D windows (rank-3, 4 or 5 input; channels last unless
    `data_format` is NCW/NCHW/NCDHW). `ksize`/`strides`: an int or a list of 1, N or N+2."""
    del name
    return _pool("max", input, ksize, strides, padding, data_format, "max_pool")


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """Average pooling over 1-, 2- or 3-D windows, counting only real (unpadded) elements,
    as TensorFlow; arguments as max_pool."""
    del name
    return _pool("avg", input, ksize, strides, padding, data_format, "avg_pool")


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Max pooling over windows of a NWC (or NCW) input."""
    del name
    return _pool("max", _rank(convert_to_tensor(input), 3, data_format, "max_pool1d"), ksize,
                 strides, padding, data_format, "max_pool1d")


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """Average pooling over windows of a NWC (or NCW) input (padding not counted)."""
    del name
    return _pool("avg", _rank(convert_to_tensor(input), 3, data_format, "avg_pool1d"), ksize,
                 strides, padding, data_format, "avg_pool1d")
