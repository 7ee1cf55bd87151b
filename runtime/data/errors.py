"""The errors `em.data`'s file readers raise, as TensorFlow's `tf.errors` (op errors), and
the messages of mistakes in building a dataset."""

from ember.dialects.ember.base import OpError


class DataLossError(OpError):
    """A record file is damaged: a checksum does not match or a record is cut short
    (TensorFlow's `tf.errors.DataLossError`). The message names the file and the offset."""


class NotFoundError(OpError):
    """A file a dataset reads does not exist (TensorFlow's `tf.errors.NotFoundError`)."""


for _error in (DataLossError, NotFoundError):
    _error.__module__ = "ember.errors"


def symbolic_argument(what: str, value) -> TypeError:
    """The error for a symbolic tensor (one traced inside `em.function`) given where a dataset
    needs a value now (`Dataset.range(n)`, `batch(n)`, ...)."""
    return TypeError(f"{what}: got the symbolic tensor {value.name}, traced inside "
                     "em.function: a dataset is built from Python values or eager tensors, "
                     "when it is created. Build the dataset outside the function and pass it "
                     "in as an argument, or use Python numbers.")
