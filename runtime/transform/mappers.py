"""The mappers: instance-level functions of an analyzer's result (tft.scale_to_z_score,
scale_to_0_1, apply_vocabulary, compute_and_apply_vocabulary, apply_buckets, bucketize).

Numeric mappers are em ops (compiled with the rest of the function). A vocabulary lookup
is a host dictionary called through `em.py_function`, as tf.Transform's is a hash-table
resource: string tensors live on the host anyway, and a dict lookup is O(1) per token
whatever the vocabulary's size. Out-of-vocabulary tokens map to `default_value`, or with
`num_oov_buckets` to `vocab_size + hash(token) % num_oov_buckets`, where the hash is the
first 8 bytes of BLAKE2b (stable across processes; tf.Transform uses FarmHash, so the
bucket of a given OOV token differs from TensorFlow's).
"""

from __future__ import annotations

import hashlib
import os
import threading

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.effects import py_function
from ember.frontend.ensure_shape import ensure_shape
from ember.frontend.scan_ops import searchsorted
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.frontend.tracing import SymbolicTensor
from ember.runtime.transform import analyzers, context
from ember.runtime.transform.context import TransformError

__all__ = ["apply_buckets", "apply_vocabulary", "bucketize", "compute_and_apply_vocabulary",
           "scale_to_0_1", "scale_to_z_score"]


def scale_to_z_score(x, elementwise=False, name=None, output_dtype=None):
    """`(x - mean(x)) / std(x)` with the dataset's mean and biased variance
    (tft.scale_to_z_score); `x - mean(x)` where the standard deviation is 0. Integers give
    float32."""
    del name
    x = analyzers.as_input(x, "emt.scale_to_z_score", numeric=True)
    dtype = dtypes.as_dtype(output_dtype) if output_dtype is not None else \
        analyzers.float_dtype(x.dtype)
    spec = analyzers.Moments(x, not _flag(elementwise, "emt.scale_to_z_score"), dtype)
    stats = context.require("emt.scale_to_z_score").analyze(spec)
    numerator = ops.cast(x, dtype) - stats["mean"]
    std = ops.sqrt(stats["var"])
    positive = ops.not_equal(std, 0)  # where broadcasts it over the batch
    return ops.where(positive, numerator / ops.where(positive, std, ops.ones_like(std)),
                     numerator)


def scale_to_0_1(x, elementwise=False, name=None):
    """`(x - min(x)) / (max(x) - min(x))` over the dataset (tft.scale_to_0_1), float32;
    where min == max (one distinct value, or no data) `sigmoid(x)`, as tf.Transform."""
    del name
    x = analyzers.as_input(x, "emt.scale_to_0_1", numeric=True)
    xf = ops.cast(x, dtypes.float32)
    spec = analyzers.MinMax(xf, not _flag(elementwise, "emt.scale_to_0_1"))
    stats = context.require("emt.scale_to_0_1").analyze(spec)
    lo, hi = stats["min"], stats["max"]
    spread = ops.greater(hi - lo, 0)  # where broadcasts it over the batch
    denominator = ops.where(spread, hi - lo, ops.ones_like(hi))
    return ops.where(spread, (xf - lo) / denominator, ops.sigmoid(xf))


def _flag(value, api):
    if not isinstance(value, bool):
        raise TransformError(f"{api}: elementwise must be a bool, got {value!r}")
    return value


def apply_buckets(x, bucket_boundaries, name=None):
    """The bucket of each value: i where boundaries[i-1] <= x < boundaries[i], int64 in
    [0, len(boundaries)] (tft.apply_buckets). `bucket_boundaries`: sorted, of shape [n] or
    [1, n]."""
    del name
    x = analyzers.as_input(x, "emt.apply_buckets", numeric=True)
    bounds = bucket_boundaries if isinstance(bucket_boundaries, Tensor) else \
        convert_to_tensor(np.asarray(bucket_boundaries, np.float32))
    if bounds.shape.rank == 2 and bounds.shape[0] == 1:
        bounds = ops.reshape(bounds, [-1])
    if bounds.shape.rank != 1:
        raise TransformError(f"emt.apply_buckets: bucket_boundaries must have shape [n] or "
                             f"[1, n], got {bounds.shape}")
    flat = ops.reshape(ops.cast(x, dtypes.float32), [-1])
    index = searchsorted(ops.cast(bounds, dtypes.float32), flat, side="right",
                         out_type=dtypes.int64)
    return ensure_shape(ops.reshape(index, ops.shape(x)), x.shape)


def bucketize(x, num_buckets, epsilon=None, *, name=None):
    """`x` split into `num_buckets` buckets at the dataset's quantiles (tft.bucketize):
    int64 in [0, num_buckets - 1]. The quantiles are exact, so any `epsilon` (tf.Transform's
    approximation tolerance) is met."""
    ctx = context.require("emt.bucketize")
    analyzers.check_epsilon(epsilon, "emt.bucketize")
    boundaries = analyzers.quantiles(x, num_buckets, epsilon, name=name)
    result = apply_buckets(x, boundaries)
    ctx.set_domain(result, 0, int(num_buckets) - 1)
    return result


def compute_and_apply_vocabulary(x, *, default_value=-1, top_k=None, frequency_threshold=None,
                                 num_oov_buckets=0, vocab_filename=None, name=None):
    """emt.vocabulary of `x`, then emt.apply_vocabulary with it
    (tft.compute_and_apply_vocabulary): int64 indices, most frequent token 0."""
    scope = context.require("emt.compute_and_apply_vocabulary").scope(
        name or "compute_and_apply_vocabulary")
    path = analyzers.vocabulary(x, top_k=top_k, frequency_threshold=frequency_threshold,
                                vocab_filename=vocab_filename, name=f"{scope}/vocabulary")
    return apply_vocabulary(x, path, default_value=default_value,
                            num_oov_buckets=num_oov_buckets)


def apply_vocabulary(x, deferred_vocab_filename_tensor, *, default_value=-1,
                     num_oov_buckets=0, name=None):
    """The index of each token of `x` in a vocabulary (tft.apply_vocabulary): what
    emt.vocabulary returned, or the path of a text file with one token per line. int64;
    unknown tokens `default_value`, or hashed into `num_oov_buckets` after the vocabulary.
    """
    del name
    api = "emt.apply_vocabulary"
    x = analyzers.as_input(x, api, numeric=False)
    if isinstance(num_oov_buckets, bool) or not isinstance(num_oov_buckets, int) \
            or num_oov_buckets < 0:
        raise TransformError(f"{api}: num_oov_buckets must be an int >= 0, got "
                             f"{num_oov_buckets!r}")
    if isinstance(default_value, bool) or not isinstance(default_value, int):
        raise TransformError(f"{api}: default_value must be an int, got {default_value!r}")
    ctx = context.current()
    tokens = _tokens(deferred_vocab_filename_tensor, ctx, api)
    if tokens is None:  # analysis: the vocabulary is computed by a later pass
        result = ops.identity(ops.zeros(ops.shape(x), dtypes.int64))
        ctx.unknown(result)
        return result
    table = VocabularyTable(tokens, default_value, num_oov_buckets)
    looked_up = py_function(table.lookup, [x], dtypes.int64)
    result = ensure_shape(ops.reshape(looked_up, ops.shape(x)), x.shape)
    if ctx is not None:
        lo = 0 if num_oov_buckets or default_value >= 0 else default_value
        ctx.set_domain(result, lo, max(len(tokens) + num_oov_buckets - 1, default_value))
    return result


def _tokens(vocab, ctx, api):
    """The tokens of `vocab`: a path tensor from emt.vocabulary (None while it is being
    analyzed) or a file path."""
    name = ctx.vocabulary_name_of(vocab) if ctx is not None else None
    if name is not None:
        return ctx.tokens(name)
    if isinstance(vocab, Tensor):
        if vocab.dtype.is_string and vocab.shape.rank == 0 and \
                not isinstance(vocab, SymbolicTensor):
            vocab = vocab.numpy().decode()
        else:
            raise TransformError(f"{api}: deferred_vocab_filename_tensor must be what "
                                 "emt.vocabulary returned in this preprocessing_fn, or a "
                                 f"file path; got {vocab!r}")
    if not isinstance(vocab, (str, os.PathLike)):
        raise TransformError(f"{api}: deferred_vocab_filename_tensor must be what "
                             "emt.vocabulary returned, or a file path; got "
                             f"{type(vocab).__name__}")
    return read_vocabulary(os.fspath(vocab), api)


_file_cache: dict = {}
_file_lock = threading.Lock()


def read_vocabulary(path: str, api: str = "em.transform") -> list[bytes]:
    """The tokens of a vocabulary text file (one per line), read once per (path, mtime)."""
    try:
        stat = os.stat(path)
    except OSError as error:
        raise TransformError(f"{api}: cannot read the vocabulary file {path}: "
                             f"{error.strerror}") from None
    key = (path, stat.st_mtime_ns, stat.st_size)
    with _file_lock:
        if key not in _file_cache:
            with open(path, "rb") as f:
                _file_cache[key] = f.read().splitlines()
        return _file_cache[key]


class VocabularyTable:
    """token -> index, for a py_function (thread-safe: read-only after construction)."""

    def __init__(self, tokens, default_value: int, num_oov_buckets: int):
        self.index = {t: i for i, t in enumerate(tokens)}
        self.size = len(tokens)
        self.default_value, self.num_oov_buckets = default_value, num_oov_buckets

    def lookup(self, x):
        values = x._numpy_array()
        flat = values.reshape(-1).tolist()
        if values.dtype.kind != "O" and values.dtype.kind not in "SU":  # integer tokens
            flat = [str(v).encode() for v in flat]
        return np.asarray([self._one(t) for t in flat], np.int64).reshape(values.shape)

    def _one(self, token) -> int:
        i = self.index.get(token)
        if i is not None:
            return i
        if self.num_oov_buckets:
            digest = hashlib.blake2b(token, digest_size=8).digest()
            return self.size + int.from_bytes(digest, "little") % self.num_oov_buckets
        return self.default_value
