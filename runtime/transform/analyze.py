"""emt.analyze: the full pass of tf.Transform's ANALYZE phase, in process, over an
em.data.Dataset (no Apache Beam).

1. Trace the preprocessing_fn over a batch of the dataset's features (`Dataset.map`'s
   tracer: AutoGraph, then compiled; on the interpreter when a feature is a string). Each
   analyzer call reports to an AnalysisContext (context.py): the ones computable now become
   the traced function's outputs, their per-batch partial reductions.
2. Run that function over every batch, merging the partials in numpy (analyzers.py).
3. Repeat while some analyzer waited for another's result (an analyzer over a value that
   depends on an analyzer: tf.Transform's phases); each pass is one more read of the data.
4. Trace the transform (all statistics known) once more for the output schema, and write
   working_dir (artifact.py).
"""

from __future__ import annotations

import itertools
import os

from ember.frontend.autograph import convert as convert_control_flow
from ember.frontend.shape import TensorSpec
from ember.runtime.data import structure
from ember.runtime.data.dataset import Dataset
from ember.runtime.data.mapping import trace_map_function
from ember.runtime.transform import context
from ember.runtime.transform.artifact import ASSETS, FORMAT, VERSION, Artifact, \
    function_reference
from ember.runtime.transform.context import TransformError
from ember.runtime.transform.output import TFTransformOutput, check_outputs, run_transform

_DEFAULT_BATCH = 1024


def analyze(preprocessing_fn, dataset, working_dir, *, batch_size=_DEFAULT_BATCH):
    """Analyzes `dataset` for `preprocessing_fn` and writes `working_dir`
    (tft_beam.AnalyzeDataset + WriteTransformFn).

    Args:
      preprocessing_fn: `fn(inputs: dict[str, Tensor]) -> dict[str, Tensor]`, over a batch
        of features, written with emt's analyzers and mappers.
      dataset: an em.data.Dataset whose elements are dicts of feature name -> tensor, one
        instance each.
      working_dir: the directory to write (created; an earlier analysis there is replaced).
      batch_size: instances per batch of the analysis; None when `dataset` is batched.

    Returns:
      The emt.TFTransformOutput of `working_dir`.

    Raises:
      TransformError: a preprocessing_fn or dataset em.transform cannot analyze, and why.
    """
    fn_name = _check_function(preprocessing_fn)
    raw_spec = _check_dataset(dataset)
    if batch_size is not None and (isinstance(batch_size, bool)
                                   or not isinstance(batch_size, int) or batch_size < 1):
        raise TransformError(f"emt.analyze: batch_size must be a positive int or None, got "
                             f"{batch_size!r}")
    if not isinstance(working_dir, (str, os.PathLike)):
        raise TransformError(f"emt.analyze: working_dir must be a path (str or os.PathLike), "
                             f"got {type(working_dir).__name__}")
    if batch_size is not None:
        _check_unbatched(raw_spec)
    working_dir = os.path.abspath(os.fspath(working_dir))
    data = dataset.batch(batch_size) if batch_size is not None else dataset
    records, known, vocabularies = _passes(preprocessing_fn, data, working_dir, fn_name)
    artifact = _artifact(working_dir, preprocessing_fn, raw_spec, records, known, vocabularies)
    artifact.schema = _schema(preprocessing_fn, artifact, data.element_spec)
    artifact.write(vocabularies)
    return TFTransformOutput(working_dir, preprocessing_fn=preprocessing_fn)


def analyze_and_transform(preprocessing_fn, dataset, working_dir, *,
                          batch_size=_DEFAULT_BATCH):
    """emt.analyze, then the transform mapped over `dataset`
    (tft_beam.AnalyzeAndTransformDataset): returns (transformed dataset, TFTransformOutput).
    """
    output = analyze(preprocessing_fn, dataset, working_dir, batch_size=batch_size)
    return dataset.map(output.transform_features_layer()), output


def _passes(fn, data, working_dir, fn_name):
    """Analysis passes until every analyzer is known: (the analyzer calls' records, their
    statistics by call index, the vocabularies' tokens by name)."""
    known, vocabularies, records = {}, {}, None
    for number in itertools.count(1):
        ctx, call = _trace_pass(fn, data.element_spec, known, vocabularies, working_dir,
                                fn_name)
        if records is not None and ctx.records != records:
            raise TransformError(f"emt.analyze: preprocessing_fn {fn_name} called other "
                                 f"analyzers in pass {number} than in pass 1; it must call "
                                 "the same ones in the same order every time")
        records = ctx.records
        if not ctx.pending:
            break
        for index, spec, stats in _run_pass(ctx, call, data):
            known[index] = stats
            if spec.kind == "vocabulary":
                vocabularies[spec.name] = stats["tokens"]
        if len(ctx.ready) == len(ctx.pending):
            break
    return records, known, vocabularies


def _check_function(fn) -> str:
    if not callable(fn):
        raise TransformError(f"emt.analyze: preprocessing_fn must be callable, got "
                             f"{type(fn).__name__}")
    return getattr(fn, "__qualname__", type(fn).__name__)


def _check_dataset(dataset) -> dict:
    if not isinstance(dataset, Dataset):
        raise TransformError(f"emt.analyze: dataset must be an em.data.Dataset, got "
                             f"{type(dataset).__name__}")
    spec = dataset.element_spec
    if not isinstance(spec, dict) or not spec or not all(
            isinstance(k, str) and isinstance(s, TensorSpec) for k, s in spec.items()):
        raise TransformError(f"emt.analyze: the dataset's elements must be dicts of feature "
                             f"name -> tensor (tf.Transform's instances), got {spec}")
    return spec


def _check_unbatched(spec: dict) -> None:
    """analyze batches the dataset itself: refuse one already batched (its features' first
    dimension unknown, as `Dataset.batch` leaves it), which re-batching cannot stack."""
    batched = sorted(name for name, s in spec.items()
                     if s.shape.rank and s.shape.as_list()[0] is None)
    if batched:
        raise TransformError(
            f"emt.analyze: the dataset looks batched (features {batched} have an unknown "
            f"first dimension: {[str(spec[n].shape) for n in batched]}); analyze batches "
            "the dataset itself, so it must hold one instance per element (drop the "
            ".batch(...)), or pass batch_size=None to analyze a batched dataset as it is")


def _trace_pass(fn, spec, known, vocabularies, working_dir, fn_name):
    """The analysis function of one pass: (its context, the compiled call)."""
    holder = {}

    def asset_path(name):
        return os.path.join(working_dir, ASSETS, name)

    def analysis(features):
        ctx = context.AnalysisContext(known, vocabularies, asset_path)  # fresh each trace
        holder["ctx"] = ctx
        with context.active(ctx):  # AutoGraph-converted, as em.function converts it
            check_outputs(convert_control_flow(fn)(dict(features)), fn_name)
        outputs = [t for _, _, partials in ctx.ready for t in partials]
        return tuple(outputs) if outputs else (structure.to_tensors(0, "emt.analyze"),)

    analysis.__name__ = getattr(fn, "__name__", "preprocessing_fn")
    call, _ = trace_map_function(analysis, spec, "emt.analyze")
    return holder["ctx"], call


def _run_pass(ctx, call, data):
    """One read of the data: each ready analyzer's (index, spec, statistics)."""
    sizes = [len(partials) for _, _, partials in ctx.ready]
    accumulators = [None] * len(sizes)
    for element in data:
        arrays = [t._numpy_array() for t in call(element)]
        start = 0
        for i, ((_, spec, _), n) in enumerate(zip(ctx.ready, sizes)):
            accumulators[i] = spec.accumulate(accumulators[i], arrays[start:start + n])
            start += n
    return [(index, spec, spec.finalize(acc))
            for (index, spec, _), acc in zip(ctx.ready, accumulators)]


def _artifact(working_dir, fn, raw_spec, records, known, vocabularies) -> Artifact:
    statistics, analyzers = {}, []
    for index, record in enumerate(records):
        stats = {k: v for k, v in known[index].items() if k != "tokens"}
        for key, value in stats.items():
            statistics[f"a{index}_{key}"] = value
        analyzers.append(dict(record, statistics=sorted(stats)))
    manifest = {
        "format": FORMAT, "version": VERSION,
        "preprocessing_fn": function_reference(fn),
        "raw_feature_spec": {k: _feature(s) for k, s in raw_spec.items()},
        "analyzers": analyzers,
        "vocabularies": {name: {"size": len(tokens)} for name, tokens in vocabularies.items()},
    }
    return Artifact(working_dir, manifest, statistics, tokens=vocabularies)


def _feature(spec: TensorSpec, drop_batch: bool = False) -> dict:
    dims = spec.shape.as_list() if spec.shape.rank is not None else None
    if drop_batch and dims:
        dims = dims[1:]
    return {"dtype": spec.dtype.name, "shape": dims}


def _schema(fn, artifact, spec) -> dict:
    """The output features of the transform over a batch, without the batch dimension."""
    holder = {}

    def transform(features):
        outputs, holder["domains"] = run_transform(fn, artifact, features)
        return outputs

    transform.__name__ = getattr(fn, "__name__", "preprocessing_fn")
    _, out = trace_map_function(transform, spec, "emt.analyze")
    features = {}
    for name, s in out.items():
        features[name] = _feature(s, drop_batch=True)
        if name in holder["domains"]:
            lo, hi = holder["domains"][name]
            features[name]["domain"] = {"min": lo, "max": hi}
    return {"format": FORMAT, "features": features}
