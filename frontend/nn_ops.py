"""The neural-network op functions: `em.nn.conv2d`, `em.nn.depthwise_conv2d`, the 2-D
pools, softmax and log_softmax, with TensorFlow's spelling of strides, sizes, padding and
data formats. The ops are channels-last (NHWC); an NCHW `data_format` is served by
transposing to NHWC and back. Explicit padding lists become an `ember.pad` of the input
followed by a VALID window op. The other convolutions and pools (1-D, N-D, transposed) are
compositions of these, in `ember.frontend.nn_conv`.
"""

from __future__ import annotations

from ember.dialects.ember import nn as N
from ember.frontend.dispatch import execute
from ember.frontend.math_ops import group
from ember.frontend.tensor import convert_to_tensor

_LAST = {1: "NWC", 2: "NHWC", 3: "NDHWC"}
_FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def channels_first(data_format, spatial: int, what: str) -> bool:
    """Whether `data_format` (None: the channels-last default) puts channels first; a
    ValueError for a format that is not one of TensorFlow's for `spatial` dims."""
    if data_format is None or data_format == _LAST[spatial]:
        return False
    if data_format == _FIRST[spatial]:
        return True
    raise ValueError(f"em.nn.{what}: data_format must be {_LAST[spatial]!r} or "
                     f"{_FIRST[spatial]!r}, got {data_format!r}")


def to_last(x, first: bool):
    """NC... to N...C (identity when `first` is False)."""
    if not first:
        return x
    from ember.frontend.ops import transpose
    rank = x.shape.rank
    if rank is None:
        raise ValueError(f"a channels-first data_format needs an input of known rank, got a "
                         f"{x.dtype.name} tensor of unknown rank; give it a rank (e.g. in the "
                         "input_signature) or pass channels-last data")
    return transpose(x, [0] + list(range(2, rank)) + [1])


def to_first(x, first: bool):
    """N...C back to NC... (identity when `first` is False)."""
    if not first:
        return x
    from ember.frontend.ops import transpose
    rank = x.shape.rank
    return transpose(x, [0, rank - 1] + list(range(1, rank - 1)))


def window_arg(v, spatial: int, what: str, first: bool = False) -> list[int]:
    """ksize / strides / dilations as `spatial` positive ints: an int, a list of 1, of
    `spatial` or of `spatial + 2` (batch and channel entries must be 1, as TensorFlow's)."""
    if v is None:
        return [1] * spatial
    values = [v] if isinstance(v, int) else [int(e) for e in v]
    if len(values) == spatial + 2:
        outer = [values[0], values[1]] if first else [values[0], values[-1]]
        if outer != [1, 1]:
            raise ValueError(f"{what} {values}: the batch and channel entries must be 1")
        values = values[2:] if first else values[1:-1]
    elif len(values) == 1:
        values = values * spatial
    elif len(values) != spatial:
        raise ValueError(f"{what} must be an int or a list of 1, {spatial} or {spatial + 2} "
                         f"ints (TensorFlow's forms), got {v}")
    return values  # the ops check that they are positive


def padding_arg(padding, spatial: int, what: str, first: bool = False):
    """("SAME" | "VALID", None) or ("VALID", [[before, after] per spatial dim]) for an
    explicit list of `spatial + 2` pairs (batch and channel pairs must be [0, 0])."""
    if isinstance(padding, str):  # the ops check that it is SAME or VALID
        return padding.upper(), None
    try:
        pairs = [[int(a), int(b)] for a, b in padding]
    except (TypeError, ValueError):
        pairs = None
    if pairs is None or len(pairs) != spatial + 2:
        raise ValueError(f"em.nn.{what}: explicit padding must be {spatial + 2} [before, after] "
                         f"pairs (one per dim of the input), got {padding!r}")
    outer = [pairs[0], pairs[1]] if first else [pairs[0], pairs[-1]]
    if outer != [[0, 0], [0, 0]] or any(p < 0 for pair in pairs for p in pair):
        raise ValueError(f"em.nn.{what}: explicit padding must be non-negative and [0, 0] for "
                         f"the batch and channel dims, got {padding!r}")
    return "EXPLICIT", (pairs[2:] if first else pairs[1:-1])


def pad_spatial(x, pairs):
    """Zero padding of the spatial dims of channels-last `x` by [[before, after], ...]."""
    from ember.frontend.ops import pad
    if not any(p for pair in pairs for p in pair):
        return x
    return pad(x, [[0, 0]] + [list(p) for p in pairs] + [[0, 0]])


def conv2d(input, filters, strides=1, padding="VALID", data_format="NHWC",  # noqa: A002
           dilations=None, name=None):
    """2-D convolution (cross-correlation, as TensorFlow): input NHWC (or NCHW), filters HWIO.

    `padding` is "SAME", "VALID" or explicit [[0, 0], [top, bottom], [left, right], [0, 0]]
    (in `data_format` order). SAME pads as TensorFlow: the extra row/column goes after.
    """
    del name
    return _conv(N.Conv2DOp, "conv2d", input, filters, strides, padding, data_format,
                 dilations)


def depthwise_conv2d(input, filter, strides, padding, data_format=None,  # noqa: A002
                     dilations=None, name=None):
    """Depthwise 2-D convolution: each input channel c convolved with its own filters
    filter[:, :, c, m] (filter [height, width, in, multiplier]); output channel c * M + m.
    Input NHWC (or NCHW); `padding` "SAME", "VALID" or explicit pairs as conv2d's."""
    del name
    return _conv(N.DepthwiseConv2DOp, "depthwise_conv2d", input, filter, strides, padding,
                 data_format, dilations)


def _conv(spec, what, input, filters, strides, padding, data_format, dilations):  # noqa: A002
    """`spec` (a 2-D convolution op, NHWC) on `input` in `data_format`, explicit padding
    pairs applied first as an `ember.pad`."""
    first = channels_first(data_format, 2, what)
    mode, pairs = padding_arg(padding, 2, what, first)
    x = to_last(convert_to_tensor(input), first)
    if pairs is not None:
        x = pad_spatial(x, pairs)
    attrs = {"strides": window_arg(strides, 2, "strides", first),
             "dilations": window_arg(dilations, 2, "dilations", first),
             "padding": "VALID" if pairs is not None else mode}
    return to_first(execute(spec, group(x, filters), attrs), first)


def _pool(spec, input, ksize, strides, padding, data_format, what):  # noqa: A002
    first = channels_first(data_format, 2, what)
    mode, pairs = padding_arg(padding, 2, what, first)
    if pairs is not None:
        raise ValueError(f"em.nn.{what}: padding must be 'SAME' or 'VALID' (explicit padding "
                         "lists are for convolutions)")
    attrs = {"ksize": window_arg(ksize, 2, "ksize", first),
             "strides": window_arg(strides, 2, "strides", first), "padding": mode}
    x = to_last(convert_to_tensor(input), first)
    return to_first(execute(spec, [x], attrs), first)


def max_pool2d(input, ksize, strides, padding="VALID", data_format="NHWC",  # noqa: A002
               name=None):
    """Max pooling over NHWC (or NCHW) windows; SAME pads with the lowest value."""
    del name
    return _pool(N.MaxPool2DOp, input, ksize, strides, padding, data_format, "max_pool2d")


def avg_pool2d(input, ksize, strides, padding="VALID", data_format="NHWC",  # noqa: A002
               name=None):
    """Average pooling over NHWC (or NCHW) windows; padding is not counted (TensorFlow's)."""
    del name
    return _pool(N.AvgPool2DOp, input, ksize, strides, padding, data_format, "avg_pool2d")


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
