"""`emt.TFTransformOutput` (tft.TFTransformOutput): an analysis' working_dir, loaded; and its
`transform_features_layer()`, the preprocessing_fn with the statistics as constants.

The layer is a plain callable over a dict of features. Called eagerly it runs the transform
eagerly; called inside an em.function or as `Dataset.map(tft_layer)` it is traced into that
function (converted by AutoGraph like the rest), so the transform compiles with the input
pipeline. It holds no variables: created under `strategy.scope()` each replica uses the same
constants (what the distributed input guide asks of a tf.Transform layer).
"""

from __future__ import annotations

import os

from ember.dialects.ember import dtypes
from ember.frontend.autograph import convert as convert_control_flow
from ember.frontend.shape import TensorSpec
from ember.frontend.tensor import Tensor, convert_to_tensor
from ember.runtime.transform import context
from ember.runtime.transform.artifact import Artifact
from ember.runtime.transform.context import TransformArtifactError, TransformError


def check_outputs(outputs, fn_name: str) -> dict:
    """The preprocessing_fn's result: a dict of feature name -> tensor."""
    if not isinstance(outputs, dict) or not outputs:
        raise TransformError(f"preprocessing_fn {fn_name} must return a non-empty dict of "
                             f"feature name -> tensor, got {type(outputs).__name__}")
    result = {}
    for key, value in outputs.items():
        if not isinstance(key, str):
            raise TransformError(f"preprocessing_fn {fn_name} returned a key {key!r}: "
                                 "feature names must be str")
        try:
            result[key] = value if isinstance(value, Tensor) else convert_to_tensor(value)
        except (TypeError, ValueError) as error:
            raise TransformError(f"preprocessing_fn {fn_name}: feature {key!r} is not a "
                                 f"tensor ({type(value).__name__})") from error
    return result


def run_transform(fn, artifact: Artifact, features) -> tuple[dict, dict]:
    """`fn(features)` with every analyzer answered from `artifact`: (outputs, the integer
    domain (lo, hi) of each output that apply_vocabulary or bucketize produced)."""
    name = getattr(fn, "__qualname__", type(fn).__name__)
    if not isinstance(features, dict):
        raise TransformError(f"the transform of {name} takes a dict of feature name -> "
                             f"tensor (a dataset element), got {type(features).__name__}")
    ctx = context.TransformContext(artifact)
    with context.active(ctx):
        outputs = check_outputs(convert_control_flow(fn)(dict(features)), name)
    artifact.check_complete(len(ctx.records))
    domains = {k: ctx.domain_of(v) for k, v in outputs.items() if ctx.domain_of(v)}
    return outputs, domains


class TransformFeaturesLayer:
    """The transform as a callable layer: `layer(features) -> transformed features`
    (tft.TransformFeaturesLayer). Usable in Dataset.map, in em.function and eagerly."""

    def __init__(self, output: "TFTransformOutput"):
        self._output = output

    def __call__(self, features):
        return run_transform(self._output.preprocessing_fn, self._output.artifact,
                             features)[0]

    def __repr__(self):
        return f"<TransformFeaturesLayer of {self._output.working_dir}>"


class TFTransformOutput:
    """The output of emt.analyze in `working_dir` (tft.TFTransformOutput).

    Args:
      working_dir: what emt.analyze / emt.analyze_and_transform wrote.
      preprocessing_fn: the analyzed function; by default it is imported by the module and
        name recorded at analysis (pass it when it was a lambda, a nested function, or
        defined in a script that is not the running one).

    Raises:
      TransformArtifactError: naming the file of working_dir that is missing or damaged,
        or saying how the preprocessing_fn differs from the one analyzed.
    """

    def __init__(self, working_dir, preprocessing_fn=None):
        self.artifact = Artifact.load(working_dir)
        self.working_dir = self.artifact.working_dir
        fn = preprocessing_fn if preprocessing_fn is not None else \
            self.artifact.preprocessing_fn()
        if not callable(fn):
            raise TransformError(f"emt.TFTransformOutput: preprocessing_fn must be callable, "
                                 f"got {type(fn).__name__}")
        self.artifact.check_function(fn)
        self.preprocessing_fn = fn

    def transform_features_layer(self) -> TransformFeaturesLayer:
        """A layer applying the transform to a dict of raw features."""
        return TransformFeaturesLayer(self)

    def transform_raw_features(self, raw_features: dict) -> dict:
        """The transformed features of `raw_features` (a dict of tensors)."""
        return self.transform_features_layer()(raw_features)

    def _features(self, key: str) -> dict:
        features = self.artifact.schema.get("features") if key == "schema" else \
            self.artifact.manifest.get("raw_feature_spec")
        try:
            return {name: TensorSpec(f["shape"], dtypes.as_dtype(f["dtype"]), name=name)
                    for name, f in features.items()}
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise TransformArtifactError(f"{self.working_dir}: the {key} of the features is "
                                         f"damaged ({error!r}); re-run emt.analyze") from None

    def transformed_feature_spec(self) -> dict:
        """The output features: name -> em.TensorSpec of one instance (no batch dim)."""
        return self._features("schema")

    def raw_feature_spec(self) -> dict:
        """The analyzed input features: name -> em.TensorSpec of one instance."""
        return self._features("raw")

    def vocabulary_file_by_name(self, vocab_filename: str) -> str:
        """The path of the vocabulary named `vocab_filename` (one token per line)."""
        return self.artifact.vocabulary_file(vocab_filename)

    def vocabulary_by_name(self, vocab_filename: str) -> list[bytes]:
        """The tokens of that vocabulary, most frequent first, as bytes."""
        return list(self.artifact.vocabulary(vocab_filename))

    def vocabulary_size_by_name(self, vocab_filename: str) -> int:
        return len(self.artifact.vocabulary(vocab_filename))

    def num_buckets_for_transformed_feature(self, name: str) -> int:
        """How many values an integerized output takes: vocabulary size plus OOV buckets
        (apply_vocabulary), or num_buckets (bucketize)."""
        features = self.artifact.schema.get("features", {})
        if name not in features:
            raise ValueError(f"num_buckets_for_transformed_feature: no output feature "
                             f"{name!r} (the outputs: {', '.join(sorted(features))})")
        domain = features[name].get("domain")
        if domain is None:
            raise ValueError(f"num_buckets_for_transformed_feature: feature {name!r} has no "
                             "integer domain: only outputs of emt.apply_vocabulary, "
                             "emt.compute_and_apply_vocabulary or emt.bucketize have one")
        return int(domain["max"]) + 1

    @property
    def transform_fn_dir(self) -> str:
        return os.path.join(self.working_dir, "transform_fn")

    @property
    def transformed_metadata_dir(self) -> str:
        return os.path.join(self.working_dir, "transformed_metadata")

    def __repr__(self):
        return f"<TFTransformOutput {self.working_dir}>"
