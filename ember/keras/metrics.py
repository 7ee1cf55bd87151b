"""`em.keras.metrics`: Keras's stateful metrics — `Metric`, `Sum`, `Mean`,
`MeanMetricWrapper`, `Accuracy`, `BinaryAccuracy`, `CategoricalAccuracy`,
`SparseCategoricalAccuracy`, `MeanSquaredError`, `MeanAbsoluteError`, `Precision`, `Recall`
and `AUC` (the code is in `ember.frontend.training.metrics` and `metrics_confusion`; this
module only re-exports)."""

from ember.frontend.training.metrics import (Accuracy, BinaryAccuracy, CategoricalAccuracy,
                                             Mean, MeanAbsoluteError, MeanMetricWrapper,
                                             MeanSquaredError, Metric,
                                             SparseCategoricalAccuracy, Sum)
from ember.frontend.training.metrics_confusion import AUC, Precision, Recall

__all__ = ["AUC", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "Mean",
           "MeanAbsoluteError", "MeanMetricWrapper", "MeanSquaredError", "Metric", "Precision",
           "Recall", "SparseCategoricalAccuracy", "Sum"]
