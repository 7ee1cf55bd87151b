"""The errors `em.data`'s file readers raise, as TensorFlow's `tf.errors` (op errors)."""

from ember.dialects.ember.base import OpError


class DataLossError(OpError):
    """A record file is damaged: a checksum does not match or a record is cut short
    (TensorFlow's `tf.errors.DataLossError`). The message names the file and the offset."""


class NotFoundError(OpError):
    """A file a dataset reads does not exist (TensorFlow's `tf.errors.NotFoundError`)."""


for _error in (DataLossError, NotFoundError):
    _error.__module__ = "ember.errors"
