"""`em.transform` (`import ember.transform as emt`): tf.Transform without Apache Beam.

A `preprocessing_fn(inputs) -> outputs` over a batch of features (dicts of tensors) uses
analyzers (`mean`, `var`, `min`, `max`, `quantiles`, `vocabulary`: a statistic of the whole
dataset) and mappers (`scale_to_z_score`, `scale_to_0_1`, `apply_vocabulary`,
`compute_and_apply_vocabulary`, `apply_buckets`, `bucketize`). `analyze` runs the full
pass over an em.data.Dataset in this process (compiled) and writes working_dir;
`TFTransformOutput(working_dir).transform_features_layer()` is the transform, with the
statistics as constants, for `Dataset.map`, em.function or eager use (the code is in
`ember.runtime.transform`; this module only re-exports).

Example:
  >>> import tempfile, ember as em, ember.transform as emt
  >>> def preprocessing_fn(inputs):
  ...     return {"x": emt.scale_to_0_1(inputs["x"])}
  >>> ds = em.data.Dataset.from_tensor_slices({"x": [1.0, 2.0, 3.0]})
  >>> out = emt.analyze(preprocessing_fn, ds, tempfile.mkdtemp())
  >>> out.transform_features_layer()({"x": em.constant([2.0, 3.0])})["x"].numpy()
  array([0.5, 1. ], dtype=float32)
"""

from ember.runtime.transform.analyze import analyze, analyze_and_transform
from ember.runtime.transform.analyzers import max, mean, min, quantiles, var, vocabulary
from ember.runtime.transform.context import TransformArtifactError, TransformError
from ember.runtime.transform.mappers import (apply_buckets, apply_vocabulary, bucketize,
                                             compute_and_apply_vocabulary, scale_to_0_1,
                                             scale_to_z_score)
from ember.runtime.transform.output import TFTransformOutput, TransformFeaturesLayer

__all__ = ["TFTransformOutput", "TransformArtifactError", "TransformError",
           "TransformFeaturesLayer", "analyze", "analyze_and_transform", "apply_buckets",
           "apply_vocabulary", "bucketize", "compute_and_apply_vocabulary", "max", "mean",
           "min", "quantiles", "scale_to_0_1", "scale_to_z_score", "var", "vocabulary"]
