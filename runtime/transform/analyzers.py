"""The analyzers: full-pass reductions over an input of the preprocessing_fn (tft.mean, var,
min, max, quantiles, vocabulary).

Each analyzer is a spec with four parts: `partials` (the per-batch reduction, traced into
the compiled analysis function), `accumulate` (merging a batch's partials into the running
accumulator, in numpy float64), `finalize` (the statistics, as numpy arrays) and `outputs`
(the statistics as constants of the preprocessing_fn). Mean and variance merge per-batch
(count, mean, sum of squared deviations) with Chan et al.'s pairwise update, which stays
accurate where sum and sum of squares cancel. Quantiles are exact (numpy's
`inverted_cdf`: every boundary is a value of the data; tf.Transform's sketch approximates
these), so the analysis holds that column in memory. Vocabularies are ordered as
tf.Transform orders them: by decreasing frequency, ties in reverse lexicographic order of
the token's bytes; tokens that are empty or hold a newline are left out (they cannot be a
line of the text file).
"""

from __future__ import annotations

import collections

import numpy as np

from ember.dialects.ember import dtypes
from ember.frontend import ops
from ember.frontend.tensor import Tensor, constant, convert_to_tensor
from ember.runtime.transform import context
from ember.runtime.transform.context import TransformError

__all__ = ["max", "mean", "min", "quantiles", "var", "vocabulary"]


def as_input(x, api: str, *, numeric: bool) -> Tensor:
    """`x` as a tensor, numeric or string/integer as the analyzer needs, else a
    TransformError saying what it got. (Its rank is checked where it is analyzed: the
    transform also runs on single instances, e.g. mapped before `batch`.)"""
    try:
        x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    except (TypeError, ValueError) as error:
        raise TransformError(f"{api}: x must be a tensor, got {type(x).__name__}") from error
    if numeric and (x.dtype.is_string or x.dtype.is_bool or x.dtype.is_complex):
        raise TransformError(f"{api}: x must be a numeric (integer or float) tensor, got "
                             f"dtype {x.dtype.name}; map strings to integers first "
                             "(emt.compute_and_apply_vocabulary)")
    if not numeric and not (x.dtype.is_string or x.dtype.is_integer):
        raise TransformError(f"{api}: x must be a string or integer tensor (categorical), "
                             f"got dtype {x.dtype.name}; bucketize floats first "
                             "(emt.bucketize)")
    return x


def float_dtype(dtype):
    """tf.Transform's output dtype for a mean: float64 stays, other floats and integers
    become float32."""
    return dtype if dtype in (dtypes.float64, dtypes.float32, dtypes.float16) else dtypes.float32


def _reduced_shape(x, all_dims: bool):
    if all_dims:
        return []
    if x.shape[1:].is_fully_defined():
        return list(x.shape[1:])
    return ops.shape(x)[1:]


def _placeholder(shape, dtype):
    return ops.identity(ops.zeros(shape, dtype))


class Moments:
    """Count, mean and sum of squared deviations: emt.mean, emt.var, emt.scale_to_z_score."""

    kind = "moments"

    def __init__(self, x, all_dims: bool, dtype):
        self.x, self.all_dims, self.dtype = x, all_dims, dtype

    def record(self):
        return {"kind": self.kind, "reduce_instance_dims": self.all_dims,
                "dtype": self.dtype.name}

    def partials(self):
        xf = ops.cast(self.x, self.dtype)
        axis = None if self.all_dims else 0
        n = ops.size(self.x) if self.all_dims else ops.shape(self.x)[0]
        m = ops.reduce_mean(xf, axis=axis)
        return ops.cast(n, dtypes.int64), m, ops.reduce_sum(ops.square(xf - m), axis=axis)

    @staticmethod
    def accumulate(acc, arrays):
        n, m, m2 = int(arrays[0]), arrays[1].astype(np.float64), arrays[2].astype(np.float64)
        if n == 0:
            return acc
        if acc is None:
            return n, m, m2
        na, ma, m2a = acc
        total = na + n
        delta = m - ma
        return total, ma + delta * (n / total), m2a + m2 + delta * delta * (na * n / total)

    def finalize(self, acc):
        n, m, m2 = acc if acc is not None else (0, np.zeros(()), np.zeros(()))
        np_dtype = self.dtype.np_dtype
        return {"count": np.asarray(n, np.int64), "mean": np.asarray(m, np_dtype),
                "var": np.asarray(m2 / n if n else m2, np_dtype)}

    def placeholders(self):
        shape = _reduced_shape(self.x, self.all_dims)
        return {"mean": _placeholder(shape, self.dtype), "var": _placeholder(shape, self.dtype)}

    def outputs(self, stats, ctx):
        return {k: constant(stats[k], dtype=self.dtype) for k in ("mean", "var")}


class MinMax:
    """Minimum and maximum: emt.min, emt.max, emt.scale_to_0_1."""

    kind = "min_max"

    def __init__(self, x, all_dims: bool):
        self.x, self.all_dims, self.dtype = x, all_dims, x.dtype

    def record(self):
        return {"kind": self.kind, "reduce_instance_dims": self.all_dims,
                "dtype": self.dtype.name}

    def partials(self):
        axis = None if self.all_dims else 0
        return ops.reduce_min(self.x, axis=axis), ops.reduce_max(self.x, axis=axis)

    @staticmethod
    def accumulate(acc, arrays):
        lo, hi = arrays
        if lo.size == 0:
            return acc
        return (lo, hi) if acc is None else (np.minimum(acc[0], lo), np.maximum(acc[1], hi))

    def finalize(self, acc):
        np_dtype = self.dtype.np_dtype
        if acc is None:  # no data: the identities of min and max
            info = np.finfo(np_dtype) if self.dtype.is_floating else np.iinfo(np_dtype)
            big = np.inf if self.dtype.is_floating else info.max
            small = -np.inf if self.dtype.is_floating else info.min
            acc = (np.asarray(big, np_dtype), np.asarray(small, np_dtype))
        return {"min": np.asarray(acc[0], np_dtype), "max": np.asarray(acc[1], np_dtype)}

    def placeholders(self):
        shape = _reduced_shape(self.x, self.all_dims)
        return {"min": _placeholder(shape, self.dtype), "max": _placeholder(shape, self.dtype)}

    def outputs(self, stats, ctx):
        return {k: constant(stats[k], dtype=self.dtype) for k in ("min", "max")}


class Quantiles:
    """The `num_buckets - 1` inner quantile boundaries of x: emt.quantiles, emt.bucketize."""

    kind = "quantiles"

    def __init__(self, x, num_buckets: int):
        self.x, self.num_buckets = x, num_buckets

    def record(self):
        return {"kind": self.kind, "num_buckets": self.num_buckets}

    def partials(self):
        return (ops.reshape(ops.cast(self.x, dtypes.float32), [-1]),)

    @staticmethod
    def accumulate(acc, arrays):
        return (acc or []) + [arrays[0]]

    def finalize(self, acc):
        values = np.concatenate(acc) if acc else np.zeros((0,), np.float32)
        q = np.arange(1, self.num_buckets) / self.num_buckets
        if values.size == 0:
            bounds = np.zeros(q.shape, np.float32)
        else:
            bounds = np.quantile(values, q, method="inverted_cdf")
        return {"boundaries": np.asarray(bounds, np.float32).reshape(1, -1)}

    def placeholders(self):
        return {"boundaries": _placeholder([1, self.num_buckets - 1], dtypes.float32)}

    def outputs(self, stats, ctx):
        return {"boundaries": constant(stats["boundaries"], dtype=dtypes.float32)}


class Vocabulary:
    """The unique values of x, most frequent first: emt.vocabulary."""

    kind = "vocabulary"

    def __init__(self, x, name: str, top_k, frequency_threshold):
        self.x, self.name = x, name
        self.top_k, self.frequency_threshold = top_k, frequency_threshold

    def record(self):
        return {"kind": self.kind, "name": self.name, "top_k": self.top_k,
                "frequency_threshold": self.frequency_threshold}

    def partials(self):
        return (ops.reshape(self.x, [-1]),)

    @staticmethod
    def accumulate(acc, arrays):
        acc = acc if acc is not None else collections.Counter()
        acc.update(arrays[0].tolist())
        return acc

    def finalize(self, acc):
        counts = collections.Counter()
        for token, n in (acc or {}).items():
            counts[token if isinstance(token, bytes) else str(token).encode()] += n
        entries = [(n, t) for t, n in counts.items()
                   if t and b"\n" not in t and b"\r" not in t
                   and n >= (self.frequency_threshold or 0)]
        entries.sort(reverse=True)  # frequency descending, ties: reverse lexicographic
        if self.top_k is not None:
            entries = entries[:self.top_k]
        return {"tokens": [t for _, t in entries],
                "counts": np.asarray([n for n, _ in entries], np.int64)}

    def placeholders(self):
        return {"path": _placeholder([], dtypes.string)}

    def outputs(self, stats, ctx):
        return {"path": constant(ctx.asset_path(self.name), dtype=dtypes.string)}


def _all_dims(reduce_instance_dims, api):
    if not isinstance(reduce_instance_dims, bool):
        raise TransformError(f"{api}: reduce_instance_dims must be a bool, got "
                             f"{reduce_instance_dims!r}")
    return reduce_instance_dims


def mean(x, reduce_instance_dims=True, name=None, output_dtype=None):
    """The mean of `x` over the whole dataset (tft.mean): a scalar, or per element of an
    instance with `reduce_instance_dims=False`. Integers give float32."""
    del name
    x = as_input(x, "emt.mean", numeric=True)
    dtype = dtypes.as_dtype(output_dtype) if output_dtype is not None else float_dtype(x.dtype)
    spec = Moments(x, _all_dims(reduce_instance_dims, "emt.mean"), dtype)
    return context.require("emt.mean").analyze(spec)["mean"]


def var(x, reduce_instance_dims=True, name=None, output_dtype=None):
    """The (biased, ddof=0) variance of `x` over the whole dataset (tft.var)."""
    del name
    x = as_input(x, "emt.var", numeric=True)
    dtype = dtypes.as_dtype(output_dtype) if output_dtype is not None else float_dtype(x.dtype)
    spec = Moments(x, _all_dims(reduce_instance_dims, "emt.var"), dtype)
    return context.require("emt.var").analyze(spec)["var"]


def min(x, reduce_instance_dims=True, name=None):  # noqa: A001 - tft.min
    """The minimum of `x` over the whole dataset (tft.min), in x's dtype."""
    del name
    x = as_input(x, "emt.min", numeric=True)
    spec = MinMax(x, _all_dims(reduce_instance_dims, "emt.min"))
    return context.require("emt.min").analyze(spec)["min"]


def max(x, reduce_instance_dims=True, name=None):  # noqa: A001 - tft.max
    """The maximum of `x` over the whole dataset (tft.max), in x's dtype."""
    del name
    x = as_input(x, "emt.max", numeric=True)
    spec = MinMax(x, _all_dims(reduce_instance_dims, "emt.max"))
    return context.require("emt.max").analyze(spec)["max"]


def quantiles(x, num_buckets, name=None):
    """The `num_buckets - 1` boundaries that split `x` into equally populated buckets, as a
    float32 tensor of shape [1, num_buckets - 1] (tft.quantiles; exact here)."""
    del name
    x = as_input(x, "emt.quantiles", numeric=True)
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, (int, np.integer)) \
            or num_buckets < 1:
        raise TransformError(f"emt.quantiles: num_buckets must be an int >= 1, got "
                             f"{num_buckets!r}")
    spec = Quantiles(x, int(num_buckets))
    return context.require("emt.quantiles").analyze(spec)["boundaries"]


def vocabulary(x, *, top_k=None, frequency_threshold=None, vocab_filename=None, name=None):
    """The unique values of `x` over the whole dataset, most frequent first (tft.vocabulary).

    Written to working_dir/transform_fn/assets/<vocab_filename>, one token per line.
    Returns that file's path as a scalar string tensor, for `emt.apply_vocabulary`. The
    default name is tf.Transform's: `vocab_` and the name scope (`vocab_vocabulary`,
    `vocab_vocabulary_1`, ...; `vocab_compute_and_apply_vocabulary_vocabulary`, ...).
    """
    api = "emt.vocabulary"
    x = as_input(x, api, numeric=False)
    for what, value in (("top_k", top_k), ("frequency_threshold", frequency_threshold)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < (1 if what == "top_k" else 0)):
            raise TransformError(f"{api}: {what} must be None or an int >= "
                                 f"{1 if what == 'top_k' else 0}, got {value!r}")
    ctx = context.require(api)
    scope = ctx.scope(name or "vocabulary")  # taken even when vocab_filename is given
    if vocab_filename is None:
        filename = context.sanitized_name("vocab_" + scope)
    elif isinstance(vocab_filename, str) and context.sanitized_name(vocab_filename):
        filename = context.sanitized_name(vocab_filename)
    else:
        raise TransformError(f"{api}: vocab_filename must be a non-empty str, got "
                             f"{vocab_filename!r}")
    ctx.claim_vocabulary(filename, api)
    path = ctx.analyze(Vocabulary(x, filename, top_k, frequency_threshold))["path"]
    ctx.register_vocabulary(path, filename)
    return path

